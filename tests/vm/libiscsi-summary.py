#!/usr/bin/env python3
"""Summarise iscsi-test-cu output (stdin): one line per test that did not
simply pass, then "passed=N failed=M skipped=K conflicts=C". libiscsi counts a
test that printed [SKIPPED] as passed in CUnit's summary; here a skip is a skip.
  libiscsi-summary.py LABEL [KNOWN_CONFLICTS_FILE] < output
KNOWN_CONFLICTS_FILE lists failures that are known conflicts between libiscsi
and the issue's own requirements (docs/conformance.md): lines
"LABEL_GLOB TEST_NAME  # reason". Such a failure is printed as CONFLICT and
counted under conflicts, not failed; every other failure counts as failed,
and a listed test that passes is reported (the entry can go).
Exit 0 when nothing failed (and at least one test ran)."""
import fnmatch, re, sys

label = sys.argv[1] if len(sys.argv) > 1 else ""
known = []
if len(sys.argv) > 2:
    for ln in open(sys.argv[2]):
        ln = ln.split("#", 1)[0].split()
        if len(ln) == 2:
            known.append((ln[0], ln[1]))

def is_known(name):
    return any(fnmatch.fnmatchcase(label, g) and n == name for g, n in known)
suite, test, body = "", None, []
res = {"passed": 0, "failed": 0, "skipped": 0, "conflicts": 0}
out = []
ran = [0, 0]  # CUnit's own "tests ... Ran ... Failed" totals

def close(status):
    global test, body
    text = "\n".join(body)
    skip = re.search(r"\[SKIPPED\]\s*(.*)", text)
    name = f"{suite}.{test}"
    if status == "FAILED":
        why = re.findall(r"\[FAILED\]\s*(.*)", text)
        if is_known(name):
            res["conflicts"] += 1
            out.append(f"CONFLICT {label} {name} (known, docs/conformance.md): {'; '.join(why)[:300]}")
        else:
            res["failed"] += 1
            out.append(f"FAILED  {label} {name}: {'; '.join(why)[:300]}")
    elif skip:
        res["skipped"] += 1
        out.append(f"SKIPPED {label} {name}: {skip.group(1).strip()[:200]}")
    else:
        res["passed"] += 1
        if is_known(name):
            out.append(f"NOTE    {label} {name}: listed as a known conflict but passed")
    test, body = None, []

for line in sys.stdin:
    line = line.rstrip("\n")
    m = re.match(r"^Suite: (\S+)", line)
    if m:
        suite = m.group(1)
        continue
    m = re.match(r"^\s+Test: (\S+) \.\.\.(.*)$", line)
    if m:
        test, body = m.group(1), [m.group(2)]
        rest = m.group(2).strip()
        if rest.endswith("passed") or rest.endswith("FAILED"):
            close("FAILED" if rest.endswith("FAILED") else "passed")
        continue
    if test is not None:
        body.append(line)
        # CUnit's verdict ends the test's line, but with -V libiscsi's own
        # log lines (another stream) may follow it on the same line:
        # "passed    Send PRIN/READ_KEYS".
        s = line.strip()
        if s.startswith("["):
            continue
        m = re.match(r"^(passed|FAILED)\b", s) or re.search(r"\b(passed|FAILED)$", s)
        if m:
            close(m.group(1))
    m = re.match(r"^\s+tests\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", line)
    if m:
        ran[0] += int(m.group(2))
        ran[1] += int(m.group(4))

for o in out:
    print(o)
# Cross-check with CUnit's summary: a verdict we failed to parse is an error,
# never a silent pass.
total = sum(res.values())
if total != ran[0] or res["failed"] + res["conflicts"] != ran[1]:
    print(f"{label} PARSE MISMATCH: parsed {total} tests ({res['failed']} failed), "
          f"CUnit ran {ran[0]} ({ran[1]} failed)")
    res["failed"] = max(res["failed"], ran[1], 1)
print(f"{label} passed={res['passed']} failed={res['failed']} skipped={res['skipped']} conflicts={res['conflicts']}")
sys.exit(0 if res["failed"] == 0 and sum(res.values()) > 0 else 1)

#!/bin/bash
# ctest tools/journal_file: a pool in a regular file keeps its journal in
# POOL.journal (docs/design.md rule 12), and the tools treat the two files as
# one pool:
#   - vaai-sim `pool create` makes both files (journal-file=no: only POOL),
#     writes survive `pool open` of the pair, vaai-check checks the pair;
#   - without its journal file (removed, or another pool's), vaai-sim and
#     vaai-check refuse the pool and name the problem -- never open it as if
#     the journal were empty;
#   - a bad journal-file= value and an existing POOL.journal at create are refused.
# Usage: journal_file.sh VAAI_SIM VAAI_CHECK TMPDIR
set -euo pipefail
SIM=${1:?usage: journal_file.sh VAAI_SIM VAAI_CHECK TMPDIR}
CHECK=${2:?}
TMP=${3:?}
mkdir -p "$TMP"
D=$(mktemp -d "$TMP/journal_file.XXXXXX")
trap 'rm -rf "$D"' EXIT
fail() { echo "journal_file: FAIL: $*" >&2; exit 1; }
expect_fail() { # expect_fail REGEX CMD...: CMD exits non-zero, REGEX in its stderr
	local re=$1; shift
	if "$@" >"$D/out" 2>"$D/err"; then fail "succeeded: $*"; fi
	grep -qE "$re" "$D/err" || { cat "$D/err" >&2; fail "no '$re' from: $*"; }
}

# create the pair, write, close
"$SIM" >"$D/out" 2>"$D/err" <<SCRIPT || { cat "$D/err" >&2; fail "create"; }
pool create $D/p 64M extent=1M
volume create v 16M
attach v 0
cmd 0 2a000000000000000800 out=fill:0x5a:4096
SCRIPT
[ -f "$D/p" ] && [ -f "$D/p.journal" ] || fail "pool create made no POOL.journal"
[ "$(head -c 8 "$D/p.journal")" = AAIDJFIL ] || fail "POOL.journal has no journal header"
"$CHECK" "$D/p" >"$D/out" 2>&1 || { cat "$D/out" >&2; fail "vaai-check of the pair"; }
grep -q ": consistent" "$D/out" || fail "vaai-check did not say consistent"
# reopen the pair: the data is there (sha256 of 4096 x 0x5a)
want=$(head -c 4096 /dev/zero | tr '\0' '\132' | sha256sum | cut -d' ' -f1)
"$SIM" >"$D/out" 2>"$D/err" <<SCRIPT || { cat "$D/err" >&2; fail "open"; }
pool open $D/p
attach v 0
cmd 0 28000000000000000800 in=4096
SCRIPT
grep -q "\"in_sha256\":\"$want\"" "$D/out" || fail "data not read back after pool open"

# the one-file layout
"$SIM" >"$D/out" 2>"$D/err" <<SCRIPT || { cat "$D/err" >&2; fail "journal-file=no"; }
pool create $D/q 64M extent=1M journal-file=no
SCRIPT
[ -f "$D/q" ] && [ ! -e "$D/q.journal" ] || fail "journal-file=no made a journal file"
"$CHECK" "$D/q" >/dev/null 2>&1 || fail "vaai-check of a one-file pool"
# a journal file next to a one-file pool: refused, not ignored
cp "$D/p.journal" "$D/q.journal"
expect_fail "journal file was given, but this pool's journal is in its store" \
	"$SIM" <<<"pool open $D/q"
rm "$D/q.journal"

# another pool's journal file
"$SIM" >/dev/null 2>&1 <<<"pool create $D/r 64M extent=1M" || fail "create r"
cp "$D/p.journal" "$D/keep.journal"
cp "$D/r.journal" "$D/p.journal"
expect_fail "belongs to another pool" "$SIM" <<<"pool open $D/p"
expect_fail "belongs to another pool" "$CHECK" "$D/p"
# no journal file
rm "$D/p.journal"
expect_fail "journal file of its own, which is missing" "$SIM" <<<"pool open $D/p"
expect_fail "journal file of its own, which is missing" "$CHECK" "$D/p"
mv "$D/keep.journal" "$D/p.journal"
"$CHECK" "$D/p" >/dev/null 2>&1 || fail "vaai-check after putting the journal back"

# refused arguments
expect_fail "journal-file=maybe: expected yes or no" "$SIM" <<<"pool create $D/s 64M journal-file=maybe"
touch "$D/t.journal"
expect_fail "t.journal: already exists" "$SIM" <<<"pool create $D/t 64M"
[ ! -e "$D/t" ] || fail "a failed create left POOL behind"
echo "journal_file: ok"

#!/bin/bash
# Guest test runner: runs every tests/vm/t_*.sh (or the ones named), each in a
# clean LIO state, and ends with one line "N passed, M failed, K skipped".
# A skip is not a pass: it is counted and listed with its reason.
set -uo pipefail
cd "$(dirname "$0")"
. ./lib.sh
tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=($(cd "$VMDIR" && ls t_*.sh))
pass=0 fail=0 skip=0
declare -a failed=() skipped=()
for t in "${tests[@]}"; do
	start_vaaid
	t0=$(date +%s)
	reason=$(bash "$VMDIR/$t" 2> >(sed "s/^/  /" >&2))
	rc=$?
	dt=$(( $(date +%s) - t0 ))
	case $rc in
	0) pass=$((pass + 1)); echo "PASS $t (${dt}s)" ;;
	77) skip=$((skip + 1)); skipped+=("$t: $reason"); echo "SKIP $t: $reason" ;;
	*) fail=$((fail + 1)); failed+=("$t"); echo "FAIL $t (exit $rc, ${dt}s)"; [ -n "$reason" ] && echo "$reason"
	   # what the daemon and the kernel said last, for the CI log
	   tail -n 15 "$OUT/vaaid.log" 2>/dev/null | sed "s/^/  vaaid.log: /"
	   dmesg | tail -n 10 | sed "s/^/  dmesg: /" ;;
	esac
	lio_clear
done
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
for s in "${skipped[@]}"; do echo "skipped: $s"; done
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]

#!/bin/bash
# scripts/serve end to end from the host, and nothing it started outlives it.
#   1. Ctrl-C: start it on a free port, wait for its "reach it with" line, run
#      exactly the iscsi-inq command it prints (checks vendor VAAID over iSCSI
#      through the forwarded portal), then SIGINT, and require a clean stop
#      within 60 s.
#   2. SIGKILL: start it again, and once the LUN answers, SIGKILL the script's
#      own process (no trap can run): within 5 s everything it started must be
#      gone and the port free (scripts/vm/run ties qemu and its helpers to its
#      own life).
# After each stop, on the pass and on the fail path, every process that was
# in serve's process tree while it served (recorded by PID and start time:
# run, qemu, the output copiers, the janitor) must be gone (a zombie counts as
# gone: it holds no port and no file), the port must be free (no listener) and
# scripts/vm/run's control directory (/tmp/vaaid-vm.*, found on qemu's command
# line) removed. Survivors are reported, killed by PID and fail the test.
# Run by scripts/test; boots the guest twice (~1 min).
set -euo pipefail
cd "$(dirname "$0")/../.."
log=$(mktemp)
# However this script ends (even by an unexpected error), a scripts/serve it
# started does not outlive it: SIGKILL by PID, which takes qemu along.
on_exit() {
	[ -z "$pid" ] || { kill -KILL "$pid" 2>/dev/null; reap "at exit" 5 || true; }
	rm -f "$log"
}
trap on_exit EXIT
pid="" port="" procs="" names="" ctl=""

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# port_free: nobody listens on 127.0.0.1:$port (a fresh listener can bind it).
port_free() {
	python3 -c 'import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)' "$port" 2>/dev/null
}
# pstat PID: "STATE STARTTIME" of a process (fields 3 and 22 of /proc/PID/stat).
pstat() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	# shellcheck disable=SC2086
	set -- ${s##*) } # from field 3 on (the name in field 2 may hold spaces)
	echo "$1 ${20}"
}
# alive PID:START: that very process (same start time) exists and is no zombie.
alive() {
	local s
	s=$(pstat "${1%%:*}") || return 1
	[ "${s% *}" != Z ] && [ "${s#* }" = "${1#*:}" ]
}
# record: adds every process in serve's tree now, as "PID:START" words, to
# $procs (and "PID:NAME" to $names), and finds run's control directory ($ctl).
record() {
	local frontier=$pid next p c st
	while [ -n "$frontier" ]; do
		next=""
		for p in $frontier; do
			st=$(pstat "$p") || continue
			st=${st#* }
			procs="$procs $p:$st"
			# (a process may end at any point here: a short-lived sleep of run's)
			names="$names $p:$(cat "/proc/$p/comm" 2>/dev/null || true)"
			case " $names" in *" $p:qemu-system-x86"*)
				[ -n "$ctl" ] || ctl=$( (tr '\0' '\n' <"/proc/$p/cmdline") 2>/dev/null |
					sed -n 's/.*path=\(\/tmp\/vaaid-vm\.[^,]*\),mount_tag=vmctl.*/\1/p' || true) ;;
			esac
			for c in $(ps -e -o pid=,ppid= | awk -v p="$p" '$2 == p {print $1}'); do next="$next $c"; done
		done
		frontier=$next
	done
}
# leftovers: what of serve's recorded tree, its port and run's directory is
# still there (empty: nothing). Waits up to $1 s for it to go.
leftovers() {
	local left="" e
	for _ in $(seq 1 $(($1 * 10))); do
		left=""
		for e in $procs; do alive "$e" && left="$left process ${e%%:*} ($(cat "/proc/${e%%:*}/comm" 2>/dev/null));"; done
		[ -n "$port" ] && ! port_free && left="$left port $port still has a listener;"
		[ -n "$ctl" ] && [ -e "$ctl" ] && left="$left $ctl still exists;"
		[ -z "$left" ] && break
		sleep 0.1
	done
	echo "$left"
}
# reap WHAT SECS: fails the test if anything outlives serve; kills it by PID.
reap() {
	local left e
	left=$(leftovers "$2")
	[ -z "$left" ] && return 0
	echo "serve_smoke: FAIL: $1: outlived scripts/serve:$left" >&2
	for e in $procs; do alive "$e" && kill -KILL "${e%%:*}" 2>/dev/null; done
	[ -n "$ctl" ] && rm -rf "$ctl"
	return 1
}
fail() {
	echo "serve_smoke: FAIL: $*" >&2
	sed 's/^/  serve: /' "$log" >&2
	# the guest's console (scripts/vm/run's serial log), to see where a stop stuck
	[ -f build/vm-out/console.log ] && tail -n 40 build/vm-out/console.log | sed 's/^/  console: /' >&2
	# scripts/vm/run's own record of its stop path, and where serve's processes are
	[ -f build/vm-out/run.log ] && sed 's/^/  run.log: /' build/vm-out/run.log >&2
	if [ -n "$pid" ]; then
		kill -0 "$pid" 2>/dev/null && record
		[ -n "$ctl" ] && { [ -e "$ctl/stop" ] && echo "  $ctl/stop exists" || echo "  no $ctl/stop"; } >&2
		# shellcheck disable=SC2086
		[ -n "$procs" ] && ps -o pid=,stat=,wchan:20=,etime=,args= -p "$(echo $procs | sed 's/:[0-9]*//g; s/ /,/g')" 2>/dev/null |
			cut -c1-160 | sed 's/^/  ps: /' >&2 || true
		kill -INT "$pid" 2>/dev/null || true
		for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		pid=""
		reap "after the failure" 5 || true
	fi
	exit 1
}
# start: scripts/serve on a new free port, until its LUN answers iscsi-inq.
start() {
	port=$(free_port) ctl="" procs="" names=""
	: >"$log"
	# job control: the background job gets its own process group and, unlike a plain
	# "&" job of a script, does not start with SIGINT ignored (so Ctrl-C can be tested);
	# env --default-signal=INT: nor does it inherit an ignored SIGINT from whatever
	# started this test (nohup ... &, a CI runner's background job: a shell cannot
	# trap a signal ignored at its start, so scripts/vm/run would never see the Ctrl-C)
	set -m
	env --default-signal=INT scripts/serve --size 1G --port "$port" >"$log" 2>&1 &
	pid=$!
	set +m
	for _ in $(seq 1 200); do
		grep -q "^reach it with: " "$log" && break
		kill -0 "$pid" 2>/dev/null || fail "scripts/serve exited early"
		sleep 1
	done
	cmd=$(sed -n 's/^reach it with: //p' "$log")
	[ -n "$cmd" ] || fail "no 'reach it with' line within 200 s"
	case "$cmd" in "iscsi-inq iscsi://127.0.0.1:$port/iqn.2026-11.org.vaaid:test/0") ;; *) fail "unexpected command: $cmd" ;; esac
	out=$($cmd 2>&1) || fail "$cmd failed: $out"
	grep -q "^Vendor:VAAID" <<<"$out" || fail "iscsi-inq did not report vendor VAAID: $out"
	record
	if grep -q "serving from the LIO guest" "$log"; then
		case " $names" in *":qemu-system-x86"*) ;; *) fail "no qemu in scripts/serve's process tree:$names" ;; esac
		[ -n "$ctl" ] && [ -d "$ctl" ] || fail "no scripts/vm/run control directory on qemu's command line"
	fi
}

# 1. Ctrl-C
start
t0=$(date +%s.%N)
kill -INT "$pid"
# 60 s by the clock (under load 600 sleeps of 0.1 s take far longer than 60 s)
end=$((SECONDS + 60))
while [ $SECONDS -lt $end ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "scripts/serve still running 60 s after Ctrl-C"
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
wait "$pid" || true
pid=""
grep -q "serve: stopping" "$log" || { reap "Ctrl-C" 5 || true; fail "no clean stop message"; }
reap "Ctrl-C" 5 || fail "something outlived scripts/serve after Ctrl-C"
echo "serve_smoke: Ctrl-C ok ($cmd; stopped in $took s)"

# 2. SIGKILL of the script itself, once the LUN answers
start
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
pid=""
reap "SIGKILL" 5 || fail "something outlived scripts/serve after SIGKILL"
echo "serve_smoke: SIGKILL ok (nothing outlived it, port $port free)"
echo "serve_smoke: ok"

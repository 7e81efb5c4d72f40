#!/bin/bash
# tests/host/power_cut.sh — power cut of the whole guest under load (issue 23
# item 5; docs/durability.md, "Power cut of the guest").
#
# Boots the LIO guest with systemd as PID 1 and vaaid from its Debian package
# (VAAID_VM_INIT=systemd, VAAID_VM_PERSIST=DIR: the same root and scratch disks
# at every boot) N+1 times. Boot 1 makes and saves two LUNs and starts the
# load of tests/vm/power-cut.sh; once the guest says the load runs
# (build/vm-out/powercut/loading.BOOT), this script waits a random 1.0-3.9 s,
# then until the host's records show every generator with a command in flight
# (`ackgen busy`, checked every 20 ms, for at most 5 s), and SIGKILLs qemu by
# the PID qemu wrote (scripts/vm/run --pidfile): the guest's
# memory, kernel, LIO and daemon state are lost at once, the host keeps what
# qemu wrote. Every next boot must bring the LUNs back by itself (systemd,
# vaaid.service, rtslib-fb-targetctl), pass the oracle over the host's records
# and vaai-check, and start the load again, until the last boot, which only
# checks.
#
# The records: each generator in the guest writes its S/A records to its own
# virtio-serial port (scripts/vm/run --serial-socket ackgen.NAME=SOCK); here an
# `ackgen relay SOCK FILE` per port appends each record to FILE and sends a
# receipt, which the generator waits for. The files live in the test's
# directory (never in the guest's reach) and are copied to
# build/vm-out/powercut/logs.BOOT before each boot for the guest's oracle. A cut
# counts when every generator had a command in flight (an S without its A in
# the host's record, read again once qemu is dead: exact, as the oracle reads
# it); the test cuts until N cuts count, making at most N+2 (an answer can
# reach the host between the check before the cut and the kill: about 1 cut
# in 14), and the final oracle must agree. After each cut the
# root disk (qcow2) must pass `qemu-img check` (leaked clusters are allowed and
# reported: what a killed qemu leaves).
#
# VAAID_POWERCUT_CYCLES=N (default 2) counted cuts; VAAID_POWERCUT_SEED (default random,
# printed) replays the cut delays. Uses no host port (--port 0); every guest
# runs through /tmp/guest-lock when it exists (the shared machine's slots).
# Exit 0 only if every boot passed.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/host/lib.sh
CYCLES=${VAAID_POWERCUT_CYCLES:-2}
case "$CYCLES" in ''|*[!0-9]*|0) echo "power_cut: VAAID_POWERCUT_CYCLES must be a positive number" >&2; exit 2 ;; esac
SEED=${VAAID_POWERCUT_SEED:-$(( $(od -An -N2 -tu2 /dev/urandom) ))}
RANDOM=$SEED
ACKGEN=build/bin/ackgen
NAMES=(init w unmap wsz xcopy caw.0 caw.1)
say() { echo "[power_cut $(date +%H:%M:%S)] $*" >&2; }
fail() { say "FAIL: $*"; exit 1; }
[ -x "$ACKGEN" ] || fail "build ackgen first (ninja -C build)"
need_deb "power cut test" || exit 1
LOCK=()
[ -x /tmp/guest-lock ] && LOCK=(/tmp/guest-lock)

DIR=$(mktemp -d /tmp/vaaid-powercut.XXXXXX)
P=build/vm-out/powercut
RELAYS=() RUNPID=""
cleanup() { # (set +e: a relay already gone must not stop the removal)
	local p
	set +e
	[ -n "$RUNPID" ] && kill -TERM "$RUNPID" 2>/dev/null && wait "$RUNPID" 2>/dev/null
	for p in "${RELAYS[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
rm -rf "$P"
mkdir -p "$P" "$DIR/logs"
export VAAID_VM_INIT=systemd VAAID_VM_PERSIST=$DIR/disks VAAID_VM_DISK_SIZE=8G
say "seed $SEED (VAAID_POWERCUT_SEED=$SEED replays the cut delays), $CYCLES cuts; records in $DIR/logs"

start_relays() {
	local n
	RELAYS=()
	for n in "${NAMES[@]}"; do
		rm -f "$DIR/sock.$n"
		"$ACKGEN" relay "$DIR/sock.$n" "$DIR/logs/$n.log" 2>>"$DIR/relay.log" & RELAYS+=($!)
	done
	for n in "${NAMES[@]}"; do
		for _ in $(seq 1 100); do [ -S "$DIR/sock.$n" ] && break; sleep 0.05; done
		[ -S "$DIR/sock.$n" ] || fail "ackgen relay for $n did not listen"
	done
}
stop_relays() { # they end when qemu's end of their socket closes
	local p
	for p in "${RELAYS[@]}"; do
		for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	RELAYS=()
}
records() { # S and A records per file, for the report
	local n
	for n in "${NAMES[@]}"; do printf ' %s:%s/%s' "$n" "$(grep -c '^S' "$DIR/logs/$n.log" 2>/dev/null || true)" \
		"$(grep -c '^A' "$DIR/logs/$n.log" 2>/dev/null || true)"; done
}

t_all=$SECONDS
cuts=0 host_counted=0 boot=0
while :; do
	boot=$((boot + 1))
	phase=again
	[ "$boot" = 1 ] && phase=first
	{ [ $host_counted -ge "$CYCLES" ] || [ $cuts -ge $((CYCLES + 2)) ]; } && phase=final
	if [ "$boot" -gt 1 ]; then
		mkdir -p "$P/logs.$boot"
		cp "$DIR"/logs/*.log "$P/logs.$boot/"
	fi
	start_relays
	rm -f "$DIR/qemu.pid"
	ser=()
	for n in "${NAMES[@]}"; do ser+=(--serial-socket "ackgen.$n=$DIR/sock.$n"); done
	t0=$SECONDS
	"${LOCK[@]}" scripts/vm/run --port 0 --timeout 480 --pidfile "$DIR/qemu.pid" "${ser[@]}" \
		-- tests/vm/power-cut.sh "$phase" "$boot" &
	RUNPID=$!
	if [ "$phase" = final ]; then
		rc=0; wait "$RUNPID" || rc=$?
		RUNPID=""
		stop_relays
		[ $rc = 0 ] || fail "boot $boot (final): exit $rc (console: build/vm-out/console.log)"
		say "boot $boot (final): passed, $((SECONDS - t0)) s"
		break
	fi
	# the guest says when the load runs; a guest that ends before is a failure
	while [ ! -e "$P/loading.$boot" ]; do
		kill -0 "$RUNPID" 2>/dev/null || { rc=0; wait "$RUNPID" || rc=$?; RUNPID=""; fail "boot $boot ($phase) ended (exit $rc) before its load ran (console: build/vm-out/console.log)"; }
		sleep 0.2
	done
	t_load=$SECONDS
	delay="$(( RANDOM % 30 / 10 + 1 )).$(( RANDOM % 10 ))"
	sleep "$delay"
	# the cut counts only if every generator has a command in flight: wait for
	# such a moment in the host's records (a few ms at most, as a rule)
	gens=$(cat "$P/gens") || fail "the guest did not say which generators run"
	checks=1
	while ! "$ACKGEN" busy --run "$boot" --gens "$gens" "$DIR"/logs/*.log >"$DIR/busy" && [ $checks -lt 250 ]; do
		checks=$((checks + 1))
		sleep 0.02
	done
	qpid=$(cat "$DIR/qemu.pid" 2>/dev/null) || fail "no qemu pidfile"
	case "$(cat "/proc/$qpid/comm" 2>/dev/null)" in
	qemu-system-*) ;;
	*) fail "pid $qpid from the pidfile is not a qemu: $(cat "/proc/$qpid/comm" 2>/dev/null)" ;;
	esac
	kill -KILL "$qpid"
	rc=0; wait "$RUNPID" || rc=$?
	RUNPID=""
	stop_relays
	cuts=$((cuts + 1))
	# the host's whole record now: did every generator have a command in flight?
	if "$ACKGEN" busy --run "$boot" --gens "$gens" "$DIR"/logs/*.log >"$DIR/busy.after" 2>&1; then
		host_counted=$((host_counted + 1)); counts="counts"
	else
		counts="does not count: $(head -n 1 "$DIR/busy.after")"
	fi
	[ $rc = 125 ] || fail "boot $boot: scripts/vm/run exited $rc after the cut (expected 125: the guest died)"
	chk=$(qemu-img check "$DIR/disks/root.qcow2" 2>&1) && crc=0 || crc=$?
	# 0: clean; 3: leaked clusters only (allowed); anything else: a damaged image
	[ $crc = 0 ] || [ $crc = 3 ] || { echo "$chk" >&2; fail "boot $boot: the root disk is damaged after the cut (qemu-img check exit $crc)"; }
	leaks=$(grep -o '[0-9]* leaked clusters' <<<"$chk" || echo "0 leaked clusters")
	verified=""
	[ -f "$P/verified.$boot" ] && verified=" (after: $(cat "$P/verified.$boot"))"
	when="every generator in flight at check $checks"
	[ -s "$DIR/busy" ] && when="$(cat "$DIR/busy") after $checks checks: cut anyway"
	say "boot $boot ($phase): cut $boot $delay s into the load ($when; boot to load $((t_load - t0)) s), $counts; root disk: $leaks; records S/A:$(records)$verified"
done
# every cut must have been checked by the next boot; N of them must count, and
# the oracle's count must be the host's
final=$(cat "$P/verified.$boot" 2>/dev/null) || fail "the final boot wrote no verdict"
counted=$(sed -n 's/.*; \([0-9]*\) of [0-9]* cuts count.*/\1/p' <<<"$final")
[ -n "$counted" ] || fail "no cut count in the final verdict: $final"
grep "^cut " "$P/verify.$boot" >&2 || true
[ "$counted" = "$host_counted" ] || fail "the oracle counts $counted cuts, the host's records $host_counted"
[ "$counted" -ge "$CYCLES" ] ||
	fail "only $counted of $cuts cuts had every generator in flight ($CYCLES must, in at most $((CYCLES + 2)) cuts)"
say "passed: $cuts cuts, $counted counted; final check: $final; $((SECONDS - t_all)) s"

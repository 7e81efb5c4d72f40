#!/bin/bash
# tests/vm/power-cut.sh first|again|final BOOT — the guest's side of the power
# cut test (issue 23 item 5), driven by tests/host/power_cut.sh, which boots the
# same disks again and again (VAAID_VM_INIT=systemd, VAAID_VM_PERSIST) and
# SIGKILLs qemu in the middle of the load of every boot but the last.
#   first  (boot 1): two 2 GiB LUNs (setup-luns.sh: vol0 = A, vol1 = B) served
#          by vaaid.service, saved with targetcli saveconfig (so that
#          rtslib-fb-targetctl restores them at the next boots); the generators'
#          ranges zeroed, the copy source filled; then the load, until the cut.
#   again  (boots 2..N): the LUNs must be back by themselves (systemd,
#          vaaid.service, targetctl: same backstore names, same unit serials,
#          same tcm_loop LUN numbers); the oracle over the host's records of
#          every earlier boot; vaai-check on the pool (vaaid.service stopped
#          for it, then started again); then the load of this boot, until the cut.
#   final  (boot N+1): the same checks, no load; exits 0 when all pass.
# The load: the generators of tests/vm/t_kill9.sh (build/bin/ackgen, each on
# its own LBA range; fio is left out: its acknowledgements cannot be recorded
# on the host), each logging to its own virtio-serial port `ackgen.NAME`,
# whose host end (`ackgen relay`) writes every record to a file and sends a
# receipt before the generator goes on: an S record is on the host before its
# command is submitted, an A record right after the answer. The host copies
# those files to /out/powercut/logs.BOOT before boot BOOT, and that is what the
# oracle reads: a command with an A record was acknowledged; one with an S and
# no A was in flight at a cut (its sectors may hold old or new content, a
# COMPARE AND WRITE's outcome is unknown). Signals to the host, in
# /out/powercut: loading.BOOT once the load runs (the host then cuts at a
# random moment), gens (the generators, for the host's `ackgen busy`),
# verified.BOOT with the oracle's summary.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
PHASE=${1:?usage: power-cut.sh first|again|final BOOT}
BOOT=${2:?usage: power-cut.sh first|again|final BOOT}
ACKGEN=/vaaid/build/bin/ackgen
CHECK=/usr/sbin/vaai-check
P=$OUT/powercut
NAMES=(init w unmap wsz xcopy caw.0 caw.1)
GENS=w,unmap,wsz,xcopy,caw.0,caw.1
[ -x "$ACKGEN" ] || die "build ackgen first"
[ "$(cat /proc/1/comm)" = systemd ] || die "PID 1 is $(cat /proc/1/comm), not systemd (VAAID_VM_INIT=systemd)"
mkdir -p "$P"

# LBA ranges (512-byte blocks), as in t_kill9.sh
A_W=0 A_WN=131072          # 64 MiB: writer
A_X=131072                 # 16 MiB: copy source (filled once)
A_U=196608 A_UN=32768      # 16 MiB: write / UNMAP
A_C=245760                 # the counter block
B_X=0 B_XN=32768           # 16 MiB: copy destination
B_Z=65536 B_ZN=32768       # 16 MiB: write / WRITE SAME zero

port() { # /dev/vportNpM of the virtio-serial port named $1
	local p
	for p in /sys/class/virtio-ports/*; do
		[ "$(cat "$p/name" 2>/dev/null)" = "$1" ] && { echo "/dev/${p##*/}"; return 0; }
	done
	return 1
}
declare -A PORT
for n in "${NAMES[@]}"; do PORT[$n]=$(port "ackgen.$n") || die "no virtio-serial port ackgen.$n (scripts/vm/run --serial-socket)"; done

# The two LUNs through tcm_loop: "vol0 /dev/sgX /dev/sdY" lines, by LUN number,
# without creating anything (after a cut they must come back by themselves).
luns_back() {
	local i d sg sd h host=""
	for h in /sys/class/scsi_host/host*; do
		[ "$(cat "$h/proc_name" 2>/dev/null)" = tcm_loopback ] && host=${h##*/host}
	done
	[ -n "$host" ] || return 1
	for i in 0 1; do
		sg="" sd=""
		for _ in $(seq 1 150); do
			for d in /sys/bus/scsi/devices/"$host":*:*:"$i"; do
				[ -d "$d" ] || continue
				sg=$(ls "$d/scsi_generic" 2>/dev/null | head -1)
				sd=$(ls "$d/block" 2>/dev/null | head -1)
			done
			[ -n "$sg" ] && [ -n "$sd" ] && break
			sleep 0.2
		done
		[ -n "$sg" ] && [ -n "$sd" ] || return 1
		sg_turs "/dev/$sg" >/dev/null 2>&1 || true # the unit attention of a new disk
		echo "vol$i /dev/$sg /dev/$sd"
	done
}
ids() { # what must be the same after every cut: the backstores, their LUN links
	local d
	for d in $C/core/user_*/vol0 $C/core/user_*/vol1; do
		[ -d "$d" ] || continue
		echo "${d##*/} enabled=$(cat "$d/enable") config=$(grep -o 'vaai/[^ ]*' "$d/info" | head -1)"
	done
	for d in $C/loopback/*/tpgt_1/lun/lun_*/* $C/iscsi/*/tpgt_1/lun/lun_*/*; do
		[ -L "$d" ] || continue
		d=${d#"$C"/}
		echo "${d%/*} -> $(basename "$(readlink -f "$C/$d")")"
	done
}

if [ "$PHASE" = first ]; then
	[ "$BOOT" = 1 ] || die "first is boot 1"
	rm -f "$P"/loading.* "$P"/verified.* "$P/ids"
	mapfile -t L < <(/vaaid/tests/vm/setup-luns.sh 2 2G)
	targetcli saveconfig >/dev/null || die "targetcli saveconfig"
	grep -q '"plugin": "user"' /etc/rtslib-fb-target/saveconfig.json || die "saveconfig.json has no user backstore"
	ids >"$P/ids"
	sync
	log "boot 1: LUNs made and saved: $(grep -c config= "$P/ids") backstores, $(grep -c lun_ "$P/ids") LUN links"
else
	[ "$(systemctl is-active vaaid.service)" = active ] || die "vaaid.service is not active after the cut: $(journalctl -b -u vaaid.service --no-pager | tail -5)"
	[ "$(systemctl is-active rtslib-fb-targetctl.service)" = active ] ||
		die "rtslib-fb-targetctl.service: $(journalctl -b -u rtslib-fb-targetctl.service --no-pager | tail -5)"
	mapfile -t L < <(luns_back) || true
	[ ${#L[@]} = 2 ] || die "the LUNs did not come back through tcm_loop after the cut: $(ids)"
	diff <(cat "$P/ids") <(ids) >&2 || die "the LUNs came back different (names, serials or LUN links above)"
	replay=$(journalctl -b -u vaaid.service --no-pager | grep -o "journal replayed.*" | head -1)
	[ -n "$replay" ] || die "vaaid did not log 'journal replayed' in this boot"
fi
read -r _ sgA sdA _ <<<"${L[0]}"
read -r _ sgB sdB _ <<<"${L[1]}"
# ... and what the initiators see: vaaid's unit serial and NAA designator (VPD 80h, 83h)
vpd() { local d; for d in "$sgA" "$sgB"; do sg_vpd -p sn "$d"; sg_vpd -p di "$d"; done 2>&1; }
if [ "$PHASE" = first ]; then
	vpd >"$P/vpd"
	grep -q "NAA" "$P/vpd" || die "no NAA designator in VPD 83h: $(cat "$P/vpd")"
else
	diff <(cat "$P/vpd") <(vpd) >&2 || die "the LUNs' identity (VPD 80h/83h) changed across the cut"
fi

if [ "$PHASE" != first ]; then
	cuts=$((BOOT - 1))
	logs=()
	for n in "${NAMES[@]}"; do
		[ -f "$P/logs.$BOOT/$n.log" ] || die "no host record $P/logs.$BOOT/$n.log"
		logs+=("$P/logs.$BOOT/$n.log")
	done
	out=$("$ACKGEN" verify --cuts "$cuts" --gens "$GENS" --lun "A=$sdA" --lun "B=$sdB" "${logs[@]}") ||
		{ echo "$out" >&2; die "boot $BOOT: the oracle failed after cut $cuts"; }
	echo "$out" >"$P/verify.$BOOT"
	log "boot $BOOT: $(grep "^cut $cuts:" <<<"$out")"
	log "  $(grep "^counter" <<<"$out")"
	log "  $(tail -n 2 <<<"$out" | tr '\n' ' ')"
	log "  vaaid: $replay"
	systemctl stop vaaid.service
	"$CHECK" "$STATE/default.pool" >"$P/check.$BOOT" 2>&1 || { cat "$P/check.$BOOT" >&2; die "boot $BOOT: vaai-check failed"; }
	systemctl start vaaid.service
	for d in "$sgA" "$sgB"; do # served again (the restarted vaaid resets the rings)
		ok=false
		for _ in $(seq 1 150); do sg_turs "$d" >/dev/null 2>&1 && { ok=true; break; }; sleep 0.2; done
		$ok || die "boot $BOOT: $d does not answer after vaaid's restart"
	done
	log "  vaai-check clean; vaaid restarted and serving"
	tail -n 1 <<<"$out" >"$P/verified.$BOOT"
fi
[ "$PHASE" = final ] && { log "final boot: $cuts cuts checked"; exit 0; }

if [ "$PHASE" = first ]; then
	for r in "$A_W $A_WN" "$A_U $A_UN" "$A_C 8"; do
		set -- $r; "$ACKGEN" gen zero --dev "$sgA" --lun A --lba "$1" --blocks "$2" --log "${PORT[init]}" --tag init
	done
	for r in "$B_X $B_XN" "$B_Z $B_ZN"; do
		set -- $r; "$ACKGEN" gen zero --dev "$sgB" --lun B --lba "$1" --blocks "$2" --log "${PORT[init]}" --tag init
	done
	"$ACKGEN" gen fill --dev "$sdA" --lun A --lba $A_X --blocks $B_XN --log "${PORT[init]}" --tag xsrc
fi

# The load of this boot (run number = boot number: command ids are unique over boots)
g=(--run "$BOOT" --stop /tmp/powercut.stop --seconds 300)
pids=()
"$ACKGEN" gen write --dev "$sdA" --lun A --lba $A_W --blocks $A_WN --threads 2 --log "${PORT[w]}" --tag w "${g[@]}" & pids+=($!)
"$ACKGEN" gen unmap --dev "$sgA" --lun A --lba $A_U --blocks $A_UN --threads 2 --log "${PORT[unmap]}" --tag unmap "${g[@]}" & pids+=($!)
"$ACKGEN" gen caw --dev "$sgA" --lun A --lba $A_C --log "${PORT[caw.0]}" --tag caw.0 "${g[@]}" & pids+=($!)
"$ACKGEN" gen caw --dev "$sdA" --lun A --lba $A_C --log "${PORT[caw.1]}" --tag caw.1 "${g[@]}" & pids+=($!)
"$ACKGEN" gen wsz --dev "$sgB" --lun B --lba $B_Z --blocks $B_ZN --threads 2 --log "${PORT[wsz]}" --tag wsz "${g[@]}" & pids+=($!)
"$ACKGEN" gen xcopy --dev "$sgB" --lun B --lba $B_X --blocks $B_XN --src "$sgA" --srclun A \
	--src-lba $A_X --threads 2 --log "${PORT[xcopy]}" --tag xcopy "${g[@]}" & pids+=($!)
sleep 3 # (their start, INQUIRYs included, takes a while under TCG)
for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || { wait "$p" || true; die "boot $BOOT: a generator ended before the cut"; }; done
echo "$GENS" >"$P/gens" # for the host's `ackgen busy`
: >"$P/loading.$BOOT"
log "boot $BOOT: load running; waiting for the host's power cut"
# The host cuts within seconds; still running 120 s later means it did not.
end=$((SECONDS + 120))
while [ $SECONDS -lt $end ]; do
	for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || { wait "$p" || true; die "boot $BOOT: a generator ended before the cut"; }; done
	sleep 1
done
touch /tmp/powercut.stop
die "boot $BOOT: no power cut came within 120 s of the load"

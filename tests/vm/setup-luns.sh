#!/bin/bash
# setup-luns.sh N SIZE [BLOCK]  (runs in the LIO guest; a fixed interface)
#
# Creates (or reuses) volumes vol0..vol(N-1) in pool "default" as user:vaai
# backstores (BLOCK -> hw_block_size, default 512), exports them through one
# tcm_loop target and through the iSCSI target iqn.2026-11.org.vaaid:test
# (portal 0.0.0.0:3260, LUN i = vol i, demo mode, no auth), clears the first
# unit attention on each, and prints exactly N lines on stdout:
#   vol0 /dev/sgX /dev/sdY iscsi://127.0.0.1/iqn.2026-11.org.vaaid:test/0
# Everything else goes to stderr; any failure exits non-zero.
#
# How it works: raw configfs (seconds, where targetcli would take a minute,
# see ../shared/vm-notes.md). vaaid must already be running: linking a LUN
# to tcm_loop scans it synchronously. hw_max_sectors is raised to 8192
# (4 MiB at 512-byte blocks; LIO's default 128 is a 64 KiB I/O limit) and
# cmd_time_out to 120 s (TCG emulation is slow). Environment (optional):
# HW_MAX_SECTORS (default 8192) and MAX_DATA_AREA_MB (default 64) for new
# backstores.
set -euo pipefail
exec 3>&1 1>&2

N=${1:?usage: setup-luns.sh N SIZE [BLOCK]}
SIZE=${2:?usage: setup-luns.sh N SIZE [BLOCK]}
BLOCK=${3:-512}
case "$N" in ''|*[!0-9]*) echo "setup-luns: N '$N' is not a number" >&2; exit 2 ;; esac
case "$BLOCK" in 512|4096) ;; *) echo "setup-luns: BLOCK must be 512 or 4096" >&2; exit 2 ;; esac
to_bytes() {
	local v="$1" n u
	n=${v%[KkMmGgTt]}; u=${v#"$n"}
	case "$n" in ''|*[!0-9]*) echo "setup-luns: bad size '$v'" >&2; exit 2 ;; esac
	case "$u" in
	'') echo "$n" ;; [Kk]) echo $((n << 10)) ;; [Mm]) echo $((n << 20)) ;;
	[Gg]) echo $((n << 30)) ;; [Tt]) echo $((n << 40)) ;;
	esac
}
BYTES=$(to_bytes "$SIZE")

C=/sys/kernel/config/target
IQN=iqn.2026-11.org.vaaid:test
LOOP_WWN=naa.50014050aa1d0001
NEXUS_WWN=naa.50014050aa1d0002
HBA=$C/core/user_1
[ -d $C ] || { echo "setup-luns: no LIO configfs at $C" >&2; exit 1; }
mkdir -p "$HBA"

for ((i = 0; i < N; i++)); do
	d=$HBA/vol$i
	if [ ! -d "$d" ]; then
		mkdir "$d"
		echo -n "dev_config=vaai/default/vol$i" > "$d/control"
		echo -n "dev_size=$BYTES" > "$d/control"
		echo -n "hw_block_size=$BLOCK" > "$d/control"
		echo -n "hw_max_sectors=${HW_MAX_SECTORS:-8192}" > "$d/control"
		echo -n "max_data_area_mb=${MAX_DATA_AREA_MB:-64}" > "$d/control"
		if ! echo 1 > "$d/enable" 2>/dev/null; then
			echo "setup-luns: enabling vol$i was refused; vaaid says:" >&2
			tail -n 3 "${OUT:-/out}/vaaid.log" >&2 2>/dev/null || true
			rmdir "$d"
			exit 1
		fi
		echo 120 > "$d/attrib/cmd_time_out" 2>/dev/null || true
	fi
done

# tcm_loop: one target, one nexus, LUN i = vol i
TL=$C/loopback/$LOOP_WWN/tpgt_1
if [ ! -d "$TL" ]; then
	mkdir -p "$TL"
	echo -n "$NEXUS_WWN" > "$TL/nexus"
fi
# iSCSI: demo mode, no auth
IT=$C/iscsi/$IQN/tpgt_1
if [ ! -d "$IT" ]; then
	mkdir -p "$IT"
fi
for ((i = 0; i < N; i++)); do
	for T in "$IT" "$TL"; do
		if [ ! -d "$T/lun/lun_$i" ]; then
			mkdir -p "$T/lun/lun_$i"
			ln -s "$HBA/vol$i" "$T/lun/lun_$i/vaai_vol$i"
		fi
	done
done
if [ ! -d "$IT/np/0.0.0.0:3260" ]; then
	mkdir -p "$IT/np/0.0.0.0:3260"
fi
echo 0 > "$IT/attrib/authentication"
echo 1 > "$IT/attrib/generate_node_acls"
echo 1 > "$IT/attrib/cache_dynamic_acls"
echo 0 > "$IT/attrib/demo_mode_write_protect"
echo 1 > "$IT/enable"

# Find the tcm_loop disk of each LUN (no udev in the guest: walk sysfs).
loop_host=""
for h in /sys/class/scsi_host/host*; do
	if [ "$(cat "$h/proc_name" 2>/dev/null)" = "tcm_loopback" ]; then
		loop_host=${h##*/host}
	fi
done
[ -n "$loop_host" ] || { echo "setup-luns: no tcm_loop SCSI host" >&2; exit 1; }

for ((i = 0; i < N; i++)); do
	sg="" sd=""
	for t in $(seq 1 100); do
		for dev in /sys/bus/scsi/devices/"$loop_host":*:*:"$i"; do
			[ -d "$dev" ] || continue
			sg=$(ls "$dev/scsi_generic" 2>/dev/null | head -1)
			sd=$(ls "$dev/block" 2>/dev/null | head -1)
		done
		[ -n "$sg" ] && [ -n "$sd" ] && break
		sleep 0.2
	done
	if [ -z "$sg" ] || [ -z "$sd" ]; then
		echo "setup-luns: LUN $i (vol$i) did not appear as a disk (is vaaid running?)" >&2
		exit 1
	fi
	# the first command after the LUN appears gets a UNIT ATTENTION: take it now
	sg_turs "/dev/$sg" >/dev/null 2>&1 || true
	sg_turs "/dev/$sg" >/dev/null 2>&1 || { echo "setup-luns: vol$i: TEST UNIT READY fails" >&2; exit 1; }
	echo "vol$i /dev/$sg /dev/$sd iscsi://127.0.0.1/$IQN/$i" >&3
done

# Shared helpers of the guest tests (sourced). Each t_*.sh test prints what it
# checks on stderr and exits 0 (pass), 77 (skip, with the reason on stdout) or
# anything else (fail).
VAAID=${VAAID:-/vaaid/build/bin/vaaid}
VAAICTL=${VAAICTL:-/vaaid/build/bin/vaaictl}
STATE=${VAAID_STATE:-/var/lib/vaaid}
OUT=${OUT:-/out}
VMDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
C=/sys/kernel/config/target
cd /tmp # fio writes verify state files into the working directory

log() { echo "[$(basename "$0")] $*" >&2; }
die() { log "FAIL: $*"; exit 1; }

# The daemon of the guest is known by its PID, never by its name: whoever starts
# one (scripts/vm/guest-start-services, start_vaaid, launch_vaaid) records it in
# VAAID_PIDFILE, which scripts/vm/guest-stop-services reads before power-off.
VAAID_PIDFILE=/run/vaaid-vm.pid
vaaid_pid() { # the recorded vaaid if it is alive (and still a vaaid), else nothing
	local p
	p=$(cat "$VAAID_PIDFILE" 2>/dev/null) || return 0
	[ -n "$p" ] && [ "$(cat "/proc/$p/comm" 2>/dev/null)" = vaaid ] && echo "$p"
	return 0
}

# The configuration guest-start-services started vaaid with (its Prometheus
# endpoint, tests/vm/t_vaai_stats.sh): a restart serves the same.
VAAID_CONFIG_PATHFILE=/run/vaaid-vm.config
launch_vaaid() { # start a vaaid in the background (with that configuration) and record its PID
	local conf=() c
	c=$(cat "$VAAID_CONFIG_PATHFILE" 2>/dev/null) || true
	[ -n "$c" ] && conf=(--config "$c")
	"$VAAID" "${conf[@]}" --state-dir "$STATE" >>"$OUT/vaaid.log" 2>&1 &
	echo $! >"$VAAID_PIDFILE"
}

start_vaaid() {
	[ -n "$(vaaid_pid)" ] && return 0
	launch_vaaid
	for _ in $(seq 1 300); do
		[ -S /run/vaaid/control ] && "$VAAICTL" status >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	die "vaaid did not start (see vaaid.log)"
}

stop_vaaid() {
	local p; p=$(vaaid_pid)
	[ -z "$p" ] && return 0
	kill -TERM "$p"
	for _ in $(seq 1 600); do
		kill -0 "$p" 2>/dev/null || return 0
		sleep 0.1
	done
	die "vaaid did not stop within 60 s of SIGTERM"
}

# remove every LIO object the tests made (LUN links, targets, backstores)
lio_clear() { "$VMDIR/lio-clear.sh"; }

# lone_lun NAME POOL SIZE_BYTES WWN_BASE: a user:vaai backstore NAME on POOL/NAME
# (hw_max_sectors 8192, cmd_time_out 120), exported as LUN 0 of its own tcm_loop
# target naa.<WWN_BASE>1 (nexus naa.<WWN_BASE>2); waits for its disk, takes the
# first unit attention and prints "/dev/sgX /dev/sdY". For tests that run on a LUN
# of their own (the only VAAID disk: run-all clears LIO before each test).
lone_lun() {
	local name=$1 pool=$2 size=$3 wwn=$4 d=$C/core/user_1/$1 tl sg="" sd="" dev
	mkdir -p "$d"
	echo -n "dev_config=vaai/$pool/$name" > "$d/control"
	echo -n "dev_size=$size" > "$d/control"
	echo -n "hw_max_sectors=8192" > "$d/control"
	echo 1 > "$d/enable" || die "enable $name"
	echo 120 > "$d/attrib/cmd_time_out" 2>/dev/null || true
	tl=$C/loopback/naa.${wwn}1/tpgt_1
	mkdir -p "$tl/lun/lun_0"
	echo -n "naa.${wwn}2" > "$tl/nexus"
	ln -s "$d" "$tl/lun/lun_0/$name"
	for _ in $(seq 1 100); do
		for dev in /sys/bus/scsi/devices/*; do
			[ "$(cat "$dev/vendor" 2>/dev/null | tr -d ' ')" = VAAID ] || continue
			sg=/dev/$(ls "$dev/scsi_generic" 2>/dev/null); sd=/dev/$(ls "$dev/block" 2>/dev/null)
		done
		[ "$sg" != /dev/ ] && [ "$sd" != /dev/ ] && [ -n "$sg" ] && break
		sleep 0.2
	done
	[ -n "$sg" ] && [ "$sg" != /dev/ ] && [ "$sd" != /dev/ ] || die "$name did not appear"
	sg_turs "$sg" >/dev/null 2>&1 || true
	sg_turs "$sg" >/dev/null 2>&1 || die "TEST UNIT READY fails on $name"
	echo "$sg $sd"
}

sd_of_lun() { # sd_of_lun N: /dev/sdX of tcm_loop LUN N (waits up to 20 s)
	local h d
	for h in /sys/class/scsi_host/host*; do
		[ "$(cat "$h/proc_name")" = tcm_loopback ] || continue
		for _ in $(seq 1 100); do
			for d in /sys/bus/scsi/devices/${h##*/host}:*:*:"$1"/block/*; do
				[ -e "$d" ] && { echo "/dev/${d##*/}"; return 0; }
			done
			sleep 0.2
		done
	done
	return 1
}

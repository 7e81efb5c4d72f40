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

vaaid_pid() { pgrep -x vaaid | head -1; }

start_vaaid() {
	[ -n "$(vaaid_pid)" ] && return 0
	"$VAAID" --state-dir "$STATE" >>"$OUT/vaaid.log" 2>&1 &
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

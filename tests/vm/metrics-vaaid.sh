# Sourced by guest scripts after tests/vm/lib.sh: (re)start vaaid with its
# Prometheus endpoint on 127.0.0.1:9612, the configuration
# scripts/vm/guest-start-services gives it.
#   metrics_listening          true when something accepts on 127.0.0.1:9612
#   metrics_vaaid [BINARY]     stop the recorded vaaid (lib.sh stop_vaaid), start
#                              BINARY (default $VAAID) with [metrics] listen and
#                              record it; waits for its control socket and port
# (A vaaid restarted by lib.sh's start_vaaid has no configuration, so no endpoint.)
METRICS_CONF=/run/vaaid-metrics.conf
metrics_listening() {
	python3 -c 'import socket; socket.create_connection(("127.0.0.1", 9612), timeout=5).close()' 2>/dev/null
}
metrics_vaaid() {
	local bin=${1:-$VAAID}
	stop_vaaid
	printf '[metrics]\nlisten = 127.0.0.1:9612\n' >"$METRICS_CONF"
	"$bin" --config "$METRICS_CONF" --state-dir "$STATE" >>"$OUT/vaaid.log" 2>&1 &
	echo $! >"$VAAID_PIDFILE"
	for _ in $(seq 1 300); do
		[ -S /run/vaaid/control ] && "$VAAICTL" status >/dev/null 2>&1 && metrics_listening && return 0
		sleep 0.1
	done
	die "$bin with [metrics] listen = 127.0.0.1:9612 does not serve there"
}

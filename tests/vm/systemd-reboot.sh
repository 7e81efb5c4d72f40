#!/bin/bash
# tests/vm/systemd-reboot.sh before|after — runs in a guest booted with
# systemd as PID 1 (VAAID_VM_INIT=systemd, scripts/vm/guest-systemd-boot:
# vaaid installed from its Debian package, which enables the sandboxed unit
# tools/dist/vaaid.service), driven
# by tests/host/systemd_reboot.sh, which boots the same disks twice.
#   before: vaaid installed by the package (dpkg: package installed, its
#           conffile /etc/vaaid/vaaid.conf, the unit and /usr/sbin/vaaid are
#           the package's files, the unit runs that binary with only
#           CAP_NET_ADMIN); vaaid.service enabled and active, ordered before and wanted (not required) by
#           rtslib-fb-targetctl.service (Debian's unit that restores the saved
#           targetcli configuration at boot); a user:vaai backstore created
#           with targetcli and exported through tcm_loop and iSCSI; 8 MiB of
#           random data written; targetcli saveconfig. The run then ends with
#           a clean systemd poweroff (targetctl clear, then vaaid's SIGTERM).
#   after:  (the next boot) the previous shutdown stopped vaaid cleanly;
#           vaaid was active before targetctl restore started; the saved LUN
#           is back through tcm_loop with its data, the iSCSI portal answers,
#           vaaictl lists the volume. Then vaaid is killed (SIGKILL): systemd
#           restarts it alone, it resets the live LUN's ring through configfs
#           (inside the unit's sandbox) and serves it again, data intact. Then
#           vaaid is stopped (SIGSTOP): systemd's watchdog (Type=notify,
#           WatchdogSec=30) finds it and restarts it; the LUN is served again.
# The journal of each boot is copied to /out/systemd-<phase>.journal.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
PHASE=${1:?usage: systemd-reboot.sh before|after}
SUM=/root/systemd-reboot.sha256
IQN=iqn.2026-11.org.vaaid:sysd
LOOP=naa.50014050aa1d0101
trap 'journalctl -b --no-pager >/out/systemd-$PHASE.journal 2>&1 || true' EXIT

[ "$(cat /proc/1/comm)" = systemd ] || die "PID 1 is $(cat /proc/1/comm), not systemd"
prop() { systemctl show -p "$2" --value "$1"; }

vaai_disk() { # /dev/sdX of the only tcm_loop LUN whose vendor is VAAID (waits up to 30 s)
	local d t
	for t in $(seq 1 150); do
		for d in /sys/bus/scsi/devices/*; do
			[ "$(tr -d ' ' <"$d/vendor" 2>/dev/null)" = VAAID ] || continue
			[ -d "$d/block" ] || continue
			echo "/dev/$(ls "$d/block" | head -1)"
			return 0
		done
		sleep 0.2
	done
	return 1
}

case "$PHASE" in
before)
	[ "$(dpkg-query -W -f='${db:Status-Status}' vaaid 2>/dev/null)" = installed ] || die "the vaaid package is not installed"
	for f in /usr/sbin/vaaid /usr/sbin/vaaictl /usr/sbin/vaai-check /lib/systemd/system/vaaid.service \
		/usr/share/dbus-1/system.d/vaaid.conf /etc/vaaid/vaaid.conf; do
		dpkg -S "$f" >/dev/null 2>&1 || die "$f is not a file of the vaaid package"
	done
	[ "$(prop vaaid.service FragmentPath)" = /lib/systemd/system/vaaid.service ] || die "vaaid.service is not the package's unit: $(prop vaaid.service FragmentPath)"
	case "$(prop vaaid.service ExecStart)" in *"path=/usr/sbin/vaaid "*) ;; *) die "vaaid.service does not run /usr/sbin/vaaid: $(prop vaaid.service ExecStart)" ;; esac
	[ "$(prop vaaid.service CapabilityBoundingSet)" = cap_net_admin ] || die "vaaid.service's capabilities: $(prop vaaid.service CapabilityBoundingSet) (want cap_net_admin only)"
	log "before: $(systemd-analyze security vaaid.service 2>/dev/null | tail -1)"
	[ "$(systemctl is-enabled vaaid.service)" = enabled ] || die "vaaid.service is not enabled"
	[ "$(systemctl is-active vaaid.service)" = active ] || die "vaaid.service is not active: $(systemctl status vaaid.service --no-pager 2>&1 | tail -5)"
	# Type=notify (issue 25): READY=1 made it active; a STATUS line; the watchdog armed
	[ "$(prop vaaid.service Type)" = notify ] || die "vaaid.service is Type=$(prop vaaid.service Type), not notify"
	[ "$(prop vaaid.service NotifyAccess)" = main ] || die "vaaid.service NotifyAccess=$(prop vaaid.service NotifyAccess)"
	[ "$(prop vaaid.service WatchdogUSec)" = 30s ] || die "vaaid.service WatchdogUSec=$(prop vaaid.service WatchdogUSec) (want 30s)"
	case "$(prop vaaid.service StatusText)" in "serving 0 LUN(s); pool default "*"% used") ;;
	*) die "vaaid.service's STATUS: '$(prop vaaid.service StatusText)'" ;; esac
	[ "$(systemctl is-enabled rtslib-fb-targetctl.service)" = enabled ] || die "rtslib-fb-targetctl.service is not enabled (Debian enables it)"
	case " $(prop vaaid.service Before) " in *" rtslib-fb-targetctl.service "*) ;; *) die "vaaid.service is not ordered before rtslib-fb-targetctl.service" ;; esac
	case " $(prop rtslib-fb-targetctl.service Wants) " in *" vaaid.service "*) ;; *) die "rtslib-fb-targetctl.service does not want vaaid.service" ;; esac
	# wanted, not required: a crash or restart of vaaid must not stop the restore unit (targetctl clear)
	case " $(prop rtslib-fb-targetctl.service Requires) " in *" vaaid.service "*) die "rtslib-fb-targetctl.service requires vaaid.service (a vaaid restart would clear LIO)" ;; esac
	# a persistent journal, so that the next boot can read how this one stopped
	mkdir -p /var/log/journal
	systemd-tmpfiles --create --prefix /var/log/journal >/dev/null 2>&1 || true
	journalctl --flush >/dev/null 2>&1 || true

	log "targetcli: user:vaai backstore, tcm_loop and iSCSI exports"
	targetcli /backstores/user:vaai create name=sysd0 size=64M cfgstring=default/sysd0 >/dev/null ||
		die "targetcli create user:vaai failed"
	targetcli /loopback create $LOOP >/dev/null || die "targetcli /loopback create"
	targetcli /loopback/$LOOP/luns create /backstores/user:vaai/sysd0 >/dev/null || die "loopback lun"
	targetcli /iscsi create $IQN >/dev/null || die "targetcli /iscsi create"
	targetcli /iscsi/$IQN/tpg1/luns create /backstores/user:vaai/sysd0 >/dev/null || die "iscsi lun"
	targetcli /iscsi/$IQN/tpg1 set attribute authentication=0 generate_node_acls=1 demo_mode_write_protect=0 >/dev/null ||
		die "iscsi tpg attributes"
	dev=$(vaai_disk) || die "the user:vaai LUN did not appear as a disk"
	sg_turs "$dev" >/dev/null 2>&1 || true
	pat=$(mktemp); trap 'rm -f "$pat"; journalctl -b --no-pager >/out/systemd-$PHASE.journal 2>&1 || true' EXIT
	head -c 8388608 /dev/urandom >"$pat"
	dd if="$pat" of="$dev" bs=1M oflag=direct status=none || die "write to $dev"
	sha256sum <"$pat" | cut -d' ' -f1 >"$SUM"
	targetcli saveconfig >/dev/null || die "targetcli saveconfig"
	[ -s /etc/rtslib-fb-target/saveconfig.json ] || die "no /etc/rtslib-fb-target/saveconfig.json"
	grep -q '"plugin": "user"' /etc/rtslib-fb-target/saveconfig.json || die "saveconfig.json has no user backstore"
	sync
	# the STATUS line follows (sent every 10 s)
	for t in $(seq 1 100); do
		case "$(prop vaaid.service StatusText)" in "serving 1 LUN(s);"*) break ;; esac
		sleep 0.3
	done
	case "$(prop vaaid.service StatusText)" in "serving 1 LUN(s);"*) ;;
	*) die "vaaid.service's STATUS after the LUN came: '$(prop vaaid.service StatusText)'" ;; esac
	log "before: Type=notify, STATUS '$(prop vaaid.service StatusText)', watchdog 30s"
	log "before: LUN created and saved, 8 MiB written; powering off through systemd"
	;;
after)
	[ -s "$SUM" ] || die "no $SUM: the first boot did not run (or its root disk was not kept)"
	# how the first boot stopped (persistent journal of boot -1)
	prev=$(journalctl -b -1 -u vaaid.service --no-pager 2>/dev/null || true)
	case "$prev" in *"vaaid stopped"*) ;; *) die "previous boot: vaaid did not log a clean stop: $(echo "$prev" | tail -5)" ;; esac
	case "$prev" in *"Failed with result"*|*"SIGKILL"*) die "previous boot: vaaid.service failed or was killed: $(echo "$prev" | tail -5)" ;; esac
	[ "$(systemctl is-active vaaid.service)" = active ] || die "vaaid.service is not active after the reboot"
	[ "$(systemctl is-active rtslib-fb-targetctl.service)" = active ] ||
		die "rtslib-fb-targetctl.service failed: $(journalctl -b -u rtslib-fb-targetctl.service --no-pager | tail -5)"
	up=$(prop vaaid.service ActiveEnterTimestampMonotonic)
	restore=$(prop rtslib-fb-targetctl.service ExecMainStartTimestampMonotonic)
	[ "$up" -gt 0 ] && [ "$restore" -gt 0 ] || die "no start timestamps (vaaid $up, targetctl $restore)"
	[ "$up" -le "$restore" ] || die "targetctl restore started ($restore us) before vaaid was up ($up us)"
	dev=$(vaai_disk) || die "the saved user:vaai LUN did not come back after the reboot"
	sg_turs "$dev" >/dev/null 2>&1 || true
	got=$(dd if="$dev" bs=1M count=8 iflag=direct status=none | sha256sum | cut -d' ' -f1)
	[ "$got" = "$(cat "$SUM")" ] || die "data differs after the reboot"
	# The portal may still be coming up when targetctl's unit is done (once in CI an
	# iscsi-inq right after the restore did not get through its login under TCG): try
	# for up to 30 s, and name what the last try said.
	ok=0
	for try in $(seq 1 30); do
		if out=$(timeout 10 iscsi-inq "iscsi://127.0.0.1/$IQN/0" 2>&1); then ok=1; break; fi
		sleep 1
	done
	[ $ok = 1 ] || die "the restored iSCSI target does not answer after 30 tries: $out"
	[ "$try" = 1 ] || log "after: iSCSI answered on try $try"
	vaaictl volume list | grep 'sysd0' >/dev/null || die "vaaictl volume list has no sysd0"
	log "after: vaaid up before targetctl restore; LUN, data and iSCSI portal back after the reboot"

	# A crash with the LUN live, inside the sandbox: systemd restarts vaaid
	# (Restart=on-failure) alone, and vaaid serves the existing LUN again after
	# resetting its ring through configfs (writable: ReadWritePaths=).
	pid=$(prop vaaid.service MainPID)
	restore=$(prop rtslib-fb-targetctl.service ActiveEnterTimestampMonotonic)
	systemctl kill --kill-who=main -s KILL vaaid.service
	for t in $(seq 1 150); do
		now=$(prop vaaid.service MainPID)
		[ "$now" != 0 ] && [ "$now" != "$pid" ] && [ "$(systemctl is-active vaaid.service)" = active ] && break
		sleep 0.2
	done
	[ "$now" != 0 ] && [ "$now" != "$pid" ] || die "vaaid.service was not restarted after SIGKILL (MainPID $now)"
	for t in $(seq 1 100); do
		j=$(journalctl -b -u vaaid.service --no-pager _PID="$now")
		case "$j" in *"serving sysd0"*) break ;; esac
		sleep 0.2
	done
	case "$j" in *"serving sysd0"*) ;; *) die "the restarted vaaid does not serve sysd0: $(echo "$j" | tail -5)" ;; esac
	case "$j" in *"ring reset not available"*) die "the restarted vaaid could not reset the ring: $(echo "$j" | grep 'ring reset')" ;; esac
	[ "$(systemctl is-active rtslib-fb-targetctl.service)" = active ] &&
		[ "$(prop rtslib-fb-targetctl.service ActiveEnterTimestampMonotonic)" = "$restore" ] ||
		die "rtslib-fb-targetctl.service was stopped or restarted with vaaid (targetctl clear): $(journalctl -b -u rtslib-fb-targetctl.service --no-pager | tail -3)"
	sg_turs "$dev" >/dev/null 2>&1 || true
	got=$(dd if="$dev" bs=1M count=8 iflag=direct status=none | sha256sum | cut -d' ' -f1)
	[ "$got" = "$(cat "$SUM")" ] || die "data differs after vaaid's restart"
	log "after: vaaid killed and restarted by systemd; the live LUN served again (ring reset through configfs), data intact"

	# The watchdog (WatchdogSec=30, pinged from the reactor): first a ping of the
	# reactor's timer after the one sent with READY=1 (systemd records the last
	# ping: WatchdogTimestampMonotonic), so that the pings are shown to work; then
	# a vaaid that stops answering (SIGSTOP: its reactor stands still) is found by
	# systemd, which kills it (SIGABRT, then SIGCONT) and restarts it.
	pid=$(prop vaaid.service MainPID)
	w0=$(prop vaaid.service WatchdogTimestampMonotonic)
	for t in $(seq 1 150); do
		w=$(prop vaaid.service WatchdogTimestampMonotonic)
		[ "$w" -gt "$w0" ] && break
		sleep 0.2
	done
	[ "$w" -gt "$w0" ] || die "no watchdog ping from vaaid's reactor within 30 s (last ping at $w0 us)"
	[ "$(prop vaaid.service MainPID)" = "$pid" ] || die "vaaid was restarted while it pinged its watchdog"
	# (asked of systemd itself: journald may lag far behind under TCG)
	n0=$(prop vaaid.service NRestarts)
	kill -STOP "$pid"
	for t in $(seq 1 120); do
		now=$(prop vaaid.service MainPID)
		[ "$(prop vaaid.service NRestarts)" -gt "$n0" ] && [ "$now" != 0 ] && [ "$now" != "$pid" ] &&
			[ "$(systemctl is-active vaaid.service)" = active ] && break
		sleep 1
	done
	kill -CONT "$pid" 2>/dev/null || true
	[ "$(prop vaaid.service NRestarts)" -gt "$n0" ] && [ "$now" != 0 ] && [ "$now" != "$pid" ] ||
		die "vaaid.service was not restarted within 120 s of stopping vaaid (watchdog 30 s; NRestarts $(prop vaaid.service NRestarts), MainPID $now)"
	# only the watchdog can have ended a stopped process; its message, when journald has it
	why=$(journalctl -b _PID=1 --no-pager 2>/dev/null | grep -o "vaaid.service: Watchdog timeout.*" | tail -1 || true)
	log "after: stopped vaaid restarted by systemd (${why:-no watchdog message in the journal yet})"
	sg_turs "$dev" >/dev/null 2>&1 || true
	got=$(dd if="$dev" bs=1M count=8 iflag=direct status=none | sha256sum | cut -d' ' -f1)
	[ "$got" = "$(cat "$SUM")" ] || die "data differs after the watchdog restart"
	log "after: watchdog timeout found by systemd, vaaid restarted, the live LUN served again, data intact"
	;;
*) die "unknown phase '$PHASE' (before|after)" ;;
esac

#!/bin/bash
# tests/host/systemd_reboot.sh — the systemd unit and a reboot, end to end:
# boots the LIO guest twice on the same disks (scripts/vm/run with
# VAAID_VM_INIT=systemd VAAID_VM_PERSIST=DIR), systemd as PID 1 and vaaid
# installed from its Debian package (build/deb/vaaid_*.deb, made by
# scripts/build-deb here first unless it is newer than every file of the
# tree; `apt-get install --no-download` in the guest) with the sandboxed
# tools/dist/vaaid.service enabled by the package. First boot: targetcli
# creates a user:vaai LUN, data written, saveconfig, clean poweroff. Second
# boot: rtslib-fb-targetctl restores the saved configuration after vaaid is
# up, and the LUN is back with its data (tests/vm/systemd-reboot.sh).
# Uses no host port (--port 0). Exit 0 only if both boots pass.
set -euo pipefail
cd "$(dirname "$0")/../.."

. tests/host/lib.sh
# The package of this tree: (re)built when missing or older than any file of
# the tree (tracked, or untracked and not ignored).
need_deb "systemd reboot test" || exit 1
DIR=$(mktemp -d /tmp/vaaid-systemd.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
export VAAID_VM_INIT=systemd VAAID_VM_PERSIST=$DIR VAAID_VM_DISK_SIZE=8G
for phase in before after; do
	echo "== systemd reboot test: boot '$phase'" >&2
	if ! scripts/vm/run --port 0 --timeout 600 -- tests/vm/systemd-reboot.sh "$phase"; then
		echo "systemd_reboot: boot '$phase' FAILED (journal: build/vm-out/systemd-$phase.journal, console: build/vm-out/console.log)" >&2
		exit 1
	fi
done
echo "systemd_reboot: passed (vaaid from its package; vaaid.service before rtslib-fb-targetctl; saved user:vaai LUN back with its data after a reboot)" >&2

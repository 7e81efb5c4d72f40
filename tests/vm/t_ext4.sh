#!/bin/bash
# mkfs.ext4 on a vaaid LUN, files written, read back after remount.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
read -r _ _ sd _ < <(/vaaid/tests/vm/setup-luns.sh 1 2G)
mkfs.ext4 -q -F "$sd"
mkdir -p /mnt/t
mount "$sd" /mnt/t
for i in 1 2 3; do head -c $((8 << 20)) /dev/urandom > /mnt/t/f$i; done
(cd /mnt/t && md5sum f1 f2 f3 > /tmp/sums)
umount /mnt/t
echo 3 > /proc/sys/vm/drop_caches
mount "$sd" /mnt/t
(cd /mnt/t && md5sum -c --quiet /tmp/sums) || die "files changed across remount"
umount /mnt/t
log "ext4 ok"

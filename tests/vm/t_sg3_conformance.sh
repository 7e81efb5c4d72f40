#!/bin/bash
# tests/conformance/sg3_vaai.sh on vol0 (sg3_utils + Linux sd discard paths), then
# fstrim on ext4 on vol1: deleting files and trimming gives the space back to the pool.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mapfile -t L < <(/vaaid/tests/vm/setup-luns.sh 2 2G)
read -r _ sg0 sd0 _ <<<"${L[0]}"
read -r _ _ sd1 _ <<<"${L[1]}"
/vaaid/tests/conformance/sg3_vaai.sh "$sg0" "$sd0" default/vol0
mapped1() { "$VAAICTL" --json status | python3 -c '
import json, sys
for p in json.load(sys.stdin)["pools"]:
    for v in p["volumes"]:
        if p["pool"]["name"] == "default" and v["name"] == "vol1":
            print(v["mapped"])'; }
mkfs.ext4 -q -F -E nodiscard "$sd1" || die "mkfs.ext4"
mnt=$(mktemp -d)
mount "$sd1" "$mnt" || die "mount"
dd if=/dev/urandom of="$mnt/big" bs=1M count=64 oflag=direct status=none || die "write 64 MiB"
sync
full=$(mapped1)
rm "$mnt/big"
sync
fstrim "$mnt" || die "fstrim"
after=$(mapped1)
umount "$mnt"
[ $((full - after)) -ge $((60 << 20)) ] || die "fstrim gave back $(((full - after) >> 20)) MiB of 64"
log "sg3_utils, sd discard and fstrim ok (fstrim gave back $(((full - after) >> 20)) MiB)"

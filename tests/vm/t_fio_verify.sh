#!/bin/bash
# Direct-I/O writes of mixed sizes with crc32c verify on /dev/sdY, and a 4096-byte-block LUN.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
read -r _ _ sd _ < <(/vaaid/tests/vm/setup-luns.sh 1 2G)
fio --name=verify --filename="$sd" --direct=1 --ioengine=libaio --iodepth=16 --rw=randwrite \
	--bsrange=4k-256k --size=256M --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--randrepeat=0 --output-format=terse >/dev/null || die "fio verify failed on $sd"
fio --name=seqverify --filename="$sd" --direct=1 --ioengine=libaio --iodepth=8 --rw=write \
	--bs=1M --offset=1G --size=128M --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--output-format=terse >/dev/null || die "sequential verify failed"
log "fio verify ok"

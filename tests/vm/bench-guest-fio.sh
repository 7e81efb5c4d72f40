#!/bin/bash
# Guest side of scripts/bench/guest-fio: fio 4 KiB random read and random write,
# iodepth 16, direct, RUNTIME seconds each, on a vaaid LUN, a LIO fileio LUN and
# a tcmu-runner qcow LUN in the same guest and run. Each LUN's first 1 GiB is
# written sequentially first (reads of never-written thin space would cost
# nothing and flatter vaaid), and the random I/O stays in that 1 GiB.
# Admin choices (written down in docs/performance.md): hw_max_sectors 8192,
# max_data_area_mb 64, cmd_time_out 120 s for the TCMU devices; fileio with
# write_back=0 (O_DSYNC, the same durability contract as vaaid's WCE=0);
# qcow through tcmu-runner (its own defaults). vaaid and tcmu-runner cannot
# serve at the same time (both own org.kernel.TCMUService1 and answer every
# TCM-USER netlink event), so the qcow LUN is measured after vaaid is stopped.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
RT=${RUNTIME:-30}
AREA=1G
C=/sys/kernel/config/target
LOOP=$C/loopback/naa.50014050aa1d0001/tpgt_1

iops() { # iops DEV RW: print the IOPS fio measured (a run with an I/O error is no measurement)
	local out
	# (in $(iops ...) errexit is off: each failure is checked here)
	out=$(fio --name=b --filename="$1" --direct=1 --ioengine=libaio --iodepth=16 --bs=4k \
		--rw="$2" --size=$AREA --time_based --runtime="$RT" --randrepeat=0 --norandommap \
		--output-format=json) || die "fio $2 on $1 failed: $out"
	python3 -c 'import json,sys
j = json.load(sys.stdin)["jobs"][0]
if j["error"]:
    sys.exit("fio error %d" % j["error"])
print(int(j[sys.argv[1]]["iops"]))' "$([ "$2" = randread ] && echo read || echo write)" <<<"$out" ||
		die "fio $2 on $1: no measurement"
}

prefill() { fio --name=fill --filename="$1" --direct=1 --ioengine=libaio --iodepth=4 --bs=1M \
	--rw=write --size=$AREA --output-format=terse >/dev/null || die "prefill of $1 failed"; }

# vaaid LUN (LUN 0) + fileio LUN (LUN 1) on the same scratch disk
read -r _ _ vsd _ < <(/vaaid/tests/vm/setup-luns.sh 1 4G)
truncate -s 4G "$STATE/fileio.img"
mkdir -p $C/core/fileio_1/bench_fio
echo -n "fd_dev_name=$STATE/fileio.img,fd_dev_size=$((4 << 30))" > $C/core/fileio_1/bench_fio/control
echo 1 > $C/core/fileio_1/bench_fio/enable
echo 0 > $C/core/fileio_1/bench_fio/attrib/emulate_write_cache 2>/dev/null || true
mkdir -p $LOOP/lun/lun_1
ln -s $C/core/fileio_1/bench_fio $LOOP/lun/lun_1/fio
fsd=$(sd_of_lun 1)
prefill "$vsd"; prefill "$fsd"
v_r=$(iops "$vsd" randread); f_r=$(iops "$fsd" randread)
v_w=$(iops "$vsd" randwrite); f_w=$(iops "$fsd" randwrite)
log "vaaid $vsd: read $v_r write $v_w; fileio $fsd: read $f_r write $f_w"

# tcmu-runner qcow LUN, vaaid stopped
/vaaid/tests/vm/lio-clear.sh
stop_vaaid
qemu-img create -q -f qcow2 "$STATE/bench.qcow2" 4G
tcmu-runner >"$OUT/tcmu-runner.log" 2>&1 &
trp=$!
sleep 2
mkdir -p $C/core/user_2/bench_qcow
echo -n "dev_config=qcow/$STATE/bench.qcow2" > $C/core/user_2/bench_qcow/control
echo -n "dev_size=$((4 << 30))" > $C/core/user_2/bench_qcow/control
echo -n "hw_max_sectors=8192" > $C/core/user_2/bench_qcow/control
echo 1 > $C/core/user_2/bench_qcow/enable
echo 120 > $C/core/user_2/bench_qcow/attrib/cmd_time_out 2>/dev/null || true
mkdir -p $LOOP
[ -e $LOOP/nexus ] && [ -n "$(cat $LOOP/nexus 2>/dev/null)" ] || echo -n naa.50014050aa1d0002 > $LOOP/nexus
mkdir -p $LOOP/lun/lun_2
ln -s $C/core/user_2/bench_qcow $LOOP/lun/lun_2/qcow
qsd=$(sd_of_lun 2)
prefill "$qsd"
q_r=$(iops "$qsd" randread); q_w=$(iops "$qsd" randwrite)
log "qcow $qsd: read $q_r write $q_w"
/vaaid/tests/vm/lio-clear.sh
kill $trp; wait $trp 2>/dev/null || true
ratio() { python3 -c "import sys; a,b=map(float,sys.argv[1:]); print(f'{a/b:.2f}' if b else 'inf')" "$1" "$2"; }
echo "randread_4k vaaid_iops=$v_r fileio_iops=$f_r qcow_iops=$q_r vaaid_vs_fileio=$(ratio "$v_r" "$f_r") vaaid_vs_qcow=$(ratio "$v_r" "$q_r")"
echo "randwrite_4k vaaid_iops=$v_w fileio_iops=$f_w qcow_iops=$q_w vaaid_vs_fileio=$(ratio "$v_w" "$f_w") vaaid_vs_qcow=$(ratio "$v_w" "$q_w")"

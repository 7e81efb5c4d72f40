#!/bin/bash
# Remove every LIO object (LUN links, targets, user and fileio backstores) in
# dependency order.
# Volumes in vaaid's pools are kept: deleting a backstore never deletes data.
C=/sys/kernel/config/target

t=""
for t in $C/loopback/*/tpgt_* $C/iscsi/*/tpgt_*; do
	[ -d "$t" ] || continue
	[ -f "$t/enable" ] && echo 0 > "$t/enable" 2>/dev/null
	for l in "$t"/lun/lun_*; do
		[ -d "$l" ] || continue
		find "$l" -maxdepth 1 -type l -exec rm {} \;
		rmdir "$l"
	done
	for np in "$t"/np/*; do [ -d "$np" ] && rmdir "$np"; done
	rmdir "$t"
done
for w in $C/loopback/* $C/iscsi/*; do
	case "$w" in */naa.*|*/iqn.*) rmdir "$w" 2>/dev/null || true ;; esac
done
for d in $C/core/user_*/* $C/core/fileio_*/*; do
	[ -d "$d" ] && [ -f "$d/enable" ] && rmdir "$d"
done
for h in $C/core/user_* $C/core/fileio_*; do [ -d "$h" ] && rmdir "$h" 2>/dev/null; done
exit 0

#!/usr/bin/env python3
"""sgio.py DEV CDB [ALLOC]: one SCSI command through SG_IO (guest tests).

DEV is a /dev/sgN (or /dev/sdX), CDB the command's bytes in hex ("28 00 ..."
or "2800..."), ALLOC the data-in length (0 or absent: no data). Prints one
line:  status=SS key=K asc=AA ascq=QQ data=HEX
(status in hex; key/asc/ascq from the sense data, fixed or descriptor format,
"-" without sense; data: the bytes transferred, hex, "" when none). Exit 0
whatever the SCSI status; 2 when the ioctl itself fails or the command got
no SCSI answer (host_status, or a driver_status other than DRIVER_SENSE). For tests that must
assert a sense exactly (sg_raw's text differs between sg3_utils versions).
"""
import ctypes
import fcntl
import os
import sys

SG_IO = 0x2285
SG_DXFER_NONE = -1
SG_DXFER_FROM_DEV = -3


class SgIoHdr(ctypes.Structure):
    _fields_ = [
        ("interface_id", ctypes.c_int), ("dxfer_direction", ctypes.c_int),
        ("cmd_len", ctypes.c_ubyte), ("mx_sb_len", ctypes.c_ubyte),
        ("iovec_count", ctypes.c_ushort), ("dxfer_len", ctypes.c_uint),
        ("dxferp", ctypes.c_void_p), ("cmdp", ctypes.c_void_p), ("sbp", ctypes.c_void_p),
        ("timeout", ctypes.c_uint), ("flags", ctypes.c_uint), ("pack_id", ctypes.c_int),
        ("usr_ptr", ctypes.c_void_p), ("status", ctypes.c_ubyte),
        ("masked_status", ctypes.c_ubyte), ("msg_status", ctypes.c_ubyte),
        ("sb_len_wr", ctypes.c_ubyte), ("host_status", ctypes.c_ushort),
        ("driver_status", ctypes.c_ushort), ("resid", ctypes.c_int),
        ("duration", ctypes.c_uint), ("info", ctypes.c_uint),
    ]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cdb = bytes.fromhex(sys.argv[2].replace(" ", ""))
    alloc = int(sys.argv[3], 0) if len(sys.argv) > 3 else 0
    cdb_buf = ctypes.create_string_buffer(cdb, len(cdb))
    sense = ctypes.create_string_buffer(64)
    data = ctypes.create_string_buffer(max(alloc, 1))
    h = SgIoHdr(interface_id=ord("S"),
                dxfer_direction=SG_DXFER_FROM_DEV if alloc else SG_DXFER_NONE,
                cmd_len=len(cdb), mx_sb_len=64, dxfer_len=alloc,
                dxferp=ctypes.addressof(data) if alloc else None,
                cmdp=ctypes.addressof(cdb_buf), sbp=ctypes.addressof(sense),
                timeout=120000)
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_NONBLOCK)
    try:
        fcntl.ioctl(fd, SG_IO, h)
    except OSError as e:
        print("sgio: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        sys.exit(2)
    finally:
        os.close(fd)
    # a transport failure (the command never reached the LUN, or timed out) is
    # not a SCSI answer: host_status, or driver_status other than DRIVER_SENSE
    # (0x08, set whenever sense data came back)
    if h.host_status or (h.driver_status & ~0x08):
        print("sgio: %s: host_status=%#x driver_status=%#x (no SCSI answer)"
              % (sys.argv[1], h.host_status, h.driver_status), file=sys.stderr)
        sys.exit(2)
    s = sense.raw[:h.sb_len_wr]
    key = asc = ascq = "-"
    if len(s) >= 14 and (s[0] & 0x7F) in (0x70, 0x71):
        key, asc, ascq = "%x" % (s[2] & 0x0F), "%02x" % s[12], "%02x" % s[13]
    elif len(s) >= 4 and (s[0] & 0x7F) in (0x72, 0x73):
        key, asc, ascq = "%x" % (s[1] & 0x0F), "%02x" % s[2], "%02x" % s[3]
    n = max(alloc - h.resid, 0) if alloc else 0
    print("status=%02x key=%s asc=%s ascq=%s data=%s" % (h.status, key, asc, ascq, data.raw[:n].hex()))


main()

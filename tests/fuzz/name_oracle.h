/*
 * What the fuzz targets require of a pool or volume name vaaid accepted
 * (fuzz_cfgstring, fuzz_netlink, fuzz_config), written from what the names are
 * used for, not from vaaid's check (vd_valid_name): a name becomes one file
 * name component (a pool's default file, volume state) and an argument on
 * command lines and in log lines, so it must be non-empty, at most max bytes,
 * not "." or "..", not start with '.' (hidden, or a relative path) or '-' (an
 * option), and hold no '/', no control character and no space.
 */
#ifndef VAAID_FUZZ_NAME_ORACLE_H
#define VAAID_FUZZ_NAME_ORACLE_H

#include <stdbool.h>
#include <stddef.h>

bool fz_name_safe(const char *s, size_t max);

#endif

/*
 * fuzz_cfgstring: the cfgstring (a backstore's dev_config, the D-Bus
 * CheckConfig string and the UIO name carrying it) on its own (issue 24):
 * tcmu_parse_uio_name and vd_parse_cfgstring, as the daemon and its
 * CheckConfig answer use them.
 * Input: byte 0: 0x01 the bytes are a whole UIO name (tcm-user/HBA/DEV/SUBTYPE/CFG),
 * else a cfgstring; then the string (cut at the first NUL).
 * Checked: accepted names are ones vaaid takes (vd_valid_name) and safe as a
 * file name component and an argument (fz_name_safe: no '/', not "..", ...),
 * each part of a
 * split UIO name lies in the name; a refusal comes with an error text.
 * Seeds: the cfgstrings of docs/daemon.md and tests/vm (default/ds1, POOL/VOL,
 * a missing volume, a path), names that must be refused (.., a leading . or -),
 * UIO names as LIO makes them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "name_oracle.h"
#include "seeds.h"
#include "vaaid/daemon.h"
#include "vaaid/pool.h"
#include "vaaid/tcmu_nl.h"

static _Noreturn void finding(const char *what)
{
	fprintf(stderr, "fuzz_cfgstring: FINDING: %s\n", what);
	abort();
}

static void check_cfg(const char *cfg)
{
	char pool[65], vol[65], err[256] = "";
	int rc = vd_parse_cfgstring(cfg, pool, sizeof(pool), vol, sizeof(vol), err, sizeof(err));
	if (rc == 0 && (!vd_valid_name(pool, VD_POOL_NAME_MAX) || !vd_valid_name(vol, VPOOL_NAME_MAX)))
		finding("a cfgstring accepted with a name vaaid refuses");
	if (rc == 0 && (!fz_name_safe(pool, VD_POOL_NAME_MAX) || !fz_name_safe(vol, VPOOL_NAME_MAX)))
		finding("a cfgstring accepted with an unsafe name ('/', '..', a leading '.' or '-', ...)");
	if (rc < 0 && !err[0])
		finding("a cfgstring refused without an error text");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	char s[TCMU_NL_NAME_MAX + 64];
	size_t n = size - 1 < sizeof(s) - 1 ? size - 1 : sizeof(s) - 1;
	memcpy(s, data + 1, n);
	s[n] = 0;
	if (!(data[0] & 0x01)) {
		check_cfg(s);
		return 0;
	}
	struct tcmu_uio_name un;
	if (tcmu_parse_uio_name(s, &un) < 0)
		return 0;
	const char *parts[4] = {un.hba, un.dev, un.subtype, un.cfg};
	for (int i = 0; i < 4; i++)
		if (!parts[i] || parts[i] < un.buf || parts[i] >= un.buf + sizeof(un.buf) ||
		    strnlen(parts[i], sizeof(un.buf)) == sizeof(un.buf))
			finding("a part of a UIO name outside the name");
	check_cfg(un.cfg);
	return 0;
}

int fuzz_make_seeds(const char *dir)
{
	const char *cfgs[] = {"default/ds1", "pool-2/vol_a.1", "default/", "/ds1", "default/ds1/x",
			      "/var/lib/vaaid/default.pool", "default/..", "../ds1", ".hidden/ds1",
			      "default/-rf"};
	const char *uio[] = {"tcm-user/1/ds1/vaai/default/ds1", "tcm-user/3/x/vaai/p/v/extra",
			     "tcm-user/1/ds1/vaai", "tcm-user/1/ds1/vaai/../ds1"};
	char name[32], in[300];
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		in[0] = 0;
		snprintf(in + 1, sizeof(in) - 1, "%s", cfgs[i]);
		snprintf(name, sizeof(name), "cfg-%zu", i);
		if (fuzz_write_seed(dir, name, in, 1 + strlen(cfgs[i])) < 0)
			return -1;
	}
	for (size_t i = 0; i < sizeof(uio) / sizeof(uio[0]); i++) {
		in[0] = 1;
		snprintf(in + 1, sizeof(in) - 1, "%s", uio[i]);
		snprintf(name, sizeof(name), "uio-%zu", i);
		if (fuzz_write_seed(dir, name, in, 1 + strlen(uio[i])) < 0)
			return -1;
	}
	return 0;
}

/*
 * fuzz_rbd_owner: the owner record an RBD pool image carries in its metadata
 * (key "vaaid.owner", src/io/rbd_owner.c), as another gateway -- or anyone
 * with access to the cluster -- may have written it.
 * Input: the record's bytes (cut at the first NUL, at most 4 KiB).
 * Checked: a record is either refused (-EINVAL, nothing half-parsed left) or
 * accepted, and then formatting it gives back exactly the input (parsing
 * accepts only what formatting writes); the dead-predecessor rule, fed the
 * record against a fixed "this process", never breaks the lock of another
 * machine or of this very process, whatever the liveness check says.
 * Seeds: records as vblk_rbd_owner_self writes them (machine-id, boot id
 * UUID), one of an earlier boot, and damaged ones.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seeds.h"
#include "vaaid/rbd_owner.h"

static _Noreturn void finding(const char *what)
{
	fprintf(stderr, "fuzz_rbd_owner: FINDING: %s\n", what);
	abort();
}

static bool dead(int pid, unsigned long long start)
{
	(void)pid, (void)start;
	return false;
}

static const struct vblk_rbd_owner me = {.machine = "0123456789abcdef0123456789abcdef",
					 .boot = "6a1f4c36-8f2e-4a43-9d55-0d3f1e2b7c11",
					 .pid = 4242,
					 .start = 123456,
					 .group = 1};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[4097];
	size_t n = size < sizeof(s) - 1 ? size : sizeof(s) - 1;
	memcpy(s, data, n);
	s[n] = 0;
	struct vblk_rbd_owner o, zero;
	memset(&zero, 0, sizeof(zero));
	memset(&o, 0x5a, sizeof(o));
	int rc = vblk_rbd_owner_parse(s, &o);
	if (rc < 0) {
		if (rc != -EINVAL)
			finding("a refusal other than -EINVAL");
		if (memcmp(&o, &zero, sizeof(o)))
			finding("a refused record left fields behind");
		return 0;
	}
	char back[VBLK_RBD_OWNER_MAX];
	if (vblk_rbd_owner_format(&o, back, sizeof(back)) < 0)
		finding("an accepted record does not format");
	if (strcmp(back, s))
		finding("an accepted record formats to other bytes");
	bool other_machine = strcmp(o.machine, me.machine) != 0;
	bool self = !strcmp(o.machine, me.machine) && !strcmp(o.boot, me.boot) && o.pid == me.pid &&
		    o.start == me.start;
	if ((other_machine || self) && vblk_rbd_owner_is_dead_local(&o, &me, dead))
		finding("the rule would break another machine's or this process's lock");
	return 0;
}

int fuzz_make_seeds(const char *dir)
{
	const char *fixed[] = {
		"machine=0123456789abcdef0123456789abcdef boot=6a1f4c36-8f2e-4a43-9d55-0d3f1e2b7c11 "
		"pid=4242 start=123456 group=1",
		"machine=0123456789abcdef0123456789abcdef boot=00000000-earlier-boot pid=17 start=9 "
		"group=0",
		"machine=gw2 boot=b pid=1 start=0 group=65535",
		"machine=m boot=b pid=01 start=2 group=3",
		"machine=m boot=b pid=1 start=2",
		"machine=m boot=b pid=1 start=2 group=3 extra=1",
	};
	char name[32];
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		snprintf(name, sizeof(name), "record-%zu", i);
		if (fuzz_write_seed(dir, name, fixed[i], strlen(fixed[i])) < 0)
			return -1;
	}
	return 0;
}

/*
 * ackgen busy --run R --gens G1,G2,... LOG...: whether every generator has a
 * command in flight right now, as the logs say (tests/host/power_cut.sh reads
 * the relays' files this way just before it cuts the guest's power, so that
 * the cut counts; docs/durability.md).
 *
 * How it works. A tag is busy when its last record of run R (the high 32 bits
 * of the command id) is an S: the command was submitted and its answer is not
 * on the host. A generator is busy when one of its tags (the generator's name,
 * or the name and "/thread") is. Exit 0 when every generator is busy; 1 (and
 * the idle ones on stdout) when not; 2 on a usage or read error. One pass over
 * the logs, a few thousand lines per boot: milliseconds.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ackgen.h"

#define MAX_TAGS 64

int busy_main(int argc, char **argv)
{
	uint64_t run = 0;
	const char *list = NULL;
	int i = 0;
	for (; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--run"))
			run = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--gens"))
			list = argv[i + 1];
		else
			break;
	}
	if (!run || !list || i == argc) {
		fprintf(stderr, "usage: ackgen busy --run R --gens G1,G2,... LOG...\n");
		return 2;
	}
	char tags[MAX_TAGS][64];
	bool open[MAX_TAGS];
	unsigned nt = 0;
	for (; i < argc; i++) {
		FILE *f = fopen(argv[i], "r");
		if (!f) {
			perror(argv[i]);
			return 2;
		}
		char line[512], kind, tag[64];
		uint64_t id;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%c %63s %" SCNu64, &kind, tag, &id) != 3 || id >> 32 != run ||
			    (kind != 'S' && kind != 'A'))
				continue;
			unsigned t = 0;
			while (t < nt && strcmp(tags[t], tag))
				t++;
			if (t == nt) {
				if (nt == MAX_TAGS)
					continue;
				snprintf(tags[nt++], sizeof(tags[0]), "%s", tag);
			}
			open[t] = kind == 'S';
		}
		fclose(f);
	}
	char gens[32][64];
	unsigned ng = parse_gens(list, gens), idle = 0;
	for (unsigned g = 0; g < ng; g++) {
		size_t gl = strlen(gens[g]);
		bool b = false;
		for (unsigned t = 0; t < nt && !b; t++)
			b = open[t] && !strncmp(tags[t], gens[g], gl) && (!tags[t][gl] || tags[t][gl] == '/');
		if (!b)
			printf("%s%s", idle++ ? " " : "idle: ", gens[g]);
	}
	if (idle)
		printf("\n");
	return idle ? 1 : 0;
}

/*
 * fuzz_vaaictl: vaaictl's argument vectors (issue 24), through vaaictl_parse
 * (tools/vaaictl/args.c), which checks them and builds the request line sent
 * to vaaid.
 *
 * Input: the arguments after argv[0], NUL-separated (at most 16; an empty
 * word is an empty argument).
 * Checked: no crash (ASan, UBSan); the result is 0 or the usage status 2; a
 * refusal (2) and --help printed a message; an accepted vector gives one
 * request line of at most the 2047 bytes the daemon reads, with no newline or
 * control byte in it, that the daemon's own tokenizer (vd_control_tokenize,
 * src/daemon/control_request.c) splits into the words of one of the daemon's
 * requests, those words being the command's: names and paths as given, sizes
 * as vparse_size reads them (in bytes), --extent as a fifth word, --force as
 * "force".
 * Seeds: every command well-formed (with --json, --socket), and typical typos.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "seeds.h"
#include "vaaid/control_request.h"
#include "vaaid/util.h"

#define MAX_WORDS 16

static _Noreturn void finding(const char *what, const char *line)
{
	fprintf(stderr, "fuzz_vaaictl: FINDING: %s (request line '%s')\n", what, line ? line : "");
	abort();
}

/* tok[i] is the size word s as vaaictl sends it (vparse_size's bytes, in decimal)? */
static bool size_word(const char *tok, const char *s)
{
	uint64_t v;
	char want[32];
	if (vparse_size(s, &v) < 0)
		return false;
	snprintf(want, sizeof(want), "%" PRIu64, v);
	return !strcmp(tok, want);
}

/* The request's words against the command's (a = the words after the options). */
static void check_words(char **tok, int nt, char **a, int n, const char *line)
{
	bool ok;
	if (!strcmp(a[0], "status")) {
		ok = nt == 1 && !strcmp(tok[0], "status");
	} else if (!strcmp(a[0], "top")) { /* a live view of stats */
		ok = nt == 1 && !strcmp(tok[0], "stats");
	} else if (!strcmp(a[0], "stats")) {
		ok = nt == n && !strcmp(tok[0], "stats") && (n == 1 || !strcmp(tok[1], a[1]));
	} else if (n >= 2 && !strcmp(a[1], "list")) {
		ok = nt == 2 && (!strcmp(tok[0], "pool") || !strcmp(tok[0], "volume")) &&
		     !strcmp(tok[0], a[0]) && !strcmp(tok[1], "list");
	} else if (n >= 2 && !strcmp(a[0], "pool") && !strcmp(a[1], "create")) {
		const char *ext = NULL;
		bool force = false;
		for (int k = 5; k < n; k++) {
			if (!strcmp(a[k], "--force"))
				force = true;
			else if (!strcmp(a[k], "--extent") && k + 1 < n)
				ext = a[++k];
		}
		int want = 5 + (ext != NULL) + force;
		ok = nt == want && !strcmp(tok[0], "pool") && !strcmp(tok[1], "create") &&
		     !strcmp(tok[2], a[2]) && !strcmp(tok[3], a[3]) && size_word(tok[4], a[4]) &&
		     (!ext || size_word(tok[5], ext)) && (!force || !strcmp(tok[nt - 1], "force"));
	} else if (n >= 2 && !strcmp(a[0], "pool") && !strcmp(a[1], "grow")) {
		ok = nt == 4 && !strcmp(tok[0], "pool") && !strcmp(tok[1], "grow") &&
		     !strcmp(tok[2], a[2]) && size_word(tok[3], a[3]);
	} else if (n >= 2 && !strcmp(a[0], "pool") && !strcmp(a[1], "takeover")) {
		ok = nt == 3 && !strcmp(tok[0], "pool") && !strcmp(tok[1], "takeover") &&
		     !strcmp(tok[2], a[2]);
	} else if (n >= 2 && !strcmp(a[0], "volume") && !strcmp(a[1], "delete")) {
		ok = nt == 3 && !strcmp(tok[0], "volume") && !strcmp(tok[1], "delete") &&
		     !strcmp(tok[2], a[2]);
	} else {
		finding("a command that is none of the daemon's requests was accepted", line);
	}
	if (!ok)
		finding("the daemon would read other words than the command's", line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 16384)
		return 0;
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	char *argv[MAX_WORDS + 2] = {"vaaictl"};
	int argc = 1;
	for (size_t pos = 0; argc <= MAX_WORDS && pos <= size;) {
		argv[argc++] = buf + pos;
		pos += strlen(buf + pos) + 1;
	}
	argv[argc] = NULL;
	char *msg = NULL;
	size_t msglen = 0;
	FILE *err = open_memstream(&msg, &msglen);
	if (!err) {
		free(buf);
		return 0;
	}
	struct vaaictl_req q;
	int rc = vaaictl_parse(argc, argv, err, &q);
	fclose(err);
	if (rc != 0 && rc != 2)
		finding("vaaictl_parse returned neither 0 nor 2", NULL);
	if ((rc == 2 || q.help) && msglen == 0)
		finding("a refusal (or --help) printed no message", NULL);
	if (rc == 0 && !q.help) {
		size_t len = strnlen(q.line, sizeof(q.line));
		if (len == 0 || len > VD_CTL_LINE_MAX)
			finding("a request line that is empty or longer than the daemon reads", q.line);
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)q.line[i] < 0x20 || q.line[i] == 0x7f)
				finding("a newline or control byte in the request line", q.line);
		if (!q.sock || q.nwords < 1)
			finding("an accepted vector without a socket or words", q.line);
		char copy[sizeof(q.line)], *tok[VD_CTL_MAX_WORDS];
		memcpy(copy, q.line, sizeof(copy));
		int nt = vd_control_tokenize(copy, tok, VD_CTL_MAX_WORDS);
		if (nt < 1 || nt > VD_CTL_MAX_WORDS)
			finding("a request line of no words or of more than the daemon reads", q.line);
		check_words(tok, nt, q.words, q.nwords, q.line);
	}
	free(msg);
	free(buf);
	return 0;
}

/* ---- seeds: every command well-formed, then typical typos ('|' separates words) */
int fuzz_make_seeds(const char *dir)
{
	static const char *const seeds[][2] = {
		{"status", "status"},
		{"top", "top|--interval|0.5"},
		{"stats", "stats|default/vol1"},
		{"json-status", "--json|status"},
		{"socket-status", "--socket|/run/vaaid/control|status"},
		{"pool-list", "pool|list"},
		{"volume-list", "--json|volume|list"},
		{"pool-create", "pool|create|p2|/var/lib/vaaid/p2.pool|100G"},
		{"pool-create-extent-force", "pool|create|p2|/dev/sdb|500G|--extent|4M|--force"},
		{"pool-create-force-extent", "pool|create|p2|/srv/p2|1T|--force|--extent|64K"},
		{"pool-grow", "pool|grow|default|200G"},
		{"pool-takeover", "pool|takeover|ceph1"},
		{"pool-create-rbd", "pool|create|c1|rbd:vaai/c1.pool|2T"},
		{"volume-delete", "volume|delete|default/vol1"},
		{"help", "--help"},
		{"typo-command", "stauts"},
		{"typo-option", "--jsn|status"},
		{"typo-socket-missing", "--socket"},
		{"typo-pool-alone", "pool"},
		{"typo-volume-create", "volume|create|default/v"},
		{"typo-relative", "pool|create|p2|p2.pool|10G"},
		{"typo-bad-size", "pool|create|p2|/x|10Q"},
		{"typo-bad-extent", "pool|create|p2|/x|10G|--extent|3K"},
		{"typo-extent-twice", "pool|create|p2|/x|10G|--extent|1M|--extent|1M"},
		{"typo-white-space", "pool|create|p 2|/x|10G"},
		{"typo-empty-word", "volume|delete|"},
		{"typo-grow-args", "pool|grow|default"},
		{"typo-takeover-args", "pool|takeover|a|b"},
		{"typo-status-args", "status|now"},
	};
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		char in[256];
		size_t len = strlen(seeds[i][1]);
		memcpy(in, seeds[i][1], len);
		for (size_t k = 0; k < len; k++)
			if (in[k] == '|')
				in[k] = 0;
		if (fuzz_write_seed(dir, seeds[i][0], in, len) < 0)
			return -1;
	}
	return 0;
}

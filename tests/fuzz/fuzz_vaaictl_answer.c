/*
 * fuzz_vaaictl_answer: vaaictl's printing of the daemon's answer (issue 24),
 * vaaictl_print_answer (tools/vaaictl/print.c), with any JSON: missing keys,
 * wrong types, huge numbers, arrays where objects are expected.
 *
 * Input: byte 0 picks the command the answer is for (bits 0-2: status, pool
 * list, volume list, pool create, pool grow, volume delete; bit 3: --json),
 * its request built by vaaictl_parse as vaaictl builds it; the rest is the
 * answer's text, read by json_tokener_parse as vaaictl reads it (text that is
 * not JSON: vaaictl stops before printing).
 * Checked: no crash (ASan, UBSan); the exit status is 0 exactly when the
 * answer has "ok" true, else 1; --json prints one line that reads back as JSON.
 * Seeds: answers as vaaid gives them (a status of two pools, an error, an ok),
 * and ones with keys missing or of the wrong type.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "args.h"
#include "print.h"
#include "seeds.h"

static _Noreturn void finding(const char *what)
{
	fprintf(stderr, "fuzz_vaaictl_answer: FINDING: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 65536)
		return 0;
	static const char *const cmds[][6] = {
		{"status"},
		{"pool", "list"},
		{"volume", "list"},
		{"pool", "create", "p2", "/srv/p2.pool", "10G"},
		{"pool", "grow", "p2", "20G"},
		{"volume", "delete", "default/vol1"},
	};
	unsigned kind = (data[0] & 7) % 6;
	char *argv[8] = {"vaaictl"};
	int argc = 1;
	if (data[0] & 8)
		argv[argc++] = "--json";
	for (int i = 0; i < 5 && cmds[kind][i]; i++)
		argv[argc++] = (char *)cmds[kind][i];
	struct vaaictl_req q;
	FILE *null = fopen("/dev/null", "w");
	if (!null)
		return 0;
	if (vaaictl_parse(argc, argv, null, &q) != 0)
		finding("the harness's own command was refused");
	fclose(null);
	char *text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = 0;
	json_object *ans = json_tokener_parse(text);
	free(text);
	if (!ans)
		return 0;
	char *out = NULL, *err = NULL;
	size_t olen = 0, elen = 0;
	FILE *fo = open_memstream(&out, &olen), *fe = open_memstream(&err, &elen);
	if (!fo || !fe) {
		if (fo)
			fclose(fo);
		if (fe)
			fclose(fe);
		json_object_put(ans);
		return 0;
	}
	int rc = vaaictl_print_answer(fo, fe, &q, ans);
	fclose(fo);
	fclose(fe);
	json_object *ok;
	bool good = json_object_object_get_ex(ans, "ok", &ok) && json_object_get_boolean(ok);
	if (rc != (good ? 0 : 1))
		finding("the exit status is not 0 exactly when the answer says ok");
	if (q.json) {
		char *nl = memchr(out, '\n', olen);
		if (!nl || nl != out + olen - 1)
			finding("--json printed other than one line");
		*nl = 0;
		json_object *back = json_tokener_parse(out);
		if (!back)
			finding("--json printed something that does not read back as JSON");
		json_object_put(back);
	}
	free(out);
	free(err);
	json_object_put(ans);
	return 0;
}

/* ---- seeds: answers as vaaid gives them, then damaged ones (byte 0: the command) */
int fuzz_make_seeds(const char *dir)
{
	static const char status[] =
		"{\"ok\":true,\"pools\":[{\"pool\":{\"size\":107374182400,\"extent\":1048576,"
		"\"capacity\":105226698752,\"used\":1048576,\"free\":105225650176,"
		"\"sharing_savings\":0,\"hydrating\":0,\"name\":\"default\","
		"\"path\":\"/var/lib/vaaid/default.pool\",\"journal_file\":"
		"\"/var/lib/vaaid/default.pool.journal\",\"whole_granule_writes\":true,"
		"\"group_flush\":false},\"volumes\":[{\"name\":\"vol1\",\"size\":10737418240,"
		"\"block_size\":512,\"mapped\":1048576,\"unshared\":1048576,\"attached\":true}],"
		"\"diag\":{\"inflight\":0}}],\"devices\":1,\"device_list\":[]}";
	static const struct {
		const char *name;
		unsigned char cmd;
		const char *json;
	} seeds[] = {
		{"status", 0, status},
		{"pool-list", 1, status},
		{"volume-list", 2, status},
		{"status-json", 8, status},
		{"created", 3, "{\"ok\":true}"},
		{"grown", 4, "{\"ok\":true}"},
		{"deleted", 5, "{\"ok\":true}"},
		{"error", 5, "{\"ok\":false,\"error\":\"no volume 'vol1' in that pool\"}"},
		{"error-json", 13, "{\"ok\":false,\"error\":\"unknown pool 'x'\"}"},
		{"error-no-text", 0, "{\"ok\":false}"},
		{"no-ok", 0, "{\"pools\":[]}"},
		{"wrong-types", 0, "{\"ok\":\"yes\",\"pools\":{\"pool\":1},\"error\":7}"},
		{"pools-wrong", 0, "{\"ok\":true,\"pools\":[1,\"x\",{\"pool\":[]},{\"pool\":{\"size\":"
				   "\"big\",\"name\":{}},\"volumes\":7}]}"},
		{"huge-numbers", 0, "{\"ok\":true,\"pools\":[{\"pool\":{\"size\":1e400,\"used\":"
				    "-5,\"free\":18446744073709551616,\"extent\":-1e300},\"volumes\":"
				    "[{\"size\":1.5e19,\"block_size\":-1,\"attached\":\"no\"}]}]}"},
		{"not-object", 0, "[1,2,3]"},
		{"string", 8, "\"ok\""},
	};
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		size_t len = strlen(seeds[i].json);
		char *in = malloc(len + 1);
		if (!in)
			return -1;
		in[0] = (char)seeds[i].cmd;
		memcpy(in + 1, seeds[i].json, len);
		int rc = fuzz_write_seed(dir, seeds[i].name, in, len + 1);
		free(in);
		if (rc < 0)
			return -1;
	}
	return 0;
}

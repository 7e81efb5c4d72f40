/*
 * fuzz_vaaictl_answer: vaaictl's printing of the daemon's answer (issue 24),
 * vaaictl_print_answer (tools/vaaictl/print.c), with any JSON: missing keys,
 * wrong types, huge numbers, arrays where objects are expected.
 *
 * Input: byte 0 picks the command the answer is for (bits 0-2: status, pool
 * list, volume list, pool create, pool grow, volume delete; bit 4: stats
 * instead; bit 3: --json),
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
		{"stats"},
	};
	unsigned kind = (data[0] & 0x10) ? 6 : (data[0] & 7) % 6; /* 10h: stats */
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
	static const char stats[] =
		"{\"ok\":true,\"luns\":[{\"dev\":\"ds1\",\"pool\":\"default\",\"volume\":\"ds1\",\"uio\":"
		"0,\"stats\":{\"commands\":{\"read\":{\"ok\":1,\"failed\":0,\"bytes\":4096,\"latency"
		"_ok\":{\"count\":1,\"sum_ns\":616139,\"buckets\":[0,0,0,0,0,0,0,0,0,0,1,0,0,0"
		",0,0,0,0,0,0,0,0,0,0,0,0]},\"latency_failed\":{\"count\":0,\"sum_ns\":0,\"buc"
		"kets\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}},\"write\":"
		"{\"ok\":2,\"failed\":0,\"bytes\":4608,\"latency_ok\":{\"count\":2,\"sum_ns\":98361"
		"8,\"buckets\":[0,0,0,0,0,0,0,0,1,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]},\"la"
		"tency_failed\":{\"count\":0,\"sum_ns\":0,\"buckets\":[0,0,0,0,0,0,0,0,0,0,0,0"
		",0,0,0,0,0,0,0,0,0,0,0,0,0,0]}},\"verify\":{\"ok\":1,\"failed\":0,\"bytes\":40"
		"96,\"latency_ok\":{\"count\":1,\"sum_ns\":77235,\"buckets\":[0,0,0,0,0,0,0,1,0"
		",0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]},\"latency_failed\":{\"count\":0,\"sum_"
		"ns\":0,\"buckets\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}"
		"},\"sync\":{\"ok\":1,\"failed\":0,\"bytes\":0,\"latency_ok\":{\"count\":1,\"sum_ns\""
		":611,\"buckets\":[1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]},"
		"\"latency_failed\":{\"count\":0,\"sum_ns\":0,\"buckets\":[0,0,0,0,0,0,0,0,0,0,"
		"0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}},\"xcopy\":{\"ok\":1,\"failed\":1,\"bytes\":"
		"3145728,\"latency_ok\":{\"count\":1,\"sum_ns\":1970990,\"buckets\":[0,0,0,0,0,"
		"0,0,0,0,0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0]},\"latency_failed\":{\"count\":"
		"1,\"sum_ns\":20671,\"buckets\":[0,0,0,0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,"
		"0,0,0,0,0]}},\"caw\":{\"ok\":3,\"failed\":2,\"bytes\":1536,\"latency_ok\":{\"coun"
		"t\":3,\"sum_ns\":1855431,\"buckets\":[0,0,0,0,0,0,0,0,0,1,2,0,0,0,0,0,0,0,0"
		",0,0,0,0,0,0,0]},\"latency_failed\":{\"count\":2,\"sum_ns\":105697,\"buckets\""
		":[0,0,0,0,0,0,2,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}},\"write_same\":"
		"{\"ok\":2,\"failed\":0,\"bytes\":1052672,\"latency_ok\":{\"count\":2,\"sum_ns\":36"
		"2961,\"buckets\":[0,0,0,1,0,0,0,0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]},"
		"\"latency_failed\":{\"count\":0,\"sum_ns\":0,\"buckets\":[0,0,0,0,0,0,0,0,0,0,"
		"0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}},\"unmap\":{\"ok\":1,\"failed\":0,\"bytes\":"
		"12288,\"latency_ok\":{\"count\":1,\"sum_ns\":182121,\"buckets\":[0,0,0,0,0,0,0"
		",0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]},\"latency_failed\":{\"count\":0,\""
		"sum_ns\":0,\"buckets\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0"
		",0]}},\"get_lba_status\":{\"ok\":1,\"failed\":0,\"bytes\":0,\"latency_ok\":{\"cou"
		"nt\":1,\"sum_ns\":1643,\"buckets\":[0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0"
		",0,0,0,0,0,0]},\"latency_failed\":{\"count\":0,\"sum_ns\":0,\"buckets\":[0,0,0"
		",0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}},\"other\":{\"ok\":1,\"fai"
		"led\":1,\"bytes\":0,\"latency_ok\":{\"count\":1,\"sum_ns\":581,\"buckets\":[1,0,0"
		",0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]},\"latency_failed\":{\"co"
		"unt\":1,\"sum_ns\":111,\"buckets\":[1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0"
		",0,0,0,0,0,0]}}},\"xcopy\":{\"src_bytes\":3145728,\"dst_bytes\":0},\"caw\":{\"m"
		"iscompares\":2},\"write_same\":{\"zero\":1,\"pattern\":1,\"unmap_bit\":1,\"zero_"
		"bytes\":1048576,\"pattern_bytes\":4096},\"unmap\":{\"descriptors\":2,\"bytes\":"
		"12288},\"out_of_space\":0,\"unit_attentions\":{\"capacity_changed\":0,\"mode_"
		"changed\":0,\"inquiry_changed\":0,\"threshold\":0,\"other\":0},\"inflight\":0,\""
		"inflight_max\":1}}],\"pools\":[{\"name\":\"default\",\"pool\":{\"size\":268435456"
		",\"capacity\":260046848,\"extent\":1048576,\"used\":5242880,\"free\":254803968"
		",\"sharing_savings\":3145728,\"hydrating\":0,\"counters\":{\"journal_commits\""
		":12,\"journal_records\":20,\"journal_bytes\":49152,\"checkpoints\":1,\"checkp"
		"oint_ns\":1500000,\"store_io\":{\"read_ops\":3,\"write_ops\":20,\"flush_ops\":2"
		",\"bytes_read\":4096,\"bytes_written\":4300000,\"read_ns\":0,\"write_ns\":0,\"g"
		"roup_flushes\":0,\"grouped_writes\":0}}},\"luns\":1,\"lun_sum\":{\"commands\":{"
		"\"read\":{\"ok\":1,\"failed\":0,\"bytes\":4096,\"latency_ok\":{\"count\":1,\"sum_ns"
		"\":616139,\"buckets\":[0,0,0,0,0,0,0,0,0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,"
		"0]},\"latency_failed\":{\"count\":0,\"sum_ns\":0,\"buckets\":[0,0,0,0,0,0,0,0,"
		"0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}},\"write\":{\"ok\":2,\"failed\":0,\"byt"
		"es\":4608,\"latency_ok\":{\"count\":2,\"sum_ns\":983618,\"buckets\":[0,0,0,0,0,"
		"0,0,0,1,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]},\"latency_failed\":{\"count\":"
		"0,\"sum_ns\":0,\"buckets\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,"
		"0,0,0]}},\"verify\":{\"ok\":1,\"failed\":0,\"bytes\":4096,\"latency_ok\":{\"count"
		"\":1,\"sum_ns\":77235,\"buckets\":[0,0,0,0,0,0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,"
		"0,0,0,0,0,0]},\"latency_failed\":{\"count\":0,\"sum_ns\":0,\"buckets\":[0,0,0,"
		"0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}},\"sync\":{\"ok\":1,\"faile"
		"d\":0,\"bytes\":0,\"latency_ok\":{\"count\":1,\"sum_ns\":611,\"buckets\":[1,0,0,0"
		",0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]},\"latency_failed\":{\"coun"
		"t\":0,\"sum_ns\":0,\"buckets\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0"
		",0,0,0,0]}},\"xcopy\":{\"ok\":1,\"failed\":1,\"bytes\":3145728,\"latency_ok\":{\""
		"count\":1,\"sum_ns\":1970990,\"buckets\":[0,0,0,0,0,0,0,0,0,0,0,1,0,0,0,0,0"
		",0,0,0,0,0,0,0,0,0]},\"latency_failed\":{\"count\":1,\"sum_ns\":20671,\"bucke"
		"ts\":[0,0,0,0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}},\"caw\":{\"ok"
		"\":3,\"failed\":2,\"bytes\":1536,\"latency_ok\":{\"count\":3,\"sum_ns\":1855431,\""
		"buckets\":[0,0,0,0,0,0,0,0,0,1,2,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]},\"laten"
		"cy_failed\":{\"count\":2,\"sum_ns\":105697,\"buckets\":[0,0,0,0,0,0,2,0,0,0,0"
		",0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}},\"write_same\":{\"ok\":2,\"failed\":0,\"byt"
		"es\":1052672,\"latency_ok\":{\"count\":2,\"sum_ns\":362961,\"buckets\":[0,0,0,1"
		",0,0,0,0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]},\"latency_failed\":{\"coun"
		"t\":0,\"sum_ns\":0,\"buckets\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0"
		",0,0,0,0]}},\"unmap\":{\"ok\":1,\"failed\":0,\"bytes\":12288,\"latency_ok\":{\"co"
		"unt\":1,\"sum_ns\":182121,\"buckets\":[0,0,0,0,0,0,0,0,1,0,0,0,0,0,0,0,0,0,"
		"0,0,0,0,0,0,0,0]},\"latency_failed\":{\"count\":0,\"sum_ns\":0,\"buckets\":[0,"
		"0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}},\"get_lba_status\":"
		"{\"ok\":1,\"failed\":0,\"bytes\":0,\"latency_ok\":{\"count\":1,\"sum_ns\":1643,\"bu"
		"ckets\":[0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]},\"latency"
		"_failed\":{\"count\":0,\"sum_ns\":0,\"buckets\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,"
		"0,0,0,0,0,0,0,0,0,0,0,0]}},\"other\":{\"ok\":1,\"failed\":1,\"bytes\":0,\"laten"
		"cy_ok\":{\"count\":1,\"sum_ns\":581,\"buckets\":[1,0,0,0,0,0,0,0,0,0,0,0,0,0,"
		"0,0,0,0,0,0,0,0,0,0,0,0]},\"latency_failed\":{\"count\":1,\"sum_ns\":111,\"bu"
		"ckets\":[1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}}},\"xcopy"
		"\":{\"src_bytes\":3145728,\"dst_bytes\":0,\"shared_bytes\":0,\"copied_bytes\":0},"
		"\"caw\":{\"miscompares\":2},\"write_s"
		"ame\":{\"zero\":1,\"pattern\":1,\"unmap_bit\":1,\"zero_bytes\":1048576,\"pattern"
		"_bytes\":4096,\"deallocated_bytes\":12288},\"unmap\":{\"descriptors\":2,\"bytes\":"
		"12288,\"deallocated_bytes\":4096},\"out_of_space\":0"
		",\"unit_attentions\":{\"capacity_changed\":0,\"mode_changed\":0,\"inquiry_cha"
		"nged\":0,\"threshold\":0,\"other\":0},\"inflight\":0,\"inflight_max\":1}}]}";
	static const struct {
		const char *name;
		unsigned char cmd;
		const char *json;
	} seeds[] = {
		{"stats", 0x10, stats},
		{"stats-json", 0x18, stats},
		{"stats-wrong", 0x10, "{\"ok\":true,\"luns\":[1,{\"stats\":[]},{\"stats\":{\"commands\":"
				     "{\"read\":7,\"caw\":{\"latency_ok\":{\"count\":0,\"sum_ns\":5}}}}}],"
				     "\"pools\":[{\"pool\":{\"counters\":{\"checkpoints\":1e30}}}]}"},
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

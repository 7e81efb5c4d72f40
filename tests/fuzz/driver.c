/*
 * The regression driver of the fuzz targets (issue 24): a main() that feeds
 * files to a target's LLVMFuzzerTestOneInput, so that ctest runs the seed
 * corpora and the kept crash inputs on every build, without clang's fuzzer
 * runtime (gcc builds, the ASan build). Built instead of libFuzzer's main
 * when VAAID_FUZZ is off (tests/fuzz/CMakeLists.txt).
 *
 *   fuzz_X FILE|DIR...        run each file (a directory: each file in it, sorted)
 *   fuzz_X --make-seeds DIR   write the target's seed corpus (made from real
 *                             inputs: pools the engine wrote) into DIR
 *
 * A finding aborts (the target's own check, or a sanitizer), so the exit
 * status is the test's result; the input being run is printed first. No
 * input at all (no argument, or only empty directories) fails too.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "seeds.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "fuzz driver: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	for (;;) {
		if (!buf)
			break;
		len += fread(buf + len, 1, cap - len, f);
		if (len < cap)
			break;
		uint8_t *n = realloc(buf, cap * 2);
		if (!n) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = n;
		cap *= 2;
	}
	fclose(f);
	if (!buf) {
		fprintf(stderr, "fuzz driver: %s: out of memory\n", path);
		return -1;
	}
	fprintf(stderr, "fuzz driver: running %s (%zu bytes)\n", path, len);
	/* A copy of exactly len bytes, as libFuzzer gives: ASan sees an overread. */
	uint8_t *in = malloc(len ? len : 1);
	if (!in) {
		free(buf);
		return -1;
	}
	memcpy(in, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(in, len);
	free(in);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, unsigned *n)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "fuzz driver: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t cnt = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char **nn = realloc(names, (cnt + 1) * sizeof(*names));
		if (!nn)
			break;
		names = nn;
		size_t l = strlen(dir) + strlen(e->d_name) + 2;
		names[cnt] = malloc(l);
		if (!names[cnt])
			break;
		snprintf(names[cnt++], l, "%s/%s", dir, e->d_name);
	}
	closedir(d);
	qsort(names, cnt, sizeof(*names), cmp_str);
	int rc = 0;
	for (size_t i = 0; i < cnt; i++) {
		if (run_file(names[i]) < 0)
			rc = -1;
		else
			(*n)++;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--make-seeds"))
		return fuzz_make_seeds(argv[2]) < 0 ? 1 : 0;
	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: %s FILE|DIR...   or   %s --make-seeds DIR\n", argv[0], argv[0]);
		return 2;
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	unsigned n = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		int rc = stat(argv[i], &st) < 0  ? -1
			 : S_ISDIR(st.st_mode) ? run_dir(argv[i], &n)
					       : run_file(argv[i]);
		if (rc < 0) {
			fprintf(stderr, "fuzz driver: %s: cannot run\n", argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode))
			n++;
	}
	if (n == 0) { /* a test that runs nothing cannot fail: refused */
		fprintf(stderr, "fuzz driver: no input to run\n");
		return 1;
	}
	fprintf(stderr, "fuzz driver: %u input(s) passed\n", n);
	return 0;
}

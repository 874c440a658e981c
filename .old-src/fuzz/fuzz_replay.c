/*
 * fuzz_replay.c - runs a libFuzzer target's LLVMFuzzerTestOneInput over every
 * file of a corpus directory, so the normal (gcc) build replays the corpus
 * as a regression test. Exit 0 if all ran (a crash or abort is
 * the failure), 77 (skip) for an empty directory would hide a broken path,
 * so an empty or missing corpus fails.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	static uint8_t buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	/* Exactly n bytes, in a fresh allocation so ASan sees overreads. */
	uint8_t *copy = malloc(n ? n : 1);
	if (!copy)
		return -1;
	memcpy(copy, buf, n);
	LLVMFuzzerTestOneInput(copy, n);
	free(copy);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned files = 0;

	for (int a = 1; a < argc; a++) {
		DIR *d = opendir(argv[a]);
		if (!d) {
			/* A single file. */
			if (run_file(argv[a]) == 0) {
				files++;
				continue;
			}
			fprintf(stderr, "%s: cannot open\n", argv[a]);
			return 1;
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[a], e->d_name);
			if (run_file(path) != 0) {
				fprintf(stderr, "%s: cannot read\n", path);
				closedir(d);
				return 1;
			}
			files++;
		}
		closedir(d);
	}
	printf("replayed %u inputs\n", files);
	return files ? 0 : 1;
}

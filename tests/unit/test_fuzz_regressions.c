/* Replays every saved fuzz regression (tests/fuzz/regressions/TARGET/) and every seed
 * (tests/fuzz/corpus/) through the fuzz targets' own checks, compiled here without libFuzzer,
 * so that the unit suite -- under ASan/UBSan in CI -- keeps each crash the fuzzers found fixed.
 * A failed check traps: the test then crashes, after naming the input on stderr. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fuzz_signature_one(const uint8_t *data, size_t size);
int fuzz_cubin_one(const uint8_t *data, size_t size);
int fuzz_fatbin_one(const uint8_t *data, size_t size);
int fuzz_ptx_one(const uint8_t *data, size_t size);
int fuzz_ptx_ptxas_one(const uint8_t *data, size_t size);
int fuzz_dlpack_one(const uint8_t *data, size_t size);
int fuzz_path_one(const uint8_t *data, size_t size);
int fuzz_file_one(const uint8_t *data, size_t size);

typedef int (*one_fn)(const uint8_t *, size_t);

static size_t replay_file(const char *path, one_fn one) {
  FILE *f = fopen(path, "rb");
  cr_assert(f != NULL, "cannot open %s", path);
  uint8_t *buf = malloc(1 << 20);
  size_t n = fread(buf, 1, 1 << 20, f);
  fclose(f);
  uint8_t *exact = malloc(n ? n : 1); /* exactly n bytes, so that ASan sees overreads */
  memcpy(exact, buf, n);
  free(buf);
  fprintf(stderr, "replaying %s (%zu bytes)\n", path, n);
  one(exact, n);
  free(exact);
  return 1;
}

/* Replays every file in dir (which may not exist); returns how many. */
static size_t replay_dir(const char *dir, one_fn one) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  size_t count = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    count += replay_file(path, one);
  }
  closedir(d);
  return count;
}

static void replay(const char *target, const char *corpus, one_fn one) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/tests/fuzz/regressions/%s", GCL_SOURCE_DIR, target);
  replay_dir(dir, one);
  snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/%s", GCL_SOURCE_DIR, corpus);
  cr_assert_gt(replay_dir(dir, one), 0, "no seeds in %s", dir);
}

Test(fuzz_replay, signature) { replay("fuzz_signature", "signature", fuzz_signature_one); }
Test(fuzz_replay, cubin) { replay("fuzz_cubin", "cubin", fuzz_cubin_one); }
Test(fuzz_replay, fatbin) { replay("fuzz_fatbin", "fatbin", fuzz_fatbin_one); }
Test(fuzz_replay, ptx) { replay("fuzz_ptx", "ptx", fuzz_ptx_one); }
Test(fuzz_replay, ptx_ptxas) { replay("fuzz_ptx_ptxas", "ptx", fuzz_ptx_ptxas_one); }
Test(fuzz_replay, dlpack) { replay("fuzz_dlpack", "dlpack", fuzz_dlpack_one); }
Test(fuzz_replay, path) { replay("fuzz_path", "path", fuzz_path_one); }
Test(fuzz_replay, file) { replay("fuzz_file", "file", fuzz_file_one); }

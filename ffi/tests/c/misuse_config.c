/* The misuse suite (see misuse.c): gpuwhy_config and what gpuwhy_session_new() refuses. */
#include "misuse.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* gpuwhy_config as the first header had it (up to world_size): a program built then. */
typedef struct {
  uint32_t struct_size;
  gpuwhy_flags flags;
  double sample_interval_s;
  const char *nvml_path;
  const char *label;
  const char *output_path;
  int32_t rank;
  int32_t world_size;
} config_v1;
_Static_assert(sizeof(config_v1) == offsetof(gpuwhy_config, local_rank),
               "fields were appended after world_size");

/* `struct_size` smaller and larger than the library's, and what a config may hold. */
void config_checks(const struct opts *o) {
  gpuwhy_config c;
  memset(&c, 0x5a, sizeof c);
  const size_t small[] = {0, 4, sizeof(config_v1) - 8, sizeof(config_v1) - 1};
  for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
    EXPECT_ERR(gpuwhy_config_init(&c, small[i]), GPUWHY_STRUCT_SIZE, "struct_size");
    for (size_t b = 0; b < sizeof c; b++)
      CHECK(((unsigned char *)&c)[b] == 0x5a, "byte %zu written by a refused init", b);
  }
  OK(gpuwhy_config_init(&c, sizeof c));
  CHECK(c.struct_size == sizeof c && c.flags == 0 && c.sample_interval_s == 0.1 &&
            c.nvml_path == NULL && c.label == NULL && c.output_path == NULL && c.rank < 0 &&
            c.world_size == 0 && c.local_rank < 0 && c.baseline_path == NULL,
        "the defaults");
  gpuwhy_session *s = MADE_UP;
  for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
    c.struct_size = (uint32_t)small[i];
    EXPECT_ERR(gpuwhy_session_new(&c, &s), GPUWHY_STRUCT_SIZE, "struct_size");
    CHECK(s == MADE_UP, "session_out written on failure");
  }
  /* A zeroed struct of the right size means the defaults. */
  memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  OK(gpuwhy_session_new(&c, &s));
  OK(gpuwhy_session_free(s));

  /* An older header's smaller struct: init writes only its bytes, and a session starts
   * with the defaults for the fields appended since. */
  struct {
    config_v1 v1;
    unsigned char after[32];
  } old;
  memset(&old, 0x77, sizeof old);
  OK(gpuwhy_config_init((gpuwhy_config *)&old.v1, sizeof old.v1));
  CHECK(old.v1.struct_size == sizeof old.v1 && old.v1.rank < 0 && old.v1.world_size == 0,
        "v1 defaults");
  for (size_t b = 0; b < sizeof old.after; b++)
    CHECK(old.after[b] == 0x77, "byte %zu past an old struct written by init", b);
  old.v1.flags = GPUWHY_FLAG_NO_HOST;
  old.v1.rank = 1;
  old.v1.world_size = 2;
  OK(gpuwhy_session_new((gpuwhy_config *)&old.v1, &s));
  OK(gpuwhy_session_free(s));

  /* A newer header's bigger struct: accepted while the fields this library does not know
   * are zero, refused once one is set. */
  struct newer {
    gpuwhy_config base;
    uint64_t added[6];
  } big;
  memset(&big, 0xa5, sizeof big);
  OK(gpuwhy_config_init(&big.base, sizeof big));
  CHECK(big.base.struct_size == sizeof big, "struct_size %u", big.base.struct_size);
  for (int i = 0; i < 6; i++) CHECK(big.added[i] == 0, "tail field %d not zeroed", i);
  OK(gpuwhy_session_new(&big.base, &s));
  OK(gpuwhy_session_free(s));
  big.added[5] = 1;
  s = MADE_UP;
  EXPECT_ERR(gpuwhy_session_new(&big.base, &s), GPUWHY_STRUCT_SIZE, "newer gpuwhy.h");
  CHECK(s == MADE_UP, "session_out written on failure");
  /* An absurd size is an uninitialised struct, not a newer one. */
  static _Alignas(8) unsigned char huge[8192];
  memset(huge, 0x33, sizeof huge);
  EXPECT_ERR(gpuwhy_config_init((gpuwhy_config *)huge, 5000), GPUWHY_STRUCT_SIZE, "struct_size");
  CHECK(huge[0] == 0x33 && huge[4999] == 0x33, "refused init wrote");
  OK(gpuwhy_config_init((gpuwhy_config *)huge, sizeof c));
  ((gpuwhy_config *)huge)->struct_size = 5000;
  EXPECT_ERR(gpuwhy_session_new((gpuwhy_config *)huge, &s), GPUWHY_STRUCT_SIZE, "uninitialised");

  /* Flags. */
  const uint32_t bad_flags[] = {16, 0x80000000u, GPUWHY_FLAG_NO_GPM | 64};
  for (size_t i = 0; i < sizeof bad_flags / sizeof bad_flags[0]; i++) {
    OK(gpuwhy_config_init(&c, sizeof c));
    c.flags = bad_flags[i];
    EXPECT_ERR(gpuwhy_session_new(&c, &s), GPUWHY_INVALID_ARGUMENT, "unknown flags");
  }
  c.flags = GPUWHY_FLAG_NO_GPU | GPUWHY_FLAG_REQUIRE_GPU;
  EXPECT_ERR(gpuwhy_session_new(&c, &s), GPUWHY_INVALID_ARGUMENT, "contradict");
  CHECK(s == MADE_UP, "session_out written on failure");
  s = start(o, NULL, GPUWHY_FLAG_NO_GPM | GPUWHY_FLAG_NO_GPU | GPUWHY_FLAG_NO_HOST, 0);
  uint32_t n = 777;
  OK(gpuwhy_session_gpu_count(s, &n));
  CHECK(n == 0, "%u GPUs with GPUWHY_FLAG_NO_GPU", n);
  OK(gpuwhy_session_free(s));
  c.flags = GPUWHY_FLAG_REQUIRE_GPU;
  if (o->gpus == 0) {
    s = MADE_UP;
    EXPECT_ERR(gpuwhy_session_new(&c, &s), GPUWHY_NO_GPU, "NVML");
    CHECK(s == MADE_UP, "session_out written on failure");
  } else {
    OK(gpuwhy_session_new(&c, &s));
    OK(gpuwhy_session_gpu_count(s, &n));
    CHECK(n == (uint32_t)o->gpus, "%u GPUs, expected %d", n, o->gpus);
    OK(gpuwhy_session_free(s));
  }

  /* The sampling interval: 0.01 to 10 s, 0 (or -0) for the default. */
  const double bad_interval[] = {0.009, -0.1, 10.5, 1e300, INFINITY, -INFINITY, NAN};
  for (size_t i = 0; i < sizeof bad_interval / sizeof bad_interval[0]; i++) {
    OK(gpuwhy_config_init(&c, sizeof c));
    c.sample_interval_s = bad_interval[i];
    EXPECT_ERR(gpuwhy_session_new(&c, &s), GPUWHY_INVALID_ARGUMENT, "interval");
  }
  const double good_interval[] = {0.01, 10.0, -0.0};
  for (size_t i = 0; i < sizeof good_interval / sizeof good_interval[0]; i++) {
    double t0 = now_s();
    s = start(o, NULL, GPUWHY_FLAG_NO_HOST, good_interval[i]);
    OK(gpuwhy_session_free(s));
    /* Stopping must not wait out a long interval. */
    CHECK(now_s() - t0 < 8.0, "a session with interval %g took %.1f s", good_interval[i],
          now_s() - t0);
  }

  /* Rank and world size. */
  const int32_t bad_rank[][2] = {{4, 4}, {5, 4}, {INT32_MAX, 2}};
  for (size_t i = 0; i < sizeof bad_rank / sizeof bad_rank[0]; i++) {
    OK(gpuwhy_config_init(&c, sizeof c));
    c.rank = bad_rank[i][0];
    c.world_size = bad_rank[i][1];
    EXPECT_ERR(gpuwhy_session_new(&c, &s), GPUWHY_INVALID_ARGUMENT, "world_size");
  }
  /* A local rank given with rank and world size is checked like them. */
  const int32_t bad_local[][3] = {{1, 4, 4}, {0, 2, INT32_MAX}};
  for (size_t i = 0; i < sizeof bad_local / sizeof bad_local[0]; i++) {
    OK(gpuwhy_config_init(&c, sizeof c));
    c.rank = bad_local[i][0];
    c.world_size = bad_local[i][1];
    c.local_rank = bad_local[i][2];
    EXPECT_ERR(gpuwhy_session_new(&c, &s), GPUWHY_INVALID_ARGUMENT, "local_rank");
  }
  /* {rank, world_size, local_rank}: a local rank without them is not used, nor an error. */
  const int32_t good_rank[][3] = {{0, 1, -1}, {3, 4, 3},  {-1, 4, 0},        {3, 0, -1},
                                  {3, -2, 7}, {7, 8, -5}, {INT32_MIN, 0, -1}};
  for (size_t i = 0; i < sizeof good_rank / sizeof good_rank[0]; i++) {
    OK(gpuwhy_config_init(&c, sizeof c));
    c.flags = GPUWHY_FLAG_NO_HOST;
    c.rank = good_rank[i][0];
    c.world_size = good_rank[i][1];
    c.local_rank = good_rank[i][2];
    OK(gpuwhy_session_new(&c, &s));
    OK(gpuwhy_session_free(s));
  }

  /* Strings that are not UTF-8. */
  s = MADE_UP;
  OK(gpuwhy_config_init(&c, sizeof c));
  c.label = "\xff\xfe";
  EXPECT_ERR(gpuwhy_session_new(&c, &s), GPUWHY_INVALID_ARGUMENT, "label");
  c.label = NULL;
  c.nvml_path = "/tmp/\xc3\x28";
  EXPECT_ERR(gpuwhy_session_new(&c, &s), GPUWHY_INVALID_ARGUMENT, "nvml_path");
  c.nvml_path = NULL;
  c.output_path = "/tmp/\x80.json";
  EXPECT_ERR(gpuwhy_session_new(&c, &s), GPUWHY_INVALID_ARGUMENT, "output_path");
  c.output_path = NULL;
  c.baseline_path = "/tmp/\xe2\x82.json";
  EXPECT_ERR(gpuwhy_session_new(&c, &s), GPUWHY_INVALID_ARGUMENT, "baseline_path");
  CHECK(s == MADE_UP, "session_out written on failure");
}

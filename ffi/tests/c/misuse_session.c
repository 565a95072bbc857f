/* The misuse suite (see misuse.c): one session's life on one thread, handles that name no
 * session, phase ids and names, and the panic boundary. */
#include "misuse.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void one_step(gpuwhy_session *s) {
  OK(gpuwhy_step_begin(s));
  OK(gpuwhy_phase(s, GPUWHY_PHASE_DATA));
  OK(gpuwhy_phase(s, GPUWHY_PHASE_FORWARD));
  OK(gpuwhy_gpu_phase(s, GPUWHY_PHASE_FORWARD, 0.002));
  OK(gpuwhy_phase(s, GPUWHY_PHASE_BACKWARD));
  OK(gpuwhy_phase(s, GPUWHY_PHASE_OPTIMIZER));
  OK(gpuwhy_step_end(s));
}

/* Report functions before stop, every call after stop, the report buffer, free, and every
 * call on the freed handle. */
void lifecycle(const struct opts *o) {
  gpuwhy_session *s = start(o, "life", 0, 0.02);
  size_t len = 777;
  EXPECT_ERR(gpuwhy_session_report_json(s, NULL, 0, &len), GPUWHY_NOT_STOPPED, "gpuwhy_session_stop");
  CHECK(len == 777, "len_out written on failure");
  gpuwhy_finding f = {NULL, NULL, 42.0};
  EXPECT_ERR(gpuwhy_session_top_finding(s, &f), GPUWHY_NOT_STOPPED, "gpuwhy_session_stop");
  CHECK(f.id == NULL, "finding written on failure");
  char path[4096];
  snprintf(path, sizeof path, "%s/early.json", o->dir);
  EXPECT_ERR(gpuwhy_session_write_report(s, path), GPUWHY_NOT_STOPPED, "gpuwhy_session_stop");
  CHECK(access(path, F_OK) != 0, "a report written before stop");
  uint32_t n = 777;
  OK(gpuwhy_session_gpu_count(s, &n));
  CHECK(n == (uint32_t)o->gpus, "%u GPUs, expected %d", n, o->gpus);

  for (int i = 0; i < 3; i++) one_step(s);
  OK(gpuwhy_session_event(s, "eval"));
  OK(gpuwhy_session_event(s, "")); /* an empty name is an "event" */
  OK(gpuwhy_step_end(s)); /* no open step: counted, not an error */
  OK(gpuwhy_gpu_phase(s, GPUWHY_PHASE_DATA, -1.0)); /* ignored and counted */
  OK(gpuwhy_gpu_phase(s, GPUWHY_PHASE_DATA, NAN));
  OK(gpuwhy_session_stop(s));

  /* Every call after stop. */
  EXPECT_ERR(gpuwhy_step_begin(s), GPUWHY_STOPPED, "stopped");
  EXPECT_ERR(gpuwhy_phase(s, GPUWHY_PHASE_DATA), GPUWHY_STOPPED, "stopped");
  EXPECT_ERR(gpuwhy_gpu_phase(s, GPUWHY_PHASE_DATA, 0.001), GPUWHY_STOPPED, "stopped");
  EXPECT_ERR(gpuwhy_step_end(s), GPUWHY_STOPPED, "stopped");
  EXPECT_ERR(gpuwhy_session_event(s, "late"), GPUWHY_STOPPED, "stopped");
  uint32_t id = 777;
  EXPECT_ERR(gpuwhy_session_register_phase(s, "late", &id), GPUWHY_STOPPED, "stopped");
  CHECK(id == 777, "id_out written on failure");
  EXPECT_ERR(gpuwhy_session_gpu_count(s, &n), GPUWHY_STOPPED, "stopped");
  EXPECT_ERR(gpuwhy_session_stop(s), GPUWHY_STOPPED, "already stopped");

  /* The report: ask for the size, then fill. */
  char *json = report_json(s);
  CHECK(steps_count(json) == 3, "%ld steps, expected 3", steps_count(json));
  CHECK(strstr(json, "\"label\": \"life\"") != NULL, "no label in the report");
  len = strlen(json);
  size_t got = 0;
  OK(gpuwhy_session_report_json(s, NULL, 12345, &got)); /* a NULL buffer only asks */
  CHECK(got == len, "size %zu, expected %zu", got, len);
  char *buf = malloc(len + 100);
  CHECK(buf != NULL, "out of memory");
  const size_t small[] = {0, 1, len / 2, len};
  for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
    memset(buf, '#', len + 100);
    got = 0;
    EXPECT_ERR(gpuwhy_session_report_json(s, buf, small[i], &got), GPUWHY_BUFFER_TOO_SMALL,
               "bytes");
    CHECK(got == len, "capacity %zu: length %zu written, expected %zu", small[i], got, len);
    for (size_t b = 0; b < len + 100; b++)
      CHECK(buf[b] == '#', "capacity %zu: byte %zu written", small[i], b);
  }
  memset(buf, '#', len + 100);
  OK(gpuwhy_session_report_json(s, buf, len + 100, &got));
  CHECK(got == len && memcmp(buf, json, len + 1) == 0, "the filled report differs");
  CHECK(buf[len + 1] == '#', "wrote past the NUL");
  free(buf);

  OK(gpuwhy_session_top_finding(s, &f));
  CHECK(f.id != NULL && f.id[0] != '\0' && f.title != NULL && f.title[0] != '\0', "finding");
  CHECK(f.confidence >= 0.0 && f.confidence <= 1.0, "confidence %g", f.confidence);

  /* stop wrote the configured output; write_report writes the same bytes elsewhere. */
  snprintf(path, sizeof path, "%s/life.json", o->dir);
  char *file = read_file(path);
  CHECK(file != NULL && strcmp(file, json) == 0, "%s differs from the report", path);
  free(file);
  snprintf(path, sizeof path, "%s/life.json.partial", o->dir);
  CHECK(access(path, F_OK) != 0, "the crash journal was left behind");
  snprintf(path, sizeof path, "%s/copy.json", o->dir);
  OK(gpuwhy_session_write_report(s, path));
  file = read_file(path);
  CHECK(file != NULL && strcmp(file, json) == 0, "%s differs from the report", path);
  free(file);
  EXPECT_ERR(gpuwhy_session_write_report(s, "/nonexistent-dir/x.json"), GPUWHY_IO,
             "kept in memory");
  EXPECT_ERR(gpuwhy_session_write_report(s, "/tmp/\xff.json"), GPUWHY_INVALID_ARGUMENT, "UTF-8");
  char *again = report_json(s); /* nothing lost */
  CHECK(strcmp(again, json) == 0, "the report changed");
  free(again);
  free(json);

  OK(gpuwhy_session_free(s));
  /* The freed handle, for every function; free itself twice (double free). */
  every_call_is(s, GPUWHY_INVALID_HANDLE, "freed", 1);
  EXPECT_ERR(gpuwhy_session_free(s), GPUWHY_INVALID_HANDLE, "freed");
}

/* An output path that cannot be written: stop says so and keeps the report; free says the
 * report is lost (and frees anyway). */
void write_failures(const struct opts *o) {
  char path[4096];
  snprintf(path, sizeof path, "%s/missing-dir/out.json", o->dir);
  gpuwhy_config cfg;
  OK(gpuwhy_config_init(&cfg, sizeof cfg));
  cfg.output_path = path;
  cfg.flags = GPUWHY_FLAG_NO_HOST;
  gpuwhy_session *s = NULL;
  OK(gpuwhy_session_new(&cfg, &s));
  one_step(s);
  EXPECT_ERR(gpuwhy_session_stop(s), GPUWHY_IO, "kept in memory");
  char *json = report_json(s);
  CHECK(steps_count(json) == 1, "%ld steps", steps_count(json));
  free(json);
  char rescued[4096];
  snprintf(rescued, sizeof rescued, "%s/rescued.json", o->dir);
  OK(gpuwhy_session_write_report(s, rescued));
  OK(gpuwhy_session_free(s));

  OK(gpuwhy_session_new(&cfg, &s));
  one_step(s);
  EXPECT_ERR(gpuwhy_session_free(s), GPUWHY_IO, "freed without its report");
  EXPECT_ERR(gpuwhy_session_free(s), GPUWHY_INVALID_HANDLE, "freed");
}

/* Handles that never came from gpuwhy_session_new. */
void made_up_handles(void) {
  int local = 0;
  gpuwhy_session *fake[] = {MADE_UP, (gpuwhy_session *)&local,
                            (gpuwhy_session *)(uintptr_t)-1, (gpuwhy_session *)(uintptr_t)2,
                            (gpuwhy_session *)(uintptr_t)0x10};
  for (size_t i = 0; i < sizeof fake / sizeof fake[0]; i++)
    every_call_is(fake[i], GPUWHY_INVALID_HANDLE, "never came from gpuwhy_session_new", 1);
  CHECK(local == 0, "a made-up handle was written through");
}

/* Unknown phase ids and gpuwhy_session_register_phase's edge cases. */
void phases(const struct opts *o) {
  gpuwhy_session *s = start(o, NULL, GPUWHY_FLAG_NO_HOST, 0);
  const uint32_t unknown[] = {4, 16, 255, 65536 + GPUWHY_PHASE_DATA, UINT32_MAX};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    EXPECT_ERR(gpuwhy_phase(s, unknown[i]), GPUWHY_UNKNOWN_PHASE, "never registered");
    EXPECT_ERR(gpuwhy_gpu_phase(s, unknown[i], 0.1), GPUWHY_UNKNOWN_PHASE, "never registered");
  }
  EXPECT_ERR(gpuwhy_phase(s, 4), GPUWHY_UNKNOWN_PHASE, "phase id 4 ");

  char name65[66], name64[65];
  memset(name65, 'x', 65);
  name65[65] = '\0';
  memset(name64, 'y', 64);
  name64[64] = '\0';
  uint32_t id = 777;
  const char *bad[] = {"", "step", name65, "\xff", "ok\xc3"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    EXPECT(gpuwhy_session_register_phase(s, bad[i], &id), GPUWHY_INVALID_ARGUMENT);
    expect_last_error_at(__FILE__, __LINE__, bad[i], i < 3 ? "not allowed" : "UTF-8");
    CHECK(id == 777, "id_out written on failure");
  }
  const char *builtin[] = {"data", "forward", "backward", "optimizer"};
  for (uint32_t i = 0; i < 4; i++) {
    OK(gpuwhy_session_register_phase(s, builtin[i], &id));
    CHECK(id == i, "%s has id %u", builtin[i], id);
  }
  OK(gpuwhy_session_register_phase(s, name64, &id));
  CHECK(id == 4, "the first custom phase has id %u", id);
  OK(gpuwhy_session_register_phase(s, name64, &id)); /* again: the same id */
  CHECK(id == 4, "re-registered as %u", id);
  OK(gpuwhy_phase(s, 4));
  EXPECT_ERR(gpuwhy_phase(s, 5), GPUWHY_UNKNOWN_PHASE, "phase id 5 ");
  for (uint32_t i = 5; i < 16; i++) {
    char name[16];
    snprintf(name, sizeof name, "p%u", i);
    OK(gpuwhy_session_register_phase(s, name, &id));
    CHECK(id == i, "%s has id %u", name, id);
  }
  /* The 17th. */
  id = 777;
  EXPECT_ERR(gpuwhy_session_register_phase(s, "one too many", &id), GPUWHY_TOO_MANY_PHASES,
             "at most 16");
  CHECK(id == 777, "id_out written on failure");
  /* A bad name is a bad name, full or not; known names still resolve. */
  EXPECT_ERR(gpuwhy_session_register_phase(s, "", &id), GPUWHY_INVALID_ARGUMENT, "not allowed");
  EXPECT_ERR(gpuwhy_session_register_phase(s, name65, &id), GPUWHY_INVALID_ARGUMENT,
             "not allowed");
  OK(gpuwhy_session_register_phase(s, "p7", &id));
  CHECK(id == 7, "p7 has id %u", id);
  OK(gpuwhy_phase(s, 15));
  OK(gpuwhy_gpu_phase(s, 15, 0.001));
  EXPECT_ERR(gpuwhy_phase(s, 16), GPUWHY_UNKNOWN_PHASE, "phase id 16 ");
  OK(gpuwhy_step_end(s));
  OK(gpuwhy_session_stop(s));
  char *json = report_json(s);
  CHECK(strstr(json, name64) != NULL && strstr(json, "\"p15\"") != NULL, "phase names");
  CHECK(steps_count(json) == 1, "%ld steps", steps_count(json));
  free(json);
  OK(gpuwhy_session_free(s));
}

/* One thread marking more sessions than it caches, some of them freed. */
void many_sessions(const struct opts *o) {
  enum { N = 7 };
  gpuwhy_session *s[N];
  for (int i = 0; i < N; i++) s[i] = start(o, NULL, GPUWHY_FLAG_NO_HOST, 0);
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < N; i++) one_step(s[i]);
  for (int i = 0; i < N; i += 2) OK(gpuwhy_session_free(s[i]));
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < N; i++) {
      if (i % 2 == 0) {
        EXPECT_ERR(gpuwhy_step_begin(s[i]), GPUWHY_INVALID_HANDLE, "freed");
      } else {
        one_step(s[i]);
      }
    }
  for (int i = 1; i < N; i += 2) {
    OK(gpuwhy_session_stop(s[i]));
    char *json = report_json(s[i]);
    CHECK(steps_count(json) == 5, "session %d: %ld steps", i, steps_count(json));
    free(json);
    OK(gpuwhy_session_free(s[i]));
  }
}

static void *poisoned_elsewhere(void *arg) {
  EXPECT_ERR(gpuwhy_step_begin((gpuwhy_session *)arg), GPUWHY_POISONED, "poisoned");
  return NULL;
}

/* A panic inside gpuwhy becomes GPUWHY_PANIC and poisons that session only. */
void part_panic(const struct opts *o) {
  section("panic boundary");
  EXPECT(gpuwhy_test_panic(NULL), GPUWHY_NULL_ARGUMENT);
  EXPECT(gpuwhy_test_panic(MADE_UP), GPUWHY_INVALID_HANDLE);
  gpuwhy_session *other = start(o, NULL, GPUWHY_FLAG_NO_HOST, 0);
  gpuwhy_session *s = start(o, NULL, 0, 0);
  one_step(s);
  EXPECT_ERR(gpuwhy_test_panic(s), GPUWHY_PANIC, "gpuwhy_test_panic was called");
  expect_last_error_at(__FILE__, __LINE__, "the panic", "poisoned");
  every_call_is(s, GPUWHY_POISONED, "poisoned", 0);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, poisoned_elsewhere, s) == 0, "pthread_create");
  pthread_join(t, NULL);
  OK(gpuwhy_session_free(s)); /* free still works */
  EXPECT_ERR(gpuwhy_session_free(s), GPUWHY_INVALID_HANDLE, "freed");

  /* A panic on a stopped session poisons its report too. */
  s = start(o, NULL, GPUWHY_FLAG_NO_HOST, 0);
  one_step(s);
  OK(gpuwhy_session_stop(s));
  EXPECT(gpuwhy_test_panic(s), GPUWHY_PANIC);
  size_t len;
  EXPECT_ERR(gpuwhy_session_report_json(s, NULL, 0, &len), GPUWHY_POISONED, "poisoned");
  OK(gpuwhy_session_free(s));

  /* The process and the other session go on. */
  one_step(other);
  OK(gpuwhy_session_stop(other));
  char *json = report_json(other);
  CHECK(steps_count(json) == 1, "%ld steps", steps_count(json));
  free(json);
  OK(gpuwhy_session_free(other));
  s = start(o, NULL, GPUWHY_FLAG_NO_HOST, 0);
  one_step(s);
  OK(gpuwhy_session_free(s));
}

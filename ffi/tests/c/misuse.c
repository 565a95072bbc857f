/* The misuse suite: calls the C ABI the way a careless (or unlucky) caller would and checks
 * that every call answers with the documented status, never a crash, hang or leak. Run by
 * ffi/tests/misuse.rs plain, under AddressSanitizer + UndefinedBehaviorSanitizer and under
 * valgrind.
 *
 *   misuse <api|panic|threads|fork> <dir> <gpus> <scale>
 *
 * This file holds main, the helpers and the single-threaded API checks. */
#include "misuse.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void fail_at(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s:%d: ", file, line);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n  last error: \"%s\"\n", gpuwhy_last_error());
  fflush(NULL);
  /* Not exit(): other threads may be inside gpuwhy; the report is what matters. */
  _exit(1);
}

void expect_last_error_at(const char *file, int line, const char *call, const char *needle) {
  const char *e = gpuwhy_last_error();
  if (e == NULL) fail_at(file, line, "%s: gpuwhy_last_error() is NULL", call);
  if (e[0] == '\0') fail_at(file, line, "%s: gpuwhy_last_error() is empty after a failure", call);
  if (strstr(e, needle) == NULL)
    fail_at(file, line, "%s: the last error does not mention \"%s\"", call, needle);
}

void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

void section(const char *name) {
  static double t0;
  static const char *last;
  double t = now_s();
  if (last != NULL) printf("  %s: %.2f s\n", last, t - t0);
  last = name;
  t0 = t;
}

gpuwhy_session *start(const struct opts *o, const char *name, uint32_t flags, double interval) {
  gpuwhy_config cfg;
  OK(gpuwhy_config_init(&cfg, sizeof cfg));
  char path[4096];
  if (name != NULL) {
    snprintf(path, sizeof path, "%s/%s.json", o->dir, name);
    cfg.output_path = path;
    cfg.label = name;
  }
  cfg.flags = flags;
  cfg.sample_interval_s = interval;
  gpuwhy_session *s = NULL;
  OK(gpuwhy_session_new(&cfg, &s));
  CHECK(s != NULL, "gpuwhy_session_new succeeded without a handle");
  return s;
}

char *report_json(gpuwhy_session *s) {
  size_t len = 0;
  OK(gpuwhy_session_report_json(s, NULL, 0, &len));
  char *buf = malloc(len + 1);
  CHECK(buf != NULL, "out of memory");
  size_t len2 = 0;
  OK(gpuwhy_session_report_json(s, buf, len + 1, &len2));
  CHECK(len2 == len && strlen(buf) == len, "length %zu, then %zu, strlen %zu", len, len2,
        strlen(buf));
  return buf;
}

long steps_count(const char *json) {
  /* Pretty-printed: the top-level key sits two spaces in. */
  const char *steps = strstr(json, "\n  \"steps\": {");
  if (steps == NULL) return -1;
  const char *count = strstr(steps, "\"count\":");
  CHECK(count != NULL, "a steps section without a count");
  long total = strtol(count + strlen("\"count\":"), NULL, 10);
  /* Several marking threads: the section is the training loop's steps, and each thread's
   * own count is in steps.threads (an entry's first "count" is the thread's; its stats come
   * after). The threads list is the section's last key, ended by the next top-level key. */
  const char *threads = strstr(steps, "\"threads\": [");
  const char *next = strstr(steps + 1, "\n  \"");
  if (threads == NULL || (next != NULL && threads > next)) return total;
  const char *end = strstr(threads, "\n  \"");
  total = 0;
  for (const char *p = strstr(threads, "\"lane\":"); p != NULL && (end == NULL || p < end);
       p = strstr(p + 1, "\"lane\":")) {
    const char *c = strstr(p, "\"count\":");
    CHECK(c != NULL && (end == NULL || c < end), "a thread without a count");
    total += strtol(c + strlen("\"count\":"), NULL, 10);
  }
  return total;
}

char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  CHECK(buf != NULL, "out of memory");
  size_t n;
  while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += n;
    if (len + 1 == cap) {
      cap *= 2;
      char *bigger = realloc(buf, cap);
      CHECK(bigger != NULL, "out of memory");
      buf = bigger;
    }
  }
  fclose(f);
  buf[len] = '\0';
  return buf;
}

void every_call_is(gpuwhy_session *s, gpuwhy_status want, const char *needle, int with_free) {
  EXPECT_ERR(gpuwhy_step_begin(s), want, needle);
  EXPECT_ERR(gpuwhy_phase(s, GPUWHY_PHASE_DATA), want, needle);
  EXPECT_ERR(gpuwhy_phase(s, 12345), want, needle);
  EXPECT_ERR(gpuwhy_gpu_phase(s, GPUWHY_PHASE_FORWARD, 0.001), want, needle);
  EXPECT_ERR(gpuwhy_step_end(s), want, needle);
  uint32_t id = 777;
  EXPECT_ERR(gpuwhy_session_register_phase(s, "fetch", &id), want, needle);
  CHECK(id == 777, "id_out written on failure");
  EXPECT_ERR(gpuwhy_session_event(s, "eval"), want, needle);
  uint32_t n = 777;
  EXPECT_ERR(gpuwhy_session_gpu_count(s, &n), want, needle);
  CHECK(n == 777, "count_out written on failure");
  EXPECT_ERR(gpuwhy_session_stop(s), want, needle);
  EXPECT_ERR(gpuwhy_session_write_report(s, "/nonexistent-dir/report.json"), want, needle);
  size_t len = 777;
  char buf[16] = "untouched";
  EXPECT_ERR(gpuwhy_session_report_json(s, NULL, 0, &len), want, needle);
  EXPECT_ERR(gpuwhy_session_report_json(s, buf, sizeof buf, &len), want, needle);
  CHECK(len == 777 && strcmp(buf, "untouched") == 0, "outputs written on failure");
  gpuwhy_finding f = {NULL, NULL, 42.0};
  EXPECT_ERR(gpuwhy_session_top_finding(s, &f), want, needle);
  CHECK(f.id == NULL && f.title == NULL && f.confidence == 42.0, "finding written on failure");
  EXPECT_ERR(gpuwhy_test_panic(s), want, needle);
  if (with_free) EXPECT_ERR(gpuwhy_session_free(s), want, needle);
}

static void statuses(void) {
  CHECK(gpuwhy_abi_version() == GPUWHY_ABI_VERSION, "ABI %u", gpuwhy_abi_version());
  CHECK(gpuwhy_version() != NULL && strchr(gpuwhy_version(), '.') != NULL, "version");
  for (uint32_t c = GPUWHY_OK; c <= GPUWHY_PANIC; c++) {
    const char *m = gpuwhy_status_message(c);
    CHECK(m != NULL && m[0] != '\0', "no message for status %u", c);
    CHECK(strstr(m, "unknown gpuwhy status") == NULL, "status %u is unknown", c);
    for (uint32_t d = GPUWHY_OK; d < c; d++)
      CHECK(strcmp(m, gpuwhy_status_message(d)) != 0, "statuses %u and %u read alike", d, c);
  }
  CHECK(strcmp(gpuwhy_status_message(GPUWHY_OK), "ok") == 0, "OK's message");
  const uint32_t unknown[] = {GPUWHY_PANIC + 1, 100, 0x7fffffffu, UINT32_MAX};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    const char *m = gpuwhy_status_message(unknown[i]);
    CHECK(m != NULL && strcmp(m, "unknown gpuwhy status") == 0, "status %u", unknown[i]);
  }
}

static void null_arguments(const struct opts *o) {
  EXPECT_ERR(gpuwhy_config_init(NULL, sizeof(gpuwhy_config)), GPUWHY_NULL_ARGUMENT, "config");
  EXPECT_ERR(gpuwhy_session_new(NULL, NULL), GPUWHY_NULL_ARGUMENT, "session_out");
  gpuwhy_config cfg;
  OK(gpuwhy_config_init(&cfg, sizeof cfg));
  EXPECT_ERR(gpuwhy_session_new(&cfg, NULL), GPUWHY_NULL_ARGUMENT, "session_out");
  /* A NULL config means the defaults. */
  gpuwhy_session *d = NULL;
  OK(gpuwhy_session_new(NULL, &d));
  OK(gpuwhy_session_free(d));
  /* A NULL session, for every function that takes one. */
  every_call_is(NULL, GPUWHY_NULL_ARGUMENT, "NULL", 0);
  OK(gpuwhy_session_free(NULL));
  OK(gpuwhy_session_free(NULL));

  /* NULL outputs and names, while running and once stopped. */
  gpuwhy_session *s = start(o, NULL, 0, 0);
  for (int stopped = 0; stopped < 2; stopped++) {
    uint32_t id = 777;
    EXPECT_ERR(gpuwhy_session_register_phase(s, NULL, &id), GPUWHY_NULL_ARGUMENT, "NULL");
    EXPECT_ERR(gpuwhy_session_register_phase(s, "fetch", NULL), GPUWHY_NULL_ARGUMENT, "NULL");
    CHECK(id == 777, "id_out written on failure");
    EXPECT_ERR(gpuwhy_session_event(s, NULL), GPUWHY_NULL_ARGUMENT, "NULL");
    EXPECT_ERR(gpuwhy_session_gpu_count(s, NULL), GPUWHY_NULL_ARGUMENT, "NULL");
    EXPECT_ERR(gpuwhy_session_write_report(s, NULL), GPUWHY_NULL_ARGUMENT, "NULL");
    char buf[8] = "same";
    EXPECT_ERR(gpuwhy_session_report_json(s, buf, sizeof buf, NULL), GPUWHY_NULL_ARGUMENT,
               "NULL");
    EXPECT_ERR(gpuwhy_session_report_json(s, NULL, 0, NULL), GPUWHY_NULL_ARGUMENT, "NULL");
    CHECK(strcmp(buf, "same") == 0, "buffer written on failure");
    EXPECT_ERR(gpuwhy_session_top_finding(s, NULL), GPUWHY_NULL_ARGUMENT, "NULL");
    if (!stopped) OK(gpuwhy_session_stop(s));
  }
  OK(gpuwhy_session_free(s));
}

/* The last error is per thread, "" before any failure, and kept across successes. */
static void *fresh_thread(void *arg) {
  (void)arg;
  const char *e = gpuwhy_last_error();
  CHECK(e != NULL && e[0] == '\0', "a new thread's last error is \"%s\"", e);
  EXPECT_ERR(gpuwhy_step_begin(MADE_UP), GPUWHY_INVALID_HANDLE, "not a live gpuwhy session");
  return NULL;
}

static void last_error(void) {
  EXPECT_ERR(gpuwhy_phase(NULL, 0), GPUWHY_NULL_ARGUMENT, "session handle is NULL");
  gpuwhy_config c;
  OK(gpuwhy_config_init(&c, sizeof c)); /* a success leaves the message */
  expect_last_error_at(__FILE__, __LINE__, "after a success", "session handle is NULL");
  pthread_t t;
  CHECK(pthread_create(&t, NULL, fresh_thread, NULL) == 0, "pthread_create");
  pthread_join(t, NULL);
  expect_last_error_at(__FILE__, __LINE__, "after another thread failed", "handle is NULL");
}

void part_api(const struct opts *o) {
  section("statuses");
  statuses();
  section("last error");
  last_error();
  section("NULL arguments");
  null_arguments(o);
  section("config");
  config_checks(o);
  section("lifecycle");
  lifecycle(o);
  section("write failures");
  write_failures(o);
  section("made-up handles");
  made_up_handles();
  section("phases");
  phases(o);
  section("many sessions");
  many_sessions(o);
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s <api|panic|threads|fork> <dir> <gpus> <scale>\n", argv[0]);
    return 2;
  }
  struct opts o = {argv[2], atoi(argv[3]), atoi(argv[4])};
  if (o.scale < 1) o.scale = 1;
  /* The simulated NVML leaks its parsed scenario table on purpose (device handles point into
   * it) and keeps it through a static, which is unmapped whenever gpuwhy unloads the library
   * after a session: every session would then add a "definitely lost" table to the leak
   * checkers' reports. Keeping the library loaded, as a CUDA process keeps the real one,
   * keeps the table reachable and reused; nothing gpuwhy allocates is hidden by it. */
  const char *nvml = getenv("GPUWHY_NVML_PATH");
  if (nvml != NULL && access(nvml, F_OK) == 0)
    CHECK(dlopen(nvml, RTLD_NOW) != NULL, "cannot load %s: %s", nvml, dlerror());
  /* Rank and world size come from the config in these checks, never from the runner. */
  unsetenv("RANK");
  unsetenv("WORLD_SIZE");
  const char *part = argv[1];
  double t0 = now_s();
  if (strcmp(part, "api") == 0) {
    part_api(&o);
  } else if (strcmp(part, "panic") == 0) {
    part_panic(&o);
  } else if (strcmp(part, "threads") == 0) {
    part_threads(&o);
  } else if (strcmp(part, "fork") == 0) {
    part_fork(&o);
  } else {
    fprintf(stderr, "unknown part %s\n", part);
    return 2;
  }
  section(NULL);
  printf("misuse %s: ok (%.2f s)\n", part, now_s() - t0);
  return 0;
}

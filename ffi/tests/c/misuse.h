/* Shared by the misuse suite's parts (misuse.c, misuse_threads.c, misuse_fork.c): the
 * assertion macros and small helpers. Every failed check prints file:line, the call, the
 * status it returned and gpuwhy_last_error(), then exits with status 1. */
#ifndef GPUWHY_MISUSE_H
#define GPUWHY_MISUSE_H

#define _POSIX_C_SOURCE 200809L
#define GPUWHY_TESTING 1 /* declares gpuwhy_test_panic */

#include <gpuwhy.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What the runner asked for: where to write reports, how many GPUs the session must see
 * (1 with the simulated GPU, 0 without), and a multiplier of loop counts (small under
 * valgrind). */
struct opts {
  const char *dir;
  int gpus;
  int scale;
};

/* Prints "file:line: message", the calling thread's last gpuwhy error, and exits(1). */
__attribute__((noreturn, format(printf, 3, 4))) void fail_at(const char *file, int line,
                                                              const char *fmt, ...);
/* Fails unless gpuwhy_last_error() is non-empty and contains `needle`. */
void expect_last_error_at(const char *file, int line, const char *call, const char *needle);

#define FAIL(...) fail_at(__FILE__, __LINE__, __VA_ARGS__)

#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      fail_at(__FILE__, __LINE__, __VA_ARGS__);                            \
    }                                                                      \
  } while (0)

/* `call` must return status `want`. */
#define EXPECT(call, want)                                                             \
  do {                                                                                 \
    gpuwhy_status got_ = (call);                                                       \
    if (got_ != (gpuwhy_status)(want))                                                 \
      fail_at(__FILE__, __LINE__, "%s\n  returned %u (%s)\n  expected %s (%u)", #call, \
              (unsigned)got_, gpuwhy_status_message(got_), #want, (unsigned)(want));   \
  } while (0)

#define OK(call) EXPECT(call, GPUWHY_OK)

/* `call` must fail with `want`, leaving a last error that mentions `needle`. */
#define EXPECT_ERR(call, want, needle)                            \
  do {                                                            \
    EXPECT(call, want);                                           \
    expect_last_error_at(__FILE__, __LINE__, #call, (needle));    \
  } while (0)

/* A handle no session ever had: gpuwhy hands out odd numbers below 2^60, never this. */
#define MADE_UP ((gpuwhy_session *)(uintptr_t)0xdeadbee0u)

/* Prints how long the previous section took (to stdout, shown when a run fails). */
void section(const char *name);
void sleep_ms(long ms);
double now_s(void);
/* A session with `flags` and `interval` (0: default), writing to `dir/name.json` when
 * `name` is not NULL. */
gpuwhy_session *start(const struct opts *o, const char *name, uint32_t flags, double interval);
/* The stopped session's report JSON (malloc'ed; the caller frees it). */
char *report_json(gpuwhy_session *s);
/* The whole-run step count of a report ("steps": {..., "count": N}), summed over the marking
 * threads when several marked (steps.threads), or -1 without steps. */
long steps_count(const char *json);
/* The file at `path`, malloc'ed and NUL-terminated, or NULL when it cannot be read. */
char *read_file(const char *path);

/* Calls every function that takes a session with `s` (and valid other arguments) and checks
 * that each returns `want` and leaves its outputs untouched; gpuwhy_session_free too when
 * `with_free`. */
void every_call_is(gpuwhy_session *s, gpuwhy_status want, const char *needle, int with_free);

/* The parts of `misuse api`, by file. */
void config_checks(const struct opts *o);
void lifecycle(const struct opts *o);
void write_failures(const struct opts *o);
void made_up_handles(void);
void phases(const struct opts *o);
void many_sessions(const struct opts *o);

void part_api(const struct opts *o);
void part_panic(const struct opts *o);
void part_threads(const struct opts *o);
void part_fork(const struct opts *o);

#endif

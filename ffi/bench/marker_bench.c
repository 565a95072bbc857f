/* The cost of one step marker through the C ABI beside a bare clock read, measured in the
 * same C program (`cargo xtask bench` builds it with -O2 against the release libgpuwhy and
 * prints the result). Prints one JSON object on stdout.
 *
 * Batches of 1,000 steps (6 markers each: step_begin, 4 phases, step_end) alternate with
 * batches of 6,000 bare clock_gettime(CLOCK_MONOTONIC) reads, the clock a C++ framework
 * would time steps with; after each pair the program sleeps two sampling intervals so that
 * the sampler thread drains the markers, as it does between the steps of a real loop. Each
 * round reports per-batch medians; the median round is printed, with the lowest and highest
 * round ratio (the spread across rounds) and the share of batches over the 1.5x goal, and the
 * path of the library the loader resolved (an LD_LIBRARY_PATH pointing at a debug build,
 * as cargo's does, would otherwise be measured silently). */
#define _GNU_SOURCE /* dladdr: which libgpuwhy the loader gave us */
#include <dlfcn.h>
#include <gpuwhy.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { BATCH_STEPS = 1000, BATCHES = 60, ROUNDS = 7, MARKERS = 6 };

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return v[n / 2];
}

static void pause_ms(long ms) {
  struct timespec t = {0, ms * 1000000L};
  nanosleep(&t, NULL);
}

int main(void) {
  gpuwhy_config cfg;
  gpuwhy_config_init(&cfg, sizeof cfg);
  cfg.flags = GPUWHY_FLAG_NO_GPU | GPUWHY_FLAG_NO_HOST;
  cfg.sample_interval_s = 0.01;
  gpuwhy_session *s = NULL;
  gpuwhy_status st = gpuwhy_session_new(&cfg, &s);
  if (st != GPUWHY_OK) {
    fprintf(stderr, "gpuwhy_session_new: %s\n", gpuwhy_last_error());
    return 1;
  }
  volatile unsigned bad = 0; /* statuses are checked, as a careful caller would */
  volatile double sink = 0;
  double bare[ROUNDS], marker[ROUNDS], ratio[ROUNDS];
  int over = 0; /* batches whose ratio is above the 1.5x goal */
  for (int r = 0; r < ROUNDS; r++) {
    double b[BATCHES], m[BATCHES], q[BATCHES];
    for (int i = 0; i < BATCHES; i++) {
      double t0 = now_ns();
      for (int k = 0; k < BATCH_STEPS * MARKERS; k++) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        sink += (double)t.tv_nsec;
      }
      double t1 = now_ns();
      for (int k = 0; k < BATCH_STEPS; k++) {
        bad |= gpuwhy_step_begin(s);
        bad |= gpuwhy_phase(s, GPUWHY_PHASE_DATA);
        bad |= gpuwhy_phase(s, GPUWHY_PHASE_FORWARD);
        bad |= gpuwhy_phase(s, GPUWHY_PHASE_BACKWARD);
        bad |= gpuwhy_phase(s, GPUWHY_PHASE_OPTIMIZER);
        bad |= gpuwhy_step_end(s);
      }
      double t2 = now_ns();
      b[i] = (t1 - t0) / (BATCH_STEPS * MARKERS);
      m[i] = (t2 - t1) / (BATCH_STEPS * MARKERS);
      q[i] = m[i] / b[i];
      over += q[i] > 1.5;
      pause_ms(20);
    }
    bare[r] = median(b, BATCHES);
    marker[r] = median(m, BATCHES);
    ratio[r] = median(q, BATCHES);
  }
  st = gpuwhy_session_stop(s);
  size_t len = 0;
  gpuwhy_session_report_json(s, NULL, 0, &len);
  gpuwhy_session_free(s);
  if (bad != 0 || st != GPUWHY_OK) {
    fprintf(stderr, "a marker or stop failed (status bits %u, stop %u)\n", bad, st);
    return 1;
  }
  Dl_info info;
  const char *lib = dladdr((void *)gpuwhy_step_begin, &info) && info.dli_fname ? info.dli_fname : "?";
  double lo = ratio[0], hi = ratio[0];
  for (int r = 1; r < ROUNDS; r++) {
    lo = ratio[r] < lo ? ratio[r] : lo;
    hi = ratio[r] > hi ? ratio[r] : hi;
  }
  printf("{\"bare_ns\": %.2f, \"marker_ns\": %.2f, \"ratio\": %.3f, \"ratio_min\": %.3f, "
         "\"ratio_max\": %.3f, \"batches_over_goal\": %d, \"batches\": %d, \"steps\": %d, "
         "\"report_bytes\": %zu, \"library\": \"%s\"}\n",
         median(bare, ROUNDS), median(marker, ROUNDS), median(ratio, ROUNDS), lo, hi, over,
         ROUNDS * BATCHES, ROUNDS * BATCHES * BATCH_STEPS, len, lib);
  return 0;
}

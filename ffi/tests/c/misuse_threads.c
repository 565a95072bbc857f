/* The misuse suite (see misuse.c): threads marking a session that another thread stops or
 * frees, and threads racing to stop or free the same session. */
#include "misuse.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* A session's life as a marker sees it: 0 recording (OK), 1 stopped, 2 freed. */
static int life_of(gpuwhy_status st) {
  switch (st) {
    case GPUWHY_OK: return 0;
    case GPUWHY_STOPPED: return 1;
    case GPUWHY_INVALID_HANDLE: return 2;
    default: return -1;
  }
}

struct marker {
  gpuwhy_session *s;
  int may_see_stopped; /* the session is stopped before it is freed */
  long calm_after;     /* steps after which the thread yields after each step */
  atomic_int life;     /* the furthest life this thread has seen */
  atomic_long steps;   /* step ends that returned GPUWHY_OK */
  pthread_t thread;
};

/* One training step's markers, one call per k. */
static gpuwhy_status marker_call(gpuwhy_session *s, long k) {
  switch (k % 6) {
    case 0: return gpuwhy_step_begin(s);
    case 1: return gpuwhy_phase(s, GPUWHY_PHASE_DATA);
    case 2: return gpuwhy_phase(s, GPUWHY_PHASE_FORWARD);
    case 3: return gpuwhy_gpu_phase(s, GPUWHY_PHASE_FORWARD, 0.0005);
    case 4: return gpuwhy_phase(s, GPUWHY_PHASE_BACKWARD);
    default: return gpuwhy_step_end(s);
  }
}

/* Marks until the session has been gone for a while; the statuses must only ever move
 * forward: OK, then (maybe) STOPPED, then INVALID_HANDLE. */
static void *marker_loop(void *arg) {
  struct marker *m = arg;
  long gone = 0;
  for (long k = 0; gone < 60; k++) {
    gpuwhy_status st = marker_call(m->s, k);
    int life = life_of(st);
    int seen = atomic_load(&m->life);
    if (life < 0) FAIL("marker %ld returned %u (%s)", k % 6, st, gpuwhy_status_message(st));
    if (life == 1 && !m->may_see_stopped) FAIL("GPUWHY_STOPPED from a session never stopped");
    if (life < seen) FAIL("status %s after a later one: the session came back", gpuwhy_status_message(st));
    if (life > seen) {
      expect_last_error_at(__FILE__, __LINE__, "a refused marker", life == 1 ? "stopped" : "freed");
      atomic_store(&m->life, life);
    }
    if (life == 0 && k % 6 == 5) {
      /* Past its target a thread still marks, but yields after each step: threads marking
       * flat out would keep the CPUs (all of valgrind's one) from the thread that stops the
       * session, and the longer they run, the more steps the final diagnosis has to fold. */
      if (atomic_fetch_add(&m->steps, 1) >= m->calm_after) sched_yield();
    }
    if (life == 2) gone++;
    /* Refused threads slow down, as a training loop past its end would. */
    if (life > 0) sleep_ms(1);
  }
  return NULL;
}

static void start_markers(struct marker *m, int n, gpuwhy_session *s, int may_see_stopped,
                          long calm_after) {
  for (int i = 0; i < n; i++) {
    m[i].s = s;
    m[i].may_see_stopped = may_see_stopped;
    m[i].calm_after = calm_after;
    atomic_init(&m[i].life, 0);
    atomic_init(&m[i].steps, 0);
    CHECK(pthread_create(&m[i].thread, NULL, marker_loop, &m[i]) == 0, "pthread_create");
  }
}

/* Waits until every thread has done `steps` steps (steps < 0: seen the session stopped). */
static void wait_for(struct marker *m, int n, long steps) {
  double t0 = now_s();
  for (int i = 0; i < n; i++) {
    while (steps >= 0 ? atomic_load(&m[i].steps) < steps : atomic_load(&m[i].life) < 1) {
      CHECK(now_s() - t0 < 60.0, "thread %d is stuck (%ld steps)", i, atomic_load(&m[i].steps));
      sleep_ms(1);
    }
  }
}

/* Joins the threads; returns their steps ended with GPUWHY_OK. */
static long join_markers(struct marker *m, int n) {
  long total = 0;
  for (int i = 0; i < n; i++) {
    pthread_join(m[i].thread, NULL);
    CHECK(atomic_load(&m[i].life) == 2, "thread %d never saw the session freed", i);
    total += atomic_load(&m[i].steps);
  }
  return total;
}

/* A report holds the steps whose end was accepted, less at most one per thread: a marker
 * that had passed its check when the session stopped may land after the last fold. */
static void check_count(const char *what, long count, long accepted, int threads) {
  CHECK(count <= accepted && count >= accepted - threads,
        "%s: the report has %ld steps, %ld step ends were accepted by %d threads", what, count,
        accepted, threads);
}

/* Threads keep marking a running session that another thread frees. */
static void free_during_markers(const struct opts *o) {
  enum { N = 4 };
  struct marker m[N];
  gpuwhy_session *s = start(o, "freed", 0, 0.01);
  start_markers(m, N, s, 0, 20L * o->scale);
  wait_for(m, N, 20L * o->scale);
  OK(gpuwhy_session_free(s)); /* stops, writes freed.json */
  long accepted = join_markers(m, N);
  char path[4096];
  snprintf(path, sizeof path, "%s/freed.json", o->dir);
  char *json = read_file(path);
  CHECK(json != NULL, "free did not write %s", path);
  check_count("freed while marking", steps_count(json), accepted, N);
  free(json);
  EXPECT_ERR(gpuwhy_session_free(s), GPUWHY_INVALID_HANDLE, "freed");
}

struct stopper {
  gpuwhy_session *s;
  struct marker *m;
  int n;
  long steps;
  long count;
  char *json;
};

static void *stop_then_free(void *arg) {
  struct stopper *st = arg;
  wait_for(st->m, st->n, st->steps);
  OK(gpuwhy_session_stop(st->s));
  /* The report functions work while the threads are being refused. */
  st->json = report_json(st->s);
  st->count = steps_count(st->json);
  wait_for(st->m, st->n, -1);
  gpuwhy_finding f;
  OK(gpuwhy_session_top_finding(st->s, &f));
  OK(gpuwhy_session_free(st->s));
  return NULL;
}

/* 8 threads hammer the markers while another thread stops the session, then frees it. */
static void hammer(const struct opts *o) {
  enum { N = 8 };
  struct marker m[N];
  gpuwhy_session *s = start(o, "hammer", 0, 0.01);
  struct stopper st = {s, m, N, 50L * o->scale, -1, NULL};
  start_markers(m, N, s, 1, st.steps);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, stop_then_free, &st) == 0, "pthread_create");
  pthread_join(t, NULL);
  long accepted = join_markers(m, N);
  check_count("hammered while stopping", st.count, accepted, N);
  char path[4096];
  snprintf(path, sizeof path, "%s/hammer.json", o->dir);
  char *file = read_file(path);
  CHECK(file != NULL && strcmp(file, st.json) == 0, "%s differs from the report", path);
  free(file);
  free(st.json);
}

/* Several threads call the same function on one session at once. */
struct racer {
  gpuwhy_session *s;
  pthread_barrier_t *go;
  gpuwhy_status (*call)(gpuwhy_session *);
  gpuwhy_status got;
  pthread_t thread;
};

static void *race(void *arg) {
  struct racer *r = arg;
  pthread_barrier_wait(r->go);
  r->got = r->call(r->s);
  return NULL;
}

/* Runs `calls[i]` on thread i, all at once; counts the statuses and keeps each in got[i]. */
static void race_all(gpuwhy_session *s, gpuwhy_status (*const *calls)(gpuwhy_session *), int n,
                     int counts[], gpuwhy_status got[]) {
  struct racer r[8];
  pthread_barrier_t go;
  pthread_barrier_init(&go, NULL, (unsigned)n);
  for (int i = 0; i < n; i++) {
    r[i] = (struct racer){s, &go, calls[i], 999, 0};
    CHECK(pthread_create(&r[i].thread, NULL, race, &r[i]) == 0, "pthread_create");
  }
  for (int i = 0; i < n; i++) {
    pthread_join(r[i].thread, NULL);
    CHECK(r[i].got <= GPUWHY_PANIC, "thread %d: status %u", i, r[i].got);
    counts[r[i].got]++;
    got[i] = r[i].got;
  }
  pthread_barrier_destroy(&go);
}

static void races(const struct opts *o) {
  gpuwhy_status (*const frees[4])(gpuwhy_session *) = {
      gpuwhy_session_free, gpuwhy_session_free, gpuwhy_session_free, gpuwhy_session_free};
  gpuwhy_status (*const stops[4])(gpuwhy_session *) = {
      gpuwhy_session_stop, gpuwhy_session_stop, gpuwhy_session_stop, gpuwhy_session_stop};
  gpuwhy_status (*const mixed[4])(gpuwhy_session *) = {
      gpuwhy_session_stop, gpuwhy_session_free, gpuwhy_step_begin, gpuwhy_session_stop};
  for (int round = 0; round < 2 * o->scale; round++) {
    /* Double (quadruple) free at once: one frees, the others are told it is gone. */
    int c[GPUWHY_PANIC + 1] = {0};
    gpuwhy_status got[4];
    gpuwhy_session *s = start(o, NULL, GPUWHY_FLAG_NO_HOST, 0.01);
    OK(gpuwhy_step_begin(s));
    race_all(s, frees, 4, c, got);
    CHECK(c[GPUWHY_OK] == 1 && c[GPUWHY_INVALID_HANDLE] == 3, "frees: %d OK, %d invalid",
          c[GPUWHY_OK], c[GPUWHY_INVALID_HANDLE]);

    /* Stops at once: one stops, the others find it stopped. */
    memset(c, 0, sizeof c);
    s = start(o, NULL, GPUWHY_FLAG_NO_HOST, 0.01);
    race_all(s, stops, 4, c, got);
    CHECK(c[GPUWHY_OK] == 1 && c[GPUWHY_STOPPED] == 3, "stops: %d OK, %d stopped",
          c[GPUWHY_OK], c[GPUWHY_STOPPED]);
    OK(gpuwhy_session_free(s));

    /* Stop, free and a marker at once: free always succeeds; the rest see some moment of
     * the session's life. */
    memset(c, 0, sizeof c);
    s = start(o, NULL, GPUWHY_FLAG_NO_HOST, 0.01);
    race_all(s, mixed, 4, c, got);
    CHECK(got[1] == GPUWHY_OK, "free racing with stop returned %u", got[1]);
    CHECK(c[GPUWHY_OK] + c[GPUWHY_STOPPED] + c[GPUWHY_INVALID_HANDLE] == 4 && c[GPUWHY_OK] >= 1,
          "stop/free/marker: %d OK, %d stopped, %d invalid", c[GPUWHY_OK], c[GPUWHY_STOPPED],
          c[GPUWHY_INVALID_HANDLE]);
    EXPECT(gpuwhy_session_free(s), GPUWHY_INVALID_HANDLE);
  }
}

void part_threads(const struct opts *o) {
  section("free during markers");
  for (int round = 0; round < 2; round++) free_during_markers(o);
  section("8 threads marking, one stopping");
  hammer(o);
  section("stop and free races");
  races(o);
}

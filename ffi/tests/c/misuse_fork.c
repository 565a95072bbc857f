/* The misuse suite (see misuse.c): fork() while a session records. The child inherits the
 * session but not its sampler thread: markers do nothing, stop and the report are refused,
 * free forgets it, and the child exits normally. The parent's session is unaffected. */
#include "misuse.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define HAVE_VALGRIND_H 1
#endif
#endif

/* The child's heap is a copy of the parent's, with what the parent's other threads (its
 * sampler thread above all) hold on their stacks. Those threads do not exist in the child,
 * so a leak check at the child's exit would report their memory as lost, though nothing is
 * lost in the parent, whose exit is checked in full. The child turns off its leak check,
 * and only that: every other error in the child is still reported (and fails its exit). */
static volatile int in_child;
int __lsan_is_turned_off(void); /* LeakSanitizer asks this at exit */
int __lsan_is_turned_off(void) { return in_child; }

static void no_leak_check_in_child(void) {
  in_child = 1;
#ifdef HAVE_VALGRIND_H
  VALGRIND_CLO_CHANGE("--leak-check=no");
#endif
}

static atomic_int running;
static atomic_long background_steps;

/* Marks steps on the parent's session while the main thread forks. */
static void *background(void *arg) {
  gpuwhy_session *s = arg;
  while (atomic_load(&running)) {
    OK(gpuwhy_step_begin(s));
    OK(gpuwhy_phase(s, GPUWHY_PHASE_DATA));
    OK(gpuwhy_step_end(s));
    atomic_fetch_add(&background_steps, 1);
    sleep_ms(5); /* every step costs the final diagnosis time, under valgrind above all */
  }
  return NULL;
}

/* Looks handles up in gpuwhy's registry all the time, so that a fork is likely to come
 * while some thread is inside it. */
static void *churn(void *arg) {
  (void)arg;
  while (atomic_load(&running)) {
    EXPECT(gpuwhy_step_begin(MADE_UP), GPUWHY_INVALID_HANDLE);
    EXPECT(gpuwhy_session_free(MADE_UP), GPUWHY_INVALID_HANDLE);
    sched_yield(); /* leaves the CPU (all of valgrind's one) to the other threads */
  }
  return NULL;
}

static void *child_thread(void *arg) {
  gpuwhy_session *s = arg;
  OK(gpuwhy_step_begin(s));
  OK(gpuwhy_phase(s, GPUWHY_PHASE_FORWARD));
  OK(gpuwhy_step_end(s));
  return NULL;
}

static void step(gpuwhy_session *s, uint32_t fetch) {
  OK(gpuwhy_step_begin(s));
  OK(gpuwhy_phase(s, GPUWHY_PHASE_DATA));
  OK(gpuwhy_phase(s, fetch));
  OK(gpuwhy_phase(s, GPUWHY_PHASE_FORWARD));
  OK(gpuwhy_gpu_phase(s, GPUWHY_PHASE_FORWARD, 0.001));
  OK(gpuwhy_step_end(s));
}

/* What the child of a recording process may do with the inherited session. */
static void child(gpuwhy_session *s, uint32_t fetch, const struct opts *o, int round) {
  no_leak_check_in_child();
  for (int i = 0; i < 3; i++) step(s, fetch); /* no-ops */
  OK(gpuwhy_session_event(s, "from-the-child"));
  uint32_t id = 777, n = 777;
  EXPECT_ERR(gpuwhy_session_register_phase(s, "child", &id), GPUWHY_INVALID_HANDLE, "parent");
  EXPECT_ERR(gpuwhy_session_gpu_count(s, &n), GPUWHY_INVALID_HANDLE, "parent");
  CHECK(id == 777 && n == 777, "outputs written on failure");
  EXPECT_ERR(gpuwhy_session_stop(s), GPUWHY_INVALID_HANDLE, "parent");
  char path[4096];
  snprintf(path, sizeof path, "%s/child-wrote-%d.json", o->dir, round);
  EXPECT_ERR(gpuwhy_session_write_report(s, path), GPUWHY_INVALID_HANDLE, "parent");
  size_t len = 777;
  EXPECT_ERR(gpuwhy_session_report_json(s, NULL, 0, &len), GPUWHY_INVALID_HANDLE, "parent");
  gpuwhy_finding f = {NULL, NULL, 0};
  EXPECT_ERR(gpuwhy_session_top_finding(s, &f), GPUWHY_INVALID_HANDLE, "parent");
  CHECK(len == 777 && f.id == NULL, "outputs written on failure");
  /* A thread of the child's own, which finds the session through the registry. */
  pthread_t t;
  CHECK(pthread_create(&t, NULL, child_thread, s) == 0, "pthread_create in the child");
  pthread_join(t, NULL);
  OK(gpuwhy_session_free(s));
  /* Freed here means freed here. */
  EXPECT_ERR(gpuwhy_session_free(s), GPUWHY_INVALID_HANDLE, "freed");
  EXPECT_ERR(gpuwhy_step_begin(s), GPUWHY_INVALID_HANDLE, "freed");
  /* The child records with a session of its own. */
  char name[32];
  snprintf(name, sizeof name, "child-%d", round);
  gpuwhy_session *own = start(o, name, GPUWHY_FLAG_NO_GPU, 0.01);
  for (int i = 0; i < 3; i++) step(own, GPUWHY_PHASE_OPTIMIZER);
  OK(gpuwhy_session_stop(own));
  char *json = report_json(own);
  CHECK(steps_count(json) == 3, "the child's own session has %ld steps", steps_count(json));
  free(json);
  OK(gpuwhy_session_free(own));
  fflush(NULL);
  exit(0); /* normally: atexit handlers and thread-local destructors run */
}

/* Waits for the child, failing if it hangs or does not exit with 0. */
static void wait_child(pid_t pid, double timeout_s) {
  double t0 = now_s();
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    CHECK(r >= 0, "waitpid");
    if (r == pid) break;
    if (now_s() - t0 > timeout_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      FAIL("the forked child hung (killed after %.0f s)", timeout_s);
    }
    sleep_ms(5);
  }
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child %s %d",
        WIFEXITED(status) ? "exited with" : "was killed by signal",
        WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

void part_fork(const struct opts *o) {
  section("fork while recording");
  gpuwhy_session *s = start(o, "fork", 0, 0.01);
  uint32_t fetch = 0;
  OK(gpuwhy_session_register_phase(s, "fetch", &fetch));
  /* The background thread marks data phases too: this thread is the training loop. */
  OK(gpuwhy_session_set_main_thread(s));
  atomic_store(&running, 1);
  pthread_t bg, ch;
  CHECK(pthread_create(&bg, NULL, background, s) == 0, "pthread_create");
  CHECK(pthread_create(&ch, NULL, churn, NULL) == 0, "pthread_create");
  int steps = 0;
  int rounds = o->scale > 1 ? 2 : 1; /* one under valgrind */
  for (int round = 0; round < rounds; round++) {
    for (int i = 0; i < 10; i++, steps++) step(s, fetch);
    sleep_ms(30); /* let the sampler tick */
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) child(s, fetch, o, round);
    wait_child(pid, 60.0);
  }
  /* The parent's session goes on. */
  for (int i = 0; i < 10; i++, steps++) step(s, fetch);
  OK(gpuwhy_session_event(s, "from-the-parent"));
  atomic_store(&running, 0);
  pthread_join(bg, NULL);
  pthread_join(ch, NULL);
  uint32_t n = 777;
  OK(gpuwhy_session_gpu_count(s, &n));
  CHECK(n == (uint32_t)o->gpus, "%u GPUs, expected %d", n, o->gpus);
  OK(gpuwhy_session_stop(s));
  char *json = report_json(s);
  long want = steps + atomic_load(&background_steps);
  CHECK(steps_count(json) == want, "the parent's report has %ld steps, expected %ld",
        steps_count(json), want);
  CHECK(strstr(json, "from-the-parent") != NULL, "the parent's event is missing");
  CHECK(strstr(json, "from-the-child") == NULL, "the child's event reached the parent");
  CHECK(strstr(json, "\"fetch\"") != NULL, "the custom phase is missing");
  free(json);
  OK(gpuwhy_session_free(s));
}

/* A training loop with a helper thread that marks steps of its own (micro-steps, with a
 * longer one every tenth, as a checkpoint writer or a prefetcher might): the report's steps
 * must be the loop's, the helper listed apart (steps.threads).
 *
 *   threads OUT.json default       the loop marks a data phase: it is taken for the loop
 *   threads OUT.json name_helper   the helper names itself the main thread: it is diagnosed
 */
#define _POSIX_C_SOURCE 199309L
#include <gpuwhy.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define LOOP_STEPS 30
#define HELPER_STEPS 300

static void work_us(long us) {
  struct timespec t = {0, us * 1000L};
  nanosleep(&t, NULL);
}

static int name_helper = 0;

static void check(const char *what, gpuwhy_status st) {
  if (st != GPUWHY_OK) {
    fprintf(stderr, "%s: %s (%s)\n", what, gpuwhy_status_message(st), gpuwhy_last_error());
    _Exit(1);
  }
}

static void *helper(void *arg) {
  gpuwhy_session *s = arg;
  if (name_helper) check("gpuwhy_session_set_main_thread", gpuwhy_session_set_main_thread(s));
  for (int i = 0; i < HELPER_STEPS; i++) {
    check("gpuwhy_step_begin", gpuwhy_step_begin(s));
    work_us(i % 10 == 9 ? 8000 : 100);
    check("gpuwhy_step_end", gpuwhy_step_end(s));
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  name_helper = strcmp(argv[2], "name_helper") == 0;
  gpuwhy_config cfg;
  check("gpuwhy_config_init", gpuwhy_config_init(&cfg, sizeof cfg));
  cfg.output_path = argv[1];
  cfg.label = "threads.c";
  gpuwhy_session *s = NULL;
  check("gpuwhy_session_new", gpuwhy_session_new(&cfg, &s));
  /* NULL is refused like every other marker. */
  if (gpuwhy_session_set_main_thread(NULL) != GPUWHY_NULL_ARGUMENT) return 3;

  pthread_t t;
  if (pthread_create(&t, NULL, helper, s) != 0) return 4;
  for (int step = 0; step < LOOP_STEPS; step++) {
    check("gpuwhy_phase", gpuwhy_phase(s, GPUWHY_PHASE_DATA));
    work_us(10000);
    check("gpuwhy_phase", gpuwhy_phase(s, GPUWHY_PHASE_FORWARD));
    work_us(3000);
    check("gpuwhy_phase", gpuwhy_phase(s, GPUWHY_PHASE_BACKWARD));
    work_us(4000);
    check("gpuwhy_step_end", gpuwhy_step_end(s));
  }
  pthread_join(t, NULL);
  check("gpuwhy_session_stop", gpuwhy_session_stop(s));
  /* Stopped: the call is refused, as other markers are. */
  if (gpuwhy_session_set_main_thread(s) != GPUWHY_STOPPED) return 5;
  gpuwhy_session_free(s);
  return 0;
}

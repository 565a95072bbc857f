/* The smallest complete use of gpuwhy from C: start a session, mark the phases of each
 * training step, stop, print the top finding. docs/c-api.md walks through it.
 *
 *   cc -std=c11 minimal.c $(pkg-config --cflags --libs gpuwhy) -o minimal
 *   ./minimal run.json        # then: gpuwhy diagnose run.json
 */
#define _POSIX_C_SOURCE 199309L
#include <gpuwhy.h>
#include <stdio.h>
#include <time.h>

/* Stand-ins for a real training loop's work. */
static void work_ms(long ms) {
  struct timespec t = {0, ms * 1000000L};
  nanosleep(&t, NULL);
}

/* Prints what went wrong and returns 1. */
static int fail(const char *what, gpuwhy_status st) {
  fprintf(stderr, "%s: %s (%s)\n", what, gpuwhy_status_message(st), gpuwhy_last_error());
  return 1;
}

int main(int argc, char **argv) {
  gpuwhy_config cfg;
  gpuwhy_status st = gpuwhy_config_init(&cfg, sizeof cfg);
  if (st != GPUWHY_OK) return fail("gpuwhy_config_init", st);
  cfg.output_path = argc > 1 ? argv[1] : "run.json";
  cfg.label = "minimal.c";

  gpuwhy_session *s = NULL;
  st = gpuwhy_session_new(&cfg, &s);
  if (st != GPUWHY_OK) return fail("gpuwhy_session_new", st);

  for (int step = 0; step < 40; step++) {
    gpuwhy_phase(s, GPUWHY_PHASE_DATA); /* begins the step */
    work_ms(12);
    gpuwhy_phase(s, GPUWHY_PHASE_FORWARD);
    work_ms(5);
    gpuwhy_phase(s, GPUWHY_PHASE_BACKWARD);
    work_ms(8);
    gpuwhy_phase(s, GPUWHY_PHASE_OPTIMIZER);
    work_ms(2);
    gpuwhy_step_end(s);
  }

  st = gpuwhy_session_stop(s); /* diagnoses and writes cfg.output_path */
  if (st != GPUWHY_OK) {
    fail("gpuwhy_session_stop", st);
    gpuwhy_session_free(s);
    return 1;
  }
  gpuwhy_finding top;
  if (gpuwhy_session_top_finding(s, &top) == GPUWHY_OK)
    printf("top finding: %s (%s, confidence %.2f)\n", top.id, top.title, top.confidence);
  gpuwhy_session_free(s);
  return 0;
}

/* A session that names a baseline report (gpuwhy_config.baseline_path): 30 steps with a
 * data phase of DATA_MS milliseconds and a 3 ms forward phase, written to OUT.
 *
 *   baseline OUT BASELINE|- DATA_MS
 *
 * Rank, world size and local rank come from the environment (the defaults). */
#define _POSIX_C_SOURCE 199309L
#include <gpuwhy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void work_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static int fail(const char *what, gpuwhy_status st) {
  fprintf(stderr, "%s: %s (%s)\n", what, gpuwhy_status_message(st), gpuwhy_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: baseline OUT BASELINE|- DATA_MS\n");
    return 2;
  }
  gpuwhy_config cfg;
  gpuwhy_status st = gpuwhy_config_init(&cfg, sizeof cfg);
  if (st != GPUWHY_OK) return fail("gpuwhy_config_init", st);
  cfg.output_path = argv[1];
  cfg.baseline_path = strcmp(argv[2], "-") == 0 ? NULL : argv[2];
  cfg.flags = GPUWHY_FLAG_NO_HOST;
  long data_ms = atol(argv[3]);

  gpuwhy_session *s = NULL;
  st = gpuwhy_session_new(&cfg, &s);
  if (st != GPUWHY_OK) return fail("gpuwhy_session_new", st);
  for (int step = 0; step < 30; step++) {
    gpuwhy_phase(s, GPUWHY_PHASE_DATA);
    work_ms(data_ms);
    gpuwhy_phase(s, GPUWHY_PHASE_FORWARD);
    work_ms(3);
    gpuwhy_step_end(s);
  }
  /* An unreadable baseline is no error here: the report says why it has no comparison. */
  st = gpuwhy_session_stop(s);
  if (st != GPUWHY_OK) {
    fail("gpuwhy_session_stop", st);
    gpuwhy_session_free(s);
    return 1;
  }
  size_t len = 0;
  st = gpuwhy_session_report_json(s, NULL, 0, &len);
  if (st != GPUWHY_OK) return fail("report_json", st);
  char *json = malloc(len + 1);
  if (json == NULL) return 1;
  st = gpuwhy_session_report_json(s, json, len + 1, &len);
  if (st != GPUWHY_OK) return fail("report_json", st);
  /* The report in memory carries the comparison as the written one does (the top-level
   * object; a finding's evidence has a "comparison" string too). */
  printf("comparison in memory: %s\n", strstr(json, "\"comparison\": {") ? "yes" : "no");
  free(json);
  gpuwhy_session_free(s);
  return 0;
}

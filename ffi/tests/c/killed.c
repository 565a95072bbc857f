/* A training loop that runs until it is killed: for the test that SIGKILLs an embedding
 * process and reads what gpuwhy had flushed (ffi/tests/killed.rs). Prints "started" once
 * the session runs, then marks 10 ms steps forever. */
#define _POSIX_C_SOURCE 199309L
#include <gpuwhy.h>
#include <stdio.h>
#include <time.h>

static void sleep_ms(long ms) {
  struct timespec t = {0, ms * 1000000L};
  nanosleep(&t, NULL);
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  gpuwhy_config cfg;
  gpuwhy_config_init(&cfg, sizeof cfg);
  cfg.output_path = argv[1];
  cfg.label = "killed.c";
  gpuwhy_session *s = NULL;
  if (gpuwhy_session_new(&cfg, &s) != GPUWHY_OK) {
    fprintf(stderr, "gpuwhy_session_new: %s\n", gpuwhy_last_error());
    return 1;
  }
  printf("started\n");
  fflush(stdout);
  for (;;) {
    gpuwhy_phase(s, GPUWHY_PHASE_DATA);
    sleep_ms(4);
    gpuwhy_phase(s, GPUWHY_PHASE_FORWARD);
    sleep_ms(6);
    gpuwhy_step_end(s);
  }
}

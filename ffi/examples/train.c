/* A fuller use of gpuwhy from C11: the loop of a training framework that names its rank,
 * times a phase of its own (the gradient all-reduce), marks evaluations as events, attaches
 * GPU-measured durations, marks steps from two threads (training and asynchronous
 * evaluation), then reads the report back as JSON to hand to its own logging.
 *
 *   cc -std=c11 train.c $(pkg-config --cflags --libs gpuwhy) -pthread -o train
 *   ./train run.json [STEPS [RANK WORLD_SIZE]] > report.json
 *
 * The report goes to run.json (written by gpuwhy_session_stop) and, read back with
 * gpuwhy_session_report_json, to standard output; log lines go to standard error. The exit
 * status is 1 when any gpuwhy call failed. docs/c-api.md explains each call.
 */
#define _POSIX_C_SOURCE 200809L
#include <gpuwhy.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Every EVAL_EVERY training steps the trainer hands the weights to the evaluator thread,
 * which runs EVAL_BATCHES validation steps of its own while training goes on. */
enum { EVAL_EVERY = 20, EVAL_BATCHES = 5 };

/* Stand-in for a real step's work. */
static void work_ms(long ms) {
  struct timespec t = {0, ms * 1000000L};
  nanosleep(&t, NULL);
}

/* Stand-in for what CUDA events measured for the forward pass of training step `step`
 * (cudaEventElapsedTime gives milliseconds; gpuwhy takes seconds). */
static double gpu_forward_s(int step) { return 0.0015 + 0.0001 * (step % 4); }

/* A marker that fails must not stop training: count the failures, say why once per thread
 * (gpuwhy_last_error() is per thread), and report the count at the end. */
static void marker(gpuwhy_status st, const char *call, int *failures) {
  if (st == GPUWHY_OK) return;
  if ((*failures)++ == 0)
    fprintf(stderr, "gpuwhy: %s: %s (%s)\n", call, gpuwhy_status_message(st),
            gpuwhy_last_error());
}

struct job {
  gpuwhy_session *session;
  gpuwhy_phase_id allreduce;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  int evals_requested; /* guarded by lock */
  int training_done;   /* guarded by lock */
  int eval_failures;   /* written by the evaluator only, read after it is joined */
};

/* The evaluator thread: its own steps (data, forward), one pass per request. */
static void *evaluator(void *arg) {
  struct job *job = arg;
  gpuwhy_session *s = job->session;
  int served = 0;
  for (;;) {
    pthread_mutex_lock(&job->lock);
    while (served == job->evals_requested && !job->training_done)
      pthread_cond_wait(&job->wake, &job->lock);
    int pending = job->evals_requested - served;
    pthread_mutex_unlock(&job->lock);
    if (pending == 0) return NULL; /* training is done and every pass served */
    for (int b = 0; b < EVAL_BATCHES; b++) {
      marker(gpuwhy_phase(s, GPUWHY_PHASE_DATA), "gpuwhy_phase", &job->eval_failures);
      work_ms(1);
      marker(gpuwhy_phase(s, GPUWHY_PHASE_FORWARD), "gpuwhy_phase", &job->eval_failures);
      work_ms(2);
      marker(gpuwhy_step_end(s), "gpuwhy_step_end", &job->eval_failures);
    }
    served++;
  }
}

/* The training loop, on the calling thread. Returns the number of failed markers. */
static int train(struct job *job, int steps) {
  gpuwhy_session *s = job->session;
  int failures = 0;
  /* This thread is the training loop: the report's steps are its steps, and the evaluator
   * thread's are listed apart (steps.threads). */
  marker(gpuwhy_session_set_main_thread(s), "gpuwhy_session_set_main_thread", &failures);
  for (int i = 0; i < steps; i++) {
    marker(gpuwhy_phase(s, GPUWHY_PHASE_DATA), "gpuwhy_phase", &failures); /* begins the step */
    work_ms(4);
    marker(gpuwhy_phase(s, GPUWHY_PHASE_FORWARD), "gpuwhy_phase", &failures);
    work_ms(2);
    marker(gpuwhy_phase(s, GPUWHY_PHASE_BACKWARD), "gpuwhy_phase", &failures);
    work_ms(3);
    marker(gpuwhy_phase(s, job->allreduce), "gpuwhy_phase", &failures);
    work_ms(2);
    marker(gpuwhy_phase(s, GPUWHY_PHASE_OPTIMIZER), "gpuwhy_phase", &failures);
    work_ms(1);
    marker(gpuwhy_step_end(s), "gpuwhy_step_end", &failures);
    /* The step's CUDA events have completed by now; the duration attaches to the step just
     * ended (this thread's last completed one). */
    marker(gpuwhy_gpu_phase(s, GPUWHY_PHASE_FORWARD, gpu_forward_s(i)), "gpuwhy_gpu_phase",
           &failures);
    if ((i + 1) % EVAL_EVERY == 0) {
      /* Rare, so the short lock an event takes does not matter. */
      marker(gpuwhy_session_event(s, "eval"), "gpuwhy_session_event", &failures);
      pthread_mutex_lock(&job->lock);
      job->evals_requested++;
      pthread_cond_signal(&job->wake);
      pthread_mutex_unlock(&job->lock);
    }
  }
  return failures;
}

/* Reads the stopped session's report: ask for the size, then fill. The caller frees it. */
static char *report_json(gpuwhy_session *s, size_t *len) {
  gpuwhy_status st = gpuwhy_session_report_json(s, NULL, 0, len);
  if (st != GPUWHY_OK) {
    fprintf(stderr, "gpuwhy: report size: %s (%s)\n", gpuwhy_status_message(st),
            gpuwhy_last_error());
    return NULL;
  }
  char *buf = malloc(*len + 1); /* + the NUL */
  if (buf == NULL) return NULL;
  st = gpuwhy_session_report_json(s, buf, *len + 1, len);
  if (st != GPUWHY_OK) {
    fprintf(stderr, "gpuwhy: report: %s (%s)\n", gpuwhy_status_message(st), gpuwhy_last_error());
    free(buf);
    return NULL;
  }
  return buf;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc == 4 || argc > 5) {
    fprintf(stderr, "usage: %s REPORT.json [STEPS [RANK WORLD_SIZE]]\n", argv[0]);
    return 2;
  }
  int steps = argc > 2 ? atoi(argv[2]) : 200;

  gpuwhy_config cfg;
  gpuwhy_status st = gpuwhy_config_init(&cfg, sizeof cfg);
  if (st != GPUWHY_OK) {
    fprintf(stderr, "gpuwhy_config_init: %s\n", gpuwhy_status_message(st));
    return 1;
  }
  cfg.label = "train.c";
  cfg.output_path = argv[1];
  if (argc == 5) { /* a framework knows its rank (MPI_Comm_rank, torch.distributed) */
    cfg.rank = atoi(argv[3]);
    cfg.world_size = atoi(argv[4]);
  }

  struct job job = {.evals_requested = 0, .training_done = 0, .eval_failures = 0};
  st = gpuwhy_session_new(&cfg, &job.session);
  if (st != GPUWHY_OK) {
    fprintf(stderr, "gpuwhy_session_new: %s (%s)\n", gpuwhy_status_message(st),
            gpuwhy_last_error());
    return 1;
  }
  /* Registered once, before the loop: registration takes a lock. */
  st = gpuwhy_session_register_phase(job.session, "allreduce", &job.allreduce);
  uint32_t gpus = 0;
  if (st == GPUWHY_OK) st = gpuwhy_session_gpu_count(job.session, &gpus);
  if (st != GPUWHY_OK) {
    fprintf(stderr, "gpuwhy: setup: %s (%s)\n", gpuwhy_status_message(st), gpuwhy_last_error());
    gpuwhy_session_free(job.session);
    return 1;
  }
  fprintf(stderr, "gpuwhy %s: sampling %u GPU(s)\n", gpuwhy_version(), gpus);

  pthread_mutex_init(&job.lock, NULL);
  pthread_cond_init(&job.wake, NULL);
  pthread_t eval_thread;
  if (pthread_create(&eval_thread, NULL, evaluator, &job) != 0) {
    fprintf(stderr, "cannot start the evaluator thread\n");
    gpuwhy_session_free(job.session);
    return 1;
  }
  int failures = train(&job, steps);
  pthread_mutex_lock(&job.lock);
  job.training_done = 1;
  pthread_cond_signal(&job.wake);
  pthread_mutex_unlock(&job.lock);
  pthread_join(eval_thread, NULL);
  failures += job.eval_failures;

  st = gpuwhy_session_stop(job.session); /* diagnoses and writes cfg.output_path */
  if (st != GPUWHY_OK) {
    fprintf(stderr, "gpuwhy_session_stop: %s (%s)\n", gpuwhy_status_message(st),
            gpuwhy_last_error());
    failures++;
  }
  size_t len = 0;
  char *json = report_json(job.session, &len);
  if (json != NULL) {
    fwrite(json, 1, len, stdout);
    putchar('\n');
    free(json);
  } else {
    failures++;
  }
  gpuwhy_finding top;
  st = gpuwhy_session_top_finding(job.session, &top);
  if (st == GPUWHY_OK)
    fprintf(stderr, "gpuwhy: top finding: %s (%s, confidence %.2f)\n", top.id, top.title,
            top.confidence);
  else
    failures++;
  /* The finding's strings belong to the session: use them before this. */
  gpuwhy_session_free(job.session);
  pthread_cond_destroy(&job.wake);
  pthread_mutex_destroy(&job.lock);
  if (failures > 0) fprintf(stderr, "gpuwhy: %d call(s) failed\n", failures);
  return failures > 0;
}

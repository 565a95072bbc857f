// train.c in C++17, through the RAII wrapper of gpuwhy.hpp: the same loop (a rank, a custom
// "allreduce" phase, an "eval" event every EVAL_EVERY steps, GPU-measured forward times, a
// training thread and an evaluator thread marking their own steps), the same output.
//
//   c++ -std=c++17 train.cpp $(pkg-config --cflags --libs gpuwhy) -pthread -o train
//   ./train run.json [STEPS [RANK WORLD_SIZE]] > report.json
//
// The report goes to run.json and, read back as JSON, to standard output; log lines go to
// standard error. Exit status 1 when any gpuwhy call failed.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

#include "gpuwhy.hpp"

namespace {

constexpr int EVAL_EVERY = 20;
constexpr int EVAL_BATCHES = 5;

void work_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// Stand-in for what CUDA events measured for the forward pass of training step `step`, in
// seconds (cudaEventElapsedTime / 1000).
double gpu_forward_s(int step) { return 0.0015 + 0.0001 * (step % 4); }

// Counts failed markers and says why once per thread (gpuwhy_last_error() is per thread).
struct Failures {
  int count = 0;
  void note(gpuwhy_status st, const char* what) {
    if (st == GPUWHY_OK) return;
    if (count++ == 0)
      std::cerr << "gpuwhy: " << what << ": " << gpuwhy_status_message(st) << " ("
                << gpuwhy_last_error() << ")\n";
  }
};

// Hands evaluation requests from the trainer to the evaluator thread.
class EvalQueue {
 public:
  void request() {
    { std::lock_guard<std::mutex> g(m_); requested_++; }
    cv_.notify_one();
  }
  void finish() {
    { std::lock_guard<std::mutex> g(m_); done_ = true; }
    cv_.notify_one();
  }
  // Waits for requests beyond `served`; 0 once training is done and all are served.
  int wait(int served) {
    std::unique_lock<std::mutex> g(m_);
    cv_.wait(g, [&] { return requested_ > served || done_; });
    return requested_ - served;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int requested_ = 0;
  bool done_ = false;
};

int evaluate(const gpuwhy::Session& session, EvalQueue& queue) {
  Failures failures;
  for (int served = 0; queue.wait(served) > 0; served++) {
    for (int b = 0; b < EVAL_BATCHES; b++) {
      gpuwhy::Step step(session);
      step.phase(gpuwhy::DATA);
      work_ms(1);
      step.phase(gpuwhy::FORWARD);
      work_ms(2);
      failures.note(step.end(), "eval step");
    }
  }
  return failures.count;
}

int train(gpuwhy::Session& session, EvalQueue& queue, int steps) {
  const gpuwhy::Phase allreduce = session.register_phase("allreduce");  // before the loop
  Failures failures;
  // This thread is the training loop: the report's steps are its steps, and the evaluator
  // thread's are listed apart (steps.threads).
  failures.note(session.set_main_thread(), "gpuwhy_session_set_main_thread");
  for (int i = 0; i < steps; i++) {
    {
      gpuwhy::Step step(session);  // ends when it goes out of scope, even on an exception
      step.phase(gpuwhy::DATA);
      work_ms(4);
      step.phase(gpuwhy::FORWARD);
      work_ms(2);
      step.phase(gpuwhy::BACKWARD);
      // The forward pass's CUDA events have completed: its GPU time attaches to this step,
      // which has entered the forward phase.
      step.gpu_phase(gpuwhy::FORWARD, gpu_forward_s(i));
      work_ms(3);
      step.phase(allreduce);
      work_ms(2);
      step.phase(gpuwhy::OPTIMIZER);
      work_ms(1);
      failures.note(step.end(), "training step");
    }
    if ((i + 1) % EVAL_EVERY == 0) {
      failures.note(session.event("eval"), "gpuwhy_session_event");
      queue.request();
    }
  }
  return failures.count;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc == 4 || argc > 5) {
    std::cerr << "usage: " << argv[0] << " REPORT.json [STEPS [RANK WORLD_SIZE]]\n";
    return 2;
  }
  const int steps = argc > 2 ? std::atoi(argv[2]) : 200;
  try {
    gpuwhy::Config config;
    config.label("train.cpp").output(argv[1]);
    if (argc == 5) config.rank(std::atoi(argv[3]), std::atoi(argv[4]));
    gpuwhy::Session session(config);
    std::cerr << "gpuwhy " << gpuwhy_version() << ": sampling " << session.gpu_count()
              << " GPU(s)\n";

    EvalQueue queue;
    int eval_failures = 0;
    std::thread evaluator([&] { eval_failures = evaluate(session, queue); });
    int failures = 0;
    try {
      failures = train(session, queue, steps);
    } catch (...) {
      queue.finish();
      evaluator.join();
      throw;
    }
    queue.finish();
    evaluator.join();
    failures += eval_failures;

    session.stop();  // diagnoses and writes the output path
    const std::string json = session.report_json();
    std::fwrite(json.data(), 1, json.size(), stdout);
    std::fputc('\n', stdout);
    const gpuwhy::Finding top = session.top_finding();
    std::fprintf(stderr, "gpuwhy: top finding: %s (%s, confidence %.2f)\n", top.id.c_str(),
                 top.title.c_str(), top.confidence);
    if (failures > 0) std::cerr << "gpuwhy: " << failures << " call(s) failed\n";
    return failures > 0;
  } catch (const gpuwhy::Error& e) {  // the session, if any, was freed on the way out
    std::cerr << e.what() << "\n";
    return 1;
  }
}

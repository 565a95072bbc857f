// A small header-only C++17 wrapper over gpuwhy.h, as a C++ training framework would write
// one: the session owned by a std::unique_ptr with a deleter that calls
// gpuwhy_session_free, a Step guard that ends its step when it goes out of scope, and one
// rule for errors:
//
// - Calls that set up or finish a session (Config, Session's constructor, register_phase,
//   stop, report_json, write_report, top_finding) throw gpuwhy::Error, which carries the
//   status and gpuwhy's explanation.
// - Calls made inside the training loop (step, phase, gpu_phase, event) never throw: they
//   return the gpuwhy_status, because a profiler must not stop training. Step keeps the
//   first failure of its calls for the loop to count or log.
//
// It is an example, not an installed header: copy it into your project and adapt it.
#ifndef GPUWHY_HPP
#define GPUWHY_HPP

#include <gpuwhy.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace gpuwhy {

using Phase = gpuwhy_phase_id;
constexpr Phase DATA = GPUWHY_PHASE_DATA;
constexpr Phase FORWARD = GPUWHY_PHASE_FORWARD;
constexpr Phase BACKWARD = GPUWHY_PHASE_BACKWARD;
constexpr Phase OPTIMIZER = GPUWHY_PHASE_OPTIMIZER;

// A failed setup or finishing call: "what: status message (details)".
class Error : public std::runtime_error {
 public:
  Error(gpuwhy_status status, const char* what)
      : std::runtime_error(std::string(what) + ": " + gpuwhy_status_message(status) + " (" +
                           gpuwhy_last_error() + ")"),
        status_(status) {}
  gpuwhy_status status() const noexcept { return status_; }

 private:
  gpuwhy_status status_;
};

namespace detail {
inline void check(gpuwhy_status status, const char* what) {
  if (status != GPUWHY_OK) throw Error(status, what);
}
}  // namespace detail

// Frees the session when its unique_ptr goes: a session still recording is stopped and its
// report written to the configured output first. The status is dropped (a destructor must
// not throw); call Session::stop() to see it.
struct SessionDeleter {
  void operator()(gpuwhy_session* s) const noexcept { gpuwhy_session_free(s); }
};
using SessionPtr = std::unique_ptr<gpuwhy_session, SessionDeleter>;

// What a session records. The strings are kept here and copied by gpuwhy when the session
// starts.
class Config {
 public:
  Config() { detail::check(gpuwhy_config_init(&raw_, sizeof raw_), "gpuwhy_config_init"); }
  Config& label(std::string v) { label_ = std::move(v); return *this; }
  Config& output(std::string path) { output_ = std::move(path); return *this; }
  Config& nvml_path(std::string path) { nvml_ = std::move(path); return *this; }
  Config& rank(int rank, int world_size) {
    raw_.rank = rank;
    raw_.world_size = world_size;
    return *this;
  }
  Config& flags(gpuwhy_flags f) { raw_.flags = f; return *this; }
  Config& sample_interval(double seconds) { raw_.sample_interval_s = seconds; return *this; }

  // The C struct, pointing into this object: valid while it lives unchanged.
  gpuwhy_config raw() const {
    gpuwhy_config c = raw_;
    c.label = label_.empty() ? nullptr : label_.c_str();
    c.output_path = output_.empty() ? nullptr : output_.c_str();
    c.nvml_path = nvml_.empty() ? nullptr : nvml_.c_str();
    return c;
  }

 private:
  gpuwhy_config raw_{};
  std::string label_, output_, nvml_;
};

// The top finding, copied out of the session.
struct Finding {
  std::string id;  // "none" when nothing holds the GPU back
  std::string title;
  double confidence = 0;
};

// One recording. Movable, not copyable; every method may be called from any thread.
class Session {
 public:
  explicit Session(const Config& config = Config()) {
    gpuwhy_config c = config.raw();
    gpuwhy_session* s = nullptr;
    detail::check(gpuwhy_session_new(&c, &s), "gpuwhy_session_new");
    session_.reset(s);
  }

  // The id of phase `name`, registering it if new. Before the loop: it takes a lock.
  Phase register_phase(const char* name) {
    Phase id = 0;
    detail::check(gpuwhy_session_register_phase(get(), name, &id),
                  "gpuwhy_session_register_phase");
    return id;
  }

  unsigned gpu_count() const {
    uint32_t n = 0;
    detail::check(gpuwhy_session_gpu_count(get(), &n), "gpuwhy_session_gpu_count");
    return n;
  }

  // The markers: the calling thread's steps. Never throw.
  gpuwhy_status step_begin() const noexcept { return gpuwhy_step_begin(get()); }
  gpuwhy_status phase(Phase p) const noexcept { return gpuwhy_phase(get(), p); }
  gpuwhy_status step_end() const noexcept { return gpuwhy_step_end(get()); }
  gpuwhy_status gpu_phase(Phase p, double seconds) const noexcept {
    return gpuwhy_gpu_phase(get(), p, seconds);
  }
  gpuwhy_status event(const char* name) const noexcept {
    return gpuwhy_session_event(get(), name);
  }
  // Names the calling thread the training loop (other threads' steps are listed apart).
  gpuwhy_status set_main_thread() const noexcept {
    return gpuwhy_session_set_main_thread(get());
  }

  // Stops recording, diagnoses and writes the configured output.
  void stop() { detail::check(gpuwhy_session_stop(get()), "gpuwhy_session_stop"); }

  // The stopped session's report (JSON): asks for the size, then fills.
  std::string report_json() const {
    std::size_t len = 0;
    detail::check(gpuwhy_session_report_json(get(), nullptr, 0, &len),
                  "gpuwhy_session_report_json");
    std::string json(len + 1, '\0');  // + the NUL gpuwhy writes
    detail::check(gpuwhy_session_report_json(get(), json.data(), json.size(), &len),
                  "gpuwhy_session_report_json");
    json.resize(len);
    return json;
  }

  void write_report(const std::string& path) const {
    detail::check(gpuwhy_session_write_report(get(), path.c_str()),
                  "gpuwhy_session_write_report");
  }

  Finding top_finding() const {
    gpuwhy_finding f;
    detail::check(gpuwhy_session_top_finding(get(), &f), "gpuwhy_session_top_finding");
    return Finding{f.id, f.title, f.confidence};
  }

  gpuwhy_session* get() const noexcept { return session_.get(); }

 private:
  SessionPtr session_;
};

// One step on the calling thread: begins it when constructed, ends it when destroyed (or at
// end()). Keeps the first failing status of the calls made through it.
class Step {
 public:
  explicit Step(const Session& session) noexcept : session_(session) {
    note(session_.step_begin());
  }
  ~Step() {
    if (open_) session_.step_end();
  }
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;

  gpuwhy_status phase(Phase p) noexcept { return note(session_.phase(p)); }
  gpuwhy_status gpu_phase(Phase p, double seconds) noexcept {
    return note(session_.gpu_phase(p, seconds));
  }
  // Ends the step now; returns the first failure of the step's calls, or GPUWHY_OK.
  gpuwhy_status end() noexcept {
    if (open_) {
      open_ = false;
      note(session_.step_end());
    }
    return first_failure_;
  }

 private:
  gpuwhy_status note(gpuwhy_status s) noexcept {
    if (s != GPUWHY_OK && first_failure_ == GPUWHY_OK) first_failure_ = s;
    return s;
  }
  const Session& session_;
  bool open_ = true;
  gpuwhy_status first_failure_ = GPUWHY_OK;
};

}  // namespace gpuwhy

#endif  // GPUWHY_HPP

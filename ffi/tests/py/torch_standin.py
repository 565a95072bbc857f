"""gpuwhy.torch against a small stand-in of the torch API it uses (no torch needed).

The stand-in's CUDA events stamp a simulated GPU timeline: each phase of the loop queues a
known amount of GPU work, the loop's data wait lets the GPU catch up, and an event's
query() is true once the simulated clock has passed its stamp. The script checks that the
GPU phase times reach the report as measured, that nothing synchronised, that the
DataLoader's settings and the profiler trace are in the report, and (with --merge, where the
`gpuwhy` command is installed) that rank 0 of a two-rank job merges the ranks' reports.

Prints "torch stand-in: ok" and exits 0 when every check holds. Run by ffi/tests/python.rs
and by `cargo xtask wheel test`.
"""
import json
import os
import subprocess
import sys
import tempfile
import types

SYNC_CALLS = []          # every synchronising call the stand-in saw
CLOCK = {"cpu_ms": 0.0, "gpu_end_ms": 0.0}   # the simulated now, and the GPU queue's end


def launch(ms):
    """Queues `ms` of GPU work on the (one) stream: it starts when the queue is free."""
    CLOCK["gpu_end_ms"] = max(CLOCK["gpu_end_ms"], CLOCK["cpu_ms"]) + ms
    CLOCK["cpu_ms"] += 0.05  # launching costs the CPU a little


class Event:
    def __init__(self, enable_timing=False):
        assert enable_timing, "gpuwhy.torch must ask for timing events"
        self.stamp = None

    def record(self, stream=None):
        self.stamp = max(CLOCK["gpu_end_ms"], CLOCK["cpu_ms"])

    def query(self):
        return self.stamp is not None and CLOCK["cpu_ms"] >= self.stamp

    def elapsed_time(self, end):
        if not (self.query() and end.query()):
            raise RuntimeError("elapsed_time on an event that has not completed")
        return end.stamp - self.stamp

    def synchronize(self):
        SYNC_CALLS.append("Event.synchronize")


def _sync(*_a, **_k):
    SYNC_CALLS.append("torch.cuda.synchronize")


class Profile:
    """torch.profiler.profile: counts step() and calls on_trace_ready after the schedule."""

    def __init__(self, activities, schedule, on_trace_ready, **kw):
        self.schedule, self.ready, self.steps, self.done = schedule, on_trace_ready, 0, False

    def start(self):
        pass

    def step(self):
        self.steps += 1
        if not self.done and self.steps >= self.schedule["total"]:
            self.done = True
            self.ready(self)

    def stop(self):
        pass

    def export_chrome_trace(self, path):
        # A Kineto-shaped trace of 3 steps: 10 ms GPU kernels in 20 ms profiler steps.
        events = []
        for i in range(3):
            t = 1000.0 + i * 20000.0
            events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % i,
                           "pid": 1, "tid": 1, "ts": t, "dur": 20000.0})
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                           "pid": 1, "tid": 1, "ts": t + 10.0, "dur": 5.0,
                           "args": {"correlation": i + 1}})
            events.append({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7,
                           "ts": t + 100.0, "dur": 10000.0,
                           "args": {"correlation": i + 1, "stream": 7, "device": 0}})
        with open(path, "w") as f:
            json.dump({"traceEvents": events}, f)


def install_standin():
    torch = types.ModuleType("torch")
    cuda = types.ModuleType("torch.cuda")
    cuda.Event, cuda.synchronize = Event, _sync
    cuda.is_available = lambda: True
    cuda.current_stream = lambda: "stream"
    profiler = types.ModuleType("torch.profiler")
    profiler.ProfilerActivity = types.SimpleNamespace(CPU="cpu", CUDA="cuda")
    profiler.schedule = lambda wait, warmup, active, repeat: {"total": wait + warmup + active}
    profiler.profile = Profile
    torch.cuda, torch.profiler = cuda, profiler
    sys.modules.update({"torch": torch, "torch.cuda": cuda, "torch.profiler": profiler})
    # The callbacks' base classes, as transformers and Lightning export them.
    transformers = types.ModuleType("transformers")
    transformers.TrainerCallback = type("TrainerCallback", (), {})
    lightning = types.ModuleType("lightning")
    lightning_pytorch = types.ModuleType("lightning.pytorch")
    lightning_pytorch.Callback = type("Callback", (), {})
    lightning.pytorch = lightning_pytorch
    sys.modules.update({"transformers": transformers, "lightning": lightning,
                        "lightning.pytorch": lightning_pytorch})


class Loader:
    """A DataLoader's attributes as torch sets them for num_workers=0."""
    num_workers, pin_memory, prefetch_factor, persistent_workers, batch_size = 0, False, None, False, 32

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __iter__(self):
        for i in range(self.n):
            CLOCK["cpu_ms"] += 40.0  # the wait for the batch: the GPU catches up meanwhile
            yield i


def check(cond, what):
    if not cond:
        print("FAILED: " + what)
        sys.exit(1)


def run_loop(out, steps, profile_steps=0, **session_args):
    import gpuwhy.torch as gwt
    with gwt.Session(output=out, no_gpu=True, **session_args) as gw:
        trace = gw.profile(steps=profile_steps, wait=1, warmup=1) if profile_steps else None
        for _ in gw.data(Loader(steps)):
            gw.phase("forward")
            launch(10.0)
            gw.phase("backward")
            launch(20.0)
            gw.phase("optimizer")
            launch(5.0)
        CLOCK["cpu_ms"] += 100.0  # the loop's epilogue: meanwhile the GPU finishes
    return gw, trace


def main():
    install_standin()
    merge = "--merge" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        gw, trace = run_loop(out, 24, profile_steps=3)
        timer = gw.gpu_timer
        check(SYNC_CALLS == [], "synchronising calls: %r" % SYNC_CALLS)
        # One event per boundary: forward's start, backward's, optimizer's, the step's end.
        check(timer.recorded == 4 * 24, "events recorded: %d" % timer.recorded)
        check(timer.resolved == 3 * 24 and timer.dropped == 0,
              "resolved %d, dropped %d" % (timer.resolved, timer.dropped))
        # One value per phase per step, a step late (the GPU finishes a step's work during
        # the next one's data wait): the first step gets none, the last step's are left over.
        check(timer.attached == 3 * 23 and timer.unattached == 3,
              "attached %d, unattached %d" % (timer.attached, timer.unattached))
        with open(out) as f:
            report = json.load(f)
        gpu = report["steps"]["gpu_stats"]
        for phase, ms in (("forward", 10.0), ("backward", 20.0), ("optimizer", 5.0)):
            p50 = gpu[phase]["p50_s"] * 1000.0
            check(abs(p50 - ms) < 0.01, "GPU %s p50 %.3f ms, expected %.1f" % (phase, p50, ms))
        loader = report["run"].get("data_loader")
        check(loader == {"num_workers": 0, "pin_memory": False, "persistent_workers": False,
                         "batch_size": 32}, "run.data_loader: %r" % (loader,))
        check(os.path.exists(trace), "no trace written at %s" % trace)
        check(report["run"].get("traces") == [trace], "run.traces: %r" % report["run"].get("traces"))
        kinds = [e["kind"] for e in report.get("events", [])]
        check("trace_unreadable" not in kinds, "the trace was not read: %r" % report["events"])
        # Without GPU timing the loop still marks its steps; no event is recorded.
        gw, _ = run_loop(os.path.join(tmp, "cpu.json"), 4, gpu_timing=False)
        check(gw.gpu_timer is None and gw.report()["steps"]["count"] >= 4,
              "steps without GPU timing: %r" % gw.report()["steps"]["count"])
        # A trace that is not there is said in the report, and costs nothing else.
        import gpuwhy
        s = gpuwhy.Session(no_gpu=True).start()
        s.add_trace(os.path.join(tmp, "nowhere.json"))
        s.close()
        events = [e for e in s.report().get("events", []) if e["kind"] == "trace_unreadable"]
        check(len(events) == 1 and "nowhere.json" in events[0]["detail"], "missing trace: %r" % events)
        check_named_loop(tmp)
        check_callbacks(tmp)
        if merge:
            check_merge(tmp)
    print("torch stand-in: ok")


def check_named_loop(tmp):
    """A helper thread that marks its own data-then-work micro-steps beside the loop: the
    loop that iterates gw.data() names itself, so the report's steps are the loop's."""
    import threading
    import time
    import gpuwhy.torch as gwt
    out = os.path.join(tmp, "threads.json")
    with gwt.Session(output=out, no_gpu=True, gpu_timing=False) as gw:
        stop = threading.Event()

        def helper():
            while not stop.is_set():
                gw.phase("data")
                gw.phase("forward")
                gw.step_end()
                time.sleep(0.0005)
        t = threading.Thread(target=helper)
        t.start()
        time.sleep(0.01)
        for _ in gw.data(Loader(8)):
            gw.phase("forward")
            time.sleep(0.002)
        stop.set()
        t.join()
    with open(out) as f:
        steps = json.load(f)["steps"]
    main = [t for t in steps.get("threads", []) if t.get("main")]
    check(steps["count"] == 8 and len(main) == 1 and main[0].get("chosen_by") == "named",
          "the loop's steps: count %r, threads %r" % (steps["count"], steps.get("threads")))


def check_callbacks(tmp):
    """The Trainer's and Lightning's hooks, called as those frameworks call them."""
    from gpuwhy.hf import GpuwhyCallback as HfCallback
    from gpuwhy.lightning import GpuwhyCallback as LightningCallback

    out = os.path.join(tmp, "hf.json")
    cb = HfCallback(output=out, no_gpu=True)
    cb.on_train_begin(None, None, None, train_dataloader=Loader(0))
    for step in range(6):
        CLOCK["cpu_ms"] += 40.0
        cb.on_step_begin(None, None, None)
        launch(30.0)
        cb.on_pre_optimizer_step(None, None, None)
        launch(5.0)
        cb.on_step_end(None, None, None)
        if step == 3:
            cb.on_evaluate(None, None, None)
    CLOCK["cpu_ms"] += 100.0
    cb.on_train_end(None, None, None)
    check_marked(out, 6, ("data", "forward", "optimizer"), "eval")

    out = os.path.join(tmp, "lightning.json")
    trainer = types.SimpleNamespace(train_dataloader=Loader(0))
    cb = LightningCallback(output=out, no_gpu=True)
    cb.on_train_start(trainer, None)
    for step in range(5):
        CLOCK["cpu_ms"] += 40.0
        cb.on_train_batch_start(trainer, None, step, step)
        launch(10.0)
        cb.on_before_backward(trainer, None, None)
        launch(20.0)
        cb.on_before_optimizer_step(trainer, None, None)
        launch(5.0)
        cb.on_train_batch_end(trainer, None, None, step, step)
    cb.on_save_checkpoint(trainer, None, {})
    CLOCK["cpu_ms"] += 100.0
    cb.on_train_end(trainer, None)
    check_marked(out, 5, ("data", "forward", "backward", "optimizer"), "checkpoint")


def check_marked(path, steps, phases, event):
    with open(path) as f:
        report = json.load(f)
    got = report["steps"]
    check(got["count"] == steps, "%s: %d steps, expected %d" % (path, got["count"], steps))
    for p in phases:
        check(got["stats"].get(p, {}).get("count") == steps,
              "%s: phase %s in %r" % (path, p, got["stats"].get(p)))
        check(p == "data" or p in got.get("gpu_stats", {}), "%s: no GPU time for %s" % (path, p))
    check(event in [e["kind"] for e in report.get("events", [])], "%s: no %s event" % (path, event))
    check(report["run"].get("data_loader", {}).get("num_workers") == 0, "%s: loader" % path)


def check_merge(tmp):
    """Two torchrun ranks: rank 1 in a child process, rank 0 here merges both."""
    shared = os.path.join(tmp, "job")
    env = dict(os.environ, RANK="1", WORLD_SIZE="2", LOCAL_RANK="1")
    child = subprocess.run([sys.executable, __file__, "--rank-only", shared], env=env)
    check(child.returncode == 0, "rank 1 failed")
    os.environ.update(RANK="0", WORLD_SIZE="2", LOCAL_RANK="0")
    gw, _ = run_loop(None, 6, output_dir=shared, merge_timeout_s=30)
    check(gw.job_report is not None and os.path.exists(gw.job_report), "no job report")
    with open(gw.job_report) as f:
        job = json.load(f)
    check(len(job["ranks"]["ranks"]) == 2, "merged ranks: %r" % job.get("ranks"))


if __name__ == "__main__":
    if "--rank-only" in sys.argv:
        install_standin()
        run_loop(None, 6, output_dir=sys.argv[sys.argv.index("--rank-only") + 1])
    else:
        main()

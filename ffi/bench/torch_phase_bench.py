"""The CPU cost gpuwhy.torch adds to a phase marker, against a plain gpuwhy.Session phase.

Run by `cargo xtask bench` (GPUWHY_LIB and PYTHONPATH set). Without a GPU, torch's CUDA
events are a stand-in whose record() and query() cost nothing, so the figure is gpuwhy's own
bookkeeping per phase (two event records, the pairing, a query and the attach through
gpuwhy_gpu_phase); on a GPU add what two cudaEventRecord calls and one cudaEventQuery cost
there (scripts/gpu-check.sh measures it with real torch).
Prints one line per side and their ratio.
"""
import sys
import time
import types


class _Event:
    __slots__ = ("done",)

    def __init__(self, enable_timing=False):
        self.done = False

    def record(self, stream=None):
        self.done = True

    def query(self):
        return self.done

    def elapsed_time(self, end):
        return 0.5


def _standin():
    torch = types.ModuleType("torch")
    cuda = types.ModuleType("torch.cuda")
    cuda.Event = _Event
    cuda.is_available = lambda: True
    torch.cuda = cuda
    sys.modules.update({"torch": torch, "torch.cuda": cuda})


def per_phase_ns(session_cls, steps, **kw):
    with session_cls(no_gpu=True, **kw) as gw:
        gw.step_begin()
        t0 = time.perf_counter_ns()
        for _ in range(steps):
            gw.phase("forward")
            gw.phase("backward")
            gw.phase("optimizer")
            gw.step_end()
        t1 = time.perf_counter_ns()
    return (t1 - t0) / (steps * 4)


def main():
    _standin()
    import gpuwhy
    import gpuwhy.torch as gwt
    steps = 20000
    plain = min(per_phase_ns(gpuwhy.Session, steps) for _ in range(3))
    timed = min(per_phase_ns(gwt.Session, steps, gpu_timing=True) for _ in range(3))
    print("torch phases: gpuwhy.Session %.0f ns per marker, gpuwhy.torch.Session with CUDA-event "
          "timing %.0f ns per marker (stand-in events), %.1fx; added %.1f us per marker"
          % (plain, timed, timed / plain, (timed - plain) / 1000.0))


if __name__ == "__main__":
    main()

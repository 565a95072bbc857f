"""The training loops of scripts/gpu-check.sh, on a real GPU (PyTorch) or as stand-ins for
the dry run (sleeps and spins shaped like the simulator's scenarios).

A loop exposes: `loader()`, an iterable of batches for `Session.data()`; `step(gw, batch)`,
one step's work with its phase markers when `gw` is a Session (and none when it is None, for
the timing without markers); `interval`, the sampling interval to record with; `attaches`,
the phases whose GPU-measured durations it attaches; `info`, lines to print.
"""
import time

# The three jobs: (expected first loop-level finding, simulator scenario, dry-run speed,
# dry-run phase times in simulated ms: data, forward, backward, optimizer).
# The dry-run times are the scenarios' own (data_starvation.json, launch_bound.json);
# healthy.json has no workload, so any steady step will do.
JOBS = {
    "healthy": ("none", "healthy", 1.0, (1, 20, 33, 8)),
    "starved": ("data_starvation", "data_starvation", 4.0, (450, 180, 300, 70)),
    "tiny": ("launch_bound", "launch_bound", 4.0, (4, 60, 110, 26)),
}

# The real matmul loop's step, shaped like data_starvation.json's: 180 ms of forward and
# 300 ms of backward on the GPU; the starved loader takes 450 ms per batch (45 % of a step).
FWD_S, BWD_S, STARVED_DATA_S = 0.18, 0.30, 0.45
# Tiny-kernel loop: kernels per step (forward, backward; backward twice the forward).
TINY_FWD_KERNELS, TINY_BWD_KERNELS = 1000, 2000
# Device memory a job holds as its "model" (weights, optimizer state), as a share of the
# total: a training job fills its GPU, and an all-but-empty GPU makes memory_headroom and
# small_batch (both: "most memory unused") true statements about the loop instead of the
# cause under test. launch_bound.json holds 60 of 80 GB for the same reason.
FOOTPRINT = 0.6
# Utilization the tiny-kernel loop is tuned to: the middle of launch_bound's samples-only
# band (core/src/rules/launch_bound.rs UTIL_BAND, 35-80 %).
TINY_TARGET_UTIL, TINY_BAND = 55.0, (35.0, 80.0)
# The tiny loop's tuning levels, in rising utilization: (log2 of the tensor's floats, host
# work per launch in seconds). Host work stands for a framework's per-op Python overhead and
# is only used when even the smallest kernels keep the GPU busier than the target.
TINY_LEVELS = [(10, us * 1e-6) for us in (32, 16, 8, 4, 2, 0)] + [(e, 0.0) for e in range(11, 27)]


def work(seconds, spin=False, clock=time.perf_counter):
    """Spends `seconds`: sleeping most of it and spinning the rest (so a loaded machine's
    oversleeping stays small), or spinning all of it when `spin` (a CPU-busy phase)."""
    end = clock() + seconds
    if not spin and seconds > 0.003:
        time.sleep(seconds - 0.002)
    while clock() < end:
        pass


def _noop(*_):
    pass


class Batches:
    """A loader of `n` batches that takes `delay` seconds for each (a Dataset whose
    __getitem__ sleeps); `make(i)` builds batch i."""

    def __init__(self, n, delay, make=int):
        self.n, self.delay, self.make = n, delay, make

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError(i)
        if self.delay:
            work(self.delay)
        return self.make(i)


class SimWork:
    """Dry run: the scenario's step replayed with sleeps and spins at the scenario's speed, so
    that the markers line up with the simulated GPU's samples. The tiny-kernel stand-in spins
    through forward, backward and optimizer (launch_bound.json's cpu_busy phases) and attaches
    no GPU times, as the real one; the others attach their phase times, as the real ones
    attach CUDA-event times."""

    def __init__(self, job):
        _, _, speed, ms = JOBS[job]
        self.data_s, self.fwd_s, self.bwd_s, self.opt_s = (m / 1000.0 / speed for m in ms)
        self.spin = job == "tiny"
        self.attaches = () if self.spin else ("forward", "backward")
        # Samples every 0.1 simulated seconds, as `gpuwhy demo` does.
        self.interval = max(0.01, 0.1 / speed)
        self.info = ["dry run: the simulated GPU plays %s at speed x%g; step %.0f ms"
                     % (JOBS[job][1], speed, 1000 * (self.data_s + self.fwd_s + self.bwd_s + self.opt_s))]

    def prepare(self, gpuwhy):
        pass

    def loader(self):
        return Batches(10 ** 6, self.data_s)

    def step(self, gw, batch):
        phase = gw.phase if gw else _noop
        phase("forward")
        work(self.fwd_s, self.spin)
        phase("backward")
        work(self.bwd_s, self.spin)
        phase("optimizer")
        work(self.opt_s, self.spin)
        if gw and self.attaches:
            gw.gpu_phase("forward", self.fwd_s)
            gw.gpu_phase("backward", self.bwd_s)


class TorchWork:
    """A real loop on the first CUDA device.

    healthy/starved: forward and backward are chains of 8192x8192 bf16 matmuls sized to
    FWD_S/BWD_S of GPU time, CUDA-event timed and attached with gpu_phase(); the optimizer
    phase ends with loss.item(), the sync a loop's logging does, so it holds the wait for the
    GPU. starved's loader sleeps STARVED_DATA_S per batch.

    tiny: thousands of in-place elementwise kernels per step on a tensor sized so that the
    GPU is busy about half the time (calibrated on the GPU's own utilization samples); no
    GPU times are attached (see `event_ratio`).
    """

    def __init__(self, job):
        import torch
        if not torch.cuda.is_available():
            raise SystemExit("gpu-check: PyTorch sees no CUDA device (torch %s, CUDA %s)"
                             % (torch.__version__, torch.version.cuda))
        self.t, self.job, self.dev = torch, job, torch.device("cuda")
        self.attaches = () if job == "tiny" else ("forward", "backward")
        self.interval = 0.1
        self.ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
        self.ratios = []  # tiny: CUDA-event fwd+bwd time over CPU-side fwd+bwd time
        self.info = ["PyTorch %s, CUDA %s, %s" % (torch.__version__, torch.version.cuda,
                                                  torch.cuda.get_device_name(0))]
        self.hold, self.pad_s = None, 0.0

    def prepare(self, gpuwhy):
        t = self.t
        if self.job != "tiny":
            n = 8192
            self.a = t.randn(n, n, device=self.dev, dtype=t.bfloat16)
            self.b = t.randn(n, n, device=self.dev, dtype=t.bfloat16)
            self.c = t.empty_like(self.a)
            for _ in range(3):  # cuBLAS picks its kernel on the first calls
                t.matmul(self.a, self.b, out=self.c)
            e0, e1 = self.ev[0], self.ev[1]
            e0.record()
            for _ in range(20):
                t.matmul(self.a, self.b, out=self.c)
            e1.record()
            e1.synchronize()
            mm = e0.elapsed_time(e1) / 1000.0 / 20
            self.k_fwd, self.k_bwd = max(1, round(FWD_S / mm)), max(1, round(BWD_S / mm))
            self.info.append("matmul 8192^3 bf16: %.2f ms (%.0f TFLOP/s); %d forward, %d backward"
                             " per step" % (mm * 1e3, 2 * n ** 3 / mm / 1e12, self.k_fwd, self.k_bwd))
        free, total = t.cuda.mem_get_info()
        want = int(FOOTPRINT * total) - (total - free)
        if want > 0:
            self.hold = t.empty(want, dtype=t.uint8, device=self.dev)
        self.info.append("device memory held: %.0f of %.0f GiB (the model's footprint)"
                         % ((total - t.cuda.mem_get_info()[0]) / 2 ** 30, total / 2 ** 30))
        t.cuda.synchronize()
        if self.job == "tiny":
            self._calibrate_tiny(gpuwhy)

    def loader(self):
        delay = STARVED_DATA_S if self.job == "starved" else 0.0
        batches = Batches(10 ** 6, delay, lambda i: self.t.full((1024,), float(i % 7)))
        return self.t.utils.data.DataLoader(batches, batch_size=None, num_workers=0)

    def step(self, gw, batch):
        if self.job == "tiny":
            return self._tiny_step(gw)
        t, (e0, e1, e2) = self.t, self.ev
        phase = gw.phase if gw else _noop
        phase("forward")
        xb = batch.to(self.dev, non_blocking=True)
        e0.record()
        for _ in range(self.k_fwd):
            t.matmul(self.a, self.b, out=self.c)
        e1.record()
        phase("backward")
        for _ in range(self.k_bwd):
            t.matmul(self.b, self.a, out=self.c)
        e2.record()
        phase("optimizer")
        self.last_loss = (self.c[0, 0].float() + xb[0]).item()
        if gw:
            gw.gpu_phase("forward", e0.elapsed_time(e1) / 1000.0)
            gw.gpu_phase("backward", e1.elapsed_time(e2) / 1000.0)

    def _kernels(self, n):
        x, pad = self.x, self.pad_s
        for _ in range(n // 2):
            x.add_(1.0)
            if pad:
                work(pad, spin=True)
            x.mul_(0.5)
            if pad:
                work(pad, spin=True)

    def _tiny_step(self, gw, clock=time.perf_counter):
        (e0, _, e2), phase = self.ev, gw.phase if gw else _noop
        phase("forward")
        c0 = clock()
        e0.record()
        self._kernels(TINY_FWD_KERNELS)
        phase("backward")
        self._kernels(TINY_BWD_KERNELS)
        e2.record()
        c1 = clock()
        phase("optimizer")
        self.last_loss = self.x[0].item()
        if len(self.ratios) < 100000:
            self.ratios.append(e0.elapsed_time(e2) / 1000.0 / (c1 - c0))

    def _util(self, gpuwhy, level, seconds=2.5, settle=1.2):
        """Median util_gpu of the tiny loop at `level` (TINY_LEVELS), from a short recording
        (after `settle` s: NVML averages utilization over up to a second)."""
        self._set(level)
        with gpuwhy.Session(interval=0.05, require_gpu=True, label="calibration") as cal:
            end = time.perf_counter() + seconds
            while time.perf_counter() < end:
                self._tiny_step(None)
        self.ratios.clear()
        best = None
        for s in cal.report().get("series", []):
            vals = [u for tt, u in zip(s["t"], s["metrics"].get("util_gpu", []))
                    if u is not None and tt >= settle]
            if vals:
                m = sorted(vals)[len(vals) // 2]
                best = m if best is None else max(best, m)
        return best if best is not None else float("nan")

    def _set(self, level):
        e, self.pad_s = TINY_LEVELS[level]
        self.x = self.t.zeros(1 << e, device=self.dev)

    def _calibrate_tiny(self, gpuwhy):
        """Picks the level of TINY_LEVELS whose utilization is nearest TINY_TARGET_UTIL,
        starting from the plain loop on 2^10 floats and bisecting toward the side it misses
        on: utilization only rises along the levels (less CPU per launch, or longer kernels)."""
        seen = {}

        def probe(i):
            if i not in seen:
                seen[i] = self._util(gpuwhy, i)
            return seen[i]

        start, last = TINY_LEVELS.index((10, 0.0)), len(TINY_LEVELS) - 1
        lo, hi = (start, last) if probe(start) < TINY_TARGET_UTIL else (0, start)
        if probe(lo) < TINY_TARGET_UTIL <= probe(hi):
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if probe(mid) < TINY_TARGET_UTIL else (lo, mid)
        best = min(seen, key=lambda i: abs(seen[i] - TINY_TARGET_UTIL))
        self._set(best)

        def name(i):
            e, pad = TINY_LEVELS[i]
            return "2^%d" % e + ("+%.0fus" % (pad * 1e6) if pad else "")

        self.info.append("tiny kernels: util_gpu by tensor size (+ host work per launch): " +
                         ", ".join("%s %.0f%%" % (name(i), seen[i]) for i in sorted(seen)))
        self.info.append("tiny kernels: chose %s floats (util %.0f%%; launch_bound's samples-only"
                         " band is %.0f-%.0f%%)" % (name(best), seen[best], *TINY_BAND))
        # Recording starts on a GPU already in its steady state (NVML's average lags).
        end = time.perf_counter() + 1.5
        while time.perf_counter() < end:
            self._tiny_step(None)
        self.ratios.clear()

    def event_ratio(self):
        """tiny: median CUDA-event fwd+bwd time over CPU-side fwd+bwd time. Events measure
        the span from the first launch to the last kernel's end, gaps included, so a
        launch-bound loop reads ~1 here although its kernels are short: attaching these as
        GPU times would tell launch_bound the GPU kept up."""
        r = sorted(self.ratios)
        return r[len(r) // 2] if r else None

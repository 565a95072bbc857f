"""gpuwhy for PyTorch: phases timed on the GPU, the DataLoader's settings, torchrun ranks and
a profiler trace of a few steps, on top of :class:`gpuwhy.Session`.

Importable only where ``torch`` is (it is never a dependency of gpuwhy)::

    import gpuwhy.torch as gwt

    with gwt.Session(output="run.json") as gw:
        for x, y in gw.data(loader):            # loader settings go into the report
            gw.phase("forward");   loss = loss_fn(model(x), y)
            gw.phase("backward");  loss.backward()
            gw.phase("optimizer"); opt.step(); opt.zero_grad()
    print(gw.top_finding())

How the GPU times are taken (docs/python.md, "GPU-timed phases"): at every phase boundary
the session records a CUDA event on the current stream (``torch.cuda.Event(enable_timing=
True).record()``, a few microseconds of CPU and no wait). A phase's GPU time is the time
between its start and end events. Pairs are resolved a few steps later, when
``event.query()`` says the GPU has passed the end event; nothing here ever calls
``synchronize()``. At the end of each step the oldest measured duration of each phase is
attached with ``gpuwhy_gpu_phase`` to that step, so per-step columns lag by the steps the
GPU is behind (usually zero to two) while the distributions (p50, p95, shares) are those of
the measured phases; the durations measured after the last step are counted, not attached. Work a phase puts on another stream (DDP's NCCL stream, a side stream) is
timed only as far as the current stream waits for it; pass ``stream=`` to time another.
"""

import collections
import glob
import os
import time
from typing import Any, Deque, Dict, Iterable, Iterator, List, Optional, Tuple, TypeVar

try:
    import torch
except ImportError as e:  # pragma: no cover - exercised only where torch is missing
    raise ImportError("gpuwhy.torch needs PyTorch (pip install torch); the rest of gpuwhy "
                      "works without it: use gpuwhy.Session") from e

import gpuwhy

__all__ = ["Session", "loader_settings", "CudaPhaseTimer", "dist_place"]

T = TypeVar("T")

#: DataLoader attributes recorded into the report (report key ``steps.data_loader``).
LOADER_FIELDS = ("num_workers", "pin_memory", "prefetch_factor", "persistent_workers",
                 "batch_size")


def loader_settings(loader: Any) -> Optional[Dict[str, Any]]:
    """The settings of a ``torch.utils.data.DataLoader`` (or anything with its attributes)
    that decide whether it keeps up: ``num_workers``, ``pin_memory``, ``prefetch_factor``,
    ``persistent_workers`` and ``batch_size``. None for an iterable that has none of them."""
    found = {}
    for name in LOADER_FIELDS:
        value = getattr(loader, name, None)
        if isinstance(value, (bool, int)):
            found[name] = value
    return found or None


def dist_place() -> Tuple[Optional[int], Optional[int], Optional[int]]:
    """(rank, world_size, local_rank) of this process as torchrun sets them ($RANK,
    $WORLD_SIZE, $LOCAL_RANK), each None when unset or not a number."""
    def num(name: str) -> Optional[int]:
        try:
            return int(os.environ[name])
        except (KeyError, ValueError):
            return None
    return num("RANK"), num("WORLD_SIZE"), num("LOCAL_RANK")


class CudaPhaseTimer:
    """Phase durations measured on the GPU with CUDA event pairs, never synchronising.

    ``boundary(phase_id)`` closes the open phase (records its end event) and opens
    ``phase_id`` (records its start event), or only closes with ``None``. ``poll()`` takes
    every pair whose end event the GPU has passed (``query()``), oldest first, and stops at
    the first pending one. ``attach_one_each()``, once per step, hands the oldest measured
    duration of each phase to ``attach(phase_id, seconds)``: in a steady loop every step
    gets one value per phase, that of the step the GPU finished last. At most
    ``max_pending`` pairs wait; past that the oldest is dropped unmeasured (counted in
    ``dropped``) rather than waited for. One event marks each boundary: a phase's end is the
    next phase's start. Events are reused once no pair in flight needs them.
    """

    def __init__(self, attach: Any, stream: Any = None, max_pending: int = 64) -> None:
        self._attach = attach
        self._stream = stream
        self._max = max(1, int(max_pending))
        # (phase, start, end, whether end is also the next phase's start)
        self._pending: Deque[Tuple[int, Any, Any, bool]] = collections.deque()
        self._ready: Dict[int, Deque[float]] = {}
        self._free: List[Any] = []
        self._open: Optional[Tuple[int, Any]] = None
        #: Events recorded (one per phase boundary).
        self.recorded = 0
        #: Pairs measured.
        self.resolved = 0
        #: Durations attached to steps.
        self.attached = 0
        #: Pairs dropped unmeasured because too many were in flight, or still in flight at
        #: the end of the run.
        self.dropped = 0
        #: Durations measured after the run's last step (no step left to carry them).
        self.unattached = 0

    def _event(self) -> Any:
        ev = self._free.pop() if self._free else torch.cuda.Event(enable_timing=True)
        if self._stream is None:
            ev.record()
        else:
            ev.record(self._stream)
        self.recorded += 1
        return ev

    def boundary(self, phase_id: Optional[int]) -> None:
        """Ends the open phase on the GPU's timeline and starts ``phase_id`` (None: none)."""
        if self._open is None:
            if phase_id is not None:
                self._open = (phase_id, self._event())
            return
        pid, start = self._open
        end = self._event()
        self._pending.append((pid, start, end, phase_id is not None))
        self._open = None if phase_id is None else (phase_id, end)
        if len(self._pending) > self._max:
            self._release(self._pending.popleft())
            self.dropped += 1

    def _release(self, pair: Tuple[int, Any, Any, bool]) -> None:
        """Returns a pair's events for reuse once it has left the queue: its start (the
        previous pair, which shared it, left before it) and its end unless the next phase
        started there."""
        _, start, end, shared = pair
        self._free.append(start)
        if not shared:
            self._free.append(end)

    def poll(self) -> int:
        """Measures every finished pair, oldest first, without waiting; returns how many."""
        n = 0
        pending = self._pending
        while pending and pending[0][2].query():
            pair = pending.popleft()
            pid, start, end, _ = pair
            self._ready.setdefault(pid, collections.deque()).append(
                start.elapsed_time(end) / 1000.0)
            self._release(pair)
            n += 1
        self.resolved += n
        return n

    def attach_one_each(self) -> None:
        """Attaches the oldest measured duration of each phase (one per phase)."""
        for pid, ready in self._ready.items():
            if ready:
                self._attach(pid, ready.popleft())
                self.attached += 1

    def drain(self, timeout_s: float = 2.0) -> None:
        """At the end of a run: closes the open phase and keeps polling (``query()`` only,
        never ``synchronize()``) until every pair is measured or ``timeout_s`` passed; what
        is left unattached is counted, not attached (the steps it belongs to are over)."""
        self.boundary(None)
        deadline = time.monotonic() + timeout_s
        while self._pending:
            self.poll()
            if not self._pending or time.monotonic() > deadline:
                break
            time.sleep(0.001)
        self.dropped += len(self._pending)
        self._pending.clear()
        self.unattached += sum(len(r) for r in self._ready.values())
        self._ready.clear()


class Session(gpuwhy.Session):
    """A :class:`gpuwhy.Session` for PyTorch loops.

    Besides gpuwhy.Session's arguments:

    gpu_timing: time each phase on the GPU with CUDA events (default: when
    ``torch.cuda.is_available()``). stream: the stream to record the events on (default:
    the current stream at each boundary). max_pending: event pairs in flight before the
    oldest is dropped unmeasured. output_dir: a directory shared by the ranks of a torchrun
    job: each rank writes ``rank-<RANK>.json`` there (instead of ``output``) and rank 0,
    once every rank's report is there, merges them into ``job.json`` with ``gpuwhy merge``
    (waiting up to ``merge_timeout_s``).
    """

    def __init__(self, output: Optional[str] = None, *, gpu_timing: Optional[bool] = None,
                 stream: Any = None, max_pending: int = 64, output_dir: Optional[str] = None,
                 merge_timeout_s: float = 120.0, **kwargs: Any) -> None:
        rank, world, _ = dist_place()
        if output_dir is not None:
            os.makedirs(output_dir, exist_ok=True)
            output = os.path.join(output_dir, "rank-%d.json" % (rank or 0))
        super().__init__(output=output, **kwargs)
        self._output, self._output_dir = output, output_dir
        self._rank, self._world = rank, world
        self._merge_timeout = merge_timeout_s
        if gpu_timing is None:
            gpu_timing = bool(torch.cuda.is_available())
        self._timer = (CudaPhaseTimer(self._attach_gpu, stream, max_pending)
                       if gpu_timing else None)
        self._profiler: Any = None
        self._trace_path: Optional[str] = None
        #: The job report rank 0 merged (output_dir only), once written.
        self.job_report: Optional[str] = None

    def _attach_gpu(self, pid: int, seconds: float) -> None:
        status = self._c_gpu(self._h, pid, seconds)
        if status:
            self._fail(status, "gpuwhy_gpu_phase")

    @property
    def gpu_timer(self) -> Optional[CudaPhaseTimer]:
        """The CUDA event timer (None without GPU timing): its counters say how many pairs
        were recorded, resolved and dropped."""
        return self._timer

    def phase(self, name: Any) -> None:
        """Switches to phase ``name`` (see gpuwhy.Session.phase) and, with GPU timing, closes
        the previous phase's event pair on the GPU's timeline and opens this one's."""
        super().phase(name)
        t = self._timer
        if t is not None:
            t.boundary(self._ids.get(name, name) if not isinstance(name, int) else name)
            t.poll()

    def step_end(self) -> None:
        """Ends this thread's step (and, with GPU timing, its last phase's event pair)."""
        self._step_done()
        super().step_end()

    def _step_done(self) -> None:
        t = self._timer
        if t is not None:
            t.boundary(None)
            t.poll()
            t.attach_one_each()
        if self._profiler is not None:
            self._profiler.step()

    def data(self, iterable: Iterable[T]) -> Iterator[T]:
        """gpuwhy.Session.data, which also records the loader's settings
        (:func:`loader_settings`) into the report, names the calling thread the training loop
        (``set_main_thread``) and, with GPU timing, closes each step's last event pair when
        the loop asks for the next batch."""
        settings = loader_settings(iterable)
        if settings is not None:
            self.set_data_loader(**settings)
        # The thread that iterates the loader is the training loop: helper threads that also
        # mark steps (a framework's, or the profiler's) are then listed apart.
        self.set_main_thread()
        inner = super().data(iterable)  # a generator: close() ends its open step
        try:
            for item in inner:
                yield item
                self._step_done()
        finally:
            inner.close()  # type: ignore[attr-defined]

    def profile(self, steps: int = 5, wait: int = 1, warmup: int = 1,
                path: Optional[str] = None, **profiler_args: Any) -> str:
        """Captures a ``torch.profiler`` trace of ``steps`` steps (after ``wait`` skipped and
        ``warmup`` warm-up steps, counted by the session's step ends), writes it beside the
        report (``<output>.trace.json``, or ``path``) and has the report's diagnosis read it
        (as ``gpuwhy diagnose run.json --trace trace.json`` does). Returns the trace's path.
        Extra keyword arguments go to ``torch.profiler.profile`` (e.g. ``record_shapes``)."""
        if self._profiler is not None:
            raise RuntimeError("a profile is already being captured in this session")
        if path is None:
            base = self._output or "gpuwhy"
            path = (base[:-5] if base.endswith(".json") else base) + ".trace.json"
        prof = torch.profiler
        activities = [prof.ProfilerActivity.CPU]
        if torch.cuda.is_available():
            activities.append(prof.ProfilerActivity.CUDA)

        def ready(p: Any) -> None:
            p.export_chrome_trace(path)
            self.add_trace(path)

        self._profiler = prof.profile(
            activities=profiler_args.pop("activities", activities),
            schedule=prof.schedule(wait=wait, warmup=warmup, active=steps, repeat=1),
            on_trace_ready=ready, **profiler_args)
        self._profiler.start()
        self._trace_path = path
        return path

    def close(self) -> None:
        """Stops the profiler and the GPU timer (resolving the event pairs still in flight,
        by polling), stops the session, writes the report; rank 0 of a job with
        ``output_dir`` then merges the ranks' reports."""
        if self._state == "running" and not self._inherited():
            if self._profiler is not None:
                prof, self._profiler = self._profiler, None
                prof.stop()
            if self._timer is not None:
                self._timer.drain()
        super().close()
        if self._output_dir is not None and (self._rank or 0) == 0:
            self.job_report = _merge_ranks(self._output_dir, self._world or 1,
                                           self._merge_timeout)


def _merge_ranks(directory: str, world: int, timeout_s: float) -> Optional[str]:
    """Waits until ``world`` rank reports are in ``directory``, then runs ``gpuwhy merge``
    on them into ``job.json``; returns its path, or None (with a warning) when the ranks'
    reports did not all arrive or the command is missing."""
    import subprocess
    import warnings

    from gpuwhy.__main__ import find_gpuwhy_bin

    pattern = os.path.join(directory, "rank-*.json")
    deadline = time.monotonic() + timeout_s
    while len(glob.glob(pattern)) < world and time.monotonic() < deadline:
        time.sleep(0.2)
    reports = sorted(glob.glob(pattern))
    if len(reports) < world:
        warnings.warn("gpuwhy: %d of %d rank reports in %s after %.0f s; not merged (run "
                      "`gpuwhy merge %s -o job.json` later)"
                      % (len(reports), world, directory, timeout_s, pattern))
        return None
    try:
        exe = find_gpuwhy_bin()
    except FileNotFoundError as e:
        warnings.warn("gpuwhy: cannot merge the ranks' reports: %s" % e)
        return None
    out = os.path.join(directory, "job.json")
    done = subprocess.run([exe, "merge"] + reports + ["-o", out], capture_output=True,
                          text=True)
    if done.returncode != 0:
        warnings.warn("gpuwhy merge failed: %s" % done.stderr.strip())
        return None
    return out

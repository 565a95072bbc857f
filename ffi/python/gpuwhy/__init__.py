"""gpuwhy for Python: why is my GPU not busy?

A ctypes binding of libgpuwhy (the C ABI, ffi/include/gpuwhy.h), standard library only.
`pip install gpuwhy` brings it with libgpuwhy.so inside the package and the `gpuwhy`
command; without pip, copy this package's folder and put libgpuwhy.so into it (or point
$GPUWHY_LIB at the library). Then::

    import gpuwhy

    with gpuwhy.Session(output="run.json") as gw:
        for batch in gw.data(loader):          # the wait for each batch is the data phase
            gw.phase("forward");   loss = model(batch)
            gw.phase("backward");  loss.backward()
            gw.phase("optimizer"); opt.step()
    print(gw.top_finding())     # docs/python.md explains the rest. Python 3.8+.
"""

import collections
import ctypes
import ctypes.util
import gzip
import json
import os
import sys
import threading
import weakref

__all__ = ["GpuwhyError", "Session", "Finding", "load", "read_report", "version", "ABI_VERSION"]

#: The ABI version this file is written against (GPUWHY_ABI_VERSION of gpuwhy.h).
ABI_VERSION = 1

# Status codes: gpuwhy.h `enum gpuwhy_status`, frozen numbers (a status is its position).
_STATUSES = ("OK", "NULL_ARGUMENT", "INVALID_HANDLE", "INVALID_ARGUMENT", "UNKNOWN_PHASE",
             "TOO_MANY_PHASES", "STOPPED", "NOT_STOPPED", "BUFFER_TOO_SMALL", "STRUCT_SIZE",
             "NO_GPU", "IO", "POISONED", "PANIC")
(OK, NULL_ARGUMENT, INVALID_HANDLE, INVALID_ARGUMENT, UNKNOWN_PHASE, TOO_MANY_PHASES, STOPPED,
 NOT_STOPPED, BUFFER_TOO_SMALL, STRUCT_SIZE, NO_GPU, IO, POISONED, PANIC) = range(len(_STATUSES))
#: The GPUWHY_* name of each status number.
STATUS_NAMES = {i: "GPUWHY_" + n for i, n in enumerate(_STATUSES)}

#: Built-in phase ids (GPUWHY_PHASE_*).
BUILTIN_PHASES = {"data": 0, "forward": 1, "backward": 2, "optimizer": 3}
# Config flags (GPUWHY_FLAG_*).
FLAG_NO_GPM, FLAG_NO_GPU, FLAG_NO_HOST, FLAG_REQUIRE_GPU = 1, 2, 4, 8


class GpuwhyError(Exception):
    """A gpuwhy call failed. `status`: the gpuwhy_status number (None when the library could
    not be loaded); `name`: its GPUWHY_* name; `message`: the library's description of the
    status; `detail`: gpuwhy_last_error(), what was wrong and what to do; `function`: the
    call that failed."""

    def __init__(self, status, name, message, detail="", function=""):
        self.status, self.name, self.message = status, name, message
        self.detail, self.function = detail, function
        text = "%s: %s (%s)" % (function or "gpuwhy", message, name)
        super().__init__(text + ": " + detail if detail else text)


#: The top finding of a stopped session.
Finding = collections.namedtuple("Finding", "id title confidence")


class _Config(ctypes.Structure):  # struct gpuwhy_config
    _fields_ = [("struct_size", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("sample_interval_s", ctypes.c_double), ("nvml_path", ctypes.c_char_p),
                ("label", ctypes.c_char_p), ("output_path", ctypes.c_char_p),
                ("rank", ctypes.c_int32), ("world_size", ctypes.c_int32),
                ("local_rank", ctypes.c_int32), ("baseline_path", ctypes.c_char_p),
                ("gpus", ctypes.c_char_p), ("host_proc", ctypes.c_char_p),
                ("provisional_period_s", ctypes.c_double)]


class _DataLoader(ctypes.Structure):  # struct gpuwhy_data_loader
    _fields_ = [("struct_size", ctypes.c_uint32), ("num_workers", ctypes.c_int32),
                ("prefetch_factor", ctypes.c_int32), ("pin_memory", ctypes.c_int32),
                ("persistent_workers", ctypes.c_int32), ("batch_size", ctypes.c_int64)]


class _Finding(ctypes.Structure):  # struct gpuwhy_finding
    _fields_ = [("id", ctypes.c_char_p), ("title", ctypes.c_char_p),
                ("confidence", ctypes.c_double)]


def _declare(lib):
    """Sets argtypes/restype of every export of gpuwhy.h (and of the test-only one)."""
    c, S, P, U32 = ctypes, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_uint32
    table = {
        "gpuwhy_abi_version": ([], U32), "gpuwhy_version": ([], c.c_char_p),
        "gpuwhy_status_message": ([U32], c.c_char_p), "gpuwhy_last_error": ([], c.c_char_p),
        "gpuwhy_config_init": ([c.POINTER(_Config), c.c_size_t], S),
        "gpuwhy_session_new": ([c.POINTER(_Config), c.POINTER(P)], S),
        "gpuwhy_step_begin": ([P], S), "gpuwhy_phase": ([P, U32], S), "gpuwhy_step_end": ([P], S),
        "gpuwhy_gpu_phase": ([P, U32, c.c_double], S),
        "gpuwhy_session_register_phase": ([P, c.c_char_p, c.POINTER(U32)], S),
        "gpuwhy_session_event": ([P, c.c_char_p], S),
        "gpuwhy_session_set_main_thread": ([P], S),
        "gpuwhy_session_gpu_count": ([P, c.POINTER(U32)], S),
        "gpuwhy_session_stop": ([P], S), "gpuwhy_session_write_report": ([P, c.c_char_p], S),
        "gpuwhy_session_report_json": ([P, c.c_char_p, c.c_size_t, c.POINTER(c.c_size_t)], S),
        "gpuwhy_session_top_finding": ([P, c.POINTER(_Finding)], S),
        "gpuwhy_session_free": ([P], S),
        "gpuwhy_session_set_data_loader": ([P, c.POINTER(_DataLoader)], S),
        "gpuwhy_session_add_trace": ([P, c.c_char_p], S),
        "gpuwhy_step_discard": ([P], S),
    }
    if hasattr(lib, "gpuwhy_test_panic"):
        table["gpuwhy_test_panic"] = ([P], S)
    for name, (args, res) in table.items():
        f = getattr(lib, name)
        f.argtypes, f.restype = args, res
    # The markers again (lib[name] is a new function object) without argtypes: half the cost
    # of a call. The Session passes exactly a c_void_p and a small int (read as uint32_t).
    lib._gpuwhy_fast = {n: lib[n] for n in ("gpuwhy_step_begin", "gpuwhy_phase", "gpuwhy_step_end")}
    for f in lib._gpuwhy_fast.values():
        f.restype = S


_lib = None
_lib_lock = threading.Lock()


def _candidates(path):
    """Where to look, best first: (where, path). An explicit path or $GPUWHY_LIB is the only
    one: if it fails, that is the error (not a reason to load some other copy)."""
    env = os.environ.get("GPUWHY_LIB")
    if path is not None or env:
        yield ("the path given", os.fspath(path)) if path is not None else ("$GPUWHY_LIB", env)
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for n in ("libgpuwhy.dylib" if sys.platform == "darwin" else "libgpuwhy.so", "libgpuwhy.so.0"):
        if os.path.exists(os.path.join(here, n)):
            yield "inside the gpuwhy package", os.path.join(here, n)
    yield "the loader's search path", "libgpuwhy.so.0"
    found = ctypes.util.find_library("gpuwhy")  # slow (it may run ldconfig): last
    if found:
        yield "ctypes.util.find_library", found


def load(path=None):
    """Loads libgpuwhy once per process and returns it (a ctypes.CDLL): from `path`, else
    $GPUWHY_LIB, else libgpuwhy.so next to this file, else the system's loader
    (libgpuwhy.so.0, then ctypes.util.find_library). Raises GpuwhyError (status None) when
    no library loads, its ABI version is not ABI_VERSION, or another one is loaded already."""
    global _lib
    with _lib_lock:
        if _lib is not None:
            if path is not None and os.path.abspath(os.fspath(path)) != _lib._gpuwhy_path:
                raise _load_error("GPUWHY_LOAD", "libgpuwhy is already loaded",
                                  "from %s; call load(path) first" % _lib._gpuwhy_path)
            return _lib
        tried = []
        for where, p in _candidates(path):
            try:
                lib = ctypes.CDLL(p)
            except OSError as e:
                tried.append("%s (%s): %s" % (p, where, e))
                continue
            _declare(lib)
            abi = lib.gpuwhy_abi_version()
            if abi != ABI_VERSION:
                raise _load_error("GPUWHY_ABI", "libgpuwhy has another ABI version",
                                  "%s has ABI %d, this gpuwhy package needs %d" % (p, abi, ABI_VERSION))
            lib._gpuwhy_path = os.path.abspath(p) if os.sep in p else p
            _lib = lib
            return lib
        raise _load_error("GPUWHY_LOAD", "cannot load libgpuwhy",
                          "; ".join(tried) + ". Set GPUWHY_LIB to the full path of libgpuwhy.so")


def read_report(path):
    """A report file (`.json`, or gzip-compressed `.json.gz`) as a dict, its samples as plain
    lists: the compact series form (`times`, `columns`: docs/report-format.md) is expanded
    into `t` and `metrics`, as reports written before it hold them."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return _plain_samples(json.loads(data.decode("utf-8")))


def _runs(packed):
    """One packed column ({"div", "runs"}) as a list of numbers and None."""
    div, out, prev = packed["div"], [], 0
    for item in packed["runs"]:
        d, n = item if isinstance(item, list) else (item, 1)
        if d is None:
            out.extend([None] * n)
            continue
        for _ in range(n):
            prev += d
            out.append(prev / div)
    return out


def _plain_samples(report):
    """`report` with every stream's compact `times`/`columns` made plain `t`/`metrics`."""
    plain = lambda v: _runs(v) if isinstance(v, dict) else v  # noqa: E731
    streams = list(report.get("series") or []) + [report.get("host") or {}]
    for s in streams:
        if "times" in s:
            s["t"] = plain(s.pop("times"))
        if "columns" in s:
            s["metrics"] = {k: plain(v) for k, v in s.pop("columns").items()}
    return report


def _load_error(name, message, detail):
    return GpuwhyError(None, name, message, detail, "gpuwhy.load")


def version():
    """The loaded library's version, e.g. "0.1.0"."""
    return load().gpuwhy_version().decode()


def _error(lib, status, function):
    # Read on the failing thread, right after the call: gpuwhy_last_error is per thread.
    detail = lib.gpuwhy_last_error().decode("utf-8", "replace")
    msg = lib.gpuwhy_status_message(status).decode("utf-8", "replace")
    name = STATUS_NAMES.get(status, "GPUWHY_%d" % status)
    return GpuwhyError(status, name, msg, detail, function)


def _call(lib, name, *args):
    """Calls export `name`, raising GpuwhyError unless it returns GPUWHY_OK."""
    status = getattr(lib, name)(*args)
    if status:
        raise _error(lib, status, name)


class _Step:
    """`with session.step():` -- step_begin on entry, step_end on exit."""

    __slots__ = ("_s",)

    def __init__(self, session):
        self._s = session

    def __enter__(self):
        self._s.step_begin()
        return self._s

    def __exit__(self, *exc):
        self._s.step_end()


class Session:
    """A recording: GPU sampling in the background, markers from the loop, a report at the end.

    `with` starts it; on exit (also when the body raises) it stops, writes the report to
    `output` and frees the session. Or call start() and close().

    output: report path (JSON), or None to keep it in memory only. label: stored in the
    report. interval: seconds between GPU samples (0.01-10; default 0.1). nvml_path:
    libnvidia-ml.so.1 to use (default: $GPUWHY_NVML_PATH, then the system's). rank,
    world_size, local_rank: this process in a distributed job (default: $RANK, $WORLD_SIZE
    and $LOCAL_RANK, read by the library as the C ABI and `gpuwhy record` read them).
    baseline: a report to compare this run with when it stops; report()["comparison"] then
    holds the comparison, or why there is none (the baseline could not be read, other GPUs).
    gpus: the job's GPUs ("0,1", [0, 1] or UUIDs), by NVML index as nvidia-smi numbers them;
    default: the GPUs running this process, else $CUDA_VISIBLE_DEVICES, else all.
    host_proc: inside a container, the host's /proc mounted into it (e.g. "/host/proc"), so
    this process is found in NVML's process lists, which give host pids (docs/job-gpus.md).
    provisional_period_s: recorded seconds between the provisional diagnoses that keep full
    resolution around a long run's findings (default 600); None turns them off.
    no_gpm: leave the GPM counters to Nsight or DCGM. no_gpu: step timings only. require_gpu:
    start() raises GpuwhyError (GPUWHY_NO_GPU) when NVML cannot be loaded. lib: passed to
    load().
    """

    def __init__(self, output=None, label=None, interval=None, nvml_path=None, rank=None,
                 world_size=None, no_gpm=False, no_gpu=False, require_gpu=False, lib=None,
                 local_rank=None, baseline=None, gpus=None, host_proc=None,
                 provisional_period_s=600.0):
        if (rank is None) != (world_size is None):
            raise ValueError("give rank and world_size together, or neither ($RANK, $WORLD_SIZE)")
        if local_rank is not None and rank is None:
            raise ValueError("give local_rank with rank and world_size, or none of them "
                             "($RANK, $WORLD_SIZE, $LOCAL_RANK)")
        self._lib = load(lib)
        flags = (FLAG_NO_GPM if no_gpm else 0) | (FLAG_NO_GPU if no_gpu else 0)
        flags |= FLAG_REQUIRE_GPU if require_gpu else 0
        if provisional_period_s is not None and not provisional_period_s > 0:
            raise ValueError("provisional_period_s is a positive number of seconds, "
                             "or None to turn the provisional diagnosis off")
        self._settings = (output, label, interval, nvml_path, (rank, world_size, local_rank),
                          baseline, flags, gpus, host_proc, provisional_period_s)
        self._h = self._m = self._pid = self._json = self._top = self._finalizer = None
        self._state = "new"  # running, stopped, closed
        self._ids = dict(BUILTIN_PHASES)
        # Bound once: a marker is two attribute loads, one ctypes call and one int test.
        fast = self._lib._gpuwhy_fast
        self._c_begin, self._c_phase = fast["gpuwhy_step_begin"], fast["gpuwhy_phase"]
        self._c_end, self._c_gpu = fast["gpuwhy_step_end"], self._lib.gpuwhy_gpu_phase

    def start(self):
        """Starts recording (`with` does it). Returns the session."""
        if self._state != "new":
            raise RuntimeError("this Session was started already; make a new one")
        (output, label, interval, nvml_path, place, baseline, flags, gpus,
         host_proc, period) = self._settings
        rank, world_size, local_rank = place
        lib, cfg = self._lib, _Config()
        _call(lib, "gpuwhy_config_init", ctypes.byref(cfg), ctypes.sizeof(cfg))
        cfg.flags = flags
        if interval is not None:
            cfg.sample_interval_s = float(interval)
        if nvml_path is not None:
            cfg.nvml_path = os.fsencode(nvml_path)
        if label is not None:
            cfg.label = str(label).encode("utf-8")
        if output is not None:
            cfg.output_path = os.fsencode(output)
        if rank is not None:
            cfg.rank, cfg.world_size = int(rank), int(world_size)
            cfg.local_rank = -1 if local_rank is None else int(local_rank)
        if baseline is not None:
            cfg.baseline_path = os.fsencode(baseline)
        if gpus is not None:
            # "0,1", [0, 1] or ["GPU-…"]: the job's GPUs by NVML index or UUID.
            text = gpus if isinstance(gpus, str) else ",".join(str(g) for g in gpus)
            cfg.gpus = text.encode("utf-8")
        if host_proc is not None:
            cfg.host_proc = os.fsencode(host_proc)
        # The C field's 0 is the default and a negative number turns the passes off.
        cfg.provisional_period_s = -1.0 if period is None else float(period)
        h = ctypes.c_void_p()
        _call(lib, "gpuwhy_session_new", ctypes.byref(cfg), ctypes.byref(h))
        self._h, self._pid, self._state = h, os.getpid(), "running"
        # The markers pass the handle as a plain int: a handle is a small number, never a
        # pointer (gpuwhy.h), and ctypes converts an int argument without building a
        # parameter object as it does for a c_void_p: ~70 ns of the ~500 ns a marker cost
        # (docs/benchmarks.md). Without argtypes an int goes as a C int, which libffi widens
        # to the register with its sign, so only handles below 2**31 go that way.
        self._m = h.value if h.value is not None and h.value < 2**31 else h
        # For a Session never closed (collected, or at exit): free stops it and writes the
        # report; in a child after fork() it only forgets the handle inherited from the parent.
        self._finalizer = weakref.finalize(self, lib.gpuwhy_session_free, h)
        return self

    def stop(self):
        """Stops recording, diagnoses, writes the report to `output` and keeps it (report(),
        top_finding()). A failed write raises GpuwhyError(GPUWHY_IO) and loses nothing: use
        write_report(). Does nothing when stopped already, or in a child after fork()."""
        if self._state != "running" or self._inherited():
            return
        status = self._lib.gpuwhy_session_stop(self._h)
        err = _error(self._lib, status, "gpuwhy_session_stop") if status else None
        if status in (OK, IO):
            self._state = "stopped"
            self._keep_report()
        if err:
            raise err

    def close(self):
        """Stops (if recording), keeps the report in memory, frees the session (`with` does it
        on exit; again: nothing). In a child after fork() it only forgets the inherited one."""
        if self._state == "closed":
            return
        try:
            self.stop()
        finally:
            self._state = "closed"
            if self._finalizer is not None:
                self._finalizer.detach()
                status = self._lib.gpuwhy_session_free(self._h)
                if status not in (OK, IO) and not self._inherited():
                    raise _error(self._lib, status, "gpuwhy_session_free")

    def __enter__(self):
        return self.start() if self._state == "new" else self

    def __exit__(self, exc_type, exc, tb):
        try:
            self.close()
        except GpuwhyError:
            if exc_type is None:
                raise  # else the body's exception matters more (the report is written if it can be)

    def _inherited(self):
        return self._pid is not None and self._pid != os.getpid()

    def step_begin(self):
        """Begins a step on this thread (ending one still open there)."""
        status = self._c_begin(self._m)
        if status:
            self._fail(status, "gpuwhy_step_begin")

    def step_end(self):
        """Ends this thread's step."""
        status = self._c_end(self._m)
        if status:
            self._fail(status, "gpuwhy_step_end")

    def step_discard(self):
        """Drops this thread's open step: nothing of it is recorded (a step begun for a
        batch that turned out to be the end of the data). Without an open step: nothing."""
        status = self._lib.gpuwhy_step_discard(self._h)
        if status:
            self._fail(status, "gpuwhy_step_discard")

    def step(self):
        """`with session.step(): ...` marks one step."""
        return _Step(self)

    def phase(self, name):
        """Switches this thread to phase `name`: "data", "forward", "backward", "optimizer",
        a custom name (registered on first use) or an id from phase_id(). The phase lasts
        until the next phase() or the end of the step; outside a step it begins one."""
        pid = self._ids.get(name)
        if pid is None:
            pid = self.phase_id(name)
        status = self._c_phase(self._m, pid)
        if status:
            self._fail(status, "gpuwhy_phase")

    def gpu_phase(self, name, seconds):
        """Attaches a GPU-measured duration of phase `name` (seconds, e.g.
        start_event.elapsed_time(end_event) / 1000) to this thread's step."""
        pid = self._ids.get(name)
        if pid is None:
            pid = self.phase_id(name)
        status = self._c_gpu(self._h, pid, seconds)
        if status:
            self._fail(status, "gpuwhy_gpu_phase")

    def phase_id(self, name):
        """The id of phase `name`, registering a custom phase once (a session holds 16, the
        4 built-in ones included). An int id is returned as it is (checked when used)."""
        if isinstance(name, int) and not isinstance(name, bool):
            if not 0 <= name < 1 << 31:
                raise ValueError("phase id %d is out of range" % name)
            return name
        if not isinstance(name, str):
            raise TypeError("a phase is a name (str) or an id (int), not %r" % (name,))
        pid = self._ids.get(name)
        if pid is None:
            if self._inherited():
                return 0  # a forked child: its markers do nothing, and it cannot register
            out = ctypes.c_uint32()
            reg = self._lib.gpuwhy_session_register_phase
            status = reg(self._h, name.encode("utf-8"), ctypes.byref(out))
            if status:
                self._fail(status, "gpuwhy_session_register_phase")
            pid = self._ids[name] = out.value
        return pid

    def event(self, name):
        """Marks a one-off event now ("eval", "checkpoint"): events explain periodic stalls."""
        status = self._lib.gpuwhy_session_event(self._h, str(name).encode("utf-8"))
        if status:
            self._fail(status, "gpuwhy_session_event")

    def set_main_thread(self):
        """Names the calling thread the training loop: the report's steps and the diagnosis
        are its steps; other threads that mark steps are listed apart (steps.threads)."""
        status = self._lib.gpuwhy_session_set_main_thread(self._h)
        if status:
            self._fail(status, "gpuwhy_session_set_main_thread")

    def set_data_loader(self, num_workers=None, pin_memory=None, prefetch_factor=None,
                        persistent_workers=None, batch_size=None):
        """Records the loop's data loader settings into the report (`run.data_loader`), so
        that a finding about input can name them ("num_workers=0"). None is "unknown".
        gpuwhy.torch's Session.data() reads them from a DataLoader by itself."""
        def num(v):
            return -1 if v is None else int(v)
        d = _DataLoader(ctypes.sizeof(_DataLoader), num(num_workers), num(prefetch_factor),
                        num(pin_memory), num(persistent_workers), num(batch_size))
        status = self._lib.gpuwhy_session_set_data_loader(self._h, ctypes.byref(d))
        if status:
            self._fail(status, "gpuwhy_session_set_data_loader")

    def add_trace(self, path):
        """Has stop() read the PyTorch profiler trace at `path` (.json or .json.gz, a few of
        this run's steps; it may be written later) and diagnose the run with it, as `gpuwhy
        diagnose run.json --trace PATH` does. gpuwhy.torch's Session.profile() calls it."""
        status = self._lib.gpuwhy_session_add_trace(self._h, os.fsencode(path))
        if status:
            self._fail(status, "gpuwhy_session_add_trace")

    def data(self, iterable):
        """Yields the items of `iterable` (a DataLoader, any iterable), one step each: the step
        begins when the item is asked for, the wait for it is the data phase, and it ends when
        the next one is asked for or the loop ends or breaks. With len(iterable) the fetch that
        finds the end is in no step; without, it is one more short step (the C ABI cannot drop
        an open step). Mark forward/backward/optimizer in the loop body with phase()."""
        h, begin, phase, end, fail = self._m, self._c_begin, self._c_phase, self._c_end, self._fail
        try:
            left = len(iterable)
        except Exception:
            left = -1
        it, open_step = iter(iterable), False
        try:
            while True:
                if left:
                    status, open_step = begin(h) or phase(h, 0), True
                else:  # len() items done: the next fetch should find the end
                    status, open_step = end(h) if open_step else OK, False
                if status:
                    fail(status, "Session.data")
                try:
                    item = next(it)
                except StopIteration:
                    return
                if not open_step:  # more items than len() said: this wait went untimed
                    status, open_step, left = begin(h) or phase(h, 0), True, -1
                    if status:
                        fail(status, "Session.data")
                elif left > 0:
                    left -= 1
                yield item
        finally:
            if open_step and self._state == "running":
                end(h)

    def _fail(self, status, function):
        err = _error(self._lib, status, function)
        if self._state == "new":
            err.args = (err.args[0] + " (the Session is not started: use `with` or start())",)
        elif self._state == "closed" and status == INVALID_HANDLE:
            err.args = (err.args[0] + " (the Session was closed)",)
        raise err

    def _keep_report(self):
        lib, h, n = self._lib, self._h, ctypes.c_size_t()
        _call(lib, "gpuwhy_session_report_json", h, None, 0, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value + 1)
        _call(lib, "gpuwhy_session_report_json", h, buf, len(buf), ctypes.byref(n))
        self._json = buf.raw[: n.value].decode("utf-8")
        f = _Finding()
        _call(lib, "gpuwhy_session_top_finding", h, ctypes.byref(f))
        text = lambda b: b.decode("utf-8", "replace")  # noqa: E731
        self._top = Finding(text(f.id), text(f.title), f.confidence)

    def _need_report(self, what):
        if self._json is None:
            raise GpuwhyError(NOT_STOPPED, STATUS_NAMES[NOT_STOPPED], "the session is not stopped",
                              "call stop() or leave the `with` block before %s" % what, what)

    def report(self):
        """The diagnosed report (docs/report-format.md) as a dict, its samples as plain lists
        (`t` and `metrics` of each stream, `None` where missing) as read_report() gives them;
        after stop()."""
        self._need_report("report()")
        return _plain_samples(json.loads(self._json))

    def top_finding(self):
        """Finding(id, title, confidence) of the top finding (id "none" when nothing holds
        the GPU back); after stop()."""
        self._need_report("top_finding()")
        return self._top

    def write_report(self, path):
        """Writes the report to `path` atomically; after stop(), also after close()."""
        self._need_report("write_report()")
        if self._state == "stopped" and not self._inherited():
            return _call(self._lib, "gpuwhy_session_write_report", self._h, os.fsencode(path))
        tmp = "%s.tmp-%d" % (os.fspath(path), os.getpid())
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(self._json)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)

    def gpu_count(self):
        """GPUs sampled; 0 without a GPU, and until the sampler's first tick after start()."""
        n = ctypes.c_uint32()
        status = self._lib.gpuwhy_session_gpu_count(self._h, ctypes.byref(n))
        if status:
            self._fail(status, "gpuwhy_session_gpu_count")
        return n.value

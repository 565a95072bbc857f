"""Errors and the no-GPU path of the Python binding. Run by ffi/tests/python.rs with
GPUWHY_NVML_PATH naming a missing file (no GPU); argv: a scratch directory."""
import json
import os
import subprocess
import sys
import time

import gpuwhy
from gpuwhy import GpuwhyError

tmp = sys.argv[1]


def raises(status, fn, *args, contains=()):
    """Calls fn(*args), which must raise GpuwhyError with `status`; returns the error."""
    try:
        fn(*args)
    except GpuwhyError as e:
        assert e.status == status, "%s: expected status %r, got %r: %s" % (fn, status, e.status, e)
        if status is not None:
            assert e.name == gpuwhy.STATUS_NAMES[status], e.name
        for text in contains:
            assert text in str(e), "%r not in %r" % (text, str(e))
        return e
    raise AssertionError("%s%r did not raise GpuwhyError(%r)" % (fn.__name__, args, status))


# A wrong explicit path is an error naming it, not a silent fallback to another copy.
raises(None, gpuwhy.load, os.path.join(tmp, "missing", "libgpuwhy.so"), contains=("missing",))
assert gpuwhy.version().count(".") == 2, gpuwhy.version()

# No GPU: the session still records steps, and the report says why there are no GPU metrics.
out = os.path.join(tmp, "nogpu.json")
with gpuwhy.Session(output=out, label="no gpu") as gw:
    for _ in range(3):
        with gw.step():
            gw.phase("data")
            time.sleep(0.004)
            gw.phase("forward")
            time.sleep(0.002)
    gw.event("checkpoint")
    assert gw.gpu_count() == 0
    raises(gpuwhy.NOT_STOPPED, gw.report, contains=("stop",))
r = gw.report()
assert r["steps"]["count"] == 3, r["steps"]
assert r["steps"]["stats"]["data"]["count"] == 3
assert r["steps"]["stats"]["data"]["p50_s"] >= 0.0035, r["steps"]["stats"]["data"]
assert r["devices"] == [] and "NVML" in r["gpu_absent_reason"], r.get("gpu_absent_reason")
assert [e["kind"] for e in r["events"]] == ["checkpoint"], r["events"]
assert gpuwhy.read_report(out) == r
assert gw.top_finding().id == (r["findings"][0]["id"] if r["findings"] else "none")

# A GPU list that names no GPU is refused when the session starts, saying which entry.
raises(gpuwhy.INVALID_ARGUMENT, lambda: gpuwhy.Session(gpus="0,x").__enter__(), contains=("`x`",))

# The provisional diagnosis's period: None turns it off, anything but a positive number is
# refused before the library is called; the library refuses what is not finite.
with gpuwhy.Session(provisional_period_s=None) as gw:
    gw.step_begin()
    gw.step_end()
assert gw.report()["steps"]["count"] == 1
for bad in (0, -5.0):
    try:
        gpuwhy.Session(provisional_period_s=bad)
    except ValueError as e:
        assert "provisional_period_s" in str(e), e
    else:
        raise AssertionError("provisional_period_s=%r accepted" % bad)
raises(gpuwhy.INVALID_ARGUMENT, lambda: gpuwhy.Session(provisional_period_s=float("inf")).__enter__(),
       contains=("provisional_period_s",))

# require_gpu=True without a GPU fails to start, saying why.
e = raises(gpuwhy.NO_GPU, lambda: gpuwhy.Session(require_gpu=True).__enter__(), contains=("NVML",))
assert "libnvidia-ml" in e.detail, e.detail
# no_gpu=True is not an error, whatever NVML there is.
with gpuwhy.Session(no_gpu=True) as gw:
    gw.step_begin()
    gw.step_end()
assert "no_gpu" in gw.report()["gpu_absent_reason"]

# Bad phase use raises with the library's explanation.
with gpuwhy.Session() as gw:
    raises(gpuwhy.UNKNOWN_PHASE, gw.phase, 99, contains=("phase id 99 was never registered",))
    raises(gpuwhy.INVALID_ARGUMENT, gw.phase, "", contains=("phase name",))
    raises(gpuwhy.INVALID_ARGUMENT, gw.phase, "step", contains=('"step"',))
    raises(gpuwhy.INVALID_ARGUMENT, gw.phase, "x" * 65, contains=("64 bytes",))
    for i in range(12):  # 4 built-in + 12 custom = 16, the most a session holds
        gw.phase("custom%d" % i)
    assert gw.phase_id("custom11") == 15 and gw.phase_id("forward") == 1
    raises(gpuwhy.TOO_MANY_PHASES, gw.phase, "one too many", contains=("at most 16",))
    raises(gpuwhy.UNKNOWN_PHASE, gw.gpu_phase, 16, 0.01)
    gw.gpu_phase("custom3", 0.002)
    gw.step_end()
    gw.stop()
    raises(gpuwhy.STOPPED, gw.step_begin, contains=("stopped",))
    gw.stop()  # twice: nothing
    try:
        gw.phase(object())
    except TypeError:
        pass
    else:
        raise AssertionError("phase(object()) did not raise TypeError")
raises(gpuwhy.INVALID_HANDLE, gw.phase, "forward", contains=("closed",))
assert gw.report()["steps"]["count"] == 1

# Markers on a Session never started say so.
idle = gpuwhy.Session()
raises(gpuwhy.NULL_ARGUMENT, idle.step_begin, contains=("not started",))
raises(gpuwhy.NOT_STOPPED, idle.top_finding)

# An exception in the body still stops the session and writes the report; it propagates.
out = os.path.join(tmp, "raised.json")
try:
    with gpuwhy.Session(output=out) as gw:
        for batch in gw.data([1, 2, 3]):
            gw.phase("forward")
            if batch == 2:
                raise KeyError("boom")
except KeyError:
    pass
else:
    raise AssertionError("the body's exception was swallowed")
assert os.path.exists(out) and gw.report()["steps"]["count"] == 2, gw.report()["steps"]

# An unwritable output: stop raises GPUWHY_IO, nothing is lost, the report can be written elsewhere.
bad = os.path.join(tmp, "no", "such", "dir", "run.json")
gw = gpuwhy.Session(output=bad).start()
gw.step_begin()
gw.step_end()
raises(gpuwhy.IO, gw.stop, contains=("kept in memory",))
raises(gpuwhy.IO, gw.write_report, bad)
good = os.path.join(tmp, "retry.json")
gw.write_report(good)
gw.close()
assert gw.report()["steps"]["count"] == 1 and os.path.exists(good)
gw.write_report(os.path.join(tmp, "after_close.json"))  # from the copy kept in Python
assert gpuwhy.read_report(os.path.join(tmp, "after_close.json")) == gw.report()
gw.close()  # twice: nothing

# A Session never closed still writes its report: when collected, or at interpreter exit.
dropped = os.path.join(tmp, "dropped.json")
gw = gpuwhy.Session(output=dropped).start()
gw.step_begin()
gw.step_end()
del gw
assert os.path.exists(dropped), "a collected Session did not write its report"
at_exit = os.path.join(tmp, "at_exit.json")
code = "import gpuwhy; s = gpuwhy.Session(output=%r).start(); s.step_begin(); s.step_end()" % at_exit
subprocess.run([sys.executable, "-c", code], check=True)
with open(at_exit) as f:
    assert json.load(f)["steps"]["count"] == 1

# Session.data: a break ends the step in progress; an iterable without len() ends with one
# short extra step (the fetch that found the end: the ABI cannot discard an open step).
with gpuwhy.Session() as gw:
    for batch in gw.data(range(10)):
        gw.phase("forward")
        if batch == 3:
            break
    time.sleep(0.02)
assert gw.report()["steps"]["count"] == 4
assert gw.report()["steps"]["stats"]["step"]["max_s"] < 0.015
with gpuwhy.Session() as gw:
    for batch in gw.data(iter(range(5))):
        gw.phase("forward")
    for batch in gw.data([]):
        raise AssertionError("an empty iterable yields nothing")
steps = gw.report()["steps"]
assert steps["count"] == 6 and steps["stats"]["forward"]["count"] == 5, steps

# Rank and world size: given, or read by the library from RANK/WORLD_SIZE.
with gpuwhy.Session(rank=1, world_size=2) as gw:
    pass
assert (gw.report()["run"]["rank"], gw.report()["run"]["world_size"]) == (1, 2)
os.environ.update(RANK="3", WORLD_SIZE="4")
with gpuwhy.Session() as gw:
    pass
assert (gw.report()["run"]["rank"], gw.report()["run"]["world_size"]) == (3, 4)
raises(gpuwhy.INVALID_ARGUMENT, gpuwhy.Session(rank=4, world_size=4).start, contains=("rank 4",))
# The local rank: read with RANK and WORLD_SIZE, or given with them.
os.environ["LOCAL_RANK"] = "1"
with gpuwhy.Session() as gw:
    pass
assert gw.report()["run"]["local_rank"] == 1, gw.report()["run"]
with gpuwhy.Session(rank=5, world_size=8, local_rank=2) as gw:
    pass
assert [gw.report()["run"][k] for k in ("rank", "world_size", "local_rank")] == [5, 8, 2]
with gpuwhy.Session(rank=5, world_size=8) as gw:
    pass
assert gw.report()["run"]["local_rank"] is None, "explicit rank: $LOCAL_RANK is not mixed in"
raises(gpuwhy.INVALID_ARGUMENT, gpuwhy.Session(rank=1, world_size=8, local_rank=8).start,
       contains=("local_rank 8",))
try:
    gpuwhy.Session(local_rank=0)
    raise AssertionError("local_rank alone was accepted")
except ValueError as e:
    assert "local_rank" in str(e), e
for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
    del os.environ[k]

# A baseline: the report carries the comparison; one that cannot be read, the reason.
base_path = os.path.join(tmp, "baseline.json")
with gpuwhy.Session(output=base_path) as gw:
    for batch in gw.data(range(30)):
        time.sleep(0.01)
        gw.phase("forward")
with gpuwhy.Session(baseline=base_path) as gw:
    for batch in gw.data(range(30)):
        gw.phase("forward")
        time.sleep(0.002)
comp = gw.report()["comparison"]
assert comp["baseline"] == base_path and comp["error"] is None, comp
steps = comp["result"]["steps"]
assert steps["p50_s"]["relative"] < -0.3 and steps["test"]["significant"], steps
with gpuwhy.Session(baseline=os.path.join(tmp, "missing.json")) as gw:
    gw.step_begin()
    gw.step_end()
assert gw.report()["steps"]["count"] == 1
comp = gw.report()["comparison"]
assert comp["result"] is None and "cannot read the baseline" in comp["error"], comp
raises(gpuwhy.INVALID_ARGUMENT, gpuwhy.Session(interval=0.001).start)

# A panic inside the library (the test build's test-only export) is a status, and poisons
# only that session.
lib = gpuwhy.load()
gw = gpuwhy.Session().start()
raises(gpuwhy.PANIC, gpuwhy._call, lib, "gpuwhy_test_panic", gw._h, contains=("panic",))
raises(gpuwhy.POISONED, gw.step_begin, contains=("poisoned",))
raises(gpuwhy.POISONED, gw.close)
with gpuwhy.Session() as other:
    other.step_begin()
    other.step_end()
assert other.report()["steps"]["count"] == 1

print("ok")

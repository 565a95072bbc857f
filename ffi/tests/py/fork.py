"""fork() inside a recording session, as PyTorch DataLoader workers do: children call
markers (no-ops there), let the inherited session be closed or garbage-collected, and exit
0 quickly; the parent's recording and report are intact. argv: a scratch directory.
Run by ffi/tests/python.rs (with the simulated GPU)."""
import gc
import multiprocessing
import os
import sys
import time
import traceback
import warnings

import gpuwhy

tmp = sys.argv[1]
out = os.path.join(tmp, "parent.json")
DEADLINE_S = 20.0  # a child taking longer hangs
# Python 3.12+ warns about fork() with threads running (gpuwhy's sampler is one): forking
# anyway is the point, as DataLoader does.
warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*fork")


def child_markers(gw):
    """What a child does with the session it inherited: every marker, and the wrapper."""
    for batch in gw.data(range(3)):
        gw.phase("forward")
        gw.phase("child_only")  # a new custom phase: not registered in the parent's session
        gw.gpu_phase("forward", 0.001)
    with gw.step():
        gw.phase("backward")
    gw.event("in_child")
    # Asking for results in a child is refused: the session belongs to the parent.
    try:
        gw.gpu_count()
    except gpuwhy.GpuwhyError as e:
        assert e.status == gpuwhy.INVALID_HANDLE and "parent" in e.detail, e
    else:
        raise AssertionError("gpu_count() worked in a child")


def wait(pid, what):
    """Waits for child `pid`; fails if it hangs or exits non-zero."""
    t0 = time.monotonic()
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() - t0 > DEADLINE_S:
            os.kill(pid, 9)
            raise AssertionError("%s: the child hung (killed after %.0f s)" % (what, DEADLINE_S))
        time.sleep(0.005)
    code = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8
    assert code == 0, "%s: the child exited with %s" % (what, code)
    return time.monotonic() - t0


def fork(what, body):
    """Runs body() in a forked child; the child exits through its own path (body's choice)."""
    pid = os.fork()
    if pid == 0:
        try:
            body()
        except SystemExit:
            raise
        except BaseException:
            traceback.print_exc()
            os._exit(1)
        os._exit(0)
    return wait(pid, what)


def worker(i):
    # A DataLoader-style worker in a fork pool: markers on the inherited global session.
    GW.step_begin()
    GW.phase("data")
    GW.event("worker")
    GW.step_end()
    return i * i


GW = None
spare = gpuwhy.Session(no_gpu=True).start()  # never closed by the parent until the end
with gpuwhy.Session(output=out, label="fork parent", interval=0.02) as gw:
    GW = gw
    for _ in range(5):
        with gw.step():
            gw.phase("forward")
            time.sleep(0.003)

    # 1. The child leaves the `with` block by sys.exit: Session.__exit__ runs in the child,
    # then the interpreter's exit runs the finalizer of `spare` (never closed).
    def exit_through_with():
        child_markers(gw)
        sys.exit(0)

    took = [fork("sys.exit inside with", exit_through_with)]
    assert not os.path.exists(out), "a child wrote the parent's report"

    # 2. The child drops its references and collects them: the finalizer frees (forgets).
    def collected():
        global spare
        child_markers(spare)
        child_markers(gw)
        spare = None
        gc.collect()
        gw.close()  # an explicit close of the inherited session: nothing happens

    took.append(fork("garbage-collected", collected))

    # 3. A multiprocessing pool with the 'fork' start method, as DataLoader workers.
    ctx = multiprocessing.get_context("fork")
    t0 = time.monotonic()
    pool = ctx.Pool(2)
    assert pool.map(worker, range(8)) == [i * i for i in range(8)]
    pool.close()
    pool.join()
    took.append(time.monotonic() - t0)
    p = ctx.Process(target=child_markers, args=(gw,))
    p.start()
    p.join(DEADLINE_S)
    assert p.exitcode == 0, "multiprocessing.Process exit code %r" % p.exitcode

    for _ in range(5):
        with gw.step():
            gw.phase("backward")
            time.sleep(0.003)
    assert gw.gpu_count() == 1

assert max(took) < 5.0, "children took %s s" % took
r = gw.report()
steps = r["steps"]
assert steps["count"] == 10, steps
assert set(steps["stats"]) == {"step", "forward", "backward"}, sorted(steps["stats"])
assert steps["stats"]["forward"]["count"] == 5 and steps["stats"]["backward"]["count"] == 5
assert [e["kind"] for e in r.get("events", []) if e["kind"] in ("in_child", "worker")] == [], r["events"]
assert len(r["devices"]) == 1 and os.path.exists(out)
assert gpuwhy.read_report(out) == r
spare.close()
assert "steps" not in spare.report()  # the children's markers went nowhere
print("ok: children took %s s" % ", ".join("%.3f" % t for t in took))

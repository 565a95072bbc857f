"""gpuwhy.torch on a real GPU (run by scripts/gpu-check.sh after its jobs): a short matmul
loop timed with CUDA events through gpuwhy.torch.Session, checking that every phase got GPU
times, that nothing synchronised (torch's synchronising calls are wrapped and counted), and
what the timing adds per phase marker with real events against a plain marker.

argv: report path. Prints one line of figures; exits 1 when a check fails. With --dry-run
(no GPU, no torch) it runs ffi/tests/py/torch_standin.py instead, the same checks against a
stand-in of the torch API.
"""
import os
import runpy
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True


def count_syncs(torch):
    calls = []

    def wrap(owner, name):
        real = getattr(owner, name)

        def counted(*a, **k):
            calls.append(name)
            return real(*a, **k)
        setattr(owner, name, counted)

    wrap(torch.cuda, "synchronize")
    wrap(torch.cuda.Event, "synchronize")
    wrap(torch.cuda.Stream, "synchronize")
    return calls


def marker_ns(session_cls, n, **kw):
    with session_cls(no_gpu=True, **kw) as gw:
        gw.step_begin()
        t0 = time.perf_counter_ns()
        for _ in range(n):
            gw.phase("forward")
            gw.phase("backward")
            gw.step_end()
        t1 = time.perf_counter_ns()
    return (t1 - t0) / (3 * n)


def main():
    if "--dry-run" in sys.argv:
        sys.argv = [sys.argv[0]]
        runpy.run_path(os.path.join(HERE, "..", "ffi", "tests", "py", "torch_standin.py"),
                       run_name="__main__")
        return
    import torch
    import gpuwhy
    import gpuwhy.torch as gwt
    out = sys.argv[1]
    syncs = count_syncs(torch)
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    with gwt.Session(output=out) as gw:
        for _ in gw.data(range(60)):
            gw.phase("forward")
            b = a @ a
            gw.phase("backward")
            c = b @ a
            gw.phase("optimizer")
            a = (c / c.abs().max()).contiguous()
    stats = gw.report()["steps"].get("gpu_stats", {})
    ok = all(p in stats and stats[p]["p50_s"] > 0 for p in ("forward", "backward", "optimizer"))
    plain = min(marker_ns(gpuwhy.Session, 5000) for _ in range(3))
    timed = min(marker_ns(gwt.Session, 5000, gpu_timing=True) for _ in range(3))
    t = gw.gpu_timer
    print("gpuwhy.torch: GPU forward p50 %.3f ms, backward %.3f ms; %d pairs measured, %d "
          "attached, %d dropped; synchronising calls %d; marker %.1f us plain, %.1f us with "
          "CUDA-event timing" % (stats.get("forward", {}).get("p50_s", 0) * 1e3,
                                 stats.get("backward", {}).get("p50_s", 0) * 1e3,
                                 t.resolved, t.attached, t.dropped, len(syncs), plain / 1e3,
                                 timed / 1e3))
    if not ok or syncs:
        print("gpuwhy.torch: FAILED (%s)" % ("synchronised: %r" % syncs if syncs else
                                             "phases without GPU times: %r" % stats))
        sys.exit(1)


if __name__ == "__main__":
    main()

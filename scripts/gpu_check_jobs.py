"""The jobs of scripts/gpu-check.sh: three short training loops recorded through the Python
binding (the package ffi/python/gpuwhy/), each with the verdict it must reach.

  healthy  8192^3 bf16 matmul chains, an instant loader   -> no loop-level finding
  starved  the same loop, its loader sleeping 0.45 s/batch -> data_starvation
  tiny     3000 tiny elementwise kernels per step          -> launch_bound

"Loop-level" skips the findings about the machine that gpuwhy ranks first by design or that
only the hardware decides (gpu_fault, throttling, pcie_degraded): a power-capped H100 is
reported as throttled before anything else, and that is not a wrong verdict about the loop.

The driver runs each job in its own Python process (`--job NAME`, which writes
OUT/NAME.result.json), prints the top finding of each and the cost of the step markers
against the real step time, and exits 1 when a verdict is wrong or a job failed. --dry-run
replaces PyTorch with stand-ins (scripts/gpu_check_work.py) and the GPU with the simulator,
installed per job by `gpuwhy demo SCENARIO --install-sim DIR`. Standard library only.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # leave no __pycache__ in the repository's scripts/
sys.path.insert(0, HERE)
from gpu_check_work import JOBS, SimWork, TorchWork  # noqa: E402

HARDWARE = ("gpu_fault", "throttling", "pcie_degraded")
# The markers may cost at most this share of the median step (the docs promise hundredths
# of a percent; a check on a busy machine needs room).
MAX_OVERHEAD_PCT = 1.0
MIN_STEPS, MIN_UTIL_SAMPLES = 10, 20
# Host CPU p50 (% of all cores) at which the machine counts as saturated.
SATURATED_HOST = 95.0


def median(xs):
    xs = sorted(x for x in xs if x is not None)
    return xs[len(xs) // 2] if xs else None


def marker_cost(gpuwhy, gpu_phases, n=10000, repeats=3):
    """Seconds the markers of one step cost: a data() item, three phase() calls and the job's
    gpu_phase() calls, in a loop doing nothing else, minus the same loop without markers
    (best of `repeats`; a session without GPU sampling, so only the markers run)."""
    best = None
    for _ in range(repeats):
        with gpuwhy.Session(no_gpu=True, label="marker cost") as gw:
            t0 = time.perf_counter()
            for _ in gw.data(range(n)):
                gw.phase("forward")
                gw.phase("backward")
                gw.phase("optimizer")
                for p in gpu_phases:
                    gw.gpu_phase(p, 0.001)
            t1 = time.perf_counter()
        t2 = time.perf_counter()
        for _ in range(n):
            pass
        cost = ((t1 - t0) - (time.perf_counter() - t2)) / n
        best = cost if best is None else min(best, cost)
    return best


def ab_steps(gpuwhy, w, blocks, per_block):
    """Median step time without markers and with them, in interleaved blocks of the same loop
    (so drift hits both alike), each step timed from one fetch to the next."""
    plain, marked = [], []
    with gpuwhy.Session(no_gpu=True, label="a/b") as gw:
        for _ in range(blocks):
            for sink, mark in ((plain, None), (marked, gw)):
                src = gw.data(w.loader()) if mark else iter(w.loader())
                t = time.perf_counter()
                for _ in range(per_block):
                    w.step(mark, next(src))
                    now = time.perf_counter()
                    sink.append(now - t)
                    t = now
                if mark:
                    src.close()
    return median(plain), median(marked)


def run_job(a):
    """One job, in this process: prepare, record, measure the markers, write the result."""
    import gpuwhy
    w = SimWork(a.job) if a.dry_run else TorchWork(a.job)
    t0 = time.perf_counter()
    w.prepare(gpuwhy)
    print("  prepared in %.1f s" % (time.perf_counter() - t0), flush=True)
    path = os.path.join(a.out, a.job + ".json")
    end = time.perf_counter() + a.seconds
    with gpuwhy.Session(output=path, label="gpu-check: " + a.job, interval=w.interval,
                        require_gpu=True) as gw:
        steps = gw.data(w.loader())
        for batch in steps:
            w.step(gw, batch)
            if time.perf_counter() >= end:
                break
        steps.close()
    r = gw.report()
    res = summarize(r, a.job)
    res["info"] = w.info
    res["marker_cost_s"] = marker_cost(gpuwhy, w.attaches)
    if a.job == "tiny":
        res["ab"] = ab_steps(gpuwhy, w, *((6, 4) if a.dry_run else (10, 10)))
        res["event_ratio"] = getattr(w, "event_ratio", lambda: None)()
    with open(os.path.join(a.out, a.job + ".result.json"), "w") as f:
        json.dump(res, f, indent=1)


def summarize(r, job):
    """What the driver checks and prints, from a report."""
    st = r.get("steps") or {}
    dur, data = st.get("duration") or [], (st.get("phase_durations") or {}).get("data") or []
    utils = []
    for s in r.get("series", []):
        vals = [u for u in s["metrics"].get("util_gpu", []) if u is not None]
        utils.append((median(vals), len(vals)))
    # The job's GPU is the busiest one (NVML sees every GPU of the machine).
    util = max(utils, key=lambda u: (u[0] is not None, u[0] or 0.0), default=(None, 0))
    host = (r.get("host") or {}).get("metrics") or {}
    return {
        "job": job, "findings": [f["id"] for f in r.get("findings", [])],
        "verdict": r["verdict"], "gpu_absent_reason": r.get("gpu_absent_reason"),
        "devices": len(r.get("devices", [])), "util_p50": util[0], "util_samples": util[1],
        "steps": st.get("count", 0),
        "step_p50_s": ((st.get("stats") or {}).get("step") or {}).get("p50_s"),
        "data_share_p50": median([d / s for d, s in zip(data, dur) if d is not None and s]),
        "proc_cpu_p50": median(host.get("proc_cpu") or []),
        "host_cpu_p50": median(host.get("cpu_total") or []),
    }


def judge(res, expected):
    """(problems, inconclusive): the problems with a job's result, none when its verdict is
    right; inconclusive when the only problem is a missed launch_bound while the machine's
    CPUs were saturated and the job's process got less than 90 % of a core (launch_bound
    without GPU times needs a saturated launching thread: a busy machine decided it)."""
    if res is None:
        return ["the job did not finish (see its output above)"], False
    bad = []
    if res["gpu_absent_reason"] or not res["devices"]:
        bad.append("no GPU was recorded: %s" % res["gpu_absent_reason"])
    if res["util_samples"] < MIN_UTIL_SAMPLES:
        bad.append("only %d utilization samples" % res["util_samples"])
    if res["steps"] < MIN_STEPS:
        bad.append("only %d steps" % res["steps"])
    pct = overhead_pct(res)
    if pct is None or pct > MAX_OVERHEAD_PCT:
        bad.append("markers cost %s of a step (limit %g%%)" % (fmt(pct, "%.3f%%"), MAX_OVERHEAD_PCT))
    loop = [i for i in res["findings"] if i not in HARDWARE] or ["none"]
    if loop[0] == expected:
        return bad, False
    bad.append("first loop-level finding is %s, expected %s" % (loop[0], expected))
    busy = expected == "launch_bound" and (res["host_cpu_p50"] or 0) >= SATURATED_HOST \
        and (res["proc_cpu_p50"] or 0) < 90
    if busy:
        bad[-1] += (" -- but the machine was saturated (host CPU p50 %.0f%%) and the job got"
                    " %.0f%% of a core" % (res["host_cpu_p50"], res["proc_cpu_p50"]))
    return bad, busy and len(bad) == 1


def overhead_pct(res):
    c, s = res.get("marker_cost_s"), res.get("step_p50_s")
    return 100.0 * c / s if c is not None and s else None


def fmt(v, f):
    return "-" if v is None else f % v


def install_sim(a, job, env):
    """Dry run: the simulator for `job`'s scenario (or the one --scenario gives it) in
    OUT/sim-JOB, at the job's speed."""
    _, scenario, speed, _ = JOBS[job]
    scenario = a.scenario.get(job, scenario)
    d = os.path.join(a.out, "sim-" + job)
    lib = subprocess.run([a.gpuwhy, "demo", scenario, "--install-sim", d], check=True,
                         stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
    sc = os.path.join(d, "scenario.json")
    with open(sc) as f:
        v = json.load(f)
    v["speed"] = speed
    with open(sc, "w") as f:
        json.dump(v, f)
    env["GPUWHY_NVML_PATH"] = lib


def drive(a):
    results, failed, unsure = {}, False, False
    for job in a.jobs:
        expected = JOBS[job][0]
        print("\n== job %s (expect %s), %g s" % (job, expected, a.seconds), flush=True)
        env = dict(os.environ, GPUWHY_LIB=a.lib, PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (a.pydir, env.get("PYTHONPATH")) if p)
        for k in ("RANK", "WORLD_SIZE"):
            env.pop(k, None)
        if a.dry_run:
            install_sim(a, job, env)
        cmd = [sys.executable, os.path.abspath(__file__), "--job", job, "--out", a.out,
               "--seconds", str(a.seconds)] + (["--dry-run"] if a.dry_run else [])
        rf = os.path.join(a.out, job + ".result.json")
        if os.path.exists(rf):
            os.remove(rf)
        try:
            rc = subprocess.run(cmd, env=env, timeout=a.seconds + a.slack).returncode
        except subprocess.TimeoutExpired:
            rc = "timed out after %d s" % (a.seconds + a.slack)
        res = None
        if rc == 0 and os.path.exists(rf):
            with open(rf) as f:
                res = json.load(f)
        elif rc != 0:
            print("  job %s failed: %s" % (job, rc))
        results[job] = res
        bad, inconclusive = judge(res, expected)
        failed |= bool(bad) and not inconclusive
        unsure |= inconclusive
        if res:
            for line in res["info"]:
                print("  " + line)
            if res["devices"] > 1:
                print("  note: %d GPUs were recorded, the idle ones too (gpuwhy records every GPU"
                      " NVML sees), so rank_imbalance may fire; run on a 1-GPU machine"
                      % res["devices"])
            v = res["verdict"]
            print("  top finding: %s (%s, confidence %.2f); all: %s" % (
                v["id"], v["title"], v["confidence"], ", ".join(res["findings"]) or "-"))
            print("  steps %d, step p50 %s, data share p50 %s, util_gpu p50 %s, process CPU p50 %s" % (
                res["steps"], fmt(res["step_p50_s"], "%.4f s"), fmt(res["data_share_p50"], "%.3f"),
                fmt(res["util_p50"], "%.0f%%"), fmt(res["proc_cpu_p50"], "%.0f%%")))
            if res.get("event_ratio") is not None:
                print("  CUDA-event fwd+bwd time / CPU-side fwd+bwd time p50: %.2f (not attached:"
                      " events time the launch gaps too, so this reads as 'the GPU kept up')"
                      % res["event_ratio"])
        word = "INCONCLUSIVE: " if inconclusive else "WRONG: "
        print("  verdict: %s" % ("OK" if not bad else word + "; ".join(bad)), flush=True)
    summary(results)
    word = "FAILED" if failed else "INCONCLUSIVE (rerun on a quieter machine)" if unsure else \
        "all verdicts right"
    print("\ngpu-check: %s (reports in %s)" % (word, a.out))
    return 1 if failed else 3 if unsure else 0


def summary(results):
    print("\n%-8s %-16s %-16s %10s %12s %10s" % ("job", "expected", "top finding", "step p50",
                                                  "markers/step", "overhead"))
    for job, res in results.items():
        if res is None:
            print("%-8s %-16s %-16s" % (job, JOBS[job][0], "(failed)"))
            continue
        print("%-8s %-16s %-16s %10s %12s %10s" % (
            job, JOBS[job][0], res["verdict"]["id"], fmt(res["step_p50_s"], "%.4f s"),
            fmt(res["marker_cost_s"] and res["marker_cost_s"] * 1e6, "%.2f us"),
            fmt(overhead_pct(res), "%.4f%%")))
    ab = (results.get("tiny") or {}).get("ab")
    if ab and ab[0] and ab[1]:
        print("tiny, the same loop timed without and with markers (interleaved): step p50 %.4f s"
              " vs %.4f s (%+.2f%%; this includes run-to-run noise)"
              % (ab[0], ab[1], 100.0 * (ab[1] / ab[0] - 1)))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dry-run", action="store_true", help="simulated GPU, no PyTorch")
    p.add_argument("--gpuwhy", help="the gpuwhy CLI (dry run: installs the simulator)")
    p.add_argument("--lib", help="libgpuwhy.so")
    p.add_argument("--pydir", default=os.path.join(HERE, "..", "ffi", "python"),
                   help="directory holding the gpuwhy package")
    p.add_argument("--out", required=True, help="directory for the reports")
    p.add_argument("--seconds", type=float, default=25.0, help="recording time per job")
    p.add_argument("--slack", type=int, default=120, help="a job's time limit beyond --seconds")
    p.add_argument("--jobs", default="healthy,starved,tiny", help="comma-separated")
    p.add_argument("--scenario", action="append", default=[], metavar="JOB=SCENARIO",
                   help="dry run: the simulator plays SCENARIO for JOB (to see a check fail)")
    p.add_argument("--job", choices=sorted(JOBS), help=argparse.SUPPRESS)
    a = p.parse_args()
    a.scenario = dict(kv.split("=", 1) for kv in a.scenario if "=" in kv)
    os.makedirs(a.out, exist_ok=True)
    if a.job:
        return run_job(a)
    a.jobs = [j for j in a.jobs.split(",") if j]
    unknown = [j for j in a.jobs if j not in JOBS]
    if unknown or not a.lib or (a.dry_run and not a.gpuwhy):
        p.error("unknown jobs %s, or --lib (and for --dry-run --gpuwhy) missing" % unknown)
    a.out, a.lib = os.path.abspath(a.out), os.path.abspath(a.lib)
    return drive(a)


if __name__ == "__main__":
    sys.exit(main())

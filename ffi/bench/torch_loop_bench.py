"""What a session costs a real PyTorch training loop: a small model trained on the CPU in
steps of about 1 ms, without a session, with a gpuwhy.Session (5 markers a step: data,
forward, backward, optimizer, step end) and with a gpuwhy.torch.Session (the same markers
through the torch wrapper; on the CPU it has no CUDA events to record). Run by
`cargo xtask bench torch-loop` with torch installed (GPUWHY_LIB and PYTHONPATH set).

The three sides alternate in short blocks (ABC, then CBA, ...), so a change in the machine's
load falls on all of them; each block pair gives one overhead, and the median of the pairs,
their spread and the standard error of their mean are printed as one JSON line, for the wall
time and for the training thread's CPU time. Each marked
block runs inside a session of its own, opened before the block's clock starts and stopped
after it ends: the block pays for the markers and for the sampler thread running beside it,
the unmarked block has no session at all.
"""
import json
import math
import statistics
import sys
import time

import torch

BLOCK_STEPS = 200
ROUNDS = 40
WARMUP_STEPS = 300


def model_and_batch():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    width = int(sys.argv[1]) if len(sys.argv) > 1 else 192
    model = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(),
                                torch.nn.Linear(width, width), torch.nn.ReLU(),
                                torch.nn.Linear(width, 10))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(64, width)
    y = torch.randint(0, 10, (64,))
    return model, opt, x, y


def block(model, opt, x, y, gw):
    """BLOCK_STEPS steps, marked through `gw` (None: unmarked); returns the wall seconds and
    the training thread's CPU seconds (which leave out the time the thread waited for a
    core: on a shared machine that wait is most of the wall time's noise)."""
    loss_fn = torch.nn.functional.cross_entropy
    c0 = time.thread_time()
    t0 = time.perf_counter()
    if gw is None:
        for _ in range(BLOCK_STEPS):
            xb, yb = x.clone(), y
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
    else:
        for _ in range(BLOCK_STEPS):
            gw.phase("data")
            xb, yb = x.clone(), y
            gw.phase("forward")
            loss = loss_fn(model(xb), yb)
            gw.phase("backward")
            loss.backward()
            gw.phase("optimizer")
            opt.step()
            opt.zero_grad()
            gw.step_end()
    return time.perf_counter() - t0, time.thread_time() - c0


def summary(overheads):
    s = sorted(overheads)
    n = len(s)
    mean = statistics.fmean(s)
    sem = statistics.stdev(s) / math.sqrt(n) if n > 1 else float("nan")
    return {"median_pct": 100 * statistics.median(s), "mean_pct": 100 * mean,
            "sem_pct": 100 * sem, "p25_pct": 100 * s[n // 4], "p75_pct": 100 * s[(3 * n) // 4],
            "min_pct": 100 * s[0], "max_pct": 100 * s[-1]}


def main():
    import gpuwhy
    import gpuwhy.torch as gwt

    model, opt, x, y = model_and_batch()
    sides = {"none": None, "session": gpuwhy.Session,
             "torch_session": lambda **kw: gwt.Session(gpu_timing=False, **kw)}

    def timed(side):
        make = sides[side]
        if make is None:
            return block(model, opt, x, y, None)
        with make(no_gpu=True) as gw:
            return block(model, opt, x, y, gw)

    for side in sides:
        for _ in range(WARMUP_STEPS // BLOCK_STEPS + 1):
            timed(side)
    times = {k: [] for k in sides}
    order = list(sides)
    for r in range(ROUNDS):
        for k in (order if r % 2 == 0 else order[::-1]):
            times[k].append(timed(k))
    base = [w for w, _ in times["none"]]
    base_cpu = [c for _, c in times["none"]]
    step_ms = 1000 * statistics.median(base) / BLOCK_STEPS
    out = {"step_ms": step_ms, "rounds": ROUNDS, "block_steps": BLOCK_STEPS,
           "torch": torch.__version__}
    for k in ("session", "torch_session"):
        wall = [w for w, _ in times[k]]
        cpu = [c for _, c in times[k]]
        out[k] = summary([t / b - 1 for t, b in zip(wall, base)])
        out[k]["cpu"] = summary([t / b - 1 for t, b in zip(cpu, base_cpu)])
        # The added time per step, against the unmarked loop of the same round.
        added = [(t - b) / BLOCK_STEPS * 1e6 for t, b in zip(wall, base)]
        out[k]["added_us_per_step"] = statistics.median(added)
        added_cpu = [(t - b) / BLOCK_STEPS * 1e6 for t, b in zip(cpu, base_cpu)]
        out[k]["cpu"]["added_us_per_step"] = statistics.median(added_cpu)
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()

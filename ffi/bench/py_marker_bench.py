"""The cost of a step marker from Python against a bare ctypes call of a trivial C function,
measured in the same process (run by `cargo xtask bench`, GPUWHY_LIB and PYTHONPATH set).

The floor a ctypes wrapper can reach is one foreign call: `gpuwhy_abi_version()` does nothing
but return a constant. For each marker (step_begin, phase("forward"), step_end) a round
alternates batches of the bare call with batches of the marker, 40 pairs of 1,000 calls; the
round's ratio is the median of its pairs' ratios (a pair is short enough that the machine's
other work rarely lands in it). The median round and the spread across rounds are printed as
one JSON line.
"""
import ctypes
import json
import statistics
import sys
import time

BATCH = 1000
PAIRS = 40
ROUNDS = 7


def per_call_ns(fn):
    t0 = time.perf_counter_ns()
    for _ in range(BATCH):
        fn()
    return (time.perf_counter_ns() - t0) / BATCH


def main():
    import gpuwhy

    lib = gpuwhy.load()
    # The bare call as a user would write it: a fresh function object with its restype.
    bare_fn = lib["gpuwhy_abi_version"]
    bare_fn.restype = ctypes.c_uint32
    rows = {"step_begin": [], "phase": [], "step_end": []}
    bare_ns = []
    with gpuwhy.Session(no_gpu=True) as s:
        s.step_begin()
        sides = {
            "step_begin": s.step_begin,
            "phase": lambda: s.phase("forward"),
            "step_end": s.step_end,
        }
        for _ in range(ROUNDS):
            for name, fn in sides.items():
                pairs = []
                for _ in range(PAIRS):
                    b = per_call_ns(bare_fn)
                    m = per_call_ns(fn)
                    bare_ns.append(b)
                    pairs.append(m / b)
                    time.sleep(0.002)  # the sampler folds the markers, off this thread
                rows[name].append(statistics.median(pairs))
    out = {"bare_ns": statistics.median(bare_ns), "batch": BATCH, "pairs": PAIRS, "rounds": ROUNDS}
    for name, ratios in rows.items():
        out[name] = {
            "ratio": statistics.median(ratios),
            "min": min(ratios),
            "max": max(ratios),
        }
    out["library"] = getattr(lib, "_gpuwhy_path", "")
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()

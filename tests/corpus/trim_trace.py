#!/usr/bin/env python3
"""Cuts a PyTorch profiler (Kineto) trace down to a few consecutive profiler steps, so a
real trace can live in tests/corpus/real/ at a small size.

Kept: metadata events; host-side events that start inside the window spanned by the chosen
`ProfilerStep#N` ranges; GPU events launched from kept runtime calls (matched by
correlation id) or starting inside the window; flow events of kept correlations. Dropped:
everything else, including the profiler's own whole-run `Trace` span. Top-level keys other
than `traceEvents` are copied unchanged. Values are never edited.

usage: trim_trace.py IN.json[.gz] OUT.json.gz FIRST_STEP COUNT
"""
import gzip
import json
import sys

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation",
            "Kernel", "Memcpy", "Memset"}
RUNTIME_CATS = {"cuda_runtime", "cuda_driver", "Runtime"}


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def main():
    src, dst, first, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    doc = load(src)
    events = doc["traceEvents"]
    wanted = {f"ProfilerStep#{n}" for n in range(first, first + count)}
    steps = [e for e in events if e.get("name") in wanted and e.get("ph") == "X"]
    if len(steps) != count:
        sys.exit(f"found {len(steps)} of the {count} steps asked for")
    lo = min(e["ts"] for e in steps)
    hi = max(e["ts"] + e["dur"] for e in steps)
    inside = lambda e: lo <= float(e.get("ts", -1)) < hi
    kept, corr = [], set()
    for e in events:
        cat = e.get("cat")
        if e.get("ph") == "M":
            kept.append(e)
        elif cat in GPU_CATS or cat in ("ac2g", "async") or e.get("ph") in ("s", "f"):
            continue  # decided below, once the kept runtime calls are known
        elif cat == "Trace":
            continue
        elif inside(e):
            kept.append(e)
            if cat in RUNTIME_CATS and "correlation" in e.get("args", {}):
                corr.add(e["args"]["correlation"])
    for e in events:
        cat = e.get("cat")
        c = e.get("args", {}).get("correlation")
        if cat in GPU_CATS and (c in corr or (c is None and inside(e))):
            kept.append(e)
        elif e.get("ph") in ("s", "f") and e.get("id") in corr:
            kept.append(e)
    doc["traceEvents"] = kept
    with gzip.open(dst, "wt") as f:
        json.dump(doc, f, separators=(",", ":"))
    print(f"{dst}: {len(kept)} of {len(events)} events, steps {sorted(wanted)}")


if __name__ == "__main__":
    main()

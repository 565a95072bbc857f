"""HTA (holistictraceanalysis from PyPI) on one trace directory: temporal breakdown and idle
time breakdown, with its wall time and peak RSS, as JSON on stdout. Used by
`cargo xtask bench` beside gpuwhy on the same file.

The last ProfilerStep is kept (include_last_profiler_step=True) so the inclusion choices are
gpuwhy's defaults; the generated trace has no cuda_sync records, no unmatched GPU
operations and whole-µs timestamps, so HTA's other choices change nothing on it.
"""

import json
import resource
import sys
import time
import warnings

warnings.filterwarnings("ignore")
start = time.perf_counter()
from hta.trace_analysis import TraceAnalysis  # noqa: E402

ta = TraceAnalysis(trace_dir=sys.argv[1], include_last_profiler_step=True)
loaded = time.perf_counter()
tb = ta.get_temporal_breakdown(visualize=False)
idle, _ = ta.get_idle_time_breakdown(ranks=[0], visualize=False)
end = time.perf_counter()
row = tb.iloc[0]
by = {f"stream {int(r.stream)} {r.idle_category}": float(r.idle_time) for r in idle.itertuples()}
print(json.dumps({
    "seconds": end - start,
    "load_seconds": loaded - start,
    "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    # CPU time (user + system, this process and any worker it waited for): on a shared
    # machine wall time also counts the time spent waiting for a core.
    "cpu_seconds": sum(
        r.ru_utime + r.ru_stime
        for r in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    ),
    "idle_pct": 100.0 * float(row["idle_time(us)"]) / float(row["kernel_time(us)"]),
    "idle_us": float(row["idle_time(us)"]),
    "span_us": float(row["kernel_time(us)"]),
    "idle_breakdown_us": {k: float(v) for k, v in by.items()},
}))

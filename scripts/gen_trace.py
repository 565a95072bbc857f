#!/usr/bin/env python3
"""Generate PyTorch-profiler (Kineto) Chrome traces with known answers, for gpuwhy's tests
and benchmark.

The files follow what libkineto's ChromeTraceLogger writes (libkineto/src/output_json.cpp,
CuptiActivity.cpp; see docs/trace-format.md): a top-level object with schemaVersion,
deviceProperties, distributedInfo, traceEvents (complete "X" events with fractional-µs ts
and dur, args.correlation/stream/device, ProfilerStep#N user annotations, ac2g flow events)
and traceName.

Usage:
  scripts/gen_trace.py fixtures DIR        # the small hand-checkable fixtures
  scripts/gen_trace.py big FILE [MB]       # a large trace (default 500 MB) for the bench
  scripts/gen_trace.py ranks DIR N MB      # N rank traces of MB each (the many-ranks bench)

Only the standard library is used.
"""

import gzip
import io
import json
import os
import sys

CPU_PID = 4242
CPU_TID = 4242
DEVICE = 0
MAIN_STREAM = 7
NCCL_STREAM = 20

DEVICE_PROPERTIES = [{
    "id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85029158912,
    "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024,
    "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 32,
    "sharedMemPerBlock": 49152, "numSms": 132, "regsPerMultiprocessor": 65536,
    "sharedMemPerBlockOptin": 232448, "sharedMemPerMultiprocessor": 233472,
}]

# CUPTI runtime callback ids, as Kineto writes them in args.cbid.
CBID = {"cudaLaunchKernel": 211, "cudaMemcpyAsync": 41, "cudaStreamSynchronize": 131,
        "cudaDeviceSynchronize": 165, "cudaMemcpy": 31}


def us(x):
    """Kineto prints µs with three decimals (ns precision)."""
    return float(f"{x:.3f}")


class Writer:
    """Streams one trace file: header, events one per line, footer."""

    def __init__(self, out, rank=0, world=1):
        self.out = out
        self.corr = 0
        self.ext = 0
        head = {
            "schemaVersion": 1,
            "deviceProperties": DEVICE_PROPERTIES,
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world,
                                "pg_count": 1, "nccl_version": "2.21.5"},
            "with_stack": 0, "record_shapes": 1,
            "displayTimeUnit": "ms", "baseTimeNanoseconds": 1795951320000000000,
        }
        text = json.dumps(head, indent=2)
        out.write(text[:-2] + ',\n  "traceEvents": [\n')
        self.first = True
        for name, pid, tid, label in [("process_name", CPU_PID, 0, "python"),
                                      ("process_name", DEVICE, 0, "GPU 0"),
                                      ("thread_name", DEVICE, MAIN_STREAM, "stream 7"),
                                      ("thread_name", DEVICE, NCCL_STREAM, "stream 20")]:
            self.event({"name": name, "ph": "M", "ts": 0.0, "pid": pid, "tid": tid,
                        "args": {"name": label}})

    def event(self, e):
        if not self.first:
            self.out.write(",\n")
        self.first = False
        self.out.write("  " + json.dumps(e, separators=(", ", ": ")))

    def step(self, n, ts, dur):
        self.ext += 1
        self.event({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}",
                    "pid": CPU_PID, "tid": CPU_TID, "ts": us(ts), "dur": us(dur),
                    "args": {"External id": self.ext, "Record function id": 0, "Ev Idx": self.ext}})

    def cpu_op(self, name, ts, dur):
        self.ext += 1
        self.event({"ph": "X", "cat": "cpu_op", "name": name, "pid": CPU_PID, "tid": CPU_TID,
                    "ts": us(ts), "dur": us(dur),
                    "args": {"External id": self.ext, "Sequence number": self.ext,
                             "Fwd thread id": 0, "Input Dims": [[64, 64], [64, 64]]}})

    def runtime(self, name, ts, dur):
        self.corr += 1
        self.event({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": CPU_PID,
                    "tid": CPU_TID, "ts": us(ts), "dur": us(dur),
                    "args": {"External id": self.ext, "cbid": CBID.get(name, 0),
                             "correlation": self.corr}})
        return self.corr

    def kernel(self, name, corr, launch_ts, ts, dur, stream=MAIN_STREAM, flow=True):
        self.event({"ph": "X", "cat": "kernel", "name": name, "pid": DEVICE, "tid": stream,
                    "ts": us(ts), "dur": us(dur),
                    "args": {"External id": self.ext, "queued": 0, "device": DEVICE,
                             "context": 1, "stream": stream, "correlation": corr,
                             "registers per thread": 32, "shared memory": 0,
                             "blocks per SM": 1.0, "warps per SM": 4.0, "grid": [132, 1, 1],
                             "block": [128, 1, 1], "est. achieved occupancy %": 6}})
        if not flow:
            return
        # The ac2g flow Kineto adds between a launch and its kernel.
        self.event({"ph": "s", "id": corr, "pid": CPU_PID, "tid": CPU_TID, "ts": us(launch_ts),
                    "cat": "ac2g", "name": "ac2g"})
        self.event({"ph": "f", "id": corr, "pid": DEVICE, "tid": stream, "ts": us(ts),
                    "cat": "ac2g", "name": "ac2g", "bp": "e"})

    def memcpy(self, name, corr, ts, dur, nbytes, stream=MAIN_STREAM):
        self.event({"ph": "X", "cat": "gpu_memcpy", "name": name, "pid": DEVICE, "tid": stream,
                    "ts": us(ts), "dur": us(dur),
                    "args": {"External id": self.ext, "device": DEVICE, "context": 1,
                             "stream": stream, "correlation": corr, "bytes": nbytes,
                             "memory bandwidth (GB/s)": nbytes / max(dur, 1e-3) / 1e3}})

    def sync_record(self, name, corr, ts, dur, stream=MAIN_STREAM):
        self.event({"ph": "X", "cat": "cuda_sync", "name": name, "pid": DEVICE, "tid": stream,
                    "ts": us(ts), "dur": us(dur),
                    "args": {"cuda_sync_kind": name, "stream": stream, "correlation": corr,
                             "device": DEVICE, "context": 1}})

    def close(self, end_ts):
        self.event({"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "",
                    "ts": us(end_ts)})
        self.out.write('\n  ],\n  "traceName": "gen_trace.py"\n}\n')


def small(w, steps=3, base=0.0):
    """The hand-checkable trace (numbers in docs/trace-format.md and the tests).

    Per step S (CPU ProfilerStep [S, S+1000)), on stream 7 unless noted:
      pageable memcpy [S+12, S+20] launched by cudaMemcpyAsync at S+1 (6 µs)
      gemm A [S+20, S+320] launched at S+10 (5 µs); gemm B [S+320, S+620] launched at S+15
      cudaStreamSynchronize at S+30 (600 µs)
      C [S+710, S+910] launched at S+700 (host wait 90 µs before it)
      D [S+915, S+965] launched at S+705 (kernel wait 5 µs before it)
      NCCL all-reduce on stream 20 [S+720, S+820] launched at S+706 (under C)
    """
    for k in range(steps):
        s = base + 1000.0 * k
        w.step(k, s, 1000.0)
        w.cpu_op("aten::copy_", s + 0.5, 8.0)
        c = w.runtime("cudaMemcpyAsync", s + 1, 6)
        w.memcpy("Memcpy HtoD (Pageable -> Device)", c, s + 12, 8, 1 << 20)
        w.cpu_op("aten::mm", s + 9, 12)
        c = w.runtime("cudaLaunchKernel", s + 10, 5)
        w.kernel("sm90_xmma_gemm_bf16bf16_bf16f32", c, s + 10, s + 20, 300)
        c = w.runtime("cudaLaunchKernel", s + 15, 5)
        w.kernel("sm90_xmma_gemm_bf16bf16_bf16f32", c, s + 15, s + 320, 300)
        w.cpu_op("aten::item", s + 29, 602)
        c = w.runtime("cudaStreamSynchronize", s + 30, 600)
        w.sync_record("Stream Sync", c, s + 30, 600)
        c = w.runtime("cudaLaunchKernel", s + 700, 5)
        w.kernel("void at::native::vectorized_elementwise_kernel<4>", c, s + 700, s + 710, 200)
        c = w.runtime("cudaLaunchKernel", s + 705, 1)
        w.kernel("void at::native::reduce_kernel<512, 1>", c, s + 705, s + 915, 50)
        c = w.runtime("cudaLaunchKernel", s + 706, 4)
        w.kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
                 c, s + 706, s + 720, 100, stream=NCCL_STREAM)
    w.close(base + 1000.0 * steps)


def launch_bound(w, steps=6, per_step=120):
    """A small-op storm: 5 µs kernels, each starting 6 µs into its 10 µs launch call, launched
    every 12 µs: the queue is always empty, so every gap is a host wait."""
    s = 0.0
    for k in range(steps):
        step_dur = per_step * 12.0 + 50.0
        w.step(k, s, step_dur)
        for i in range(per_step):
            t = s + 10.0 + 12.0 * i
            c = w.runtime("cudaLaunchKernel", t, 10)
            w.kernel("void at::native::vectorized_elementwise_kernel<4>", c, t, t + 6, 5, flow=False)
        s += step_dur
    w.close(s)


def comm(w, rank, steps=10):
    """Data-parallel step: 600 µs compute (rank 1: 750 µs), then an all-reduce that ends for
    everyone 250 µs after the last rank arrives; nothing overlaps."""
    s = 0.0
    for k in range(steps):
        w.step(k, s, 1100.0)
        compute = 600.0 if rank == 0 else 750.0
        c = w.runtime("cudaLaunchKernel", s + 5, 5)
        w.kernel("sm90_xmma_gemm_bf16bf16_bf16f32", c, s + 5, s + 10, compute)
        start = s + 10 + compute
        end = s + 10 + 750.0 + 250.0
        c = w.runtime("cudaLaunchKernel", s + 20, 5)
        w.kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
                 c, s + 20, start, end - start, stream=NCCL_STREAM)
        s += 1100.0
    w.close(s)


def dynamic(w, steps=16):
    """Steps whose length and kernel count change without a pattern (varying shapes)."""
    sizes = [3, 9, 4, 12, 5, 3, 10, 6, 4, 11, 3, 8, 5, 12, 4, 7]
    s = 0.0
    for k in range(steps):
        n = sizes[k % len(sizes)]
        dur = 100.0 * n + 20.0
        w.step(k, s, dur)
        for i in range(n):
            t = s + 5 + 100.0 * i
            c = w.runtime("cudaLaunchKernel", t, 5)
            w.kernel(f"gemm_{n}x{n}", c, t, t + 6, 90)
        s += dur
    w.close(s)


def write(path, fn, *args, gz=False, rank=0, world=1):
    if gz:
        # mtime=0 keeps the compressed fixture byte-identical from run to run.
        raw = gzip.GzipFile(path, "wb", mtime=0)
        f = io.TextIOWrapper(raw, encoding="utf-8")
    else:
        f = open(path, "w", encoding="utf-8")
    with f:
        w = Writer(f, rank=rank, world=world)
        fn(w, *args)


def fixtures(d):
    os.makedirs(d, exist_ok=True)
    write(os.path.join(d, "small.json"), small)
    write(os.path.join(d, "small.json.gz"), small, gz=True)
    write(os.path.join(d, "launch_bound.json"), launch_bound)
    for r in (0, 1):
        write(os.path.join(d, f"comm_rank{r}.json"), comm, r, rank=r, world=2)
    write(os.path.join(d, "dynamic.json"), dynamic)


def big(path, mb=500, cycles_per_step=5000, rank=0, world=1):
    """Steps of `cycles_per_step` repetitions of the small trace's 1000 µs cycle, until the
    file reaches `mb` MB (millions of events). Profiler traces hold a few long steps, not
    thousands of short ones; every cycle is the same, so idle % is hand-checkable."""
    target = mb * 1_000_000
    with open(path, "w", encoding="utf-8") as f:
        w = Writer(f, rank, world)
        step = 0
        s = 0.0
        while f.tell() < target:
            w.step(step, s, 1000.0 * cycles_per_step)
            for _ in range(cycles_per_step):
                w.cpu_op("aten::copy_", s + 0.5, 8.0)
                c = w.runtime("cudaMemcpyAsync", s + 1, 6)
                w.memcpy("Memcpy HtoD (Pageable -> Device)", c, s + 12, 8, 1 << 20)
                w.cpu_op("aten::mm", s + 9, 12)
                c = w.runtime("cudaLaunchKernel", s + 10, 5)
                w.kernel("sm90_xmma_gemm_bf16bf16_bf16f32", c, s + 10, s + 20, 300)
                c = w.runtime("cudaLaunchKernel", s + 15, 5)
                w.kernel("sm90_xmma_gemm_bf16bf16_bf16f32", c, s + 15, s + 320, 300)
                w.cpu_op("aten::item", s + 29, 602)
                w.runtime("cudaStreamSynchronize", s + 30, 600)
                c = w.runtime("cudaLaunchKernel", s + 700, 5)
                w.kernel("void at::native::vectorized_elementwise_kernel<4>", c, s + 700, s + 710, 200)
                c = w.runtime("cudaLaunchKernel", s + 705, 1)
                w.kernel("void at::native::reduce_kernel<512, 1>", c, s + 705, s + 915, 50)
                s += 1000.0
            step += 1
        w.close(s)
    print(f"{path}: {os.path.getsize(path) / 1e6:.0f} MB, {step} steps")


def ranks(d, n, mb):
    """`n` rank traces of `mb` MB each in directory `d` (rank{i}.json), as a job's ranks
    write them: the big trace's cycle, with each rank's distributedInfo."""
    os.makedirs(d, exist_ok=True)
    for r in range(n):
        big(os.path.join(d, f"rank{r}.json"), mb, cycles_per_step=500, rank=r, world=n)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "fixtures":
        fixtures(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "big":
        big(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 500)
    elif len(sys.argv) >= 5 and sys.argv[1] == "ranks":
        ranks(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        print(__doc__)
        sys.exit(2)

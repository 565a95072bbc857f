"""Baseline for `cargo xtask bench`: poll the same NVML metrics gpuwhy's sampler reads,
through pynvml (nvidia-ml-py), at the same interval, and report the CPU time spent.

pynvml loads libnvidia-ml.so.1 by name, so LD_LIBRARY_PATH points it at the simulator.
Reports the CPU time of the polling work (thread time around the per-tick loop over the
GPUs, like gpuwhy's per-GPU figure), of the whole process (wake-ups included) and the number
of NVML calls. The cadence is gpuwhy's: the slow metrics once a second per GPU, staggered.
Usage: python pynvml_poll.py INTERVAL_S DURATION_S  -> one JSON line on stdout.
"""
import json
import sys
import time

import pynvml as N


def main():
    interval, duration = float(sys.argv[1]), float(sys.argv[2])
    N.nvmlInit()
    handles = [N.nvmlDeviceGetHandleByIndex(i) for i in range(N.nvmlDeviceGetCount())]
    slow_every = max(1, round(1.0 / interval))
    reasons = getattr(N, "nvmlDeviceGetCurrentClocksEventReasons", None) or N.nvmlDeviceGetCurrentClocksThrottleReasons
    ticks = 0
    calls = 0
    work = 0.0
    cpu0 = time.process_time()
    nxt = time.monotonic()
    end = nxt + duration
    while time.monotonic() < end:
        w0 = time.thread_time()
        for i, h in enumerate(handles):
            N.nvmlDeviceGetUtilizationRates(h)
            N.nvmlDeviceGetMemoryInfo(h)
            N.nvmlDeviceGetPowerUsage(h)
            N.nvmlDeviceGetClockInfo(h, N.NVML_CLOCK_SM)
            reasons(h)
            calls += 5
            if ticks == 0 or (ticks + i) % slow_every == 0:
                N.nvmlDeviceGetPerformanceState(h)
                N.nvmlDeviceGetClockInfo(h, N.NVML_CLOCK_MEM)
                N.nvmlDeviceGetClockInfo(h, N.NVML_CLOCK_GRAPHICS)
                N.nvmlDeviceGetTemperature(h, N.NVML_TEMPERATURE_GPU)
                N.nvmlDeviceGetCurrPcieLinkGeneration(h)
                N.nvmlDeviceGetCurrPcieLinkWidth(h)
                N.nvmlDeviceGetPcieThroughput(h, N.NVML_PCIE_UTIL_RX_BYTES)
                N.nvmlDeviceGetPcieThroughput(h, N.NVML_PCIE_UTIL_TX_BYTES)
                calls += 9
                try:
                    N.nvmlDeviceGetFieldValues(h, [(138, 0xFFFFFFFF), (139, 0xFFFFFFFF)])
                except N.NVMLError:
                    pass
        work += time.thread_time() - w0
        ticks += 1
        nxt += interval
        delay = nxt - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    cpu = time.process_time() - cpu0
    N.nvmlShutdown()
    print(json.dumps({"ticks": ticks, "gpus": len(handles), "cpu_s": cpu, "work_s": work, "calls": calls}))


if __name__ == "__main__":
    main()

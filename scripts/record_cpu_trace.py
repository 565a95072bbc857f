#!/usr/bin/env python3
"""Record a real PyTorch profiler (Kineto) trace on the CPU, for gpuwhy's tests.

Unlike scripts/gen_trace.py, nothing here imitates the format: torch.profiler records a few
training steps of a small MLP on the CPU (no GPU, so the trace has cpu_op, user_annotation
and python_function events but no kernel, memcpy or cuda_runtime ones) and
export_chrome_trace writes the file, gzip-compressed when the name ends in .gz.

The committed fixture core/tests/fixtures/trace/torch_cpu.json.gz was made with
torch 2.15.0+cu132 from PyPI (the wheel a plain `pip install torch` installs on Linux
x86_64, with its CUDA libraries, run on a machine without a GPU; PyTorch's own CPU-only
wheel index could not be reached from the development machine) and Python 3.11:

  python3 -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch
  /tmp/torchvenv/bin/python scripts/record_cpu_trace.py core/tests/fixtures/trace/torch_cpu.json.gz

Schedule: wait 1, warmup 1, active 4 steps, once: the trace holds ProfilerStep#2 to
ProfilerStep#5 (torch numbers steps from 0 and keeps counting through wait and warmup).
"""

import gzip
import os
import shutil
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

ACTIVE = 4


def main(out: str) -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(32, 64)
    y = torch.randint(0, 10, (32,))
    loss_fn = torch.nn.CrossEntropyLoss()

    tmp = tempfile.mkdtemp()
    raw = os.path.join(tmp, "trace.json")
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=1, warmup=1, active=ACTIVE, repeat=1),
        on_trace_ready=lambda p: p.export_chrome_trace(raw),
    ) as prof:
        for _ in range(1 + 1 + ACTIVE + 1):
            with record_function("forward"):
                loss = loss_fn(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            prof.step()
    if out.endswith(".gz"):
        with open(raw, "rb") as src, gzip.GzipFile(out, "wb", mtime=0) as dst:
            shutil.copyfileobj(src, dst)
    else:
        shutil.copy(raw, out)
    shutil.rmtree(tmp)
    print(f"torch {torch.__version__}: wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1])

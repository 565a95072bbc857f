"""A training-loop stand-in on the simulated GPU: a slow data loader wrapped by
Session.data(), forward/backward/optimizer marked by hand with the scenario's phase times.

argv: report path, simulation speed (the scenario's, so that a step here lasts as long as
a simulated step), steps. Prints the top finding. Run by ffi/tests/python.rs.
"""
import sys
import time

import gpuwhy

out, speed, steps = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
# data_starvation.json's step: data 450 ms, forward 180, backward 300, optimizer 70
# (simulated); at `speed` they take 1/speed of that in real time.
DATA, FWD, BWD, OPT = (ms / 1000.0 / speed for ms in (450, 180, 300, 70))


class SlowLoader:
    """Like a DataLoader whose workers cannot keep up: each batch takes DATA seconds."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __iter__(self):
        for i in range(self.n):
            time.sleep(DATA)
            yield {"batch": i}


def work(seconds, until=time.perf_counter):
    # Sleep most of it and spin the rest, so a loaded machine's oversleeping stays small.
    end = until() + seconds
    if seconds > 0.003:
        time.sleep(seconds - 0.002)
    while until() < end:
        pass


seen = []
with gpuwhy.Session(output=out, label="python train_loop", interval=0.02) as gw:
    for batch in gw.data(SlowLoader(steps)):
        seen.append(batch["batch"])
        gw.phase("forward")
        work(FWD)
        gw.phase("backward")
        work(BWD)
        gw.phase("optimizer")
        work(OPT)
    gw.event("eval")
    # Not asked right after start: the sampler thread finds the devices on its first tick.
    gpus = gw.gpu_count()

assert seen == list(range(steps)), seen
assert gpus == 1, gpus
top = gw.top_finding()
print("top finding: %s (%s, confidence %.2f)" % top)

"""A job inside a container: NVML lists its process by its host pid, and Session(host_proc=)
names the host's /proc, whose NSpid lines map that pid to this process. argv: a scratch
directory and the host pid the simulated GPU lists. Run by ffi/tests/python.rs with the
simulated container_pid_namespace scenario; prints each session's job_gpus as JSON."""
import json
import os
import sys

import gpuwhy

tmp, host_pid = sys.argv[1], int(sys.argv[2])
# The host's /proc as a container sees it mounted: this process under its host pid.
host_proc = os.path.join(tmp, "host-proc")
os.makedirs(os.path.join(host_proc, str(host_pid)), exist_ok=True)
with open(os.path.join(host_proc, str(host_pid), "status"), "w") as f:
    f.write("Name:\tpython3\nNSpid:\t%d\t%d\n" % (host_pid, os.getpid()))

found = {}
for name, kwargs in (("mapped", {"host_proc": host_proc}), ("unmapped", {})):
    with gpuwhy.Session(interval=0.05, **kwargs) as gw:
        for _ in range(3):
            with gw.step():
                gw.phase("forward")
    found[name] = gw.report()["run"]["job_gpus"]
print(json.dumps(found))

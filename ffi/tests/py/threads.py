"""A helper thread that marks steps of its own beside the training loop, which names itself
with Session.set_main_thread(): the report's steps are the loop's. Run by
ffi/tests/python.rs without a GPU; argv: the report to write."""
import json
import sys
import threading
import time

import gpuwhy

out = sys.argv[1]
with gpuwhy.Session(output=out, label="threads") as gw:
    gw.set_main_thread()

    def helper():
        for _ in range(50):
            gw.step_begin()
            gw.step_end()

    t = threading.Thread(target=helper, name="helper")
    t.start()
    for _ in range(5):
        with gw.step():
            gw.phase("forward")
            time.sleep(0.002)
    t.join()

with open(out) as f:
    steps = json.load(f)["steps"]
assert steps["count"] == 5, steps["count"]
main = [th for th in steps["threads"] if th["main"]]
assert len(main) == 1 and main[0]["chosen_by"] == "named", steps["threads"]
assert sorted(th["count"] for th in steps["threads"]) == [5, 50], steps["threads"]
print("ok")

"""irqsteerctl plan and irqsteerd --dry-run drive the same tick engine: on
one simulator tree (bench/irqsteer-sim, a steady load with a hot queue),
`plan --ticks N --json` and the daemon's first N ticks in dry-run decide
the same actions at the same ticks, tick 0 being the decision at start.
The configuration asks for hot_samples = 3 and smoothing, so that the
reaction to the hot CPU comes only after several ticks; the test fails
when plan and daemon differ, or when neither reacts after tick 0.
Stdlib only; exit 77 when the simulator is not built."""
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemonlib as dl  # noqa: E402

BLD = dl.env_path("IRQSTEER_BUILDDIR")
SIM = os.path.join(BLD, "bench/irqsteer-sim")
TICKS = 6
INTERVAL = "300ms"
REAL_TICK = 0.1

# One elephant flow keeps a queue's CPU hot; no noise, so that two runs one
# after the other see the same shares (dry runs change nothing the
# simulator reads, so its placement stays the initial one).
SCENARIO = """
[run]
ticks = 100000000
warmup = 0
[host]
cpus = 8
sockets = 1
smt = 2
user = 0.10
[nic eth0]
family = i40e
queues = 4
load = 2.0
elephant = 1 0.9
noise = 0
"""

CONFIG = """
[balance]
hot_samples = 3
smoothing = 0.5
"""

# "dry-run: would set IRQ 45 (...) CPU2 -> CPU0: reason" and the end of
# each tick, "tick 3 (full) took 1.2 ms", in the daemon's debug log
WOULD_RE = re.compile(r"dry-run: would set (.*)$")
TICK_RE = re.compile(r"\btick (\d+) \((?:full|calm)\) took ")


def what(text):
    """An action's object and target, without its reason (whose load
    figures vary with the interval actually slept)."""
    return text.split(": ", 1)[0]


def main():
    c = dl.Checker()
    if not os.access(SIM, os.X_OK):
        print(f"SKIP: {SIM} is not built (make bench/irqsteer-sim)")
        sys.exit(dl.SKIP)
    tmp = dl.tmpdir("irqsteer-plan-agrees")
    root = os.path.join(tmp, "tree")
    scn, conf = os.path.join(tmp, "s.scn"), os.path.join(tmp, "irqsteer.conf")
    with open(scn, "w") as f:
        f.write(SCENARIO)
    with open(conf, "w") as f:
        f.write(CONFIG)
    ready, go = os.path.join(tmp, "ready"), os.path.join(tmp, "go")
    sim = subprocess.Popen([SIM, "--scenario", scn, "--root", root, "--real-tick", str(REAL_TICK), "--ready", ready,
                            "--go", go], stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "sim.log"), "w"))
    daemon = None
    try:
        if not dl.wait_until(lambda: os.path.exists(ready), 30):
            sys.exit(f"simulator did not start: see {tmp}/sim.log")
        open(go, "w").close()
        time.sleep(5 * REAL_TICK)

        r = subprocess.run([os.path.join(BLD, "irqsteerctl"), "plan", "--root", root, "--config", conf,
                            "--interval", INTERVAL, "--ticks", str(TICKS), "--json"],
                           capture_output=True, text=True, timeout=120)
        c.check(r.returncode == 0, "plan: exit 0", r.stderr)
        try:
            plan = json.loads(r.stdout)
        except ValueError:
            plan = {}
        c.check(plan.get("ticks") == TICKS, f"plan: {TICKS} ticks run", repr(plan.get("ticks")))
        planned = {}
        for a in plan.get("actions", []):
            planned.setdefault(a["tick"], []).append(what(a["text"]))

        log = os.path.join(tmp, "daemon.log")
        daemon = dl.start_daemon(["--root", root, "--state-dir", os.path.join(tmp, "state"), "--config", conf,
                                  "--interval", INTERVAL, "--dry-run", "--foreground", "--log-level", "debug"], log)
        pat = re.compile(rf"\btick {TICKS} \((?:full|calm)\) took ")
        c.check(dl.wait_until(lambda: pat.search(dl.read_log(log)), 60), f"daemon: {TICKS} ticks run",
                dl.read_log(log)[-1500:])
        dl.stop(daemon)
        daemon = None

        # the daemon's actions by tick: those before "Ready" are tick 0's,
        # those after the end of tick k are tick k + 1's
        ran, tick = {}, None
        for line in dl.read_log(log).splitlines():
            if "Ready:" in line:
                tick = 1
                continue
            m = TICK_RE.search(line)
            if m:
                tick = int(m.group(1)) + 1
                continue
            m = WOULD_RE.search(line)
            if m and (tick or 0) <= TICKS:
                ran.setdefault(tick or 0, []).append(what(m.group(1)))

        c.check(any(t > 0 for t in planned), "plan: actions after tick 0 (the reaction to the hot CPU)",
                repr(planned))
        c.check(planned == ran, "plan and the daemon's dry run: the same actions at the same ticks",
                f"\nplan   {planned}\ndaemon {ran}")
    finally:
        if daemon:
            dl.stop(daemon)
        sim.terminate()
        sim.wait()
    if not c.failed:
        shutil.rmtree(tmp, ignore_errors=True)
    c.exit()


if __name__ == "__main__":
    main()

"""No vector-space trap: irqsteerd on a simulator tree (bench/irqsteer-sim)
with more queue IRQs than its NICs' node can take, under a simulated x86
vector space (tests/faultshim.so, IRQSTEER_VECTORS): every CPU takes 200
IRQs and refuses the 201st with ENOSPC, CPU1 only 190 (vectors the daemon
cannot see, as managed IRQs hold them).  Two NICs of 220 queues on node
0's two CPUs: a layout that wraps puts 220 on each (their load, 0.03 of a
CPU a NIC, stays below balance_floor and below the least gain of a spill
to node 1, so no move off a hot CPU and no spill blurs the count).  The daemon must
fill CPU0 no further than 200, meet CPU1's refusal once, log it once with
CPU1's count, and place that IRQ elsewhere; no CPU of the tree ends past
its limit.  Stdlib only; exit 77 when the simulator or the shim is not
built."""
import glob
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
SHIM = os.path.join(BLD, "tests/faultshim.so")
NQ = 220
LIMIT = 200
CPU1_LIMIT = 190
NCPU = 4
REAL_TICK = 0.1

SCENARIO = f"""
[run]
ticks = 100000000
warmup = 0
[host]
cpus = {NCPU}
sockets = 2
smt = 1
user = 0.10
[nic eth0]
family = txrx
queues = {NQ}
node = 0
load = 0.03
noise = 0
[nic eth1]
family = txrx
queues = {NQ}
node = 0
load = 0.03
noise = 0
"""

REFUSED_RE = re.compile(r"vectorshim: IRQ (\d+) refused on CPU(\d+) \((\d+) of (\d+)\)")
LOGGED_RE = re.compile(r"IRQ (\d+)\b.*no free vector on CPU(\d+), where (\d+) IRQs are delivered")


def irq_dirs(root):
    return sorted((int(os.path.basename(p)) for p in glob.glob(os.path.join(root, "proc/irq/[0-9]*"))))


def effective(root, irq):
    try:
        with open(os.path.join(root, f"proc/irq/{irq}/effective_affinity_list")) as f:
            return int(f.read().split(",")[0].split("-")[0])
    except (OSError, ValueError):
        return -1


def put(root, irq, name, value):
    with open(os.path.join(root, f"proc/irq/{irq}/{name}"), "w") as f:
        f.write(f"{value}\n")


def per_cpu(root):
    used = [0] * NCPU
    for irq in irq_dirs(root):
        c = effective(root, irq)
        if 0 <= c < NCPU:
            used[c] += 1
    return used


def main():
    c = dl.Checker()
    for path, what in ((SIM, "bench/irqsteer-sim"), (SHIM, "tests/faultshim.so")):
        if not os.access(path, os.R_OK):
            print(f"SKIP: {path} is not built (make {what})")
            sys.exit(dl.SKIP)
    tmp = dl.tmpdir("irqsteer-vectors.")
    root = os.path.join(tmp, "tree")
    scn = os.path.join(tmp, "s.scn")
    with open(scn, "w") as f:
        f.write(SCENARIO)
    ready, go = os.path.join(tmp, "ready"), os.path.join(tmp, "go")
    sim = subprocess.Popen([SIM, "--scenario", scn, "--root", root, "--real-tick", str(REAL_TICK), "--ready", ready,
                            "--go", go], stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "sim.log"), "w"))
    daemon = None
    try:
        if not dl.wait_until(lambda: os.path.exists(ready), 30):
            sys.exit(f"simulator did not start: see {tmp}/sim.log")
        # the kernel spread them at boot, one CPU each, in turn
        irqs = irq_dirs(root)
        for i, irq in enumerate(irqs):
            put(root, irq, "smp_affinity_list", i % NCPU)
            put(root, irq, "effective_affinity_list", i % NCPU)
        open(go, "w").close()
        time.sleep(10 * REAL_TICK)
        start = per_cpu(root)
        c.check(sum(start) == len(irqs) and max(start) <= LIMIT, f"{len(irqs)} IRQs spread at boot: {start}")

        log = os.path.join(tmp, "daemon.log")
        env = {"LD_PRELOAD": SHIM, "IRQSTEER_VECTORS": f"{LIMIT};1={CPU1_LIMIT}",
               "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"}
        daemon = dl.start_daemon(["--root", root, "--state-dir", os.path.join(tmp, "state"), "--interval", "300ms",
                                  "--foreground"], log, extra_env=env)
        c.check(dl.wait_until(lambda: LOGGED_RE.search(dl.read_log(log)), 60),
                "the daemon meets CPU1's refusal and says so", dl.read_log(log)[-1500:])
        # a few ticks more: the refused IRQ placed again, the load seen
        ticks = lambda: (dl.load_json(os.path.join(tmp, "state", "status.json")) or {}).get("ticks", 0)
        t0 = ticks()
        c.check(dl.wait_until(lambda: ticks() >= t0 + 10, 60), "ten ticks more", repr(ticks()))
        alive = daemon.poll() is None
        c.check(alive, "the daemon keeps running", dl.read_log(log)[-1500:])
        # where it all is before the stop gives the originals back
        end = per_cpu(root)
        text = dl.read_log(log)
        refused = REFUSED_RE.findall(text)
        where = effective(root, refused[0][0]) if refused else -1
        rc = dl.stop(daemon)
        daemon = None
        c.check(rc == 0, f"SIGTERM exits 0 (status {rc})")

        logged = LOGGED_RE.findall(text)
        c.check(len(refused) == 1, "the kernel refused one write",
                "\n".join(m.group(0) for m in REFUSED_RE.finditer(text))[:2000])
        c.check(len(logged) == 1, "one log line for it",
                "\n".join(m.group(0) for m in LOGGED_RE.finditer(text))[:2000])
        if refused and logged:
            irq, cpu, used, limit = refused[0]
            c.check(logged[0] == (irq, cpu, used), f"the line names IRQ {irq}, CPU{cpu} and its count {used}",
                    repr(logged[0]))
            c.check(cpu == "1" and used == str(CPU1_LIMIT), f"refused on CPU1 at {CPU1_LIMIT}", repr(refused[0]))
            c.check(where not in (-1, 1), f"IRQ {irq} ends elsewhere: CPU{where}")
        limits = [CPU1_LIMIT if cpu == 1 else LIMIT for cpu in range(NCPU)]
        c.check(all(u <= lim for u, lim in zip(end, limits)), f"no CPU past its limit: {end}", repr(limits))
        c.check(end[0] == LIMIT and end[1] == CPU1_LIMIT,
                f"node 0's CPUs filled to their limits, not past: CPU0 {end[0]}, CPU1 {end[1]}")
        after = per_cpu(root)
        c.check(after == start, f"stop gives every IRQ back where the kernel had it: {after}", repr(start))
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

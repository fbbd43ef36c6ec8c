#!/usr/bin/env python3
"""Live (root): irqsteerd in a network namespace of its own notices a veth
appearing, going up and down, being renamed, changing its queue count
(ethtool -L, which sends no RTM_NEWLINK) and vanishing, each within one tick,
in its log and in status.json.  Names start with "isdn"; the namespace is
deleted on every exit path.  Run by tests/live-netlink.sh."""
import atexit
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemonlib as dl  # noqa: E402

if os.geteuid() != 0:
    print("SKIP: needs root (network namespaces)")
    sys.exit(dl.SKIP)
if not shutil.which("ip"):
    print("SKIP: iproute2 (ip) not installed")
    sys.exit(dl.SKIP)

INTERVAL = 1.0
# "Within one tick": a netlink event is logged as it arrives and the NIC is
# rediscovered and re-applied (and status.json rewritten) at the next tick,
# at most one interval later; ethtool -L sends no RTM_NEWLINK and shows at
# the next tick's inventory refresh.  The slack covers process scheduling
# and the poll step of the wait below (50 ms).
SLACK = 0.3
WITHIN = INTERVAL + SLACK
delays = []

ns = f"isdn{os.getpid()}"
tmp = dl.tmpdir("irqsteer-netlink.")
state = os.path.join(tmp, "state")
log = os.path.join(tmp, "daemon.log")
conf = os.path.join(tmp, "irqsteer.conf")
proc = None
c = dl.Checker()


def sh(*args, check=True):
    r = subprocess.run(list(args), capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {r.stderr.strip()}")
    return r


def cleanup():
    if proc is not None:
        dl.stop(proc, signal.SIGKILL, timeout=5)
    sh("ip", "netns", "del", ns, check=False)
    if c.failed and os.environ.get("IRQSTEER_KEEP_TMP"):
        print(f"kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)


atexit.register(cleanup)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))

sh("ip", "netns", "add", ns)
sh("ip", "-n", ns, "link", "set", "lo", "up")
with open(conf, "w") as f:
    f.write("[daemon]\nlog_level = info\n")

proc = dl.start_daemon(["--foreground", "--interval", "1s", "--state-dir", state, "--config", conf], log,
                       wrapper=("ip", "netns", "exec", ns))
ok = dl.wait_until(lambda: "Ready:" in dl.read_log(log), 15)
if not c.check(ok, "daemon ready in the namespace", dl.read_log(log)[-2000:]):
    c.exit()
c.check("Failed to open rtnetlink" not in dl.read_log(log), "link monitor opened")


def status_nics():
    s = dl.load_json(os.path.join(state, "status.json")) or {}
    return {n.get("name"): n for n in s.get("nics", [])}, [e.get("event", "") for e in s.get("link_events", [])]


def step(what, cmd, log_text, nic=None, present=True, rx=None):
    """Runs cmd, then expects log_text in the log and the NIC state in
    status.json within one tick."""
    start = len(dl.read_log(log))
    t0 = time.monotonic()
    sh(*cmd)
    seen = dl.wait_until(lambda: log_text in dl.read_log(log)[start:], WITHIN)
    dt = time.monotonic() - t0
    c.check(seen, f"{what}: logged '{log_text}' within one tick ({INTERVAL:.1f} s + {SLACK:.1f} s)",
            f"after {dt:.2f}s: {dl.read_log(log)[start:][-800:]}")
    if nic is None:
        print(f"info {what}: logged after {dt:.3f} s")
        return

    def status_ok():
        nics, events = status_nics()
        if (nic in nics) != present:
            return False
        if rx is not None and nics[nic].get("rx_queues") != rx:
            return False
        return any(log_text in e for e in events)

    ok = dl.wait_until(status_ok, max(WITHIN - (time.monotonic() - t0), 0.0))
    ds = time.monotonic() - t0
    print(f"info {what}: logged after {dt:.3f} s, in status.json after {ds:.3f} s")
    delays.append(ds)
    c.check(ok, f"{what}: status.json shows it within one tick ({INTERVAL:.1f} s + {SLACK:.1f} s)",
            f"after {ds:.2f}s: {status_nics()!r}")


step("veth appears", ["ip", "-n", ns, "link", "add", "isdnA", "numrxqueues", "4", "numtxqueues", "4", "type", "veth",
                      "peer", "name", "isdnB", "numrxqueues", "4", "numtxqueues", "4"],
     "isdnA: appeared", nic="isdnA", rx=4)
# A veth has no device/driver link in sysfs: the driver shown is its link
# kind from rtnetlink, in status.json and in irqsteerctl inventory.
c.check(status_nics()[0].get("isdnA", {}).get("driver") == "veth", "veth: driver veth in status.json",
        repr(status_nics()[0].get("isdnA")))
inv = subprocess.run(["ip", "netns", "exec", ns, dl.env_path("IRQSTEERCTL"), "inventory"], capture_output=True,
                     text=True, timeout=30)
c.check(re.search(r"isdnA\b.*driver veth", inv.stdout) is not None, "veth: irqsteerctl inventory says driver veth",
        inv.stdout[-800:] + inv.stderr[-400:])
step("link up", ["ip", "-n", ns, "link", "set", "isdnA", "up"], "isdnA: link up, re-applying", nic="isdnA")
step("link down", ["ip", "-n", ns, "link", "set", "isdnA", "down"], "isdnA: link down", nic="isdnA")
step("rename", ["ip", "-n", ns, "link", "set", "isdnA", "name", "isdnC"], "isdnC: renamed from isdnA", nic="isdnC")
c.check("isdnA" not in status_nics()[0], "rename: old name gone from status.json")
if shutil.which("ethtool"):
    step("queue count (ethtool -L)", ["ip", "netns", "exec", ns, "ethtool", "-L", "isdnC", "rx", "2", "tx", "2"],
         "isdnC: queues changed (rx 4 -> 2, tx 4 -> 2), re-applying", nic="isdnC", rx=2)
else:
    print("skip queue count step: ethtool not installed")
step("veth vanishes", ["ip", "-n", ns, "link", "del", "isdnC"], "isdnC: vanished", nic="isdnC", present=False)
c.check("isdnB" not in status_nics()[0], "peer vanished with it")

if delays:
    print(f"info status.json delays: max {max(delays):.3f} s, mean {sum(delays) / len(delays):.3f} s "
          f"(interval {INTERVAL:.1f} s)")
rc = dl.stop(proc, signal.SIGTERM, timeout=15)
proc = None
c.check(rc == 0, "SIGTERM: exit 0", f"rc {rc}")
c.exit()

#!/usr/bin/env python3
"""Live (root): the capabilities irqsteerd keeps after startup, read from
/proc/PID/status of the running daemon, for several configurations.  The
daemon runs in a network namespace of its own (names "isdc..."), so the
only objects it could touch are that namespace's (none: it has only lo).
Run by tests/live-caps.sh."""
import atexit
import os
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemonlib as dl  # noqa: E402

if os.geteuid() != 0:
    print("SKIP: needs root (capabilities, network namespaces)")
    sys.exit(dl.SKIP)

CAP_NET_ADMIN = 1 << 12
CAP_SYS_NICE = 1 << 23

ns = f"isdc{os.getpid()}"
tmp = dl.tmpdir("irqsteer-caps.")
c = dl.Checker()
procs = []


def cleanup():
    for p in procs:
        dl.stop(p, signal.SIGKILL, timeout=5)
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    shutil.rmtree(tmp, ignore_errors=True)


atexit.register(cleanup)
subprocess.run(["ip", "netns", "add", ns], check=True)

WORKER = "[worker web]\nmatch_name = nosuchworker\npolicy = spread\n"
NO_NET = "[balance]\nrps = no\nrfs = no\nxps = no\nsingle_queue_rps = no\n"
cases = [
    {"what": "default configuration: CAP_NET_ADMIN (RPS/RFS/XPS)", "conf": "", "args": [], "mask": CAP_NET_ADMIN},
    {"what": "rps/rfs/xps off, no workers: nothing", "conf": NO_NET, "args": [], "mask": 0},
    {"what": "rps/rfs/xps off, a worker: CAP_SYS_NICE", "conf": NO_NET + WORKER, "args": [], "mask": CAP_SYS_NICE},
    {"what": "defaults and a worker: CAP_NET_ADMIN + CAP_SYS_NICE", "conf": WORKER, "args": [],
     "mask": CAP_NET_ADMIN | CAP_SYS_NICE},
    {"what": "an [interface] turning RPS back on: CAP_NET_ADMIN",
     "conf": NO_NET + "[interface eth*]\nrps = yes\n", "args": [], "mask": CAP_NET_ADMIN},
    {"what": "dry run: nothing", "conf": WORKER, "args": ["--dry-run"], "mask": 0},
]


def status_fields(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return out


for i, case in enumerate(cases):
    d = os.path.join(tmp, str(i))
    os.makedirs(d)
    conf = os.path.join(d, "irqsteer.conf")
    with open(conf, "w") as f:
        f.write(case["conf"])
    log = os.path.join(d, "daemon.log")
    p = dl.start_daemon(["--foreground", "--config", conf, "--state-dir", os.path.join(d, "state"),
                         "--interval", "1s"] + case["args"], log, wrapper=("ip", "netns", "exec", ns))
    procs.append(p)
    ready = dl.wait_until(lambda: "Ready:" in dl.read_log(log) or p.poll() is not None, 15)
    if not c.check(ready and p.poll() is None, f"{case['what']}: daemon ready", dl.read_log(log)[-1500:]):
        continue
    st = status_fields(p.pid)
    want = case["mask"]
    eff = int(st.get("CapEff", "-1"), 16)
    c.check(eff == want, f"{case['what']}: CapEff {want:016x}", f"got {eff:016x}")
    c.check(int(st.get("CapPrm", "-1"), 16) == want, f"{case['what']}: CapPrm = CapEff", st.get("CapPrm"))
    c.check(int(st.get("CapInh", "-1"), 16) == 0, f"{case['what']}: CapInh empty", st.get("CapInh"))
    c.check(int(st.get("CapAmb", "-1"), 16) == 0, f"{case['what']}: CapAmb empty", st.get("CapAmb"))
    c.check(int(st.get("CapBnd", "-1"), 16) == want, f"{case['what']}: CapBnd reduced too", st.get("CapBnd"))
    c.check(st.get("NoNewPrivs") == "1", f"{case['what']}: NoNewPrivs", st.get("NoNewPrivs"))
    c.check(st.get("Uid", "").split()[:1] == ["0"], f"{case['what']}: still uid 0")
    rc = dl.stop(p, signal.SIGTERM, timeout=15)
    c.check(rc == 0, f"{case['what']}: SIGTERM exit 0", f"rc {rc}: {dl.read_log(log)[-800:]}")


def run_reload_needs_cap():
    """A reload adding a [worker] section needs CAP_SYS_NICE, dropped at
    startup: refused as a whole with "restart" in the log, STATUS and
    status.json, the previous configuration kept; a reload needing
    nothing new still works."""
    d = os.path.join(tmp, "reload")
    os.makedirs(d)
    conf = os.path.join(d, "irqsteer.conf")
    state = os.path.join(d, "state")
    with open(conf, "w") as f:
        f.write(NO_NET)
    log = os.path.join(d, "daemon.log")
    p = dl.start_daemon(["--foreground", "--config", conf, "--state-dir", state, "--interval", "1s"], log,
                        wrapper=("ip", "netns", "exec", ns))
    procs.append(p)
    ready = dl.wait_until(lambda: "Ready:" in dl.read_log(log) or p.poll() is not None, 15)
    if not c.check(ready and p.poll() is None, "reload needing a dropped capability: daemon ready",
                   dl.read_log(log)[-1500:]):
        return
    with open(conf, "w") as f:
        f.write(NO_NET + WORKER)
    p.send_signal(signal.SIGHUP)
    ok = dl.wait_until(lambda: "Configuration reload refused" in dl.read_log(log), 15)
    text = dl.read_log(log)
    c.check(bool(ok) and "needs cap_sys_nice" in text and "restart irqsteerd" in text,
            "reload needing a dropped capability: refused, says restart", text[-1500:])
    st = dl.wait_until(lambda: (dl.load_json(os.path.join(state, "status.json")) or {}).get("reload_error"), 15)
    status = dl.load_json(os.path.join(state, "status.json")) or {}
    c.check(bool(st) and "restart" in status.get("reload_error", "") and "restart" in status.get("status", ""),
            "reload needing a dropped capability: status.json reload_error and status", repr(status.get("status")))
    c.check(not (status.get("config") or {}).get("workers"), "reload needing a dropped capability: old config in force",
            repr((status.get("config") or {}).get("workers")))
    r = subprocess.run([dl.env_path("IRQSTEERCTL"), "status", "--state-dir", state], capture_output=True, text=True)
    c.check("restart irqsteerd" in r.stdout, "reload needing a dropped capability: irqsteerctl status says restart",
            r.stdout[-1500:])
    c.check(int(status_fields(p.pid).get("CapEff", "-1"), 16) == 0, "reload needing a dropped capability: caps unchanged")
    # What `systemctl reload` runs first (ExecReload=irqsteerd --check-config):
    # it fails and says why, so the reload does not look like a success.
    r = subprocess.run([dl.env_path("IRQSTEERD"), "--check-config", "--config", conf, "--state-dir", state],
                       capture_output=True, text=True)
    c.check(r.returncode == 1 and "needs cap_sys_nice, dropped at startup" in r.stderr
            and "restart irqsteerd" in r.stderr and f"pid {p.pid}" in r.stderr,
            "reload needing a dropped capability: --check-config fails, naming the running daemon and the capability",
            f"rc {r.returncode}: {r.stdout} {r.stderr}")
    # a reload that needs nothing new applies, and clears the error
    with open(conf, "w") as f:
        f.write(NO_NET + "[daemon]\ninterval = 2s\n")
    p.send_signal(signal.SIGHUP)
    ok = dl.wait_until(lambda: dl.read_log(log).count("Configuration reloaded") >= 1, 15)
    status = dl.wait_until(lambda: (lambda s: s if s and s.get("reload_error") is None else None)(
        dl.load_json(os.path.join(state, "status.json"))), 15) or {}
    c.check(bool(ok) and status.get("reload_error") is None, "reload needing nothing new: applied",
            dl.read_log(log)[-800:])
    r = subprocess.run([dl.env_path("IRQSTEERD"), "--check-config", "--config", conf, "--state-dir", state],
                       capture_output=True, text=True)
    c.check(r.returncode == 0 and "configuration OK" in r.stdout, "reload needing nothing new: --check-config OK",
            f"rc {r.returncode}: {r.stdout} {r.stderr}")
    rc = dl.stop(p, signal.SIGTERM, timeout=15)
    c.check(rc == 0, "reload needing a dropped capability: SIGTERM exit 0", f"rc {rc}")


run_reload_needs_cap()
c.exit()

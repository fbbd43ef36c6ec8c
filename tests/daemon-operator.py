#!/usr/bin/env python3
"""The operator's contract on a fixture root.  What a reload must do: `manage = no` for a NIC puts
its queue IRQs back where they were before irqsteerd (the undo journal's
originals), not only its RPS and XPS masks, and leaves the other NICs as
irqsteerd laid them out.  `irqsteerd --reload PID` (the unit's
ExecReload=) takes the running daemon's own --state-dir and --config from
its command line and fails when the daemon does not apply the file: a
[worker] section needing a capability dropped at startup, a metrics_file
that cannot be written (then also a problem in the status line, the
metrics and the log, with its reason code), a file with an error.  An invalid ban file shows as a problem in the
status line and the metrics while it is there, and so does a write the
kernel refuses.  `irqsteerctl plan` beside
the running daemon takes the daemon's RPS masks for the daemon's (its
undo journal), not for an operator's "set before irqsteerd started".
Needs no root: everything happens below a temporary copy of
tests/fixtures/vm2.  Run by tests/test-daemon-operator.sh (about 5 s)."""
import os
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemonlib as dl  # noqa: E402

# Generous: the suite also runs under ASan.
T = 15.0

c = dl.Checker()
tmp = dl.tmpdir("irqsteer-operator.")

# vm2: eth0 is virtio2 (queue IRQs 38-41), eth1 the e1000 on IRQ 11.
ETH0_IRQS = ("38", "39", "40", "41")
ETH1_IRQS = ("11",)


def affinity(root, irq):
    with open(os.path.join(root, "proc/irq", irq, "smp_affinity_list")) as f:
        return f.read().strip()


def run_manage_no():
    d = os.path.join(tmp, "manage")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    log = os.path.join(d, "daemon.log")
    conf = os.path.join(d, "irqsteer.conf")
    with open(conf, "w") as f:
        f.write("[daemon]\n")
    pristine = {irq: affinity(root, irq) for irq in ETH0_IRQS + ETH1_IRQS}
    p = dl.start_daemon(["--root", root, "--config", conf, "--state-dir", state, "--interval", "200ms", "-f"], log)
    try:
        moved = lambda irqs: all(affinity(root, i) != pristine[i] for i in irqs)  # noqa: E731
        ok = dl.wait_until(lambda: moved(ETH0_IRQS) and moved(ETH1_IRQS), T)
        c.check(ok, "manage: the initial layout moves eth0's and eth1's queue IRQs",
                f"{ {i: affinity(root, i) for i in pristine} } vs {pristine}")
        laid = {i: affinity(root, i) for i in ETH1_IRQS}
        with open(conf, "w") as f:
            f.write("[daemon]\n[interface eth0]\nmanage = no\n")
        p.send_signal(signal.SIGHUP)
        ok = dl.wait_until(lambda: all(affinity(root, i) == pristine[i] for i in ETH0_IRQS), T)
        c.check(ok, "manage = no by reload: eth0's queue IRQs back to their original affinity",
                f"{ {i: affinity(root, i) for i in ETH0_IRQS} } vs {pristine}\n" + dl.read_log(log)[-1500:])
        c.check("manage = no for eth0: IRQ back to the original" in dl.read_log(log),
                "manage = no by reload: the log says why each IRQ went back", dl.read_log(log)[-1500:])
        c.check({i: affinity(root, i) for i in ETH1_IRQS} == laid,
                "manage = no by reload: eth1 (still managed) stays where irqsteerd put it")
        c.check(dl.stop(p, timeout=T) == 0, "manage: SIGTERM exit 0", dl.read_log(log)[-1500:])
        c.check({i: affinity(root, i) for i in pristine} == pristine, "manage: everything original after the stop")
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)


def reload_cmd(pid):
    return subprocess.run([dl.env_path("IRQSTEERD"), "--reload", str(pid)], capture_output=True, text=True,
                          timeout=60)


def status(state):
    return dl.load_json(os.path.join(state, "status.json")) or {}


def metric(state, line):
    try:
        with open(os.path.join(state, "metrics.prom")) as f:
            return line + "\n" in f.read()
    except OSError:
        return False


def run_reload_verdict():
    d = os.path.join(tmp, "verdict")
    root = dl.make_root(d)
    # a --state-dir and --config only on the daemon's command line, as a
    # drop-in on ExecStart= gives them
    state = os.path.join(d, "elsewhere")
    log = os.path.join(d, "daemon.log")
    conf = os.path.join(d, "irqsteer.conf")
    good = "[daemon]\n"
    with open(conf, "w") as f:
        f.write(good)
    p = dl.start_daemon(["--root", root, "--config", conf, "--state-dir", state, "--interval", "200ms", "-f"], log)
    try:
        ok = dl.wait_until(lambda: status(state).get("ticks", 0) >= 1, T)
        c.check(ok, "verdict: the daemon runs", dl.read_log(log)[-1500:])
        r = reload_cmd(p.pid)
        c.check(r.returncode == 0 and "configuration reloaded" in r.stdout, "verdict: a good file: reloaded, exit 0",
                f"rc {r.returncode}: {r.stdout} {r.stderr}")

        # [worker] needs cap_sys_nice, dropped at startup
        with open(conf, "w") as f:
            f.write(good + "[worker web]\nmatch_name = nosuchworker\npolicy = spread\n")
        r = reload_cmd(p.pid)
        c.check(r.returncode == 1 and "needs cap_sys_nice, dropped at startup" in r.stderr,
                "verdict: [worker] added: --reload fails, saying the capability and the restart",
                f"rc {r.returncode}: {r.stdout} {r.stderr}")

        # a metrics_file whose directory does not exist
        mf = os.path.join(d, "no-such-dir", "irqsteer.prom")
        with open(conf, "w") as f:
            f.write(good + f"metrics_file = {mf}\n")
        r = reload_cmd(p.pid)
        c.check(r.returncode == 1 and mf in r.stderr and "No such file or directory" in r.stderr,
                "verdict: unwritable metrics_file: --reload fails naming the file and the error",
                f"rc {r.returncode}: {r.stdout} {r.stderr}")
        st = status(state).get("status", "")
        c.check("config reload failed" in st and "metrics-file-write: " in st and mf in st,
                "verdict: unwritable metrics_file: in the status line", st)
        c.check(dl.wait_until(lambda: metric(state, 'irqsteer_problem{reason="metrics-file-write"} 1')
                              and metric(state, 'irqsteer_problem{reason="reload-failed"} 1')
                              and metric(state, "irqsteer_config_last_reload_successful 0"), T),
                "verdict: unwritable metrics_file: irqsteer_problem{reason=\"metrics-file-write\"} 1 in the metrics")
        c.check("warning: Failed to write the metrics to " + mf in dl.read_log(log),
                "verdict: unwritable metrics_file: logged as a warning", dl.read_log(log)[-1500:])
        # the directory appears: the next tick writes it, the problem ends
        os.mkdir(os.path.dirname(mf))
        ok = dl.wait_until(lambda: os.path.exists(mf) and metric(state, 'irqsteer_problem{reason="metrics-file-write"} 0'), T)
        c.check(ok, "verdict: the directory made: the file written and the problem over")
        r = reload_cmd(p.pid)
        c.check(r.returncode == 0, "verdict: then a reload succeeds", f"rc {r.returncode}: {r.stderr}")
        c.check(dl.wait_until(lambda: metric(state, 'irqsteer_problem{reason="reload-failed"} 0'), T),
                "verdict: reload-failed over")

        with open(conf, "w") as f:
            f.write(good + "bogus_key = 1\n")
        r = reload_cmd(p.pid)
        c.check(r.returncode == 1 and f"{conf}:2: bogus_key: unknown key" in r.stderr,
                "verdict: an invalid file: --reload fails with FILE:LINE", f"rc {r.returncode}: {r.stderr}")
        c.check(p.poll() is None, "verdict: the daemon still runs")
        c.check(dl.stop(p, timeout=T) == 0, "verdict: SIGTERM exit 0", dl.read_log(log)[-1500:])
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)


def run_reload_relative():
    """A daemon started with relative paths, reloaded from elsewhere: its
    paths are read against its own working directory."""
    d = os.path.join(tmp, "relative")
    dl.make_root(d)
    log = os.path.join(d, "daemon.log")
    with open(os.path.join(d, "irqsteer.conf"), "w") as f:
        f.write("[daemon]\n")
    p = dl.start_daemon(["--root", "root", "--config", "irqsteer.conf", "--state-dir", "state", "--interval", "200ms",
                         "-f"], log, wrapper=("env", "-C", d))
    try:
        ok = dl.wait_until(lambda: status(os.path.join(d, "state")).get("ticks", 0) >= 1, T)
        c.check(ok, "relative: the daemon runs", dl.read_log(log)[-1500:])
        r = subprocess.run([dl.env_path("IRQSTEERD"), "--reload", str(p.pid)], capture_output=True, text=True,
                           timeout=60, cwd="/")
        c.check(r.returncode == 0 and "configuration reloaded" in r.stdout,
                "relative: --reload from / finds its file and state directory", f"rc {r.returncode}: {r.stderr}")
        c.check(dl.stop(p, timeout=T) == 0, "relative: SIGTERM exit 0", dl.read_log(log)[-1500:])
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)


def run_ban_problem():
    """An invalid ban file is a problem: in the status line, the metrics
    and the log while it is there, gone with it."""
    d = os.path.join(tmp, "ban")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    log = os.path.join(d, "daemon.log")
    p = dl.start_daemon(["--root", root, "--state-dir", state, "--interval", "200ms", "-f"], log)
    try:
        ok = dl.wait_until(lambda: status(state).get("ticks", 0) >= 1, T)
        c.check(ok and metric(state, 'irqsteer_problem{reason="ban-file-invalid"} 0'),
                "ban: no problem at first", dl.read_log(log)[-1500:])
        tmpf = os.path.join(state, "bans", ".t")
        with open(tmpf, "w") as f:
            f.write("not-a-cpu\n")
        os.rename(tmpf, os.path.join(state, "bans", "bad"))
        ok = dl.wait_until(lambda: "ban-file-invalid: Ban file " in status(state).get("status", ""), T)
        c.check(ok, "ban: an invalid ban file in the status line", status(state).get("status", ""))
        # metrics.prom is written just after status.json
        c.check(dl.wait_until(lambda: metric(state, 'irqsteer_problem{reason="ban-file-invalid"} 1')
                              and metric(state, 'irqsteer_problems_total{reason="ban-file-invalid"} 1'), T),
                "ban: irqsteer_problem{reason=\"ban-file-invalid\"} 1")
        c.check("warning: Ban file " in dl.read_log(log), "ban: logged as a warning", dl.read_log(log)[-1500:])
        os.unlink(os.path.join(state, "bans", "bad"))
        ok = dl.wait_until(lambda: metric(state, 'irqsteer_problem{reason="ban-file-invalid"} 0')
                           and "ban-file-invalid" not in status(state).get("status", ""), T)
        c.check(ok, "ban: removed: the problem is over")
        c.check(dl.stop(p, timeout=T) == 0, "ban: SIGTERM exit 0", dl.read_log(log)[-1500:])
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)


def run_plan_beside():
    d = os.path.join(tmp, "plan")
    root = dl.make_root(d)
    log = os.path.join(d, "daemon.log")
    # no --state-dir: the daemon and the plan both use ROOT/run/irqsteer
    p = dl.start_daemon(["--root", root, "--interval", "200ms", "-f"], log)
    rps = os.path.join(root, "sys/class/net/eth1/queues/rx-0/rps_cpus")
    try:
        ok = dl.wait_until(lambda: open(rps).read().strip() not in ("0", "00000000"), T)
        c.check(ok, "plan: the daemon sets eth1's RPS (single-queue NIC)", dl.read_log(log)[-1500:])
        r = subprocess.run([dl.env_path("IRQSTEERCTL"), "plan", "--root", root, "--interval", "200ms"],
                           capture_output=True, text=True, timeout=60)
        c.check(r.returncode == 0, "plan: exit 0", r.stderr)
        c.check("set before irqsteerd started" not in r.stdout + r.stderr,
                "plan beside the daemon: its RPS mask is not called an operator's", r.stdout)
        c.check("RPS eth1" not in r.stdout, "plan beside the daemon: no RPS change for eth1 planned", r.stdout)
        c.check(dl.stop(p, timeout=T) == 0, "plan: SIGTERM exit 0", dl.read_log(log)[-1500:])
        # and a mask an operator set before any irqsteerd is still kept
        with open(rps, "w") as f:
            f.write("00000003\n")
        r = subprocess.run([dl.env_path("IRQSTEERCTL"), "plan", "--root", root, "--interval", "200ms"],
                           capture_output=True, text=True, timeout=60)
        c.check("kept: eth1 rx-0 RPS CPUs 0-1 set before irqsteerd started" in r.stdout,
                "plan without a daemon: an operator's RPS mask is kept", r.stdout)
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)


def run_write_problem():
    """A write the kernel refuses for good (here a read-only file: the
    daemon keeps no CAP_DAC_OVERRIDE) is a problem: status line, metrics,
    log."""
    d = os.path.join(tmp, "write")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    log = os.path.join(d, "daemon.log")
    for f in ("smp_affinity_list", "smp_affinity"):
        os.chmod(os.path.join(root, "proc/irq/38", f), 0o444)
    p = dl.start_daemon(["--root", root, "--state-dir", state, "--interval", "200ms", "-f"], log)
    try:
        ok = dl.wait_until(lambda: "write-failed: IRQ 38" in status(state).get("status", ""), T)
        c.check(ok, "write: a refused write in the status line", status(state).get("status", "") + dl.read_log(log)[-1500:])
        c.check(dl.wait_until(lambda: metric(state, 'irqsteer_problem{reason="write-failed"} 1'), T),
                "write: irqsteer_problem{reason=\"write-failed\"} 1")
        c.check("warning: IRQ 38" in dl.read_log(log) and "Permission denied" in dl.read_log(log),
                "write: logged as a warning with the error", dl.read_log(log)[-1500:])
        c.check(dl.stop(p, timeout=T) == 0, "write: SIGTERM exit 0", dl.read_log(log)[-1500:])
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)


try:
    dl.run_cases(c, [run_manage_no, run_reload_verdict, run_reload_relative, run_ban_problem, run_plan_beside, run_write_problem])
finally:
    if c.failed and os.environ.get("IRQSTEER_KEEP_TMP"):
        print(f"kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
c.exit()

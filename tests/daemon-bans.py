#!/usr/bin/env python3
"""Runtime CPU bans against a running irqsteerd on a fixture root: a ban
written with irqsteerctl ban empties the CPU of every managed IRQ within
a tick of the daemon reading it; a bad ban file is logged and ignored as a
whole; irqsteerctl bans lists them, status.json shows them; unban lifts
the ban; a reload with a new banned_cpus vacates as well.  Needs no root: everything happens below a temporary copy of
tests/fixtures/vm2.  Run by tests/test-daemon-bans.sh."""
import os
import re
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemonlib as dl  # noqa: E402

# Generous: the suite also runs under ASan.
T = 15.0

c = dl.Checker()
ctl = dl.env_path("IRQSTEERCTL")
tmp = dl.tmpdir("irqsteer-bans.")


def irqsteerctl(args):
    return subprocess.run([ctl] + args, capture_output=True, text=True, timeout=60)


def irqs_on(root, cpu, log):
    """Managed IRQs (those irqsteerd has placed, by its log) whose
    smp_affinity_list names cpu.  Other devices' IRQs are left where they
    are."""
    out = []
    managed = set(re.findall(r" IRQ (\d+) \(", dl.read_log(log)))
    for k, v in dl.tree_values(root).items():
        if not k.endswith("smp_affinity_list") or k.split("/")[2] not in managed:
            continue
        cpus = set()
        for part in v.split(","):
            if "-" in part:
                a, b = part.split("-")
                cpus.update(range(int(a), int(b) + 1))
            elif part:
                cpus.add(int(part))
        if cpu in cpus:
            out.append(k.split("/")[2])
    return sorted(out, key=int)


def ticks(state):
    return (dl.load_json(os.path.join(state, "status.json")) or {}).get("ticks", -1)


def run_bans():
    d = os.path.join(tmp, "bans")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    log = os.path.join(d, "daemon.log")
    conf = os.path.join(d, "irqsteer.conf")
    with open(conf, "w") as f:
        f.write("")
    # no NOTIFY_SOCKET: a listener nobody reads fills up and blocks the
    # daemon's sd_notify; status.json says when it runs
    p = dl.start_daemon(["--root", root, "--config", conf, "--state-dir", state, "--interval", "200ms"], log)
    try:
        # the initial layout puts queue IRQs on CPU1
        laid = dl.wait_until(lambda: ticks(state) >= 2 and irqs_on(root, 1, log), T)
        c.check(bool(laid), "bans: IRQs laid out on CPU1 before the ban", repr(dl.tree_values(root)))

        # a bad file: logged, ignored as a whole (its good line bans nothing)
        bad = os.path.join(state, "bans", "broken")
        with open(bad, "w") as f:
            f.write("2\nnot-a-cpu\n")
        ok = dl.wait_until(lambda: "Ban file " + bad + ": not a CPU list" in dl.read_log(log), T)
        c.check(bool(ok), "bans: a bad file gets a clear log line", dl.read_log(log)[-1500:])

        r = irqsteerctl(["ban", "--state-dir", state, "kubelet", "1"])
        c.check(r.returncode == 0, "bans: irqsteerctl ban exit 0", r.stderr)
        ok = dl.wait_until(lambda: "Runtime bans now keep CPUs 1 free" in dl.read_log(log), T)
        c.check(bool(ok), "bans: the daemon reads the ban through inotify", dl.read_log(log)[-1500:])
        t0 = ticks(state)
        ok = dl.wait_until(lambda: not irqs_on(root, 1, log), T)
        t1 = ticks(state)
        # the ban may land in the middle of a tick, and status.json is
        # written after the tick that moved them: at most two
        c.check(bool(ok) and 0 <= t1 - t0 <= 2, "bans: CPU1 vacated within a tick",
                f"ticks {t0} -> {t1}, still on CPU1: {irqs_on(root, 1, log)}")
        # another device's IRQ (ttyS0, mask 0-3) loses CPU1 as well, and
        # the daemon does not take its own write for someone else's
        irq24 = os.path.join(root, "proc/irq/24/smp_affinity_list")
        ok = dl.wait_until(lambda: open(irq24).read().strip() == "0,2", T)
        c.check(bool(ok), "bans: another device's IRQ leaves CPU1", open(irq24).read())
        t = ticks(state)
        dl.wait_until(lambda: ticks(state) >= t + 3, T)
        text = dl.read_log(log)
        c.check("IRQ 24 was changed by someone else" not in text and open(irq24).read().strip() == "0,2",
                "bans: its own write is not an external change", text[-1500:])
        c.check("may no longer be used (banned" in text, "bans: the moves say why", text[-1500:])
        c.check(text.count("Ban file " + bad) == 1, "bans: the bad file is said once",
                str(text.count("Ban file " + bad)))

        st = dl.load_json(os.path.join(state, "status.json")) or {}
        rb = st.get("runtime_bans") or {}
        names = [f.get("name") for f in rb.get("files", [])]
        c.check(rb.get("cpus") == [1] and names == ["broken", "kubelet"], "bans: status.json runtime_bans", repr(rb))
        r = irqsteerctl(["bans", "--state-dir", state])
        c.check(r.returncode == 0 and "kubelet" in r.stdout and "ignored" in r.stdout
                and "banned at run time: 1" in r.stdout, "bans: irqsteerctl bans lists them", r.stdout + r.stderr)
        r = irqsteerctl(["ban", "--state-dir", state, "../x", "1"])
        c.check(r.returncode == 2, "bans: a bad name is a usage error", r.stderr)
        r = irqsteerctl(["ban", "--state-dir", state, "x", "1-"])
        c.check(r.returncode == 2, "bans: a bad CPU list is a usage error", r.stderr)

        # still off CPU1 a few ticks later: no tug of war with the layout
        t = ticks(state)
        dl.wait_until(lambda: ticks(state) >= t + 3, T)
        c.check(not irqs_on(root, 1, log), "bans: CPU1 stays free", repr(irqs_on(root, 1, log)))

        r = irqsteerctl(["unban", "--state-dir", state, "kubelet"])
        c.check(r.returncode == 0 and not os.path.exists(os.path.join(state, "bans", "kubelet")),
                "bans: irqsteerctl unban removes the ban", r.stderr)
        ok = dl.wait_until(lambda: "Runtime bans now keep CPUs none free" in dl.read_log(log)
                           and "Ban kubelet lifted" in dl.read_log(log), T)
        c.check(bool(ok), "bans: the daemon sees the unban", dl.read_log(log)[-1500:])
        r = irqsteerctl(["unban", "--state-dir", state, "kubelet"])
        c.check(r.returncode == 0 and "nothing to lift" in r.stderr, "bans: a second unban is harmless", r.stderr)

        # a reload with banned_cpus = 0 (the issue's case: IRQ 11 and eth1's
        # RPS stayed on CPU0 until a restart): vacated within a tick
        rps = os.path.join(root, "sys/class/net/eth1/queues/rx-0/rps_cpus")
        c.check(bool(irqs_on(root, 0, log)) and int(open(rps).read().strip().replace(",", ""), 16) & 1,
                "reload: IRQs and eth1's RPS on CPU0 before", repr(irqs_on(root, 0, log)))
        with open(conf, "w") as f:
            f.write("[balance]\nbanned_cpus = 0\n")
        p.send_signal(signal.SIGHUP)
        ok = dl.wait_until(lambda: "Configuration reloaded" in dl.read_log(log), T)
        t0 = ticks(state)
        ok = ok and dl.wait_until(lambda: not irqs_on(root, 0, log)
                                  and not int(open(rps).read().strip().replace(",", ""), 16) & 1, T)
        t1 = ticks(state)
        c.check(bool(ok) and 0 <= t1 - t0 <= 2, "reload: banned_cpus = 0 vacates CPU0 within a tick",
                f"ticks {t0} -> {t1}, on CPU0: {irqs_on(root, 0, log)}, rps {open(rps).read().strip()}")
        c.check(dl.stop(p, timeout=T) == 0, "bans: SIGTERM exit 0", dl.read_log(log)[-1500:])
        c.check(open(irq24).read().strip() == "0-3", "bans: the other device's IRQ restored on stop",
                open(irq24).read())
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)


try:
    run_bans()
finally:
    if c.failed and os.environ.get("IRQSTEER_KEEP_TMP"):
        print(f"kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
c.exit()

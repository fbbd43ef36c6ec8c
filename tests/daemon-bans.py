#!/usr/bin/env python3
"""Runtime CPU bans against a running irqsteerd on a fixture root: a ban
written with irqsteerctl ban empties the CPU of every managed IRQ within
a tick of the daemon reading it; a bad ban file is logged and ignored as a
whole; irqsteerctl bans lists them, status.json shows them; unban lifts
the ban, moves nothing back by itself, and the next move off a hot CPU
uses the unbanned CPU again, the coolest; a reload with a new banned_cpus
vacates as well; irqbalance's environment files (IRQBALANCE_BANNED_CPUS,
IRQBALANCE_BANNED_CPULIST, as cri-o and tuned write them) become the ban
irqbalance-env within a tick, also in a directory created later.  Needs no root: everything happens below a temporary copy
of tests/fixtures/vm2.  Run by tests/test-daemon-bans.sh."""
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemonlib as dl  # noqa: E402

# Generous: the suite also runs under ASan.
T = 15.0

c = dl.Checker()
ctl = dl.env_path("IRQSTEERCTL")
tmp = dl.tmpdir("irqsteer-bans.")


def irqsteerctl(args):
    return subprocess.run([ctl] + args, capture_output=True, text=True, timeout=60)


def irq_cpus(root):
    """{irq: set of CPUs} from proc/irq/N/smp_affinity_list, or from the
    hex mask in smp_affinity where a fixture IRQ has no list file."""
    out = {}
    for k, v in dl.tree_values(root).items():
        parts = k.split("/")
        if len(parts) != 4 or parts[:2] != ["proc", "irq"]:
            continue
        if parts[3] == "smp_affinity_list":
            cpus = set()
            for part in v.split(","):
                if "-" in part:
                    a, b = part.split("-")
                    cpus.update(range(int(a), int(b) + 1))
                elif part:
                    cpus.add(int(part))
            out[parts[2]] = cpus
        elif parts[3] == "smp_affinity":
            mask = int(v.replace(",", "") or "0", 16)
            out.setdefault(parts[2], {c for c in range(mask.bit_length()) if mask >> c & 1})
    return out


def irqs_on(root, cpu, log):
    """Managed IRQs (those irqsteerd has placed, by its log) whose
    affinity names cpu.  Other devices' IRQs are left where they are."""
    managed = set(re.findall(r" IRQ (\d+) \(", dl.read_log(log)))
    return sorted((irq for irq, cpus in irq_cpus(root).items() if irq in managed and cpu in cpus), key=int)


def ticks(state):
    return (dl.load_json(os.path.join(state, "status.json")) or {}).get("ticks", -1)


def write_shares(root, step, softirq):
    """proc/stat and proc/softirqs of the fixture's CPUs at step (100
    ticks per CPU each): CPU c spends softirq[c] percent of its time in
    softirqs, NET_RX growing with it, 2 percent when not named.  Counters
    only grow from dl.write_load's of a lower step."""
    cpus = dl.online_cpus(root)
    lines, tot = [], [0] * 10
    for cpu in cpus:
        t, pct = 100 * step, softirq.get(cpu, 2)
        v = [x + 1000 for x in (t * 2 // 100, 0, t * 2 // 100, t * (96 - pct) // 100, 0, 0, t * pct // 100, 0, 0, 0)]
        tot = [a + b for a, b in zip(tot, v)]
        lines.append(f"cpu{cpu} " + " ".join(map(str, v)))
    stat = "cpu  " + " ".join(map(str, tot)) + "\n" + "\n".join(lines) + "\n"
    stat += "intr 0\nctxt 0\nbtime 0\nprocesses 1\nprocs_running 1\nprocs_blocked 0\nsoftirq 0\n"
    soft = "       " + "".join(f"CPU{c:<11d}" for c in cpus) + "\n"
    for i, row in enumerate(("HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER",
                             "RCU")):
        per = []
        for cpu in cpus:
            n = 1000 * (i + 1) + step * {"NET_RX": 100 * softirq.get(cpu, 2), "TIMER": 100}.get(row, 0)
            per.append(f"{n:>11d}")
        soft += f"{row + ':':>8}" + " ".join(per) + "\n"
    for name, text in (("stat", stat), ("softirqs", soft)):
        tmp_path = os.path.join(root, "proc", f".{name}.tmp")
        with open(tmp_path, "w") as f:
            f.write(text)
        os.replace(tmp_path, os.path.join(root, "proc", name))


class Load:
    """CPU0 hot with the interrupts of irqs on it, CPU2 warm, CPU1 idle:
    CPU1 the coolest target of a move off CPU0.  Advances every 50 ms
    in a thread until stop()."""

    def __init__(self, root, irqs):
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, args=(root, irqs))
        self.thread.start()

    def run(self, root, irqs):
        step = 10
        while not self.done.is_set():
            write_shares(root, step, {0: 90, 2: 15})
            for irq in irqs:
                dl.bump_interrupts(root, irq, 0, 1000)
            step += 1
            time.sleep(0.05)

    def stop(self):
        self.done.set()
        self.thread.join()


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

        # the unban alone moves nothing back (no churn); a hot CPU0 with
        # two busy queues then sheds one to the coolest CPU, and that is
        # CPU1 again: without the unban it would be CPU2
        t = ticks(state)
        dl.wait_until(lambda: ticks(state) >= t + 3, T)
        c.check(not irqs_on(root, 1, log), "unban: nothing moved back at once", repr(irqs_on(root, 1, log)))
        busy = [irq for irq in ("38", "45") if irq in irqs_on(root, 0, log)]
        c.check(busy == ["38", "45"], "unban: eth0 and ens4 queue 0 on CPU0 to load", repr(irqs_on(root, 0, log)))
        load = Load(root, [int(irq) for irq in busy])
        try:
            back = dl.wait_until(lambda: irqs_on(root, 1, log), T)
        finally:
            load.stop()
        moves = re.findall(r" IRQ \d+ \([^)]*\) CPU0 -> CPU(\d+): CPU0 softirq\+irq", dl.read_log(log))
        c.check(bool(back) and moves[:1] == ["1"], "unban: a move off a hot CPU0 uses CPU1 again",
                f"on CPU1: {back}, moves off CPU0 to: {moves}; " + dl.read_log(log)[-1500:])

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


def write_ban(state, name, text):
    """As a writer does: a temporary, renamed into place (one event)."""
    tmpf = os.path.join(state, "bans", ".tmp-" + str(os.getpid()))
    with open(tmpf, "w") as f:
        f.write(text)
    os.rename(tmpf, os.path.join(state, "bans", name))


def run_ban_logs():
    """A ban is logged as its file says it (0-8191 not "CPUs 0-63", 8191 not
    "CPUs none"); banning every CPU is said once, and moves nothing; a bad
    name is logged escaped (no forged line, no escape byte), and irqsteerctl
    bans shows it escaped."""
    d = os.path.join(tmp, "ban-logs")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    log = os.path.join(d, "daemon.log")
    p = dl.start_daemon(["--root", root, "--state-dir", state, "--interval", "200ms"], log)
    try:
        ok = dl.wait_until(lambda: ticks(state) >= 2, T)
        c.check(ok, "ban logs: the daemon runs", dl.read_log(log)[-1500:])
        before = irq_cpus(root)
        write_ban(state, "big", "0-8191\n")
        ok = dl.wait_until(lambda: "Ban big: " in dl.read_log(log), T)
        line = [x for x in dl.read_log(log).splitlines() if "Ban big: " in x]
        c.check(ok and "Ban big: CPUs 0-8191 (CPUs 0-3 on this host)" in line[0],
                "ban logs: 0-8191 logged as such", repr(line))
        write_ban(state, "far", "8191\n")
        ok = dl.wait_until(lambda: "Ban far: " in dl.read_log(log), T)
        line = [x for x in dl.read_log(log).splitlines() if "Ban far: " in x]
        c.check(ok and "Ban far: CPUs 8191 (none on this host)" in line[0], "ban logs: 8191 not 'CPUs none'",
                repr(line))
        t = ticks(state)
        dl.wait_until(lambda: ticks(state) >= t + 3, T)
        warned = [x for x in dl.read_log(log).splitlines() if "Every CPU is banned" in x]
        c.check(len(warned) == 1 and "left where they are" in warned[0],
                "ban logs: every CPU banned: one warning, across two ban changes", repr(warned))
        after = irq_cpus(root)
        c.check(after == before, "ban logs: every CPU banned: no IRQ moved",
                repr({k: (before.get(k), after.get(k)) for k in before if before.get(k) != after.get(k)}))
        os.unlink(os.path.join(state, "bans", "big"))
        os.unlink(os.path.join(state, "bans", "far"))
        ok = dl.wait_until(lambda: "Ban far lifted" in dl.read_log(log), T)
        bad = "bad\nerr: forged \x1b[31mred"
        write_ban(state, bad, "1\n")
        want = f"Ban file {state}/bans/bad\\nerr: forged \\x1b[31mred: not a valid ban name"
        ok = dl.wait_until(lambda: want in dl.read_log(log), T)
        text = dl.read_log(log)
        c.check(ok, "ban logs: an invalid name is logged escaped", text[-1500:])
        c.check("\x1b" not in text and not any(x.startswith("err: forged") for x in text.splitlines()),
                "ban logs: no escape byte, no forged line in the log", text[-800:])
        r = irqsteerctl(["bans", "--state-dir", state])
        c.check("\x1b" not in r.stdout and "bad\\nerr: forged \\x1b[31mred" in r.stdout,
                "ban logs: irqsteerctl bans shows the name escaped", repr(r.stdout))
        c.check(dl.stop(p, timeout=T) == 0, "ban logs: SIGTERM exit 0", dl.read_log(log)[-1500:])
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_many_bans():
    """A change re-reads only the changed file: 300 bans added one by one
    beside 2,000 cost well under a second of daemon CPU (every file read
    again at each event: several seconds)."""
    d = os.path.join(tmp, "many-bans")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    os.makedirs(os.path.join(state, "bans"))
    for i in range(2000):
        with open(os.path.join(state, "bans", f"owner{i:04d}"), "w") as f:
            f.write("1\n")
    log = os.path.join(d, "daemon.log")
    p = dl.start_daemon(["--root", root, "--state-dir", state, "--interval", "1s"], log)
    try:
        ok = dl.wait_until(lambda: ticks(state) >= 1, T)
        c.check(ok, "many bans: the daemon runs with 2,000 ban files", dl.read_log(log)[-1500:])
        t0 = cpu_seconds(p.pid)
        # one at a time, as owners come and go: each its own wakeup
        for i in range(300):
            write_ban(state, f"new{i:03d}", "1\n")
            time.sleep(0.005)
        ok = dl.wait_until(lambda: "Ban new299: CPUs 1" in dl.read_log(log), 60)
        used = cpu_seconds(p.pid) - t0
        c.check(ok, "many bans: every new ban read", dl.read_log(log)[-500:])
        if os.environ.get("IRQSTEER_SANITIZER_PASS"):
            print(f"info many bans: {used:.2f} s CPU (not checked under sanitizers)")
        else:
            print(f"info many bans: {used:.2f} s CPU")
            c.check(used < 1.0, "many bans: 300 changes beside 2,000 files under 1 s of CPU", f"{used:.2f} s")
        c.check(dl.stop(p, timeout=T) == 0, "many bans: SIGTERM exit 0", dl.read_log(log)[-1500:])
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)


def rps_cpus(root):
    path = os.path.join(root, "sys/class/net/eth1/queues/rx-0/rps_cpus")
    mask = int(open(path).read().strip().replace(",", "") or "0", 16)
    return {c for c in range(mask.bit_length()) if mask >> c & 1}


def run_env_bans():
    d = os.path.join(tmp, "env")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    log = os.path.join(d, "daemon.log")
    conf = os.path.join(d, "irqsteer.conf")
    sysconfig, default = os.path.join(d, "sysconfig"), os.path.join(d, "default")
    os.mkdir(default)
    # /etc/sysconfig does not exist on Debian: created while it runs
    with open(conf, "w") as f:
        f.write(f"[daemon]\nirqbalance_env_files = {sysconfig}/irqbalance {default}/irqbalance\n")

    def banned():
        r = irqsteerctl(["bans", "--state-dir", state])
        m = re.search(r"^irqbalance-env\s+(\S+)", r.stdout, re.M)
        return m.group(1) if m else None

    def write(path, text):
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)

    p = dl.start_daemon(["--root", root, "--config", conf, "--state-dir", state, "--interval", "200ms"], log)
    try:
        laid = dl.wait_until(lambda: ticks(state) >= 2 and irqs_on(root, 1, log), T)
        c.check(bool(laid), "env: IRQs laid out on CPU1 first", repr(dl.tree_values(root)))
        c.check(banned() is None, "env: no irqbalance-env ban without the files", "")
        # cri-o's line: the mask in irqbalance's 32-bit groups, quoted
        write(os.path.join(default, "irqbalance"), '# irqbalance\nOPTIONS=""\nIRQBALANCE_BANNED_CPUS="00000000,00000002"\n')
        ok = dl.wait_until(lambda: banned() == "1", T)
        c.check(bool(ok), "env: IRQBALANCE_BANNED_CPUS becomes the ban irqbalance-env, CPU1", dl.read_log(log)[-1500:])
        ok = dl.wait_until(lambda: not irqs_on(root, 1, log) and 1 not in rps_cpus(root), T)
        c.check(bool(ok), "env: CPU1's IRQs and RPS vacated, no reload",
                f"on CPU1: {irqs_on(root, 1, log)}, rps {sorted(rps_cpus(root))}")
        # tuned's line, in a directory that did not exist at start
        os.mkdir(sysconfig)
        write(os.path.join(sysconfig, "irqbalance"), "IRQBALANCE_BANNED_CPULIST=0\n")
        ok = dl.wait_until(lambda: banned() == "0-1", T)
        c.check(bool(ok), "env: IRQBALANCE_BANNED_CPULIST in a directory created later joins it (0-1)",
                dl.read_log(log)[-1500:])
        # a malformed value: said once with its line, the ban in force stays
        write(os.path.join(sysconfig, "irqbalance"), "IRQBALANCE_BANNED_CPULIST=zz\n")
        want = f"irqbalance environment file {sysconfig}/irqbalance: line 1: IRQBALANCE_BANNED_CPULIST"
        ok = dl.wait_until(lambda: want in dl.read_log(log), T)
        t = ticks(state)
        dl.wait_until(lambda: ticks(state) >= t + 3, T)
        text = dl.read_log(log)
        c.check(bool(ok) and text.count(want) == 1 and banned() == "0-1",
                "env: a malformed file is logged once and keeps the ban", f"{text.count(want)} {banned()}")
        os.unlink(os.path.join(sysconfig, "irqbalance"))
        os.unlink(os.path.join(default, "irqbalance"))
        ok = dl.wait_until(lambda: banned() is None and "Ban irqbalance-env lifted" in dl.read_log(log), T)
        c.check(bool(ok), "env: files removed, the ban is lifted", dl.read_log(log)[-1500:])
        c.check(dl.stop(p, timeout=T) == 0, "env: SIGTERM exit 0", dl.read_log(log)[-1500:])
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)


try:
    run_bans()
    run_env_bans()
    dl.run_cases(c, [run_ban_logs, run_many_bans])
finally:
    if c.failed and os.environ.get("IRQSTEER_KEEP_TMP"):
        print(f"kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
c.exit()

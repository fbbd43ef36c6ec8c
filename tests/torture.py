"""Torture and soak for irqsteerd on simulator trees that keep ticking
(bench/irqsteer-sim --real-tick): random SIGKILLs of irqsteerd and of
`irqsteerctl restore`, injected faults, and an accelerated soak with churn.
After every case, every value irqsteerd may change must equal the snapshot
taken before the first start.  tests/README.md describes the cases.

    torture.py kills N        N random SIGKILLs (daemon and restore)
    torture.py faults         every fault case
    torture.py soak SECONDS [--wrap asan|valgrind] [--csv FILE]

Environment: IRQSTEER_BUILDDIR (irqsteerd, irqsteerctl, bench/irqsteer-sim,
tests/faultshim.so), IRQSTEER_SRCDIR.  Exit 77 = skipped."""
import glob
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
SRC = os.environ.get("IRQSTEER_SRCDIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BLD = os.environ.get("IRQSTEER_BUILDDIR") or os.path.join(SRC, "build")
DAEMON = os.path.join(BLD, "irqsteerd")
CTL = os.path.join(BLD, "irqsteerctl")
SIM = os.path.join(BLD, "bench/irqsteer-sim")
SHIM = os.path.join(BLD, "tests/.libs/faultshim.so")
if not os.path.exists(SHIM):
    SHIM = os.path.join(BLD, "tests/faultshim.so")
XF_LOCK = None
TICK = 0.1  # real seconds per simulated tick, and the daemon's interval

# A host small enough to tick fast, with two NIC families and RPS work.
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
load = 3.0
dist = zipf 0.8
noise = 0.10
[nic eth1]
family = rxtx
queues = 2
load = 1.5
elephant = 0 0.9
noise = 0.10
[storage nvme0]
queues = 4
load = 0.05
"""



class Checker:
    def __init__(self):
        self.failed = 0
        self.passed = 0
        self.xfailed = 0

    def check(self, cond, what, detail="", xfail=None):
        if cond:
            self.passed += 1
            print(f"ok   {what}", flush=True)
        elif xfail:
            self.xfailed += 1
            print(f"XFAIL {what}: {xfail}" + (f" ({detail})" if detail else ""), flush=True)
        else:
            self.failed += 1
            print(f"FAIL {what}" + (f": {detail}" if detail else ""), flush=True)
        return cond

    def exit(self):
        print(f"{self.passed} passed, {self.failed} failed, {self.xfailed} expected failures")
        sys.exit(1 if self.failed else 0)


C = Checker()


def managed_paths(root):
    """Every file irqsteerd may write in the tree (not the ones the
    simulator rewrites each tick, nor thread affinities)."""
    pats = ["proc/irq/*/smp_affinity", "proc/irq/*/smp_affinity_list",
            "sys/class/net/*/queues/rx-*/rps_cpus", "sys/class/net/*/queues/rx-*/rps_flow_cnt",
            "sys/class/net/*/queues/tx-*/xps_cpus", "proc/sys/net/core/rps_sock_flow_entries"]
    out = []
    for p in pats:
        out.extend(glob.glob(os.path.join(root, p)))
    return sorted(os.path.relpath(p, root) for p in out)


def snapshot(root):
    snap = {}
    for p in managed_paths(root):
        try:
            with open(os.path.join(root, p)) as f:
                snap[p] = f.read().strip()
        except OSError as e:
            snap[p] = f"<{e.strerror}>"
    return snap


def diff(a, b):
    keys = sorted(set(a) | set(b))
    return [f"{k}: {a.get(k, '<none>')} -> {b.get(k, '<none>')}" for k in keys if a.get(k) != b.get(k)]


def settle():
    """Lets the simulator rewrite smp_affinity after a write to
    smp_affinity_list (both files show the same mask again)."""
    time.sleep(3 * TICK)


SIMS = []  # stopped by main() whatever happens


class Sim:
    def __init__(self, work, name="tree", seed=1, scenario=SCENARIO, csv=None):
        SIMS.append(self)
        self.root = os.path.join(work, name)
        scn = os.path.join(work, name + ".scn")
        with open(scn, "w") as f:
            f.write(scenario)
        ready, go = os.path.join(work, name + ".ready"), os.path.join(work, name + ".go")
        self.proc = subprocess.Popen([SIM, "--scenario", scn, "--root", self.root, "--seed", str(seed),
                                      "--real-tick", str(TICK), "--ready", ready, "--go", go]
                                     + (["--csv", csv] if csv else []),
                                     stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, name + ".sim.log"), "w"))
        t0 = time.time()
        while not os.path.exists(ready):
            if self.proc.poll() is not None or time.time() - t0 > 30:
                sys.exit(f"simulator did not start: see {work}/{name}.sim.log")
            time.sleep(0.05)
        open(go, "w").close()
        time.sleep(3 * TICK)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait()


class Daemon:
    def __init__(self, root, state, log, extra=(), env=None, wrap=()):
        self.log = log
        self.start = os.path.getsize(log) if os.path.exists(log) else 0
        self.proc = subprocess.Popen(list(wrap) + [DAEMON, "--foreground", "--root", root, "--state-dir", state,
                                                   "-i", f"{int(TICK * 1000)}ms"] + list(extra),
                                     stdout=subprocess.DEVNULL, stderr=open(log, "a"), env=env)

    def text(self):
        with open(self.log, errors="replace") as f:
            f.seek(self.start)
            return f.read()

    def wait_for(self, pattern, timeout=15):
        t0 = time.time()
        while time.time() - t0 < timeout:
            if re.search(pattern, self.text()):
                return True
            if self.proc.poll() is not None:
                return bool(re.search(pattern, self.text()))
            time.sleep(0.05)
        return False

    def alive(self):
        return self.proc.poll() is None

    def kill(self, sig=signal.SIGKILL):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=60)


def restore(root, state, env=None):
    return subprocess.run([CTL, "restore", "--root", root, "--state-dir", state, "--force"],
                          capture_output=True, text=True, env=env)


def all_back(root, state, orig, what, known=None):
    """Final restore (if a journal is left), then the whole tree equals orig.
    known(differences) may name a known bug that explains all of them."""
    out = ""
    if os.path.exists(os.path.join(state, "undo.journal")):
        r = restore(root, state)
        out = (r.stdout + r.stderr).strip()
    settle()
    d = diff(orig, snapshot(root))
    C.check(not d, f"{what}: every value equals the snapshot before the first start",
            f"{len(d)} differ: " + "; ".join(d[:6]) + (f" [restore: {out}]" if out else ""),
            xfail=known(d) if d and known else None)
    return not d


# ---------------------------------------------------------------- kills

def case_kills(work, n):
    sim = Sim(work, "kills", seed=7)
    root, state = sim.root, os.path.join(work, "kills.state")
    orig = snapshot(root)
    C.check(len(orig) > 20, f"kills: {len(orig)} managed files in the tree")
    rnd = random.Random(int(os.environ.get("TORTURE_SEED", "13")))
    print(f"kills: seed {os.environ.get('TORTURE_SEED', '13')}", flush=True)
    dk = rk = changed_seen = in_recovery = 0
    t0 = time.time()
    log = os.path.join(work, "kills.log")
    while dk + rk < n:
        d = Daemon(root, state, log)
        # A third within the first 30 ms: crash recovery and the first
        # layout, which take a few ms, get their share of the kills.
        time.sleep(rnd.uniform(0, 0.03) if rnd.random() < 0.3 else rnd.uniform(0, 12 * TICK))
        rc = d.kill()
        if rc != -signal.SIGKILL:
            C.check(False, f"kills: daemon died before the SIGKILL (status {rc})", d.text()[-2000:])
            break
        dk += 1
        text = d.text()
        if re.search(r"^\S+ \S+ \S+ (IRQ|RPS|XPS|rps_).* -> ", text, re.M):
            changed_seen += 1
        elif "did not stop cleanly" in text and "Recovery:" not in text:
            in_recovery += 1
        if rnd.random() < 0.4:
            p = subprocess.Popen([CTL, "restore", "--root", root, "--state-dir", state, "--force"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rnd.uniform(0, 0.02))
            p.kill()
            p.wait()
            rk += 1
        if (dk + rk) % 50 == 0:
            print(f"kills: {dk} daemon, {rk} restore SIGKILLs, {time.time() - t0:.0f} s", flush=True)
    print(f"kills: {dk} daemon and {rk} irqsteerctl restore SIGKILLs in {time.time() - t0:.0f} s; "
          f"{changed_seen} daemons were killed after changing something, {in_recovery} during crash recovery",
          flush=True)
    C.check(changed_seen > dk // 4, f"kills: many daemons were killed after changing values ({changed_seen} of {dk})")
    # The last word: a clean start and stop, then the tree is checked.
    d = Daemon(root, state, log)
    C.check(d.wait_for("Ready:"), "kills: a final start is ready")
    rc = d.kill(signal.SIGTERM)
    C.check(rc == 0, f"kills: the final SIGTERM exits 0 (status {rc})")
    C.check(not os.path.exists(os.path.join(state, "undo.journal")), "kills: the journal is removed after SIGTERM")
    left = [f for f in os.listdir(state) if f.startswith(".undo.journal.")] if os.path.isdir(state) else []
    C.check(not left, "kills: no journal temporaries left in the state dir", " ".join(left))
    all_back(root, state, orig, "kills")
    text = open(log, errors="replace").read()
    bad = [l for l in text.splitlines() if "%m" in l or "Bad message" in l]
    C.check(not bad, "kills: no literal %m or unexplained 'Bad message' in the logs", "; ".join(bad[:3]))
    sim.stop()

# ---------------------------------------------------------------- faults

def env_with(**kv):
    e = dict(os.environ)
    e.update(kv)
    return e


def grep(text, pattern):
    return re.search(pattern, text, re.M) is not None


def run_case(name, root, state, orig, work, env=None, extra=(), during=None, expect=(), xfail=None,
             ready=True, settle_s=1.0):
    """Start irqsteerd (env: the fault), run during(daemon), check it is
    still running and that its log matches every (regex, what) in expect,
    SIGTERM it, then check exit 0 and every value back."""
    log = os.path.join(work, name + ".log")
    d = Daemon(root, state, log, extra=extra, env=env)
    if ready:
        C.check(d.wait_for("Ready:"), f"{name}: the daemon starts and is ready", d.text()[-1500:])
    time.sleep(settle_s)
    if during:
        during(d)
    C.check(d.alive(), f"{name}: the daemon keeps running", d.text()[-1500:])
    text = d.text()
    for pat, what in expect:
        C.check(grep(text, pat), f"{name}: the log says {what}",
                "no line matching /" + pat + "/", xfail=xfail)
    rc = d.kill(signal.SIGTERM)
    C.check(rc == 0, f"{name}: SIGTERM exits 0 (status {rc})", d.text()[-800:])
    bad = [l for l in d.text().splitlines() if "%m" in l]
    C.check(not bad, f"{name}: no literal %m in the log", "; ".join(bad[:2]))
    all_back(root, state, orig, name)
    return d


def irq_of(root, name_part):
    """The lowest IRQ number whose folder holds a handler named like name_part."""
    for p in sorted(glob.glob(os.path.join(root, "proc/irq/*/*" + name_part + "*")),
                    key=lambda p: int(p.split("/")[-2])):
        return int(p.split("/")[-2])
    raise SystemExit(f"no IRQ named {name_part} in the tree")


def set_cpu_online(root, cpu, on):
    base = os.path.join(root, "sys/devices/system/cpu")
    with open(os.path.join(base, f"cpu{cpu}/online"), "w") as f:
        f.write("1\n" if on else "0\n")
    cpus = [c for c in range(64) if os.path.exists(os.path.join(base, f"cpu{c}"))]
    online = []
    for c in cpus:
        try:
            v = open(os.path.join(base, f"cpu{c}/online")).read().strip()
        except OSError:
            v = "1"
        if v == "1":
            online.append(c)
    with open(os.path.join(base, "online"), "w") as f:
        f.write(",".join(str(c) for c in online) + "\n")


def nic_dir(root, nic):
    return os.path.realpath(os.path.join(root, "sys/class/net", nic))


def nic_remove(root, nic, stash):
    """Takes a NIC out of the tree (its class link and device folder),
    keeping both in stash for nic_add."""
    link = os.path.join(root, "sys/class/net", nic)
    target = os.readlink(link)
    dev = nic_dir(root, nic)
    os.makedirs(stash, exist_ok=True)
    os.rename(dev, os.path.join(stash, nic))
    os.unlink(link)
    return (nic, target, dev)


def nic_add(root, saved, stash, new_name=None):
    nic, target, dev = saved
    name = new_name or nic
    newdev = os.path.join(os.path.dirname(dev), name)
    os.rename(os.path.join(stash, nic), newdev)
    os.symlink(os.path.join(os.path.dirname(target), name), os.path.join(root, "sys/class/net", name))
    return (name, os.path.join(os.path.dirname(target), name), newdev)


def case_faults(work):
    sim = Sim(work, "faults", seed=3)
    root = sim.root
    orig = snapshot(root)
    have_shim = os.path.exists(SHIM)
    irq = irq_of(root, "eth0-TxRx-1")
    n = [0]

    def state():
        n[0] += 1
        return os.path.join(work, f"state{n[0]}")

    # Write errors on an IRQ and an XPS file.
    if not have_shim:
        print(f"SKIP write faults: {SHIM} not built")
    for err, words in (("EIO", "Input/output error"), ("EPERM", "Operation not permitted"),
                       ("ENOSPC", "No space left on device|no free vector")):
        if not have_shim:
            break
        env = env_with(LD_PRELOAD=SHIM, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0",
                       IRQSTEER_FAULTS=f"irq/{irq}/smp_affinity_list={err};"
                                       f"eth0/queues/tx-2/xps_cpus={err}")
        run_case(f"write-{err}", root, state(), orig, work, env=env,
                 expect=[(rf"IRQ {irq}\b.*({words})", f"IRQ {irq} could not be written ({err})"),
                         (rf"XPS eth0 tx-2.*({words})|eth0 tx-2.*({words})", f"XPS eth0 tx-2 could not be written ({err})")])

    # An IRQ freed while irqsteerd writes it: the write fails, the folder goes.
    if have_shim:
        irq2 = irq_of(root, "eth0-TxRx-2")
        env = env_with(LD_PRELOAD=SHIM, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0",
                       IRQSTEER_FAULTS=f"irq/{irq2}/smp_affinity_list=GONE*1")
        d = os.path.join(root, f"proc/irq/{irq2}")

        def back(_):
            if os.path.isdir(d + ".gone"):
                os.rename(d + ".gone", d)
            time.sleep(1)
        run_case("irq-vanishes", root, state(), orig, work, env=env, during=back,
                 expect=[(rf"IRQ {irq2}\b.*(gone|vanish|no longer|Input/output error|No such file)",
                          f"IRQ {irq2} went away")])

    # A NIC removed, then back under another name, then back as it was.
    stash = os.path.join(work, "stash")

    def nic_churn(d):
        s = nic_remove(root, "eth1", stash)
        time.sleep(1)
        s = nic_add(root, s, stash, "eth7")
        time.sleep(1)
        s = nic_remove(root, "eth7", stash)
        nic_add(root, s, stash, "eth1")
        time.sleep(1)
    run_case("nic-removed-renamed", root, state(), orig, work, during=nic_churn,
             expect=[(r"eth1.*(gone|removed|disappeared|vanished|no longer)", "eth1 went away"),
                     (r"eth7", "eth7 appeared")])

    # eth0 loses its last queue pair, then gets it back.
    def queues(d):
        q = os.path.join(nic_dir(root, "eth0"), "queues")
        os.makedirs(stash, exist_ok=True)
        os.rename(os.path.join(q, "rx-3"), os.path.join(stash, "rx-3"))
        os.rename(os.path.join(q, "tx-3"), os.path.join(stash, "tx-3"))
        time.sleep(1.5)
        os.rename(os.path.join(stash, "rx-3"), os.path.join(q, "rx-3"))
        os.rename(os.path.join(stash, "tx-3"), os.path.join(q, "tx-3"))
        time.sleep(1.5)
    run_case("queue-count", root, state(), orig, work, during=queues,
             expect=[(r"eth0: queues changed \(rx 4 -> 3, tx 4 -> 3\)", "eth0 went from 4 to 3 queue pairs"),
                     (r"eth0: queues changed \(rx 3 -> 4, tx 3 -> 4\)", "eth0 has 4 queue pairs again")])

    # CPUs go offline and come back: no IRQ stays on an offline CPU.
    def cpus(d):
        offline = [c for c in range(1, 8) if grep(d.text(), rf"-> CPU{c}\b")][:2] or [1]
        for c in offline:
            set_cpu_online(root, c, False)
        time.sleep(2)
        bad = []
        for p in glob.glob(os.path.join(root, "proc/irq/*/smp_affinity_list")):
            v = open(p).read().strip()
            if v in [str(c) for c in offline]:
                bad.append(f"{p.split('/')[-2]}={v}")
        C.check(not bad, f"cpu-offline: no IRQ left on offline CPU(s) {offline}", " ".join(bad))
        for c in offline:
            set_cpu_online(root, c, True)
        time.sleep(1)
    run_case("cpu-offline", root, state(), orig, work, during=cpus,
             expect=[(r"topology: 6 CPUs online", "2 CPUs went offline"), (r"went offline", "IRQs on them are placed again"),
                     (r"topology: 8 CPUs online", "they came back")])

    # A full state dir (a 64 KiB tmpfs, filled, in a private mount namespace).
    if os.geteuid() == 0 and shutil.which("unshare"):
        st = state()
        os.makedirs(st)
        log = os.path.join(work, "full-statedir.log")
        wrapper = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                   f"mount -t tmpfs -o size=64k,mode=0755 none {st} && "
                   f"(dd if=/dev/zero of={st}/fill bs=4k 2>/dev/null; true) && exec \"$@\"", "sh"]
        d = Daemon(root, st, log, wrap=wrapper)
        time.sleep(3)
        C.check(d.alive(), "full-statedir: the daemon keeps running", d.text()[-1500:])
        t = d.text()
        C.check(grep(t, re.escape(st) + r".*(No space left on device)"),
                "full-statedir: the log names the state dir and the full file system", t[-1500:])
        C.check(not grep(t, r"no free vector|no room for it"),
                "full-statedir: no CPU is reported full", "")
        settle()
        C.check(not diff(orig, snapshot(root)), "full-statedir: nothing is written without a journal",
                "; ".join(diff(orig, snapshot(root))[:4]))
        # Free the space (through the daemon's own mount namespace): it goes on.
        os.unlink(f"/proc/{d.proc.pid}/root{st}/fill")
        C.check(d.wait_for(r"(IRQ|XPS|RPS) .* -> ", 10), "full-statedir: with space again it applies", d.text()[-800:])
        rc = d.kill(signal.SIGTERM)
        C.check(rc == 0, f"full-statedir: SIGTERM exits 0 (status {rc})")
        all_back(root, st, orig, "full-statedir")
    else:
        print("SKIP full-statedir: needs root and unshare")

    # A corrupt journal from a killed run: recovery restores what it can read
    # and says which lines it could not.
    st = state()
    d = Daemon(root, st, os.path.join(work, "corrupt-1.log"))
    C.check(d.wait_for("Ready:"), "corrupt-journal: first run ready")
    d.kill()
    j = os.path.join(st, "undo.journal")
    lines = open(j).read().splitlines(True)
    # Every real line stays: garbage between them must cost nothing.
    mid = len(lines) // 2
    with open(j, "w") as f:
        f.write("".join(lines[:mid]) + "irq 9999999999 garbage\n\x00\x01 not a line\nrps\n" + "x" * 5000 + "\n"
                + "".join(lines[mid:]))
    run_case("corrupt-journal", root, st, orig, work,
             expect=[(r"[1-9][0-9]* unreadable journal lines", "how many journal lines it could not read")])

    # A second instance on the same state dir is refused and changes nothing.
    st = state()

    def second(d):
        before = snapshot(root)
        p = subprocess.Popen([DAEMON, "--foreground", "--root", root, "--state-dir", st, "-i", "100ms"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            _, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGTERM)
            _, err = p.communicate(timeout=30)
            err = "(still running after 10 s, stopped) " + err
        rc = p.returncode
        C.check(rc == 3 and not err.startswith("(still"),
                f"second-instance: the second irqsteerd refuses to start with exit 3 (exit {rc})", err[-600:], xfail=XF_LOCK)
        C.check(grep(err, r"Another irqsteerd \(pid [0-9]+\) is running on state directory"),
                "second-instance: it says another irqsteerd holds the state dir", err[-600:], xfail=XF_LOCK)
        settle()
        C.check(not grep(d.text(), "changed by someone else"),
                "second-instance: the first sees no foreign changes", d.text()[-600:], xfail=XF_LOCK)
    run_case("second-instance", root, st, orig, work, during=second)

    # FIFOs and links planted in the state dir while it runs (as whoever
    # could write it would): no open blocks (SIGTERM then exits 0 and
    # everything is restored); the next start refuses the directory.
    st = state()

    def plant(d):
        os.mkfifo(os.path.join(st, f".status.json.{d.proc.pid}.tmp"), 0o600)
        j = os.path.join(st, "undo.journal")
        if os.path.exists(j):
            os.unlink(j)
        os.mkfifo(j, 0o600)
        os.symlink("/etc/passwd", os.path.join(st, "bans", "linked"))
        time.sleep(2)
    run_case("statedir-fifos", root, st, orig, work, during=plant)
    d = Daemon(root, st, os.path.join(work, "statedir-fifos-again.log"))
    try:
        rc = d.proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        rc = None
    d.kill()
    C.check(rc == 77 and grep(d.text(), r"bans/linked: a symbolic link"),
            f"statedir-fifos: the next start refuses the planted link (exit {rc})", d.text()[-800:])

    # A state dir another user could write: refused at start (exit 77),
    # nothing read from it, nothing changed.
    st = state()
    os.makedirs(st)
    os.chmod(st, 0o777)
    log = os.path.join(work, "statedir-untrusted.log")
    d = Daemon(root, st, log)
    try:
        rc = d.proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        rc = None
    d.kill()
    C.check(rc == 77 and grep(d.text(), re.escape(st) + r": writable by others"),
            f"statedir-untrusted: refused with exit 77, naming why (exit {rc})", d.text()[-800:])
    settle()
    C.check(not diff(orig, snapshot(root)), "statedir-untrusted: nothing changed")

    # A SIGHUP storm, good and bad configurations in turn.
    cfg = os.path.join(work, "storm.conf")
    good = "[daemon]\ninterval = 100ms\n"
    bad = "[daemon]\ninterval = banana\nno_such_key = 1\n"
    with open(cfg, "w") as f:
        f.write(good)

    def storm(d):
        rnd = random.Random(5)
        for i in range(60):
            with open(cfg, "w") as f:
                f.write(bad if i % 3 == 1 else good.replace("100ms", rnd.choice(["100ms", "200ms", "150ms"])))
            d.proc.send_signal(signal.SIGHUP)
            time.sleep(rnd.uniform(0, 0.05))
        with open(cfg, "w") as f:
            f.write(good)
        d.proc.send_signal(signal.SIGHUP)
        time.sleep(1)
    run_case("sighup-storm", root, state(), orig, work, extra=["--config", cfg], during=storm,
             expect=[(r"Configuration reloaded", "a good configuration was loaded"),
                     (r'storm.conf:2: interval: invalid duration "banana"', "what is wrong in the bad one"),
                     (r"Configuration reload failed \(.*\), keeping the previous configuration", "it kept the previous one")])
    sim.stop()

# ---------------------------------------------------------------- soak

def journal_objects(text):
    """(lines, objects) of an undo journal: entry lines, and the distinct
    objects they name (a line is appended per change; the latest one of an
    object wins)."""
    key_fields = {"irq": None, "rps": 3, "xps": 3, "flowcnt": 3, "sockflow": 1, "defaffinity": 1, "thread": 4}
    lines, keys = 0, set()
    for line in text.splitlines():
        f = line.split(" ")
        if not f[0] or f[0].startswith("#") or f[0] == "root":
            continue
        lines += 1
        n = key_fields.get(f[0], len(f))
        if n is None:
            n = 3 if len(f) == 6 else 2
        keys.add(tuple(f[:n]))
    return lines, len(keys)


def proc_sample(pid, journal):
    rss = 0
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    try:
        with open(journal, "rb") as f:
            text = f.read()
    except OSError:
        text = b""
    return (rss, fds, len(text)) + journal_objects(text.decode(errors="replace"))


# The soak's host: the torture scenario with load swings on top.  eth0
# doubles for 5 s of every 10 s (a square wave), eth1 falls to a fifth and
# back every 26.3 s (a sine): periods prime to each other, so high and low
# meet in ever new combinations, with CPUs offline or not.
SOAK_SCENARIO = SCENARIO.replace("[nic eth0]\n", "[nic eth0]\nswing = 100 2.0\n") \
                        .replace("[nic eth1]\n", "[nic eth1]\nswing = 263 0.2 sine\n")


def log_since(path, offset):
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read().decode(errors="replace")


def build_kind():
    with open(DAEMON, "rb") as f:
        return "ASan" if b"__asan_init" in f.read() else "plain build"


def case_soak(work, args):
    seconds = float(args[0]) if args else 60
    wrap = args[args.index("--wrap") + 1] if "--wrap" in args else "none"
    kind = build_kind()
    # `make soak BUILD=build-asan` before `make check-asan` configures a
    # plain build-asan, which then soaks under valgrind: say so and stop
    # rather than pass for an ASan soak.
    if kind != "ASan" and "asan" in os.path.basename(os.path.normpath(BLD)).lower():
        print(f"soak: {DAEMON} is not an ASan build although its build dir is named so; "
              "run `make check-asan` first (it configures build-asan with ASan+UBSan)", flush=True)
        sys.exit(1)
    if wrap == "none":
        wrap = kind
    print(f"soak: {DAEMON}: {kind}, " + ("under valgrind memcheck" if wrap == "valgrind" else "run as is"),
          flush=True)
    csv = args[args.index("--csv") + 1] if "--csv" in args else os.path.join(work, "soak.csv")
    sim_csv = os.path.join(work, "soak.sim.csv")
    sim = Sim(work, "soak", seed=11, scenario=SOAK_SCENARIO, csv=sim_csv)
    root, st = sim.root, os.path.join(work, "soak.state")
    orig = snapshot(root)
    cfgs = [os.path.join(work, f"soak{i}.conf") for i in range(3)]
    for path, text in zip(cfgs, ["[daemon]\ninterval = 100ms\n",
                                 "[daemon]\ninterval = 100ms\n[balance]\nrps = no\n",
                                 "[daemon]\ninterval = nonsense\n"]):
        with open(path, "w") as f:
            f.write(text)
    cfg = os.path.join(work, "soak.conf")
    shutil.copy(cfgs[0], cfg)
    env = dict(os.environ)
    wrapper = []
    # Freed memory is held back to catch a late use: 1 MB of it (valgrind's
    # --freelist-vol, ASan's quarantine; defaults 20 MB and 256 MB) so the
    # RSS has levelled off by the end of a 30 s run's warm-up.
    if wrap == "valgrind":
        if not shutil.which("valgrind"):
            print("SKIP: valgrind not installed")
            sys.exit(SKIP)
        wrapper = ["valgrind", "-q", "--error-exitcode=99", "--leak-check=full", "--errors-for-leak-kinds=definite",
                   "--track-fds=no", "--freelist-vol=1000000", f"--log-file={work}/valgrind.%p.log"]
    else:
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + f":log_path={work}/asan:quarantine_size_mb=1"
        env["UBSAN_OPTIONS"] = env.get("UBSAN_OPTIONS", "") + f":log_path={work}/ubsan"
    log = os.path.join(work, "soak.log")
    d = Daemon(root, st, log, extra=["--config", cfg], env=env, wrap=wrapper)
    C.check(d.wait_for("Ready:", 60), f"soak ({wrap}): the daemon is ready", d.text()[-1500:])
    rnd = random.Random(int(os.environ.get("TORTURE_SEED", "13")))
    stash = os.path.join(work, "stash")
    # eth1 is "in" the tree, "out" of it, or back under the name eth5 until
    # the daemon has said it saw eth5 (a rename the daemon never sees
    # tests nothing), then renamed back to eth1.
    nic, saved, renamed_at, renamed_log = "in", None, 0.0, 0
    off = set()
    samples = []
    events = {"nic-out": 0, "as-eth5": 0, "cpu": 0, "hup": 0, "bad-hup": 0}
    t0 = time.time()
    next_sample = t0
    journal = os.path.join(st, "undo.journal")
    while time.time() - t0 < seconds and d.alive():
        now = time.time()
        if now >= next_sample:
            smp = proc_sample(d.proc.pid, journal)
            if smp:
                samples.append((now - t0,) + smp[:3] + (int(nic != "out"),) + smp[3:])
            next_sample += max(1.0, seconds / 120)
        a = rnd.random()
        if a < 0.25:
            if nic == "in":
                saved, nic = nic_remove(root, "eth1", stash), "out"
                events["nic-out"] += 1
            elif nic == "out":
                # every second return is under the other name
                rename = events["nic-out"] % 2 == 0
                saved = nic_add(root, saved, stash, "eth5" if rename else "eth1")
                nic = "eth5" if rename else "in"
                if rename:
                    renamed_at, renamed_log = time.time(), os.path.getsize(log)
                    events["as-eth5"] += 1
            elif grep(log_since(log, renamed_log), r"\beth5: appeared") or time.time() - renamed_at > 10:
                saved = nic_remove(root, "eth5", stash)
                nic_add(root, saved, stash, "eth1")
                nic = "in"
        elif a < 0.5:
            c = rnd.randrange(1, 8)
            if c in off:
                set_cpu_online(root, c, True)
                off.discard(c)
            elif len(off) < 3:
                set_cpu_online(root, c, False)
                off.add(c)
            events["cpu"] += 1
        elif a < 0.65:
            bad = rnd.random() < 0.3
            shutil.copy(cfgs[2] if bad else rnd.choice(cfgs[:2]), cfg)
            d.proc.send_signal(signal.SIGHUP)
            events["bad-hup" if bad else "hup"] += 1
        time.sleep(rnd.uniform(0.2, 1.0))
    # Everything back in place, a good configuration, a few ticks, stop.
    if nic == "out":
        nic_add(root, saved, stash, "eth1")
    elif nic == "eth5":
        nic_add(root, nic_remove(root, "eth5", stash), stash, "eth1")
    for c in off:
        set_cpu_online(root, c, True)
    shutil.copy(cfgs[0], cfg)
    if d.alive():
        d.proc.send_signal(signal.SIGHUP)
    time.sleep(2)
    alive = d.alive()
    ran = time.time() - t0
    C.check(alive, f"soak ({wrap}): the daemon ran {ran:.0f} s ({ran / TICK:.0f} simulated s) "
                   f"through {events} churn events", d.text()[-2000:])
    rc = d.kill(signal.SIGTERM)
    C.check(rc == 0, f"soak ({wrap}): SIGTERM exits 0 (status {rc})", d.text()[-800:])
    all_back(root, st, orig, f"soak ({wrap})")
    sim.stop()
    text = d.text()
    seen = len(re.findall(r"\beth5: appeared", text))
    C.check(seen >= events["as-eth5"] and (events["as-eth5"] > 0 or seconds < 20),
            f"soak ({wrap}): eth1 came back as eth5 {events['as-eth5']} times, the log says 'eth5: appeared' "
            f"{seen} times")
    C.check(grep(text, r"\beth1: vanished") and grep(text, r"\beth1: appeared"),
            f"soak ({wrap}): the log says eth1 vanished and appeared")
    # The load swings happened: the simulator's network demand (CPUs of
    # work, all NICs) at its high and low tenths, after the first period.
    demand = []
    try:
        with open(sim_csv) as f:
            next(f)
            demand = sorted(float(l.split(",")[5]) for i, l in enumerate(f) if i >= 100)
    except (OSError, StopIteration, IndexError, ValueError):
        pass
    if demand:
        lo, hi = demand[len(demand) // 10], demand[len(demand) * 9 // 10]
        C.check(hi >= 1.6 * lo, f"soak ({wrap}): the load swung: demand {lo:.2f} CPUs at the 10th percentile, "
                                f"{hi:.2f} at the 90th, over {len(demand)} ticks")
    else:
        C.check(False, f"soak ({wrap}): the simulator wrote its per-tick demand", sim_csv)
    moves = len(re.findall(r"^\S+ \S+ \S+ (?:IRQ|RPS|XPS|rps_).* -> ", text, re.M))
    print(f"info soak ({wrap}): {moves} changes logged by the daemon", flush=True)
    reports = glob.glob(os.path.join(work, "valgrind.*.log")) + glob.glob(os.path.join(work, "asan*")) + \
        glob.glob(os.path.join(work, "ubsan*"))
    errs = "".join(open(p, errors="replace").read() for p in reports).strip()
    errs += "".join(l + "\n" for l in text.splitlines() if "runtime error:" in l or "Sanitizer" in l)
    C.check(not errs, f"soak ({wrap}): no sanitizer or valgrind reports", errs[:3000])
    with open(csv, "w") as f:
        f.write("t_s,rss_kb,fds,journal_bytes,eth1_in_tree,journal_lines,journal_objects\n")
        for smp in samples:
            f.write("%.1f,%d,%d,%d,%d,%d,%d\n" % smp)
    judge_flat(samples, seconds, wrap)
    judge_journal(samples, orig, wrap)
    print(f"soak ({wrap}): samples in {csv}", flush=True)


def judge_flat(samples, seconds, wrap):
    """RSS and open fds flat, and the journal size in runs of 5 min or
    more: after the first fifth (warm-up: the first layouts, the journal
    filling, 1 MB of freed memory held back by ASan or valgrind), the last
    quarter's median is no higher than the first quarter's, give or take
    noise.  Medians, as a sample may fall within a tick, when irqsteerd
    holds a file or two more.  The fds irqsteerd holds open for re-reading
    (13 for eth1's attributes) come and go with eth1, so only samples with
    eth1 (or eth5) in the tree are compared.  The RSS of a run shorter than
    5 min may grow by 2 MB: 30 s runs here grew by 0.2-0.9 MB after warm-up
    (valgrind and ASan, seeds 13 and 1), still touching new code paths."""
    n = len(samples)
    if not C.check(n >= 8, f"soak ({wrap}): {n} samples of RSS, fds and journal size"):
        return

    def med(xs):
        return sorted(xs)[len(xs) // 2]

    def quarters(body):
        q = max(1, len(body) // 4)
        return body[:q], body[-q:]
    body = samples[n // 5:]
    with_eth1 = [s for s in body if s[4]]
    rss_slack = (lambda v: 2048) if seconds < 300 else (lambda v: v * 0.05 + 512)
    for i, name, rows, slack in ((1, "RSS (kB)", body, rss_slack),
                                 (2, "open fds with eth1/eth5 in the tree", with_eth1, lambda v: 1),
                                 (3, "journal bytes", body, lambda v: v * 0.5 + 512)):
        if not C.check(len(rows) >= 4, f"soak ({wrap}): {name}: {len(rows)} samples after warm-up"):
            continue
        first, last = quarters(rows)
        f_m, l_m = med([s[i] for s in first]), med([s[i] for s in last])
        lo, hi = min(s[i] for s in samples), max(s[i] for s in samples)
        what = f"soak ({wrap}): {name}: first quarter median {f_m}, last quarter median {l_m}"
        if i == 3 and seconds < 300:
            print(f"info {what} (range {lo}-{hi}); bounded by its objects, below", flush=True)
        else:
            C.check(l_m <= f_m + slack(f_m), f"{what} (limit {f_m + slack(f_m):.0f}; range {lo}-{hi}), flat")


def judge_journal(samples, orig, wrap):
    """The journal stays bounded whatever the run's length: it lists each
    object irqsteerd changed, at most every IRQ and queue file of the tree
    (eth1's twice: also as eth5) and the socket flow table, and undo.c
    rewrites it whole once its appended lines reach twice its objects + 64.
    (Its size in a short run grows as more objects get changed, so a
    median comparison only judges runs of 5 min or more.)"""
    irqs = sum(p.endswith("/smp_affinity_list") for p in orig)
    queues = sum(p.startswith("sys/class/net/") for p in orig)
    eth1 = sum(p.startswith("sys/class/net/eth1/") for p in orig)
    most = irqs + queues + eth1 + 2
    objs = max(s[6] for s in samples)
    C.check(0 < objs <= most, f"soak ({wrap}): the journal named up to {objs} objects "
                              f"(at most {most}: every IRQ and queue file, eth1's also as eth5)")
    worst = max(samples, key=lambda s: s[5] - 2 * s[6])
    C.check(worst[5] <= 2 * worst[6] + 64,
            f"soak ({wrap}): the journal is rewritten before its lines pass twice its objects + 64 "
            f"(closest: {worst[5]} lines for {worst[6]} objects; at most {max(s[5] for s in samples)} lines)")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in (DAEMON, CTL, SIM):
        if not os.access(p, os.X_OK):
            print(f"SKIP: {p} not built")
            sys.exit(SKIP)
    work = tempfile.mkdtemp(prefix="irqsteer-torture.")
    keep = os.environ.get("TORTURE_KEEP")
    try:
        if sys.argv[1] == "kills":
            case_kills(work, int(sys.argv[2]) if len(sys.argv) > 2 else 200)
        elif sys.argv[1] == "faults":
            case_faults(work)
        elif sys.argv[1] == "soak":
            case_soak(work, sys.argv[2:])
        else:
            sys.exit(__doc__)
    finally:
        for sim in SIMS:
            sim.stop()
        if keep:
            print(f"work dir kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    C.exit()


if __name__ == "__main__":
    main()

"""Helpers for the irqsteerd tests: a writable fixture root, an sd_notify
listener, a daemon runner, and a runner of independent cases two at a time.
Used by tests/daemon-notify.py and the live tests; stdlib only."""
import contextlib
import io
import json
import multiprocessing
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

SKIP = 77


def env_path(name, default=None):
    v = os.environ.get(name, default)
    if not v:
        print(f"SKIP: {name} is not set (run through make check)")
        sys.exit(SKIP)
    return v


class Checker:
    """Counts failed checks; every check prints one line."""

    def __init__(self):
        self.failed = 0
        self.passed = 0

    def check(self, cond, what, detail=""):
        if cond:
            self.passed += 1
            print(f"ok   {what}")
        else:
            self.failed += 1
            print(f"FAIL {what}" + (f": {detail}" if detail else ""))
        return cond

    def exit(self):
        print(f"{self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed else 0)


_pool_checker = None


def _outcome(failed, code):
    """A case's result from its failed checks and how it ended (code: None
    when it returned, else its exit code): any failed check, a raise or a
    nonzero exit other than 77 fails it; 77 with no failed check skips it;
    a return or exit 0 passes it."""
    if failed:
        return "fail"
    if code is None or code == 0:
        return "pass"
    if code == SKIP:
        return "skip"
    return "fail"


def _run_case(case):
    """In a pool worker: one case with its own counts and its output kept.
    The worker was forked with the test's checker in _pool_checker, the
    same object the cases check through."""
    checker = _pool_checker
    checker.passed = checker.failed = 0
    out = io.StringIO()
    t0 = time.monotonic()
    code = None
    with contextlib.redirect_stdout(out):
        try:
            case()
        except SystemExit as e:  # env_path's SKIP, say, or checker.exit()
            code = e.code
        except Exception:  # a case that raises fails, as it would run alone
            checker.failed += 1
            print(f"FAIL {case.__name__} raised:\n{traceback.format_exc()}")
        result = _outcome(checker.failed, code)
        if result == "fail" and not checker.failed:
            print(f"FAIL {case.__name__} exited with {code!r}")
            checker.failed += 1
        elif result == "skip":
            print(f"skip {case.__name__}")
    return checker.passed, checker.failed, out.getvalue(), time.monotonic() - t0, result


def run_cases(checker, cases, jobs=2):
    """Runs independent cases (functions taking no arguments that check
    through checker) in jobs forked processes at a time; each case's output
    is printed whole, in the order given, with its seconds; the counts are
    added to checker.  For cases that touch only their own fixture root and
    files: none may depend on another, on timing that a second case running
    beside it would upset, or on the host.
    Every case runs whatever another did; a failed one fails the test
    (through checker's count, at the caller's checker.exit()).  The test
    exits 77 here only when every case skipped and nothing was checked
    before; skipped cases beside passed ones are named and the test passes."""
    global _pool_checker
    _pool_checker = checker
    checked_before = checker.passed + checker.failed
    results = {"pass": 0, "fail": 0, "skip": 0}
    sys.stdout.flush()
    with multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=1) as pool:
        for case, (passed, failed, out, secs, result) in zip(cases, pool.imap(_run_case, cases, 1)):
            print(out, end="")
            print(f"-- {case.__name__}: {secs:.1f} s, {result}", flush=True)
            checker.passed += passed
            checker.failed += failed
            results[result] += 1
    print(f"cases: {results['pass']} passed, {results['fail']} failed, {results['skip']} skipped",
          flush=True)
    if cases and results["skip"] == len(cases) and not checked_before:
        sys.exit(SKIP)


def online_cpus(root):
    """CPU numbers of sys/devices/system/cpu/online under root."""
    with open(os.path.join(root, "sys/devices/system/cpu/online")) as f:
        text = f.read().strip()
    cpus = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            cpus.extend(range(int(a), int(b) + 1))
        elif part:
            cpus.append(int(part))
    return cpus


class LoadWriter:
    """Advances the fixture's load (write_load) every 50 ms in a thread,
    from its creation until stop()."""

    def __init__(self, root, hot_cpu=None):
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(root, hot_cpu))
        self._thread.start()

    def _run(self, root, hot_cpu):
        step = 2
        while not self._done.is_set():
            write_load(root, step, hot_cpu=hot_cpu)
            step += 1
            time.sleep(0.05)

    def stop(self):
        self._done.set()
        self._thread.join()


def write_load(root, step, hot_cpu=None, cpus=None):
    """Writes proc/stat and proc/softirqs for the online CPUs (or cpus):
    counters advance with step (100 ticks per step per CPU); hot_cpu spends
    95% of its ticks in softirq."""
    if cpus is None:
        cpus = online_cpus(root)
    lines = []
    tot = [0] * 10
    for cpu in cpus:
        t = 100 * step
        if cpu == hot_cpu:
            v = [t * 2 // 100, 0, t * 2 // 100, t // 100, 0, 0, t * 95 // 100, 0, 0, 0]
        else:
            v = [t * 5 // 100, 0, t * 3 // 100, t * 90 // 100, 0, 0, t * 2 // 100, 0, 0, 0]
        v = [x + 1000 for x in v]
        tot = [a + b for a, b in zip(tot, v)]
        lines.append(f"cpu{cpu} " + " ".join(map(str, v)))
    stat = "cpu  " + " ".join(map(str, tot)) + "\n" + "\n".join(lines) + "\n"
    stat += "intr 0\nctxt 0\nbtime 0\nprocesses 1\nprocs_running 1\nprocs_blocked 0\nsoftirq 0\n"
    rows = ["HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU"]
    soft = "       " + "".join(f"CPU{c:<11d}" for c in cpus) + "\n"
    for i, r in enumerate(rows):
        per = []
        for cpu in cpus:
            base = 1000 * (i + 1)
            if r == "NET_RX":
                base += step * (5000 if cpu == hot_cpu else 50)
            elif r == "TIMER":
                base += step * 100
            per.append(f"{base:>11d}")
        soft += f"{r + ':':>8}" + " ".join(per) + "\n"
    for name, text in (("stat", stat), ("softirqs", soft)):
        tmp = os.path.join(root, "proc", f".{name}.tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(root, "proc", name))


def bump_interrupts(root, irq, cpu, n):
    """Adds n interrupts on CPU column cpu to IRQ irq's row of
    proc/interrupts, keeping the layout (as the kernel's counters grow)."""
    path = os.path.join(root, "proc", "interrupts")
    with open(path) as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines):
        head, sep, rest = line.partition(":")
        if sep and head.strip() == str(irq):
            cols = rest.split()
            ncpu = len(lines[0].split())
            counts = [int(x) for x in cols[:ncpu]]
            counts[cpu] += n
            lines[i] = f"{head}:" + "".join(f" {x:>10d}" for x in counts) + " " + " ".join(cols[ncpu:])
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines))
    os.replace(tmp, path)


def make_root(tmp, fixture="vm2"):
    """A writable copy of tests/fixtures/FIXTURE with proc/stat and
    proc/softirqs matching its CPUs."""
    src = os.path.join(env_path("IRQSTEER_FIXTURES"), fixture)
    root = os.path.join(tmp, "root")
    shutil.copytree(src, root, symlinks=True)
    # make distcheck hands us a read-only source tree, and the daemon drops
    # CAP_DAC_OVERRIDE: the copy must be writable by its owner
    # (the root itself too: a run without --state-dir keeps ROOT/run/irqsteer)
    os.chmod(root, os.stat(root).st_mode | 0o200)
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode | 0o200)
    write_load(root, 1)
    return root


def tree_values(root):
    """{path: content} of every file the daemon may write under root."""
    out = {}
    for base in ("proc/irq", "sys/class/net", "sys/devices", "proc/sys/net/core"):
        top = os.path.join(root, base)
        for dirpath, dirnames, filenames in os.walk(top):
            for fn in filenames:
                if fn in ("smp_affinity", "smp_affinity_list", "rps_cpus", "rps_flow_cnt", "xps_cpus",
                          "rps_sock_flow_entries"):
                    p = os.path.join(dirpath, fn)
                    try:
                        with open(p) as f:
                            out[os.path.relpath(p, root)] = f.read().strip()
                    except OSError:
                        pass
    return out


def tree_bytes(root, skip=()):
    """{relative path: bytes} of every regular file under root, and
    {path: "-> target"} for every symlink (not followed); paths in skip
    left out."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            rel = os.path.relpath(p, root)
            if rel in skip:
                continue
            if os.path.islink(p):
                out[rel] = "-> " + os.readlink(p)
            elif os.path.isfile(p):
                with open(p, "rb") as f:
                    out[rel] = f.read()
    return out


def tree_diff(a, b):
    """The paths that differ between two tree_bytes() results."""
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


class NotifySocket:
    """An AF_UNIX datagram socket standing in for systemd's NOTIFY_SOCKET."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.seen = []

    def recv(self, timeout):
        """One datagram as a list of KEY=VALUE lines, or None on timeout."""
        self.sock.settimeout(max(timeout, 0.001))
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return None
        msg = data.decode(errors="replace").split("\n")
        self.seen.append(msg)
        return msg

    def wait_for(self, pred, timeout):
        """Reads datagrams until pred(msg); returns (msg, skipped) or (None, skipped)."""
        end = time.monotonic() + timeout
        skipped = []
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None, skipped
            msg = self.recv(left)
            if msg is None:
                return None, skipped
            if pred(msg):
                return msg, skipped
            skipped.append(msg)

    def close(self):
        self.sock.close()


def field(msg, key):
    """Value of KEY= in a datagram, or None."""
    for line in msg or []:
        if line.startswith(key + "="):
            return line[len(key) + 1:]
    return None


def start_daemon(args, log_path, notify_path=None, watchdog_usec=None, extra_env=None, wrapper=(), daemon=None):
    """Starts daemon (IRQSTEERD unless given) with args; WATCHDOG_PID is the
    daemon's own PID (the shell execs it).  stderr goes to log_path."""
    daemon = daemon or env_path("IRQSTEERD")
    env = dict(os.environ)
    env.pop("NOTIFY_SOCKET", None)
    env.pop("WATCHDOG_USEC", None)
    env.pop("WATCHDOG_PID", None)
    env.pop("JOURNAL_STREAM", None)
    if notify_path:
        env["NOTIFY_SOCKET"] = notify_path
    if watchdog_usec:
        env["WATCHDOG_USEC"] = str(watchdog_usec)
    if extra_env:
        env.update(extra_env)
    log = open(log_path, "ab")
    cmd = list(wrapper) + ["sh", "-c", 'WATCHDOG_PID=$$; export WATCHDOG_PID; exec "$@"', "sh", daemon] + list(args)
    p = subprocess.Popen(cmd, stdout=log, stderr=log, env=env)
    log.close()
    return p


def stop(p, sig=signal.SIGTERM, timeout=10):
    """Sends sig and waits; returns the exit code (None if it had to be killed)."""
    if p.poll() is None:
        p.send_signal(sig)
    try:
        return p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return None


def read_log(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def wait_until(pred, timeout, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def tmpdir(prefix):
    return tempfile.mkdtemp(prefix=prefix)

#!/usr/bin/env python3
"""irqsteerd against a fixture root, through its outside interfaces: the
sd_notify sequence (READY, STATUS, WATCHDOG, RELOADING+MONOTONIC_USEC,
STOPPING, ERRNO), reload with a good and a bad configuration, status.json,
--check-config, --help, --dry-run, --once and recovery after kill -9.
Needs no root: everything happens below a temporary copy of
tests/fixtures/vm2.  Run by tests/test-daemon-notify.sh."""
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
daemon = dl.env_path("IRQSTEERD")
tmp = dl.tmpdir("irqsteer-notify.")


def cmd(args):
    env = dict(os.environ)
    env.pop("NOTIFY_SOCKET", None)
    return subprocess.run([daemon] + args, capture_output=True, text=True, env=env, timeout=60)


def has(msg, line):
    return msg is not None and line in msg


def test_check_config():
    good = os.path.join(tmp, "good.conf")
    bad = os.path.join(tmp, "bad.conf")
    with open(good, "w") as f:
        f.write("[daemon]\ninterval = 1s\n\n[balance]\nhot_enter = 80%\nhot_exit = 60%\n")
    with open(bad, "w") as f:
        f.write("[balance]\nhot_enter = banana\nno_such_key = 1\n")
    cases = [
        {"what": "good file", "args": ["--check-config", "--config", good], "rc": 0,
         "stdout": r"^configuration OK\n$", "stderr": r"^$"},
        {"what": "bad file: every problem as FILE:LINE: KEY: problem", "args": ["--check-config", "-c", bad], "rc": 1,
         "stdout": r"^$",
         "stderr": r"^" + re.escape(bad) + r":2: hot_enter: .+\n" + re.escape(bad) + r":3: no_such_key: .+\n$"},
        {"what": "missing explicit file is an error", "args": ["--check-config", "-c", os.path.join(tmp, "nope.conf")],
         "rc": 1, "stdout": r"^$", "stderr": r"nope\.conf"},
        {"what": "unknown option", "args": ["--no-such-option"], "rc": 2, "stdout": r"^$", "stderr": r"--help"},
        {"what": "bad interval", "args": ["--interval", "fast"], "rc": 2, "stdout": r"^$", "stderr": r"--interval"},
        {"what": "bad log level", "args": ["--log-level", "loud"], "rc": 2, "stdout": r"^$", "stderr": r"--log-level"},
        {"what": "stray argument", "args": ["extra"], "rc": 2, "stdout": r"^$", "stderr": r"extra"},
        {"what": "--version", "args": ["--version"], "rc": 0, "stdout": r"^irqsteerd \S+\n$", "stderr": r"^$"},
    ]
    for case in cases:
        r = cmd(case["args"])
        c.check(r.returncode == case["rc"], f"check-config/cli: {case['what']}: exit {case['rc']}",
                f"got {r.returncode}, stderr {r.stderr!r}")
        c.check(re.search(case["stdout"], r.stdout) is not None, f"check-config/cli: {case['what']}: stdout",
                repr(r.stdout))
        c.check(re.search(case["stderr"], r.stderr) is not None, f"check-config/cli: {case['what']}: stderr",
                repr(r.stderr))

    # --help names every long option the parser accepts.
    r = cmd(["--help"])
    c.check(r.returncode == 0, "--help exits 0")
    for opt in ("--foreground", "--config", "--check-config", "--root", "--state-dir", "--dry-run", "--once",
                "--interval", "--log-level", "--help", "--version"):
        c.check(opt in r.stdout, f"--help mentions {opt}")
        if opt not in ("--help", "--version", "--check-config", "--once"):
            # each one is accepted by the parser (with --check-config it exits before running)
            pass


def run_lifecycle():
    root = dl.make_root(os.path.join(tmp, "life"))
    state = os.path.join(tmp, "life", "state")
    conf = os.path.join(tmp, "life", "irqsteer.conf")
    log = os.path.join(tmp, "life", "daemon.log")
    with open(conf, "w") as f:
        f.write("[daemon]\nlog_level = debug\n")
    ns = dl.NotifySocket(os.path.join(tmp, "life", "notify.sock"))
    pristine = dl.tree_values(root)
    p = dl.start_daemon(["--root", root, "--state-dir", state, "--interval", "200ms", "--config", conf], log,
                        notify_path=ns.path, watchdog_usec=600000)
    try:
        msg, skipped = ns.wait_for(lambda m: has(m, "READY=1"), T)
        c.check(msg is not None, "READY=1 arrives", dl.read_log(log)[-2000:])
        c.check(not skipped, "READY=1 is the first message", repr(skipped))
        st = dl.field(msg, "STATUS")
        c.check(st is not None and st.startswith("hot: "), "READY=1 carries STATUS=hot: ...", repr(msg))

        msg, _ = ns.wait_for(lambda m: dl.field(m, "STATUS") is not None and not has(m, "READY=1"), T)
        c.check(msg is not None, "a tick sends STATUS=")
        st = dl.field(msg, "STATUS") or ""
        c.check(re.match(r"^hot: .*; \d+ queue IRQs, \d+ RPS queues managed; \d+ moves/10min", st) is not None,
                "STATUS line format", st)

        msg, _ = ns.wait_for(lambda m: has(m, "WATCHDOG=1"), T)
        c.check(msg is not None, "WATCHDOG=1 pings with WATCHDOG_USEC set")
        t0 = time.monotonic()
        n_wd = 0
        while time.monotonic() - t0 < 1.5:
            m = ns.recv(0.2)
            if has(m, "WATCHDOG=1"):
                n_wd += 1
        c.check(n_wd >= 3, "WATCHDOG=1 at about half of WATCHDOG_USEC (600 ms)", f"{n_wd} pings in 1.5 s")

        status = dl.wait_until(lambda: dl.load_json(os.path.join(state, "status.json")), T)
        c.check(status is not None, "status.json written")
        if status:
            c.check(status.get("version") == 1, "status.json version 1")
            c.check(status.get("pid") == p.pid, "status.json pid is the daemon's", f"{status.get('pid')} vs {p.pid}")
            c.check(isinstance(status.get("status"), str) and status["status"].startswith("hot: "),
                    "status.json status line")
            c.check(isinstance(status.get("started_usec"), int), "status.json started_usec")
            c.check(isinstance(status.get("config"), dict) and status["config"].get("path") == conf,
                    "status.json config in force")
            c.check(isinstance(status.get("managed"), list), "status.json managed list")
            c.check(isinstance(status.get("last_actions"), list), "status.json last_actions list")
            mode = os.stat(os.path.join(state, "status.json")).st_mode & 0o777
            c.check(mode == 0o644, "status.json mode 0644", oct(mode))

        # Reload, good configuration.
        before = time.clock_gettime(time.CLOCK_MONOTONIC)
        p.send_signal(signal.SIGHUP)
        msg, _ = ns.wait_for(lambda m: has(m, "RELOADING=1"), T)
        c.check(msg is not None, "SIGHUP: RELOADING=1")
        mono = dl.field(msg, "MONOTONIC_USEC")
        c.check(mono is not None and mono.isdigit(), "RELOADING=1 and MONOTONIC_USEC= in one datagram", repr(msg))
        if mono and mono.isdigit():
            after = time.clock_gettime(time.CLOCK_MONOTONIC)
            c.check(before * 1e6 - 1e3 <= int(mono) <= after * 1e6 + 1e3, "MONOTONIC_USEC is CLOCK_MONOTONIC now",
                    f"{mono} not in [{before * 1e6:.0f}, {after * 1e6:.0f}]")
        msg, _ = ns.wait_for(lambda m: has(m, "READY=1"), T)
        c.check(msg is not None, "reload ends with READY=1")
        c.check("reload failed" not in (dl.field(msg, "STATUS") or ""), "good reload: no failure in STATUS")

        # Reload, bad configuration: keeps running with the old one.
        with open(conf, "w") as f:
            f.write("[daemon]\nlog_level = debug\n[balance]\nhot_enter = banana\n")
        p.send_signal(signal.SIGHUP)
        msg, _ = ns.wait_for(lambda m: has(m, "RELOADING=1"), T)
        c.check(msg is not None, "bad reload: RELOADING=1")
        msg, _ = ns.wait_for(lambda m: has(m, "READY=1"), T)
        st = dl.field(msg, "STATUS") or ""
        c.check(st.startswith(f"config reload failed: {conf}:4: hot_enter: "),
                "bad reload: STATUS=config reload failed: FILE:LINE: KEY: ...", st)
        msg, _ = ns.wait_for(lambda m: has(m, "WATCHDOG=1"), T)
        c.check(msg is not None and p.poll() is None, "bad reload: still running and pinging the watchdog")
        msg, _ = ns.wait_for(lambda m: dl.field(m, "STATUS") is not None and not has(m, "READY=1"), T)
        c.check("config reload failed" in (dl.field(msg, "STATUS") or ""), "bad reload: the failure stays in STATUS")
        c.check("hot_enter" in dl.read_log(log), "bad reload: the problem is logged")
        status = dl.load_json(os.path.join(state, "status.json")) or {}
        c.check(status.get("config", {}).get("log_level") == "debug", "bad reload: old config still in force")

        # Fixed again.
        with open(conf, "w") as f:
            f.write("[daemon]\nlog_level = info\n")
        p.send_signal(signal.SIGHUP)
        msg, _ = ns.wait_for(lambda m: has(m, "READY=1"), T)
        c.check(msg is not None and "reload failed" not in (dl.field(msg, "STATUS") or ""),
                "fixed reload clears the failure")

        actions_done = os.path.exists(os.path.join(state, "undo.journal"))
        c.check(actions_done, "the initial layout wrote the undo journal")
        c.check(dl.tree_values(root) != pristine, "the initial layout changed the fixture tree")

        p.send_signal(signal.SIGTERM)
        msg, _ = ns.wait_for(lambda m: has(m, "STOPPING=1"), T)
        c.check(msg is not None, "SIGTERM: STOPPING=1")
        rc = dl.stop(p, timeout=T)
        c.check(rc == 0, "SIGTERM: exit 0", f"rc {rc}")
        c.check(dl.tree_values(root) == pristine, "SIGTERM: every changed value restored")
        c.check(not os.path.exists(os.path.join(state, "undo.journal")), "SIGTERM: journal removed")
        c.check(not os.path.exists(os.path.join(state, "status.json")), "SIGTERM: status.json removed")
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)
        ns.close()


def run_startup_failure():
    d = os.path.join(tmp, "fail")
    os.makedirs(d)
    ns = dl.NotifySocket(os.path.join(d, "notify.sock"))
    log = os.path.join(d, "daemon.log")
    p = dl.start_daemon(["--root", os.path.join(d, "missing-root"), "--state-dir", os.path.join(d, "state")], log,
                        notify_path=ns.path)
    try:
        msg, _ = ns.wait_for(lambda m: dl.field(m, "ERRNO") is not None, T)
        c.check(msg is not None and dl.field(msg, "ERRNO") == "2", "startup failure: ERRNO=2 (ENOENT)", repr(msg))
        rc = p.wait(T)
        c.check(rc == 1, "startup failure: exit 1", f"rc {rc}")
        c.check(not any("READY=1" in m for m in ns.seen), "startup failure: never READY")
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)
        ns.close()

    # A bad configuration at startup: ERRNO= and the problem in STATUS.
    conf = os.path.join(d, "bad.conf")
    with open(conf, "w") as f:
        f.write("[balance]\nhot_samples = -3\n")
    ns = dl.NotifySocket(os.path.join(d, "notify2.sock"))
    root = dl.make_root(os.path.join(d, "r"))
    p = dl.start_daemon(["--root", root, "--state-dir", os.path.join(d, "state"), "-c", conf], log, notify_path=ns.path)
    try:
        msg, _ = ns.wait_for(lambda m: dl.field(m, "ERRNO") is not None, T)
        c.check(f"{conf}:2: hot_samples" in (dl.field(msg, "STATUS") or ""), "bad config at start: problem in STATUS",
                repr(msg))
        c.check(p.wait(T) == 1, "bad config at start: exit 1")
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)
        ns.close()


def run_dry_run():
    d = os.path.join(tmp, "dry")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    log = os.path.join(d, "daemon.log")
    ns = dl.NotifySocket(os.path.join(d, "notify.sock"))
    pristine = dl.tree_values(root)
    p = dl.start_daemon(["--root", root, "--state-dir", state, "--interval", "200ms", "--dry-run"], log,
                        notify_path=ns.path)
    try:
        msg, _ = ns.wait_for(lambda m: has(m, "READY=1"), T)
        c.check(msg is not None and (dl.field(msg, "STATUS") or "").startswith("dry-run: "),
                "dry-run: READY with STATUS=dry-run: ...", repr(msg))
        ns.wait_for(lambda m: False, 1.0)
        c.check(dl.stop(p, timeout=T) == 0, "dry-run: SIGTERM exit 0")
        c.check(dl.tree_values(root) == pristine, "dry-run: nothing written under the root")
        c.check(not os.path.exists(os.path.join(state, "undo.journal")), "dry-run: no undo journal")
        text = dl.read_log(log)
        c.check("dry-run: would set IRQ" in text, "dry-run: logs what it would set", text[-1500:])
        # The same decisions are not repeated every tick (the overlay keeps
        # the policy from taking its unapplied decisions for external changes).
        c.check(len(re.findall(r"would set IRQ 38 ", text)) == 1, "dry-run: each decision logged once",
                str(len(re.findall(r"would set IRQ 38 ", text))))
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)
        ns.close()


def run_dry_run_audit():
    """host64 has more NIC IRQs and queues than one tick's audit slice (64):
    in dry-run the overlay must still hold for the objects re-read at each
    tick, or the policy takes its own unapplied decisions for external
    changes."""
    d = os.path.join(tmp, "dry-audit")
    root = dl.make_root(d, "host64")
    state = os.path.join(d, "state")
    log = os.path.join(d, "daemon.log")
    status = os.path.join(state, "status.json")
    p = dl.start_daemon(["--root", root, "--state-dir", state, "--interval", "100ms", "--dry-run"], log)
    try:
        ok = dl.wait_until(lambda: (dl.load_json(status) or {}).get("ticks", 0) >= 8, T)
        c.check(ok, "dry-run audit: 8 ticks", dl.read_log(log)[-1500:])
        c.check(dl.stop(p, timeout=T) == 0, "dry-run audit: SIGTERM exit 0")
        text = dl.read_log(log)
        c.check("dry-run: would set IRQ" in text, "dry-run audit: lays the NICs out", text[-1500:])
        c.check("someone else" not in text, "dry-run audit: no own decision taken for an external change",
                "\n".join(line for line in text.splitlines() if "someone else" in line)[:1500])
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)


def run_once_and_crash():
    d = os.path.join(tmp, "once")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    log = os.path.join(d, "daemon.log")
    pristine = dl.tree_values(root)
    t0 = time.monotonic()
    p = dl.start_daemon(["--root", root, "--state-dir", state, "--interval", "500ms", "--once"], log)
    rc = p.wait(T)
    el = time.monotonic() - t0
    c.check(rc == 0, "--once: exit 0 by itself", dl.read_log(log)[-1500:])
    c.check(el >= 0.45, "--once: two samples one interval apart", f"{el:.2f}s")
    c.check(dl.tree_values(root) != pristine, "--once: changes left in place")
    c.check(os.path.exists(os.path.join(state, "undo.journal")), "--once: undo journal left for irqsteerctl restore")

    # A crashed run's journal is replayed by the next start.
    shutil.rmtree(state)
    shutil.rmtree(root)
    root = dl.make_root(d)
    p = dl.start_daemon(["--root", root, "--state-dir", state, "--interval", "200ms"], log)
    try:
        ok = dl.wait_until(lambda: os.path.exists(os.path.join(state, "undo.journal")), T)
        c.check(ok, "crash: journal written before kill -9")
        time.sleep(0.3)
        p.send_signal(signal.SIGKILL)
        p.wait(T)
        changed = dl.tree_values(root)
        c.check(changed != pristine, "crash: changes left behind by kill -9")
        # Pretend someone else changed one value meanwhile... not here:
        # the apply tests cover "changed by others".
        log2 = os.path.join(d, "daemon2.log")
        ns = dl.NotifySocket(os.path.join(d, "notify.sock"))
        p = dl.start_daemon(["--root", root, "--state-dir", state, "--interval", "200ms"], log2, notify_path=ns.path)
        msg, _ = ns.wait_for(lambda m: has(m, "READY=1"), T)
        c.check(msg is not None, "crash: next start reaches READY")
        text = dl.read_log(log2)
        c.check("did not stop cleanly" in text, "crash: next start notices the journal", text[-1500:])
        m = re.search(r"Recovery: (\d+) restored", text)
        c.check(m is not None and int(m.group(1)) > 0, "crash: recovery restored objects", m.group(0) if m else text)
        c.check(dl.stop(p, timeout=T) == 0, "crash: second run stops cleanly")
        c.check(dl.tree_values(root) == pristine, "crash: all original values back after the second run")
        ns.close()
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)


def run_hot():
    """A CPU spending 95% in softirq shows up in STATUS and status.json."""
    d = os.path.join(tmp, "hot")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    log = os.path.join(d, "daemon.log")
    ns = dl.NotifySocket(os.path.join(d, "notify.sock"))
    done = threading.Event()

    def load():
        step = 2
        while not done.is_set():
            dl.write_load(root, step, hot_cpu=1)
            step += 1
            time.sleep(0.05)

    t = threading.Thread(target=load)
    t.start()
    p = dl.start_daemon(["--root", root, "--state-dir", state, "--interval", "200ms"], log, notify_path=ns.path)
    try:
        msg, _ = ns.wait_for(lambda m: "hot: cpu1 (" in (dl.field(m, "STATUS") or ""), T)
        c.check(msg is not None, "hot CPU: STATUS=hot: cpu1 (NN%)", dl.read_log(log)[-1500:])
        st = dl.field(msg, "STATUS") or ""
        c.check(re.match(r"^hot: cpu1 \(9\d%\);", st) is not None, "hot CPU: its load in STATUS", st)
        status = dl.load_json(os.path.join(state, "status.json")) or {}
        hot = status.get("hot_cpus") or [{}]
        c.check(hot[0].get("cpu") == 1 and 0.8 < hot[0].get("load", 0) <= 1.0, "hot CPU: status.json hot_cpus",
                repr(hot))
        c.check(dl.stop(p, timeout=T) == 0, "hot CPU: SIGTERM exit 0")
    finally:
        done.set()
        t.join()
        dl.stop(p, signal.SIGKILL, timeout=5)
        ns.close()


def run_hotplug():
    """A CPU going offline (its /proc/stat line gone) re-reads the topology."""
    d = os.path.join(tmp, "hotplug")
    root = dl.make_root(d)
    log = os.path.join(d, "daemon.log")
    ns = dl.NotifySocket(os.path.join(d, "notify.sock"))
    p = dl.start_daemon(["--root", root, "--state-dir", os.path.join(d, "state"), "--interval", "200ms"], log,
                        notify_path=ns.path)
    try:
        msg, _ = ns.wait_for(lambda m: has(m, "READY=1"), T)
        c.check(msg is not None, "hotplug: ready")
        with open(os.path.join(root, "sys/devices/system/cpu/online"), "w") as f:
            f.write("0-1\n")
        dl.write_load(root, 5, cpus=[0, 1])
        ok = dl.wait_until(lambda: "topology: 2 CPUs online (0-1)" in dl.read_log(log), T)
        c.check(ok and "CPU hotplug" in dl.read_log(log), "hotplug: CPU set change re-reads the topology",
                dl.read_log(log)[-1500:])
        c.check(dl.stop(p, timeout=T) == 0, "hotplug: SIGTERM exit 0")
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)
        ns.close()


try:
    test_check_config()
    run_hot()
    run_hotplug()
    run_lifecycle()
    run_startup_failure()
    run_dry_run()
    run_dry_run_audit()
    run_once_and_crash()
finally:
    if c.failed and os.environ.get("IRQSTEER_KEEP_TMP"):
        print(f"kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
c.exit()

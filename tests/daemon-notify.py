#!/usr/bin/env python3
"""irqsteerd against a fixture root, through its outside interfaces: the
sd_notify sequence (READY, STATUS, WATCHDOG, RELOADING+MONOTONIC_USEC,
STOPPING, ERRNO), reload with a good and a bad configuration, status.json,
--check-config, --help, --dry-run (the same decisions as a real run),
--once, recovery after kill -9, SIGINT, restore_on_exit = no, the
effective-affinity check, when /proc/interrupts is read, the msi-order warning, and irqsteerctl plan
--root on a hot CPU (the tree left byte-identical).
Needs no root: everything happens below a temporary copy of
tests/fixtures/vm2.  Run by tests/test-daemon-notify.sh."""
import json
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


def cmd(args, extra_env=None):
    env = dict(os.environ)
    env.pop("NOTIFY_SOCKET", None)
    env.pop("IRQSTEER_BANNED_CPUS", None)
    env.update(extra_env or {})
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
        {"what": "-i 0.5, as the file takes it", "args": ["-i", "0.5", "--check-config", "-c", good], "rc": 0,
         "stdout": r"^configuration OK\n$", "stderr": r"^$"},
        {"what": "bad --ban-cpus", "args": ["--ban-cpus", "two"], "rc": 2, "stdout": r"^$",
         "stderr": r"--ban-cpus: 'two' is not a CPU list"},
        {"what": "bad IRQSTEER_BANNED_CPUS", "args": ["--check-config", "-c", good], "rc": 2, "stdout": r"^$",
         "env": {"IRQSTEER_BANNED_CPUS": "1-"}, "stderr": r"IRQSTEER_BANNED_CPUS: '1-' is not a CPU list"},
        {"what": "--version", "args": ["--version"], "rc": 0, "stdout": r"^irqsteerd \S+\n$", "stderr": r"^$"},
    ]
    for case in cases:
        r = cmd(case["args"], case.get("env"))
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

        # A key that takes a restart: said in STATUS (systemctl status) and
        # irqsteerctl status, not only in the log, until the file is set back.
        with open(conf, "w") as f:
            f.write("[daemon]\nlog_level = info\ndry_run = yes\n")
        p.send_signal(signal.SIGHUP)
        msg, _ = ns.wait_for(lambda m: has(m, "READY=1"), T)
        st = dl.field(msg, "STATUS") or "" if msg else ""
        c.check(st.startswith("restart needed for dry_run; hot: "), "reload with dry_run = yes: restart needed in STATUS",
                st)
        msg, _ = ns.wait_for(lambda m: dl.field(m, "STATUS") is not None and not has(m, "READY=1"), T)
        c.check(msg is not None and (dl.field(msg, "STATUS") or "").startswith("restart needed for dry_run; "),
                "restart needed stays in STATUS at the next tick", repr(msg))
        r = subprocess.run([dl.env_path("IRQSTEERCTL"), "status", "--state-dir", state], capture_output=True,
                           text=True, timeout=T)
        c.check("restart needed for dry_run" in r.stdout, "irqsteerctl status shows the restart needed", r.stdout[-1500:])
        with open(conf, "w") as f:
            f.write("[daemon]\nlog_level = info\n")
        p.send_signal(signal.SIGHUP)
        msg, _ = ns.wait_for(lambda m: has(m, "READY=1"), T)
        c.check(msg is not None and "restart needed" not in (dl.field(msg, "STATUS") or ""),
                "dry_run set back: no restart needed", repr(msg))

        # Reload with rps = no for eth1: the RPS it got from the start
        # (single-queue NIC) goes back to the original at the next tick.
        rps_key = next((k for k in pristine if k.endswith("/eth1/queues/rx-0/rps_cpus")), None)
        c.check(rps_key is not None and dl.tree_values(root).get(rps_key) != pristine.get(rps_key),
                "eth1 rx-0 has RPS before the reload", repr(rps_key))
        with open(conf, "w") as f:
            f.write("[daemon]\nlog_level = info\n[interface eth1]\nrps = no\n")
        p.send_signal(signal.SIGHUP)
        back = rps_key and dl.wait_until(lambda: dl.tree_values(root).get(rps_key) == pristine.get(rps_key), T)
        c.check(bool(back), "reload with rps = no: eth1's RPS back to the original",
                f"{dl.tree_values(root).get(rps_key)!r} vs {pristine.get(rps_key)!r}")
        c.check("rps = no for eth1: RPS back to the original" in dl.read_log(log),
                "reload with rps = no: the give-back is logged with its reason", dl.read_log(log)[-1500:])

        # ens4's unknown IRQ names (vm2): a warning at startup
        text = dl.read_log(log)
        c.check(" warning: nic ens4: queue of each IRQ not known from its name (driver acmenet); queue IRQs guessed from msi_irqs order"
                in text, "msi-order fallback warned at warning level", text[:1500])

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
        rc = p.wait(T)
        while ns.recv(0.2) is not None:
            pass
        # systemctl status keeps the last STATUS=: it must name FILE:LINE.
        last = [dl.field(m, "STATUS") for m in ns.seen if dl.field(m, "STATUS") is not None]
        c.check(msg is not None and last and last[-1].startswith(f"startup failed: {conf}:2: hot_samples"),
                "bad config at start: FILE:LINE in the last STATUS", repr(last))
        c.check(rc == 78, "bad config at start: exit 78 (EX_CONFIG)", f"rc {rc}")
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


def check_status_content(status, state, hot_cpu, interval_s):
    """What `irqsteerctl status` promises, from a running daemon: uptime, the
    config in force, hot CPUs, managed objects with their current and
    original values, the last actions with reasons; and that the CLI prints
    each of them."""
    up = status.get("uptime_s")
    c.check(isinstance(up, (int, float)) and 0 < up < 60, "status.json: uptime_s", repr(up))
    conf = status.get("config") or {}
    c.check(conf.get("interval_s") == interval_s and conf.get("hot_enter") == 0.8 and conf.get("hot_exit") == 0.6
            and conf.get("rps") is True, "status.json: the config in force (interval, thresholds, switches)",
            repr(conf)[:300])
    managed = status.get("managed") or []
    c.check(len(managed) > 0, "status.json: managed objects listed")
    c.check(all(isinstance(m.get("object"), str) and m["object"] and isinstance(m.get("current"), str)
                and m["current"] and isinstance(m.get("original"), str) and m["original"] for m in managed),
            "status.json: each managed object has object, current and original", repr(managed)[:400])
    c.check(any(m["current"] != m["original"] for m in managed), "status.json: some current value differs from "
            "its original", repr(managed)[:400])
    c.check(any(m["object"].startswith("irq ") for m in managed) and any(m["object"].startswith("rps ")
                                                                         for m in managed),
            "status.json: managed IRQs and RPS queues", repr([m["object"] for m in managed]))
    acts = status.get("last_actions") or []
    c.check(len(acts) > 0, "status.json: last actions listed")
    c.check(all(isinstance(a.get("reason"), str) and a["reason"].strip() and isinstance(a.get("action"), str)
                and a["reason"] in a["action"] and isinstance(a.get("time"), int) for a in acts),
            "status.json: each last action has a time, its line and a non-empty reason", repr(acts)[:400])
    # the journal's fields: ACTION= IRQ= DEVICE= QUEUE= CPU_FROM= CPU_TO=
    irq_acts = [a for a in acts if a.get("type") == "irq-affinity"]
    c.check(len(irq_acts) > 0 and all(isinstance(a.get("irq"), int) and f"IRQ {a['irq']} " in a["action"]
                                      and isinstance(a.get("cpus"), list) and a["cpus"]
                                      and all(isinstance(x, int) for x in a["cpus"] + a.get("from", [None]))
                                      and "queue" in a and "nic" in a for a in irq_acts),
            "status.json: IRQ actions carry type, irq, nic, queue, cpus and from", repr(irq_acts)[:400])
    c.check(all(a.get("type") in ("irq-affinity", "rps", "xps", "rps-flow-cnt", "rps-sock-flow-entries",
                                  "thread-affinity") for a in acts), "status.json: every action has its type")
    c.check(all(m.get("kind") in ("irq", "rps", "xps") and isinstance(m.get("current_cpus"), list)
                and isinstance(m.get("original_cpus"), list) for m in managed
                if m["object"].split()[0] in ("irq", "rps", "xps")),
            "status.json: managed CPU sets as arrays", repr(managed)[:400])
    c.check("balance_ratio" in conf and "balance_floor" in conf, "status.json: config has every [balance] key")
    text = status.get("config_text") or ""
    c.check("\nhot_enter = 80%\n" in text and "\nbalance_floor = 5%\n" in text,
            "status.json: config_text in the file's syntax", text[:300])
    counters = status.get("counters") or {}
    c.check(isinstance(counters.get("kernel_managed_irqs_skipped"), int), "status.json: kernel_managed_irqs_skipped")

    r = subprocess.run([dl.env_path("IRQSTEERCTL"), "status", "--state-dir", state, "--full"], capture_output=True,
                       text=True, timeout=30)
    out = r.stdout
    c.check(r.returncode == 0, "irqsteerctl status: exit 0", r.stderr)
    c.check(re.search(r"^irqsteerd: pid \d+, up \d+s", out, re.M) is not None, "irqsteerctl status: uptime", out[:300])
    c.check(re.search(rf"^Hot CPUs: CPU{hot_cpu} \(\d+\.\d%\)", out, re.M) is not None,
            "irqsteerctl status: hot CPUs", out[:600])
    c.check(re.search(r"^\s+interval = \d+(ms|s)$", out, re.M) is not None and
            re.search(r"^\s+hot_enter = 80%$", out, re.M) is not None, "irqsteerctl status: the config in force")

    rows = [m for m in managed
            if re.search(r"^\s+" + re.escape(m["object"].removesuffix(" -")) + r"\s+(\S+)\s+(\S+)$", out, re.M)]
    c.check(len(rows) == len(managed), "irqsteerctl status: every managed object with current and original",
            f"{len(rows)} of {len(managed)} rows")
    c.check(all(a["reason"] in out for a in acts[-5:]), "irqsteerctl status: the last actions with their reasons")


def run_hot():
    """A CPU spending 95% in softirq shows up in STATUS and status.json."""
    d = os.path.join(tmp, "hot")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    log = os.path.join(d, "daemon.log")
    ns = dl.NotifySocket(os.path.join(d, "notify.sock"))
    lw = dl.LoadWriter(root, hot_cpu=1)
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
        check_status_content(status, state, hot_cpu=1, interval_s=0.2)
        c.check(dl.stop(p, timeout=T) == 0, "hot CPU: SIGTERM exit 0")
    finally:
        lw.stop()
        dl.stop(p, signal.SIGKILL, timeout=5)
        ns.close()


def run_effective():
    """After a write, where the IRQ really fires (effective_affinity_list) is
    checked on later ticks: IRQ 38, laid out to CPU1, keeps firing on CPU0
    (its counts grow, the fixture's effective file stays "0"), so after a
    few ticks with interrupts it is reported once, in the log and in
    status.json; IRQ 40 stays quiet and is never reported; when 38's
    effective CPU follows, it is cleared."""
    d = os.path.join(tmp, "effective")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    log = os.path.join(d, "daemon.log")
    done = threading.Event()
    eff38 = os.path.join(root, "proc/irq/38/effective_affinity_list")

    def load():
        step = 2
        while not done.is_set():
            dl.write_load(root, step)
            dl.bump_interrupts(root, 38, 0, 50)
            step += 1
            time.sleep(0.05)

    t = threading.Thread(target=load)
    p = dl.start_daemon(["--root", root, "--state-dir", state, "--interval", "200ms"], log)
    t.start()
    mismatch = "IRQ 38 (virtio2-input.0) set to CPU 1 but fires on CPU 0"
    try:
        ok = dl.wait_until(lambda: mismatch in dl.read_log(log), T)
        c.check(ok, "effective: IRQ firing outside its set is reported", dl.read_log(log)[-2000:])
        text = dl.read_log(log)
        line = next((x for x in text.splitlines() if mismatch in x), "")
        c.check(re.match(r"^[\d-]+ [\d:.]+ notice: ", line) is not None, "effective: reported at notice level", line)
        # not at the first tick after the write: the kernel moves it at the next interrupt
        c.check("after 3 ticks with interrupts" in line, "effective: tolerated for a few ticks first", line)
        status = dl.wait_until(lambda: (lambda s: s if s and s.get("effective_mismatch") else None)(
            dl.load_json(os.path.join(state, "status.json"))), T) or {}
        c.check(status.get("effective_mismatch") == [{"irq": 38, "name": "virtio2-input.0", "affinity": [1],
                                                      "effective": [0]}],
                "effective: status.json effective_mismatch", repr(status.get("effective_mismatch")))
        r = subprocess.run([dl.env_path("IRQSTEERCTL"), "status", "--state-dir", state], capture_output=True,
                           text=True, timeout=30)
        c.check("Fires elsewhere than set: IRQ 38 (virtio2-input.0) set to CPUs 1, fires on CPUs 0" in r.stdout,
                "effective: irqsteerctl status shows it", r.stdout + r.stderr)
        time.sleep(1.0)
        text = dl.read_log(log)
        c.check(text.count(mismatch) == 1, "effective: said once, not every tick", str(text.count(mismatch)))
        c.check(not re.search(r"IRQ (39|40|41) .*fires on", text), "effective: quiet IRQs never reported",
                text[-1500:])
        with open(eff38 + ".tmp", "w") as f:
            f.write("1\n")
        os.replace(eff38 + ".tmp", eff38)
        ok = dl.wait_until(lambda: "IRQ 38 (virtio2-input.0) now fires on CPU 1 as set" in dl.read_log(log), T)
        c.check(ok, "effective: recovery logged", dl.read_log(log)[-1500:])
        status = dl.wait_until(lambda: (lambda s: s if s and s.get("effective_mismatch") == [] else None)(
            dl.load_json(os.path.join(state, "status.json"))), T)
        c.check(status is not None, "effective: cleared from status.json")
        c.check(dl.stop(p, timeout=T) == 0, "effective: SIGTERM exit 0")
    finally:
        done.set()
        if t.is_alive():
            t.join()
        dl.stop(p, signal.SIGKILL, timeout=5)


def run_plan():
    """irqsteerctl plan --root on vm2 with CPU1 95% in softirq (the load
    advanced by a thread while plan sleeps its interval between its two
    readings): the hot CPU, the initial layout of the queue IRQs and, with
    the first sample, eth0's queue off the hot CPU, RPS for
    the single-queue NIC, RFS and XPS; and not one byte of the tree
    changed."""
    d = os.path.join(tmp, "plan")
    root = dl.make_root(d)
    load_files = ("proc/stat", "proc/softirqs")
    before = dl.tree_bytes(root, skip=load_files)
    lw = dl.LoadWriter(root, hot_cpu=1)
    try:
        ctl = dl.env_path("IRQSTEERCTL")
        rj = subprocess.run([ctl, "plan", "--root", root, "--interval", "0.5", "--json"], capture_output=True,
                            text=True, timeout=60)
        rt = subprocess.run([ctl, "plan", "--root", root, "--interval", "0.5"], capture_output=True, text=True,
                            timeout=60)
    finally:
        lw.stop()
    c.check(rj.returncode == 0 and rt.returncode == 0, "plan --root: exit 0", rj.stderr + rt.stderr)
    c.check("ens4: queue of each IRQ not known from its name" in rt.stderr,
            "plan --root: the daemon's warnings reach stderr (ens4 mapped by guess)", rt.stderr[-1500:])
    c.check("would set" not in rt.stderr, "plan --root: its informational lines do not", rt.stderr[-1500:])
    try:
        plan = json.loads(rj.stdout)
    except ValueError:
        plan = {}
    hot = plan.get("hot_cpus") or [{}]
    c.check(len(hot) == 1 and hot[0].get("cpu") == 1 and hot[0].get("load", 0) > 0.9, "plan --root: CPU1 hot",
            repr(plan.get("hot_cpus")))

    def fmt(a):
        obj = a["irq"] if a["irq"] is not None else f"{a['nic']}/{a['queue']}" if a["nic"] else "-"
        val = a["cpus"] if "cpus" in a else a.get("value")
        return f"{a['type']} {obj} {val}"

    got = [fmt(a) for a in plan.get("actions", [])]
    want = [
        # initial layout at start, before any load: one CPU per queue,
        # rx/tx pairs together
        "irq-affinity 45 [0]", "irq-affinity 38 [1]", "irq-affinity 39 [1]", "irq-affinity 40 [2]",
        "irq-affinity 41 [2]", "irq-affinity 11 [0]",
        # single-queue NIC: RPS (RFS is off by default)
        "rps eth1/0 [0, 1, 2]",
        # XPS follows the rx IRQs
        "xps ens4/0 [0]", "xps eth0/0 [1]", "xps eth0/1 [2]", "xps eth1/0 [0]",
        # the first sample: eth0 queue 0 off the hot CPU1, XPS with it
        "irq-affinity 38 [2]", "irq-affinity 39 [2]", "xps eth0/0 [2]",
    ]
    c.check(got == want, "plan --root: the expected actions", f"got {got}")
    c.check("Hot CPUs: CPU1 (95.0% irq+softirq" in rt.stdout and "14 actions (nothing was changed)" in rt.stdout
            and "RPS eth1 rx-0 none -> CPUs 0-2: single-queue NIC eth1" in rt.stdout,
            "plan --root: the text form says the same", rt.stdout)
    changed = dl.tree_diff(before, dl.tree_bytes(root, skip=load_files))
    c.check(not changed, "plan --root: every file of the tree byte-identical afterwards", repr(changed[:10]))


def run_plan_workers():
    """plan replays hot_samples ticks: a thread it pins in the first must
    not look re-pinned by someone else in the next (the plan would both
    pin it and say it leaves it alone)."""
    d = os.path.join(tmp, "planw")
    root = dl.make_root(d)
    wfix = os.path.join(dl.env_path("IRQSTEER_FIXTURES"), "workers", "proc")
    for pid in ("200", "201"):
        shutil.copytree(os.path.join(wfix, pid), os.path.join(root, "proc", pid), symlinks=True)
    conf = os.path.join(d, "w.conf")
    with open(conf, "w") as f:
        f.write("[worker web]\nmatch_name = nginx\npolicy = spread\n")
    r = subprocess.run([dl.env_path("IRQSTEERCTL"), "plan", "--root", root, "--config", conf, "--interval", "0.2"],
                       capture_output=True, text=True, timeout=60)
    c.check(r.returncode == 0 and re.search(r"^  \[tick 1\] thread 200 \(pid 200\) CPUs 0-3 -> CPU", r.stdout, re.M),
            "plan with workers: thread 200 pinned", r.stdout + r.stderr)
    c.check("re-pinned by someone else" not in r.stdout, "plan with workers: no note contradicting its own pinning",
            r.stdout)


def run_plan_takeover():
    """host64's eno1 rx-0 has RPS CPUs 2-31 set before irqsteerd: kept and
    said so by default, taken over with takeover = yes."""
    d = os.path.join(tmp, "plant")
    root = dl.make_root(d, "host64")
    ctl = dl.env_path("IRQSTEERCTL")
    conf = os.path.join(d, "t.conf")
    with open(conf, "w") as f:
        f.write("[balance]\ntakeover = yes\n")
    with open(os.path.join(d, "none.conf"), "w") as f:
        f.write("")
    keep = subprocess.run([ctl, "plan", "--root", root, "--config", os.path.join(d, "none.conf"), "--interval", "0.2"],
                          capture_output=True, text=True, timeout=60)
    take = subprocess.run([ctl, "plan", "--root", root, "--config", conf, "--interval", "0.2"], capture_output=True,
                          text=True, timeout=60)
    c.check(keep.returncode == 0 and "Note: kept: eno1 rx-0 RPS CPUs 2-31 set before irqsteerd started" in keep.stdout
            and "RPS eno1 rx-0" not in keep.stdout, "takeover = no (default): eno1's tuned RPS kept, and said",
            keep.stdout + keep.stderr)
    c.check(take.returncode == 0 and "RPS eno1 rx-0 CPUs 2-31 -> " in take.stdout and "kept:" not in take.stdout,
            "takeover = yes: eno1's RPS taken over", take.stdout + take.stderr)


ACTION_RE = re.compile(r"^(?:<\d>|[\d-]+ [\d:.]+ \w+: )?(?:dry-run: would set )?((?:IRQ \d+|RPS |XPS |rps_flow_cnt |rps_sock_flow_entries ).*)$")


def action_lines(log):
    """The action lines of a daemon log, without the dry-run prefix."""
    return [m.group(1) for m in map(ACTION_RE.match, dl.read_log(log).splitlines()) if m]


def run_dry_run_same_decisions():
    """--dry-run --once and --once on two copies of the same tree log the
    same action lines; the dry run leaves its tree byte-identical."""
    d = os.path.join(tmp, "drysame")
    roots, logs = [], []
    for name, extra in (("real", []), ("dry", ["--dry-run"])):
        root = dl.make_root(os.path.join(d, name))
        log = os.path.join(d, name + ".log")
        before = dl.tree_bytes(root)
        p = dl.start_daemon(["--root", root, "--state-dir", os.path.join(d, name, "state"), "--interval", "300ms",
                             "--once"] + extra, log)
        rc = p.wait(T)
        c.check(rc == 0, f"dry-run vs real: --once {name} exits 0", dl.read_log(log)[-1500:])
        roots.append((root, before))
        logs.append(log)
    real, dry = action_lines(logs[0]), action_lines(logs[1])
    c.check(len(real) >= 6 and real == dry, "dry-run vs real: the same action lines, in the same order",
            f"real {real}\ndry {dry}")
    c.check(any(x.startswith("dry-run: would set IRQ ") or "would set IRQ" in x
                for x in dl.read_log(logs[1]).splitlines()), "dry-run vs real: the dry run says 'would set'")
    root, before = roots[1]
    changed = dl.tree_diff(before, dl.tree_bytes(root))
    c.check(not changed, "dry-run vs real: dry-run tree byte-identical", repr(changed[:10]))
    root, before = roots[0]
    c.check(dl.tree_diff(before, dl.tree_bytes(root)), "dry-run vs real: the real run changed its tree")


def run_stop_signals():
    """SIGINT restores like SIGTERM; with restore_on_exit = no, SIGTERM
    leaves the changes and the journal, and irqsteerctl restore undoes
    them."""
    for what, sig, conf in (("SIGINT", signal.SIGINT, ""), ("restore_on_exit = no", signal.SIGTERM,
                                                             "[daemon]\nrestore_on_exit = no\n")):
        d = os.path.join(tmp, "stop-" + sig.name)
        root = dl.make_root(d)
        state = os.path.join(d, "state")
        log = os.path.join(d, "daemon.log")
        cfg = os.path.join(d, "irqsteer.conf")
        with open(cfg, "w") as f:
            f.write(conf)
        pristine = dl.tree_values(root)
        ns = dl.NotifySocket(os.path.join(d, "notify.sock"))
        p = dl.start_daemon(["--root", root, "--state-dir", state, "--interval", "200ms", "--config", cfg], log,
                            notify_path=ns.path)
        try:
            msg, _ = ns.wait_for(lambda m: has(m, "READY=1"), T)
            c.check(msg is not None, f"{what}: READY", dl.read_log(log)[-1500:])
            journal = os.path.join(state, "undo.journal")
            c.check(dl.wait_until(lambda: os.path.exists(journal), T), f"{what}: changes journalled")
            changed = dl.tree_values(root)
            c.check(changed != pristine, f"{what}: the layout changed the tree")
            p.send_signal(sig)
            msg, _ = ns.wait_for(lambda m: has(m, "STOPPING=1"), T)
            c.check(msg is not None, f"{what}: STOPPING=1")
            rc = dl.stop(p, timeout=T)
            c.check(rc == 0, f"{what}: exit 0", f"rc {rc}")
            if sig == signal.SIGINT:
                c.check(dl.tree_values(root) == pristine, "SIGINT: every changed value restored")
                c.check(not os.path.exists(journal), "SIGINT: journal removed")
                c.check("Received SIGINT" in dl.read_log(log), "SIGINT: logged as such", dl.read_log(log)[-800:])
                continue
            c.check(dl.tree_values(root) == changed, f"{what}: SIGTERM leaves the changes in place")
            c.check(os.path.exists(journal), f"{what}: the journal stays for irqsteerctl restore")
            r = subprocess.run([dl.env_path("IRQSTEERCTL"), "restore", "--root", root, "--state-dir", state],
                               capture_output=True, text=True, timeout=60)
            c.check(r.returncode == 0 and "Restored" in r.stdout, f"{what}: irqsteerctl restore", r.stdout + r.stderr)
            c.check(dl.tree_values(root) == pristine, f"{what}: irqsteerctl restore puts every original back")
            c.check(not os.path.exists(journal), f"{what}: journal removed by the restore")
        finally:
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

        # the tree has no kernel to move the IRQs laid out on CPU2: the
        # daemon places them again on the CPUs left
        def on_offline():
            return sorted(k for k, v in dl.tree_values(root).items()
                          if k.endswith("smp_affinity_list") and v in ("2", "3"))
        ok = dl.wait_until(lambda: not on_offline(), T)
        c.check(ok and "went offline" in dl.read_log(log), "hotplug: IRQs set on an offline CPU are placed again",
                f"{on_offline()}: " + dl.read_log(log)[-1500:])
        # the rediscovery after hotplug logs the NICs again, but the
        # msi-order warning for ens4 stays said once
        ok = dl.wait_until(lambda: dl.read_log(log).count("nic ens4: managed; driver acmenet") >= 2, T)
        text = dl.read_log(log)
        c.check(ok and text.count("queue of each IRQ not known from its name") == 1, "hotplug: msi-order warning not repeated",
                str(text.count("queue of each IRQ not known from its name")))
        c.check(dl.stop(p, timeout=T) == 0, "hotplug: SIGTERM exit 0")
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)
        ns.close()


class ShareWriter:
    """Advances the fixture's proc/stat and proc/softirqs every 50 ms, CPU 0
    spending soft0 percent of its time in softirq and idle0 idle, the other
    CPUs 2% softirq and 90% idle; soft0/idle0 can be changed while it runs."""

    def __init__(self, root, soft0, idle0):
        self.soft0, self.idle0 = soft0, idle0
        self.softirqs = True     # False: proc/softirqs left as it is
        self._done = threading.Event()
        self._cpus = dl.online_cpus(root)
        self._root = root
        self._acc = {cpu: [1000] * 10 for cpu in self._cpus}
        self._thread = threading.Thread(target=self._run)
        self._thread.start()

    def _run(self):
        step = 0
        while not self._done.is_set():
            step += 1
            for cpu in self._cpus:
                soft, idle = (self.soft0, self.idle0) if cpu == self._cpus[0] else (2, 90)
                add = [100 - soft - idle, 0, 0, idle, 0, 0, soft, 0, 0, 0]
                self._acc[cpu] = [a + b for a, b in zip(self._acc[cpu], add)]
            tot = [sum(v[i] for v in self._acc.values()) for i in range(10)]
            stat = "cpu  " + " ".join(map(str, tot)) + "\n"
            stat += "".join(f"cpu{cpu} " + " ".join(map(str, self._acc[cpu])) + "\n" for cpu in self._cpus)
            stat += "intr 0\nctxt 0\nbtime 0\nprocesses 1\nprocs_running 1\nprocs_blocked 0\nsoftirq 0\n"
            soft = "       " + "".join(f"CPU{cpu:<11d}" for cpu in self._cpus) + "\n"
            for i, r in enumerate(["HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED",
                                   "HRTIMER", "RCU"]):
                per = [1000 * (i + 1) + step * (self._acc[cpu][6] if r == "NET_RX" else 10 if r == "TIMER" else 0)
                       for cpu in self._cpus]
                soft += f"{r + ':':>8}" + " ".join(f"{x:>11d}" for x in per) + "\n"
            for name, text in (("stat", stat), ("softirqs", soft)):
                if name == "softirqs" and not self.softirqs:
                    continue
                tmp_path = os.path.join(self._root, "proc", f".{name}.tmp")
                with open(tmp_path, "w") as f:
                    f.write(text)
                os.replace(tmp_path, os.path.join(self._root, "proc", name))
            time.sleep(0.05)

    def stop(self):
        self._done.set()
        self._thread.join()


def tick_times(log):
    """[(seconds, tick number, 'calm' or 'full', why)] from a -f debug log:
    each tick line with the reason of the full tick before it."""
    out, why = [], None
    for line in dl.read_log(log).splitlines():
        m = re.match(r"\S+ (\d+):(\d+):(\d+\.\d+) debug: (?:Full tick: (.*)|tick (\d+) \((calm|full)\))", line)
        if not m:
            continue
        if m.group(4) is not None:
            why = m.group(4)
            continue
        t = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
        out.append((t, int(m.group(5)), m.group(6), why if m.group(6) == "full" else None))
    return out


def run_pace():
    """Calm ticks, calm_interval and fast_interval (irqsteer.conf(5)): on a
    calm host ticks come at calm_interval and do not rewrite status.json; a
    CPU crossing hot_enter, or a load risen since the last decision, brings
    ticks at fast_interval; calm again, the interval lengthens back.  (That a saturated CPU is acted on at the first sample
    that shows it is test-policy's test_fast_attack.)"""
    d = os.path.join(tmp, "pace")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    log = os.path.join(d, "daemon.log")
    status = os.path.join(state, "status.json")
    conf = os.path.join(d, "pace.conf")
    with open(conf, "w") as f:
        # balance_floor: CPU0's rise to 25% beside CPUs at 2% stays below
        # every threshold (at the default 2% balance_ratio makes it hot)
        f.write("[daemon]\ninterval = 500ms\ncalm_interval = 1s\nfast_interval = 125ms\n"
                "[balance]\nbalance_floor = 35%\n")
    w = ShareWriter(root, 2, 90)
    p = dl.start_daemon(["--root", root, "--state-dir", state, "--config", conf, "-f", "--log-level", "debug"], log)
    try:
        ok = dl.wait_until(lambda: sum(1 for x in tick_times(log) if x[2] == "calm") >= 3, 3 * T)
        ticks = tick_times(log)
        c.check(ok, "pace: calm ticks on a calm host", dl.read_log(log)[-2000:])
        # a calm tick after a calm one: the one after a full tick came at
        # that tick's pace
        calm = [i for i in range(1, len(ticks)) if ticks[i][2] == "calm" and ticks[i - 1][2] == "calm"]
        gaps = [ticks[i][0] - ticks[i - 1][0] for i in calm]
        c.check(gaps and all(0.9 <= g <= 1.3 for g in gaps), "pace: calm ticks at calm_interval (1 s)", repr(gaps))
        # two calm ticks in a row (a periodic full tick may fall between: try again)
        same = None
        for _ in range(3):
            st0, n0 = os.stat(status).st_mtime_ns, len(tick_times(log))
            dl.wait_until(lambda: len(tick_times(log)) >= n0 + 2, T)
            new = tick_times(log)[n0:]
            if len(new) >= 2 and all(x[2] == "calm" for x in new):
                same = os.stat(status).st_mtime_ns == st0
                break
        c.check(same is True, "pace: calm ticks do not rewrite status.json", repr(same))

        # a calm tick reads /proc/stat alone: with proc/softirqs unreadable
        # (a directory) calm ticks go on and none fails to read /proc/stat (a
        # periodic full tick that falls in fails to read /proc/softirqs, and
        # so does every tick after it until it can: put the file back, let
        # that tick pass, try again)
        sirq = os.path.join(root, "proc", "softirqs")
        calm_alone = None
        for _ in range(3):
            w.softirqs = False
            time.sleep(0.2)
            os.replace(sirq, sirq + ".away")
            os.mkdir(sirq)
            n0, log0 = len(tick_times(log)), len(dl.read_log(log))
            dl.wait_until(lambda: len(tick_times(log)) >= n0 + 2, T)
            new, text = tick_times(log)[n0:], dl.read_log(log)[log0:]
            os.rmdir(sirq)
            os.replace(sirq + ".away", sirq)
            w.softirqs = True
            calm_alone = (sum(1 for x in new if x[2] == "calm"), "Failed to read /proc/stat" in text,
                          "Failed to read /proc/softirqs" in text)
            if calm_alone[0] >= 2 and not calm_alone[1]:
                break
            n1 = len(tick_times(log))
            dl.wait_until(lambda: len(tick_times(log)) >= n1 + 2, T)
        c.check(calm_alone and calm_alone[0] >= 2 and not calm_alone[1],
                "pace: calm ticks do not read /proc/softirqs", repr(calm_alone))

        # a rise below every threshold (2% -> 25% softirq, 70% idle): the
        # tick that sees it is full, and the next comes at fast_interval
        n0 = len(tick_times(log))
        w.soft0, w.idle0 = 25, 70
        rise = dl.wait_until(lambda: [i for i in range(max(n0, 1), len(tick_times(log)))
                                      if tick_times(log)[i - 1][3] == "fast"
                                      and tick_times(log)[i][0] - tick_times(log)[i - 1][0] < 0.3], T)
        c.check(rise, "pace: a load risen since the last decision brings the next tick at fast_interval",
                repr(tick_times(log)[n0:]) + dl.read_log(log)[-2000:])
        w.soft0, w.idle0 = 2, 90
        n1 = len(tick_times(log))
        dl.wait_until(lambda: sum(1 for x in tick_times(log)[n1:] if x[2] == "calm") >= 2, 4 * T)

        # 85% softirq, 12% idle: over hot_enter, not saturated
        n0 = len(tick_times(log))
        w.soft0, w.idle0 = 85, 12
        fast = dl.wait_until(lambda: [i for i in range(max(n0, 1), len(tick_times(log)))
                                      if tick_times(log)[i][3] == "fast"
                                      and tick_times(log)[i][0] - tick_times(log)[i - 1][0] < 0.3], T)
        c.check(fast, "pace: a CPU nearing hot brings ticks at fast_interval",
                repr(tick_times(log)[n0:]) + dl.read_log(log)[-2000:])

        # calm again: the interval lengthens back to calm_interval
        w.soft0, w.idle0 = 2, 90
        n1 = len(tick_times(log))
        ok = dl.wait_until(lambda: sum(1 for x in tick_times(log)[n1:] if x[2] == "calm") >= 3, 4 * T)
        ticks = tick_times(log)
        gaps = [ticks[i][0] - ticks[i - 1][0] for i in range(n1 + 1, len(ticks))
                if ticks[i][2] == "calm" and ticks[i - 1][2] == "calm"]
        c.check(ok and gaps and all(g >= 0.9 for g in gaps), "pace: calm again, ticks at calm_interval again",
                repr(ticks[n1:]))

        c.check(dl.stop(p, timeout=T) == 0, "pace: SIGTERM exit 0")
    finally:
        w.stop()
        dl.stop(p, signal.SIGKILL, timeout=5)


def run_irq_readings():
    """/proc/interrupts is read only when needed (irq_rate_interval): with a
    steady load most ticks carry the last reading over; a CPU turning hot
    brings a reading within a few ticks; irq_rate_interval = 0 reads it at
    every tick.  Counted by status.json counters.interrupts_readings."""
    d = os.path.join(tmp, "irqreads")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    log = os.path.join(d, "daemon.log")

    def status():
        return dl.load_json(os.path.join(state, "status.json")) or {}

    def at_ticks(n):
        return dl.wait_until(lambda: (lambda s: s if s.get("ticks", 0) >= n else None)(status()), T) or {}

    lw = dl.LoadWriter(root)
    p = dl.start_daemon(["--root", root, "--state-dir", state, "--interval", "200ms"], log)
    try:
        s = at_ticks(20)
        reads = (s.get("counters") or {}).get("interrupts_readings")
        c.check(isinstance(reads, int) and 1 <= reads <= s.get("ticks", 0) // 2,
                "irq readings: a steady load reads /proc/interrupts at few ticks",
                f"{reads} readings in {s.get('ticks')} ticks")
        lw.stop()
        lw = dl.LoadWriter(root, hot_cpu=1)
        t0 = s.get("ticks", 0)
        s = dl.wait_until(lambda: (lambda x: x if (x.get("counters") or {}).get("interrupts_readings", 0) > reads
                                   else None)(status()), T) or {}
        c.check(s.get("ticks", 1 << 30) - t0 <= 4,
                "irq readings: a CPU turning hot brings a reading within a few ticks",
                f"at tick {s.get('ticks')}, from tick {t0}")
        c.check(dl.stop(p, timeout=T) == 0, "irq readings: SIGTERM exit 0")
    finally:
        lw.stop()
        dl.stop(p, signal.SIGKILL, timeout=5)

    conf = os.path.join(d, "every-tick.conf")
    with open(conf, "w") as f:
        f.write("[daemon]\nirq_rate_interval = 0\n")
    lw = dl.LoadWriter(root)
    p = dl.start_daemon(["--root", root, "--state-dir", state, "--interval", "200ms", "--config", conf], log)
    try:
        s = at_ticks(8)
        c.check((s.get("counters") or {}).get("interrupts_readings") == s.get("ticks"),
                "irq readings: irq_rate_interval = 0 reads at every tick", repr(s.get("counters")))
        c.check(dl.stop(p, timeout=T) == 0, "irq readings: every tick: SIGTERM exit 0")
    finally:
        lw.stop()
        dl.stop(p, signal.SIGKILL, timeout=5)


def run_root_state_dir():
    """A --root run keeps its journal under its root, never in the host's
    /run/irqsteer; a journal written for another root is refused at start
    (exit 1, the journal and the tree left as they are)."""
    d = os.path.join(tmp, "rootstate")
    root = dl.make_root(d)
    log = os.path.join(d, "daemon.log")
    host_journal = "/run/irqsteer/undo.journal"
    host_before = os.stat(host_journal).st_mtime_ns if os.path.exists(host_journal) else None
    p = dl.start_daemon(["--root", root, "--interval", "100ms", "--once"], log)
    rc = p.wait(T)
    journal = os.path.join(root, "run/irqsteer/undo.journal")
    c.check(rc == 0 and os.path.exists(journal), "--root without --state-dir: journal under ROOT/run/irqsteer",
            dl.read_log(log)[-1500:])
    host_after = os.stat(host_journal).st_mtime_ns if os.path.exists(host_journal) else None
    c.check(host_after == host_before, "--root without --state-dir: the host's journal untouched")
    with open(journal) as f:
        text = f.read()
    c.check(re.search(r"^root \d+ \d+ \S+$", text, re.M) is not None, "journal: names its root", text[:300])

    other = os.path.join(d, "other")
    shutil.copytree(root, other, symlinks=True)
    shutil.rmtree(os.path.join(other, "run"))
    before = dl.tree_values(other)
    with open(journal, "rb") as f:
        journal_bytes = f.read()
    log2 = os.path.join(d, "daemon2.log")
    p = dl.start_daemon(["--root", other, "--state-dir", os.path.dirname(journal), "--interval", "100ms"], log2)
    rc = p.wait(T)
    text = dl.read_log(log2)
    c.check(rc not in (0, None) and "is not restored: it was written for another root" in text,
            "another root's journal: refused at start", f"exit {rc}: {text[-1500:]}")
    c.check(dl.tree_values(other) == before, "another root's journal: nothing written to this root")
    with open(journal, "rb") as f:
        c.check(f.read() == journal_bytes, "another root's journal: kept as it was")

    # a journal of an older irqsteer (no root line): moved aside, not restored
    state4 = os.path.join(d, "state4")
    os.mkdir(state4)
    with open(os.path.join(state4, "undo.journal"), "w") as f:
        f.write("# irqsteer undo journal v1\nirq 38 5 0 -\n")
    log4 = os.path.join(d, "daemon4.log")
    p = dl.start_daemon(["--root", other, "--state-dir", state4, "--interval", "100ms", "--once"], log4)
    rc = p.wait(T)
    text = dl.read_log(log4)
    c.check(rc == 0 and "does not say which root" in text and "kept as" in text,
            "version 1 journal: not restored, said so", f"exit {rc}: {text[-1500:]}")
    c.check("Recovery:" not in text, "version 1 journal: no recovery ran")
    with open(os.path.join(state4, "undo.journal.refused")) as f:
        c.check("irq 38 5 0 -" in f.read(), "version 1 journal: kept as undo.journal.refused")

    log3 = os.path.join(d, "daemon3.log")
    p = dl.start_daemon(["--root", other, "--state-dir", "/run/irqsteer", "--interval", "100ms"], log3)
    rc = p.wait(T)
    text = dl.read_log(log3)
    c.check(rc not in (0, None) and "is the host's state directory" in text,
            "--root with --state-dir /run/irqsteer: refused", f"exit {rc}: {text[-1500:]}")


def run_full_state_dir():
    """A full state directory (a tmpfs with no room left, private to the
    daemon's mount namespace) is said to be one, with the journal's path;
    nothing is taken for a full IRQ vector space and nothing is written
    without a journal entry.  Needs root for the mount."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        print("skip full state dir: needs root and unshare")
        return
    d = os.path.join(tmp, "fullstate")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    os.mkdir(state)
    log = os.path.join(d, "daemon.log")
    pristine = dl.tree_values(root)
    fill = ('mount -t tmpfs -o size=8k,mode=0755 tmpfs "$0" && { cat /dev/zero > "$0/fill"; } 2>/dev/null; '
            'exec "$@"')
    p = dl.start_daemon(["--root", root, "--state-dir", state, "--interval", "200ms", "-f"], log,
                        wrapper=("unshare", "-m", "--propagation", "private", "sh", "-c", fill, state))
    try:
        ok = dl.wait_until(lambda: "Cannot save the undo journal" in dl.read_log(log), T)
        time.sleep(1.0)
        text = dl.read_log(log)
        c.check(ok and f"Cannot save the undo journal {state}/undo.journal: No space left on device" in text,
                "full state dir: said, with the journal's path", text[-1500:])
        # once in the log; the status line (logged with "Ready:") shows it too
        said = [x for x in text.splitlines() if "Cannot save the undo journal" in x and " Ready: " not in x]
        c.check(len(said) == 1, "full state dir: said once", "\n".join(said))
        c.check("no free vector" not in text and "no room for it" not in text,
                "full state dir: not taken for a full vector space",
                "\n".join(x for x in text.splitlines() if "vector" in x or "room" in x)[:1500])
        c.check(dl.tree_values(root) == pristine, "full state dir: nothing written without a journal entry")
        c.check(dl.stop(p, timeout=T) == 0, "full state dir: SIGTERM exit 0", dl.read_log(log)[-1500:])
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)



def run_other_writer():
    """An IRQ changed behind the daemon's back while a process named
    irqbalance runs (a proc/PID/comm in the fixture root): the notice and
    the status line name it with its pid."""
    d = os.path.join(tmp, "other")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    log = os.path.join(d, "daemon.log")
    pristine = dl.tree_values(root)
    os.makedirs(os.path.join(root, "proc", "4242"))
    with open(os.path.join(root, "proc", "4242", "comm"), "w") as f:
        f.write("irqbalance\n")
    p = dl.start_daemon(["--root", root, "--state-dir", state, "--interval", "200ms", "-f"], log)
    try:
        changed = dl.wait_until(lambda: [k for k, v in dl.tree_values(root).items()
                                         if k.endswith("smp_affinity_list") and v != pristine.get(k)], T)
        c.check(bool(changed), "other writer: the initial layout moved an IRQ", dl.read_log(log)[-1500:])
        c.check(" warning: irqbalance (pid 4242) is running and changes IRQ affinities too: mask it" in dl.read_log(log),
                "other writer: warned at start", dl.read_log(log)[-1500:])
        rel = sorted(changed)[0]
        irq = rel.split("/")[2]
        cur = dl.tree_values(root)[rel]
        other = "0" if cur != "0" else "1"
        with open(os.path.join(root, rel), "w") as f:
            f.write(other + "\n")
        with open(os.path.join(root, rel[:-len("_list")]), "w") as f:
            f.write(f"{1 << int(other):x}\n")
        line = dl.wait_until(lambda: next((x for x in dl.read_log(log).splitlines()
                                            if f"IRQ {irq} was changed by someone else" in x), None), T)
        c.check(line is not None and "irqbalance (pid 4242) is running" in line,
                "other writer: the notice names irqbalance and its pid", line or dl.read_log(log)[-1500:])
        st = dl.wait_until(lambda: (dl.load_json(os.path.join(state, "status.json")) or {}).get("status", "")
                           if "irqbalance" in (dl.load_json(os.path.join(state, "status.json")) or {}).get("status", "")
                           else None, T)
        c.check(st is not None and st.endswith("; irqbalance (pid 4242) changes IRQs too"),
                "other writer: the status line names it", repr(st))
        c.check(dl.stop(p, timeout=T) == 0, "other writer: SIGTERM exit 0")
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)



def run_unprivileged():
    """On the host without root: one clear sentence and exit 1, before any
    write is tried (not a "Permission denied" per IRQ and then Ready);
    --dry-run still runs.  As root the daemon runs as nobody (setpriv)."""
    wrapper = ()
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            print("SKIP unprivileged start: running as root and no setpriv (util-linux)")
            return
        wrapper = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all")
    d = os.path.join(tmp, "unpriv")
    os.makedirs(d)
    os.chmod(tmp, 0o711)  # nobody reaches its own directory below
    os.chmod(d, 0o777)
    state = os.path.join(d, "state")
    log = os.path.join(d, "daemon.log")
    ns = dl.NotifySocket(os.path.join(d, "notify.sock"))
    os.chmod(ns.path, 0o777)
    daemon = dl.env_path("IRQSTEERD")
    if wrapper and subprocess.run(list(wrapper) + ["test", "-x", daemon]).returncode != 0:
        # the build tree is not reachable by nobody (a clone in a 0700
        # mktemp -d directory): run a copy from the directory it reaches
        daemon = os.path.join(d, "irqsteerd")
        shutil.copy(dl.env_path("IRQSTEERD"), daemon)
        os.chmod(daemon, 0o755)
    p = dl.start_daemon(["--state-dir", state, "--interval", "200ms", "-f"], log, notify_path=ns.path,
                        wrapper=wrapper, daemon=daemon)
    try:
        try:
            rc = p.wait(T)
        except subprocess.TimeoutExpired:
            rc = None  # still running: it did not refuse
        text = dl.read_log(log)
        errors = [x for x in text.splitlines() if " err: " in x or " error: " in x or "Permission denied" in x]
        c.check(rc == 1, "unprivileged start: exit 1", f"rc {rc}: {text[-1500:]}")
        c.check(len(errors) == 1 and "must run as root" in errors[0] and "--dry-run" in errors[0],
                "unprivileged start: one clear sentence, no Permission denied lines", text[-1500:])
        c.check("Ready" not in text, "unprivileged start: never Ready", text[-1500:])
        while ns.recv(0.2) is not None:
            pass
        last = [dl.field(m, "STATUS") for m in ns.seen if dl.field(m, "STATUS") is not None]
        c.check(bool(last) and last[-1].startswith("startup failed: irqsteerd must run as root"),
                "unprivileged start: the sentence is the status text", repr(last))
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)
        ns.close()
    log = os.path.join(d, "dry.log")
    p = dl.start_daemon(["--dry-run", "--state-dir", state, "--interval", "200ms", "-f"], log, wrapper=wrapper,
                        daemon=daemon)
    try:
        ok = dl.wait_until(lambda: "Ready:" in dl.read_log(log) or p.poll() is not None, T)
        c.check(ok and p.poll() is None, "unprivileged --dry-run: runs", dl.read_log(log)[-1500:])
    finally:
        dl.stop(p, signal.SIGTERM, timeout=T)



def run_ban_cpus():
    """--ban-cpus and IRQSTEER_BANNED_CPUS add to the file's banned_cpus."""
    d = os.path.join(tmp, "bancpus")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    conf = os.path.join(d, "irqsteer.conf")
    with open(conf, "w") as f:
        f.write("[balance]\nbanned_cpus = 0\n")
    log = os.path.join(d, "daemon.log")
    p = dl.start_daemon(["--root", root, "--state-dir", state, "-c", conf, "--interval", "200ms", "-f",
                         "--ban-cpus", "1"], log, extra_env={"IRQSTEER_BANNED_CPUS": "3"})
    try:
        st = dl.wait_until(lambda: dl.load_json(os.path.join(state, "status.json")), T)
        banned = (st or {}).get("config", {}).get("banned_cpus")
        c.check(banned == [0, 1, 3], "--ban-cpus 1 and IRQSTEER_BANNED_CPUS=3 join the file's banned_cpus = 0",
                repr(banned))
    finally:
        dl.stop(p, signal.SIGTERM, timeout=T)



def run_unmatched_interfaces():
    """[interface NAME] sections that match no NIC: a warning at start and
    at reload (not an error), and listed by status.json and irqsteerctl
    status."""
    d = os.path.join(tmp, "unmatched")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    conf = os.path.join(d, "irqsteer.conf")
    with open(conf, "w") as f:
        f.write("[interface eth0]\nrps = yes\n\n[interface eth9]\nmanage = no\n")
    log = os.path.join(d, "daemon.log")
    p = dl.start_daemon(["--root", root, "--state-dir", state, "-c", conf, "--interval", "200ms", "-f"], log)
    try:
        ok = dl.wait_until(lambda: "Ready:" in dl.read_log(log) or p.poll() is not None, T)
        c.check(ok and p.poll() is None, "unmatched [interface]: still starts", dl.read_log(log)[-1500:])
        text = dl.read_log(log)
        c.check(f" warning: {conf}:4: [interface eth9] matches no interface on this host" in text
                and "[interface eth0] matches" not in text, "unmatched [interface]: warned at start with FILE:LINE",
                text[-1500:])
        st = dl.wait_until(lambda: (dl.load_json(os.path.join(state, "status.json")) or {}).get("unmatched_interfaces"), T)
        c.check(st == f"[interface eth9] ({conf}:4)", "unmatched [interface]: in status.json", repr(st))
        r = subprocess.run([dl.env_path("IRQSTEERCTL"), "status", "--state-dir", state], capture_output=True,
                           text=True, timeout=T)
        c.check(f"Matching no interface: [interface eth9] ({conf}:4)" in r.stdout,
                "unmatched [interface]: irqsteerctl status shows it", r.stdout[-1500:])
        with open(conf, "w") as f:
            f.write("[interface eth0]\nrps = yes\n[interface nope*]\nmanage = no\n")
        n = len(dl.read_log(log))
        p.send_signal(signal.SIGHUP)
        ok = dl.wait_until(lambda: "[interface nope*] matches no interface" in dl.read_log(log)[n:], T)
        c.check(ok and "Configuration reloaded" in dl.read_log(log)[n:],
                "unmatched [interface]: warned at reload, the reload still applies", dl.read_log(log)[n:][-1500:])
        # a section from a drop-in is named by the drop-in's own path
        os.makedirs(conf + ".d", exist_ok=True)
        dropin = os.path.join(conf + ".d", "50-host.conf")
        with open(dropin, "w") as f:
            f.write("[interface eth8]\nmanage = no\n")
        n = len(dl.read_log(log))
        p.send_signal(signal.SIGHUP)
        ok = dl.wait_until(lambda: "[interface eth8] matches no interface" in dl.read_log(log)[n:], T)
        text = dl.read_log(log)[n:]
        c.check(ok and f"warning: {dropin}:1: [interface eth8] matches no interface" in text
                and f"Configuration drop-ins: {dropin}" in text,
                "unmatched [interface] in a drop-in: warned with the drop-in's FILE:LINE, drop-ins logged", text[-1500:])
    finally:
        dl.stop(p, signal.SIGTERM, timeout=T)


try:
    test_check_config()
    run_hot()
    # make check-asan: the pace is timing alone, asserted by the plain pass;
    # it runs alone
    if os.environ.get("IRQSTEER_SANITIZER_PASS"):
        print("skip pace: timing only, checked by the pass without sanitizers (IRQSTEER_SANITIZER_PASS)")
    else:
        run_pace()
    # these touch the host (its /run/irqsteer; a daemon without --root as
    # nobody): one at a time, alone
    run_root_state_dir()
    run_unprivileged()
    # each on a fixture root and files of its own, two at a time (~60 s one
    # at a time), the longest first
    dl.run_cases(c, [run_lifecycle, run_effective, run_irq_readings, run_plan_workers, run_plan,
                     run_plan_takeover, run_dry_run_audit, run_dry_run, run_full_state_dir, run_once_and_crash,
                     run_dry_run_same_decisions, run_hotplug, run_startup_failure, run_other_writer,
                     run_unmatched_interfaces, run_stop_signals, run_ban_cpus])
finally:
    if c.failed and os.environ.get("IRQSTEER_KEEP_TMP"):
        print(f"kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
c.exit()

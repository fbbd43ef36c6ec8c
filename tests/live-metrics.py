#!/usr/bin/env python3
"""irqsteerd's metrics through the real thing: Debian's
prometheus-node-exporter reads irqsteerd's metrics_file with its textfile
collector and is scraped with curl, on 127.0.0.1 only; promtool (Debian's
prometheus package) checks and lints both the file and `irqsteerctl
metrics`.  Both packages come from `sh tools/deps.sh test`; without them
the test (or the promtool check) skips.  irqsteerd runs on a fixture tree with a hot CPU."""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemonlib  # noqa: E402
from daemonlib import Checker, env_path, make_root, start_daemon, stop, wait_until, write_load  # noqa: E402

SKIP = 77


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(SKIP)


def node_exporter_binary():
    for name in ("prometheus-node-exporter", "node_exporter"):
        path = shutil.which(name)
        if path:
            return path
    return None


def apt_install(package, service):
    """Why package is missing: the test installs nothing itself, the
    dependencies are an explicit step (tools/deps.sh)."""
    return f"not installed (sh tools/deps.sh test installs {package})"


def install_node_exporter():
    why = apt_install("prometheus-node-exporter", "prometheus-node-exporter.service")
    if why:
        skip(f"prometheus-node-exporter not installed: {why}")
    return node_exporter_binary()


def promtool_binary():
    """promtool, from Debian's prometheus package.  Without it only the format check is skipped: node_exporter's scrape
    below still parses the file."""
    if not shutil.which("promtool"):
        why = apt_install("prometheus", "prometheus.service")
        if why:
            print(f"SKIP promtool: {why}; the format check is skipped", flush=True)
            return None
    return shutil.which("promtool")


def promtool_check(c, promtool, text, what):
    """promtool check metrics: exit 1 on a parse error, 3 on a lint
    problem (naming, missing HELP, a counter without _total...), which it
    prints; either fails, and so does an empty input, which it passes."""
    r = subprocess.run([promtool, "check", "metrics"], input=text, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    c.check(bool(text.strip()) and r.returncode == 0 and not r.stdout.strip(),
            f"promtool check metrics: {what}", f"exit {r.returncode}: {r.stdout}"[:2000])


def free_port():
    """An unused TCP port on 127.0.0.1 (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port):
    r = subprocess.run(["curl", "-sS", "--max-time", "5", "--noproxy", "*", f"http://127.0.0.1:{port}/metrics"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return r.stdout if r.returncode == 0 else None


def samples(text):
    """{series: value} of a text exposition."""
    out = {}
    for line in (text or "").splitlines():
        if not line or line.startswith("#"):
            continue
        series, _, value = line.rpartition(" ")
        try:
            out[series] = float(value)
        except ValueError:
            pass
    return out


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def main():
    if os.geteuid() != 0:
        skip("not root (installs prometheus-node-exporter and prometheus when missing)")
    if not shutil.which("curl"):
        skip("curl not installed (sh tools/deps.sh test installs it)")
    exporter = node_exporter_binary() or install_node_exporter()
    if not exporter:
        skip("prometheus-node-exporter not found after installing it")
    promtool = promtool_binary()

    c = Checker()
    tmp = tempfile.mkdtemp(prefix="irqsteer-metrics.")
    procs = []
    feeding = threading.Event()
    try:
        root = make_root(tmp)
        state = os.path.join(tmp, "state")
        textdir = os.path.join(tmp, "textfile")
        os.mkdir(state)
        os.mkdir(textdir)
        prom = os.path.join(textdir, "irqsteer.prom")
        conf = os.path.join(tmp, "irqsteer.conf")
        with open(conf, "w") as f:
            f.write(f"[daemon]\ninterval = 200ms\nmetrics_file = {prom}\n[balance]\nhot_samples = 2\n")

        # CPU1 hot with softirq work, the counters moving every 100 ms
        feeding.set()

        def feed():
            step = 2
            while feeding.is_set():
                write_load(root, step, hot_cpu=1)
                step += 1
                time.sleep(0.1)

        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()

        log = os.path.join(tmp, "irqsteerd.log")
        d = start_daemon(["--root", root, "--state-dir", state, "--config", conf, "--foreground"], log)
        procs.append(d)
        hot = 'irqsteer_cpu_hot{cpu="1"}'
        c.check(wait_until(lambda: samples(read(prom)).get(hot) == 1, 15),
                "irqsteerd writes metrics_file, CPU1 hot in it", daemonlib.read_log(log)[-2000:])
        c.check(not [n for n in os.listdir(textdir) if n != "irqsteer.prom"],
                "no temporary file left in the textfile directory", str(os.listdir(textdir)))
        c.check(os.stat(prom).st_mode & 0o777 == 0o644, "metrics_file mode 0644", oct(os.stat(prom).st_mode))

        ctl = subprocess.run([env_path("IRQSTEERCTL"), "metrics", "--state-dir", state],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        c.check(ctl.returncode == 0 and "# TYPE irqsteer_actions_total counter" in ctl.stdout and
                hot in ctl.stdout, "irqsteerctl metrics prints them", ctl.stderr + ctl.stdout[:500])

        if promtool:
            promtool_check(c, promtool, read(prom), "metrics_file")
            promtool_check(c, promtool, ctl.stdout, "irqsteerctl metrics")

        port = free_port()
        ne = subprocess.Popen([exporter, f"--web.listen-address=127.0.0.1:{port}", "--collector.disable-defaults",
                               "--collector.textfile", f"--collector.textfile.directory={textdir}"],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "node-exporter.log"), "w"))
        procs.append(ne)
        got = {}
        c.check(wait_until(lambda: scrape(port) is not None, 10), f"node_exporter answers on 127.0.0.1:{port}",
                read(os.path.join(tmp, "node-exporter.log"))[-1000:])
        text = scrape(port) or ""
        got = samples(text)
        c.check(got.get("node_textfile_scrape_error") == 0, "node_textfile_scrape_error 0",
                "\n".join(l for l in text.splitlines() if "textfile" in l)[:1000])
        c.check(any(k.startswith('irqsteer_build_info{version="') for k in got), "scraped: irqsteer_build_info")
        for series in (hot, 'irqsteer_cpu_softirq_ratio{cpu="1"}',
                       'irqsteer_cpu_net_softirqs_per_second{cpu="1",kind="net_rx"}',
                       'irqsteer_rps_trials_total{verdict="kept"}', "irqsteer_ticks_total",
                       "irqsteer_tick_duration_seconds", 'irqsteer_config_reloads_total{result="ok"}'):
            c.check(series in got, f"scraped: {series}", "\n".join(l for l in text.splitlines()
                                                                  if l.startswith("irqsteer_"))[:1500])
        c.check(got.get(hot) == 1, "scraped: CPU1 hot")
        c.check(any(k.startswith("irqsteer_actions_total{") and v > 0 for k, v in got.items()),
                "scraped: actions counted", str([k for k in got if "actions" in k]))
        c.check("# TYPE irqsteer_actions_total counter" in text, "scraped: counter type kept")

        # a failed reload shows in the next scrape
        with open(conf, "a") as f:
            f.write("hot_enter = lots\n")
        d.send_signal(signal.SIGHUP)
        c.check(wait_until(lambda: samples(scrape(port)).get("irqsteer_config_last_reload_successful") == 0, 10),
                "scraped: a failed reload")
        got = samples(scrape(port))
        c.check(got.get('irqsteer_config_reloads_total{result="failed"}') == 1, "scraped: reload failures 1")

        # stopped: the file goes, and with it the series
        c.check(stop(d) == 0, "irqsteerd: SIGTERM exit 0")
        c.check(not os.path.exists(prom), "metrics_file removed on stop")
        text = scrape(port) or ""
        c.check("irqsteer_" not in text and samples(text).get("node_textfile_scrape_error") == 0,
                "after the stop: no irqsteer series, no scrape error")
    finally:
        feeding.clear()
        for p in reversed(procs):
            stop(p, timeout=5)
        shutil.rmtree(tmp, ignore_errors=True)
    c.exit()


if __name__ == "__main__":
    main()

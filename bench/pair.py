#!/usr/bin/env python3
"""Paired calm-hour measurement: several irqsteerd binaries and the least
sampler (irqsteer-floor ROOT 2000 least), each on its own live simulator of
the same host, all started at once, so they share the VM's load of the
moment (bench/README.md, "Per-tick cost and CPU per hour").

usage: pair.py --sim build/bench/irqsteer-sim --floor build/bench/irqsteer-floor
               --bin main=/path/irqsteerd --bin new=build/irqsteerd
               [--host cost16] [--warm 120] [--window 240] [--out DIR]
               [--service NAME] [--least-on NAME] [--irqbalance]

Each irqsteerd runs at its defaults in the foreground (--root on its tree;
the trees and --state-dir on tmpfs when there is one: /proc and sysfs are
in memory, and on ext4 an audit's file reads and writes sleep in the
journal now and then, wake-ups no tick makes). After the warm-up each process's
CPU time is read (schedstat: ns; utime+stime from /proc/PID/stat is printed
beside it, but its 10 ms clock ticks are a tenth of a calm window's total)
and again after the window; printed as CPU seconds per hour, with the
wake-ups (voluntary context switches) per hour.  --bursts also polls each
process's schedstat every 5 ms over the window and prints the median CPU
time of a burst (a run of polls in which it grew: one wake-up), which the
VM's minute-to-minute load moves less than the hour.  To tell why another
measurement differs: --service runs a binary as its unit does (no
--foreground), --least-on NAME adds a least sampler reading NAME's tree (as
bench/run.py's hour section did), --irqbalance runs irqbalance at its
defaults on a simulator of its own beside them (as that section does)."""

import argparse
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def sched_ns(pid):
    total = 0
    for t in glob.glob('/proc/%d/task/*/schedstat' % pid):
        with open(t) as f:
            total += int(f.read().split()[0])
    return total


def stat_ticks(pid):
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return int(fields[11]) + int(fields[12])


def wakeups(pid):
    n = 0
    for t in glob.glob('/proc/%d/task/*/status' % pid):
        with open(t) as f:
            for line in f:
                if line.startswith('voluntary_ctxt_switches:'):
                    n += int(line.split()[1])
    return n


def sample(pid):
    return sched_ns(pid), stat_ticks(pid), wakeups(pid), time.monotonic()


def poll_bursts(procs, window):
    """{name: [CPU ns of each burst]} over window seconds."""
    last = {n: sched_ns(p.pid) for n, p in procs}
    cur = {n: 0 for n, _ in procs}
    out = {n: [] for n, _ in procs}
    end = time.monotonic() + window
    while time.monotonic() < end:
        time.sleep(0.005)
        for n, p in procs:
            v = sched_ns(p.pid)
            if v != last[n]:
                cur[n] += v - last[n]
                last[n] = v
            elif cur[n]:
                out[n].append(cur[n])
                cur[n] = 0
    return out


def wait_file(path, proc, timeout=120):
    end = time.time() + timeout
    while not os.path.exists(path):
        if proc.poll() is not None:
            sys.exit('simulator exited early (%d)' % proc.returncode)
        if time.time() > end:
            sys.exit('timed out waiting for ' + path)
        time.sleep(0.02)


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--sim', required=True)
    ap.add_argument('--floor', required=True)
    ap.add_argument('--bin', action='append', required=True, metavar='NAME=PATH')
    ap.add_argument('--host', default='cost16', help='scenario under bench/scenarios/cost')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--warm', type=int, default=120)
    ap.add_argument('--window', type=int, default=240)
    ap.add_argument('--out', help='work dir (default: a new one under /tmp, removed at the end)')
    ap.add_argument('--arg', action='append', default=[], help='one more irqsteerd argument')
    ap.add_argument('--bursts', action='store_true', help='poll every 5 ms: median CPU time a wake-up')
    ap.add_argument('--service', action='append', default=[], metavar='NAME',
                    help='run this binary as its unit does: without --foreground (no per-CPU load lines)')
    ap.add_argument('--least-on', action='append', default=[], metavar='NAME',
                    help='one more least sampler (least@NAME), reading that binary\'s tree')
    ap.add_argument('--irqbalance', action='store_true',
                    help='irqbalance at its defaults on its own simulator beside them (as bench/run.py\'s hour)')
    o = ap.parse_args()

    scn = os.path.join(HERE, 'scenarios', 'cost', o.host + '.scn')
    work = o.out or tempfile.mkdtemp(prefix='irqsteer-pair.')
    os.makedirs(work, exist_ok=True)
    shm = '/dev/shm' if os.path.isdir('/dev/shm') else None
    state_base = tempfile.mkdtemp(prefix='irqsteer-pair.', dir=shm) if shm else work
    runs = [tuple(b.split('=', 1)) for b in o.bin] + [('least', None)]
    runs += [('least@' + n, n) for n in o.least_on]
    if o.irqbalance:
        runs.append(('irqbalance', 'irqbalance'))
    ticks = o.warm + o.window + 30
    sims, procs, roots = [], [], {}
    try:
        for name, path in runs:
            d = os.path.join(work, name)
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            roots[name] = os.path.join(state_base, name + '-root') if shm else os.path.join(d, 'root')
            if name.startswith('least@'):
                sims.append((d, None))
                continue
            log = open(os.path.join(d, 'sim.log'), 'w')
            sim = subprocess.Popen([o.sim, '--scenario', scn, '--root', roots[name],
                                    '--seed', str(o.seed), '--ticks', str(ticks),
                                    '--ready', os.path.join(d, 'ready'), '--go', os.path.join(d, 'go')],
                                   stdout=log, stderr=subprocess.STDOUT)
            sims.append((d, sim))
        for d, sim in sims:
            if sim:
                wait_file(os.path.join(d, 'ready'), sim)
        for (name, path), (d, _) in zip(runs, sims):
            log = open(os.path.join(d, 'proc.log'), 'w')
            if name == 'irqbalance':
                cmd = [os.path.join(HERE, 'ns-run.sh'), roots[name], d, 'irqbalance', '-f']
            elif name.startswith('least@'):
                cmd = [o.floor, roots[path], '2000', 'least']
            elif path:
                st = os.path.join(state_base, name)
                os.makedirs(st, exist_ok=True)
                cmd = ([path, '--root', roots[name]] + ([] if name in o.service else ['--foreground']) +
                       ['--state-dir', st] + o.arg)
            else:
                cmd = [o.floor, roots[name], '2000', 'least']
            procs.append((name, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)))
        for d, sim in sims:
            if sim:
                open(os.path.join(d, 'go'), 'w').close()
        time.sleep(o.warm)
        s0 = {n: sample(p.pid) for n, p in procs}
        bursts = poll_bursts(procs, o.window) if o.bursts else {}
        if not o.bursts:
            time.sleep(o.window)
        s1 = {n: sample(p.pid) for n, p in procs}
        for n, p in procs:
            if p.poll() is not None:
                sys.exit('%s exited (%d), see %s' % (n, p.returncode, work))
        hz = os.sysconf('SC_CLK_TCK')
        least = None
        rows = []
        for n, _ in procs:
            a, b = s0[n], s1[n]
            h = 3600 / (b[3] - a[3])
            sh = (b[0] - a[0]) / 1e9 * h
            rows.append((n, sh, (b[1] - a[1]) / hz * h, (b[2] - a[2]) * h))
            if n == 'least':
                least = sh
        print('%s, %d s warm-up, %d s window' % (o.host, o.warm, o.window))
        print('%-10s %9s %10s %9s %8s %s' % ('binary', 's/h', 'stat s/h', 'wakes/h', 'x least',
                                             'burst median us, p90, n, over 300 us' if bursts else ''))
        for n, sh, st, wk in rows:
            b = sorted(bursts.get(n, []))
            extra = ('%7.1f %7.1f %5d %s' % (b[len(b) // 2] / 1e3, b[len(b) * 9 // 10] / 1e3, len(b),
                                            ' '.join('%.2f' % (x / 1e6) for x in b if x > 300000))
                     if b else '')
            print('%-10s %9.3f %10.3f %9.0f %8.2f %s' % (n, sh, st, wk, sh / least if least else 0, extra))
    finally:
        for _, p in procs:
            stop(p)
        for _, s in sims:
            if s:
                stop(s)
        shutil.rmtree(state_base, ignore_errors=True)
        if not o.out:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()

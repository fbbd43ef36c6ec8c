#!/usr/bin/env python3
"""irqsteer benchmark harness: runs balancers side by side against the
closed-loop host simulator (bench/irqsteer-sim), measures per-tick cost on
large synthetic hosts, and compares on the real kernel with veth in network
namespaces.  See bench/README.md for the metrics and what each one means.

Exit status: 0 when the harness ran (whatever the numbers), 1 on harness
breakage (the simulator failed, a balancer could not be started at all
when it should, plotting failed)."""
import argparse
import concurrent.futures
import csv
import fcntl
import functools
import glob
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import randhost  # noqa: E402  (beside this file)
BALANCERS = ['none', 'static', 'irqbalance', 'irqsteerd']
SCENARIOS = ['uniform16', 'zipf64', 'elephant', 'single-queue', 'step', 'noisy', 'isolated', 'trial8', 'share20', 'share80', 'queues32']
QUICK_SCENARIOS = ['uniform16']
COST_SCENARIOS = ['cost16', 'cost64', 'cost256']


class HarnessError(Exception):
    pass


T_START = time.time()


def log(msg):
    """A progress line with the seconds since the start (where CI's time goes)."""
    print('bench: [%4.0f s] %s' % (time.time() - T_START, msg), flush=True)


def cpu_ns(pid):
    """CPU time of all threads of pid in ns (schedstat: ns resolution),
    falling back to utime+stime in clock ticks."""
    total = 0
    try:
        for t in glob.glob('/proc/%d/task/*/schedstat' % pid):
            with open(t) as f:
                total += int(f.read().split()[0])
        if total:
            return total
        with open('/proc/%d/stat' % pid) as f:
            fields = f.read().rsplit(')', 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 10 ** 9 // os.sysconf('SC_CLK_TCK')
    except (OSError, ValueError, IndexError):
        return None


def wakeups(pid):
    """Voluntary context switches of all threads of pid: its wake-ups."""
    n = 0
    try:
        for t in glob.glob('/proc/%d/task/*/status' % pid):
            with open(t) as f:
                for line in f:
                    if line.startswith('voluntary_ctxt_switches:'):
                        n += int(line.split()[1])
    except (OSError, ValueError):
        return None
    return n


def read_summary(path):
    out = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.strip().partition('=')
            try:
                out[k] = float(v)
            except ValueError:
                out[k] = v
    return out


def wait_file(path, proc, timeout):
    end = time.time() + timeout
    while not os.path.exists(path):
        if proc.poll() is not None:
            raise HarnessError('simulator exited early (%d)' % proc.returncode)
        if time.time() > end:
            raise HarnessError('timed out waiting for ' + path)
        time.sleep(0.02)


def stop(proc, timeout=15):
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class Run:
    """One scenario x balancer run: the simulator ticking over its own tree
    and the balancer acting on it."""

    def __init__(self, opts, scn, bal, ticks=None, tag=None, service=False, defaults=False, extra=(),
                 seed=None, banned='', tree_base=None):
        # service: each daemon as its unit runs it, for the cost figures:
        # irqsteerd without --foreground (its per-CPU load line), irqbalance
        # without --debug (its tree printed each cycle: 32 against 30 us/s
        # of CPU on cost16 at its defaults); defaults: each daemon
        # at its own default intervals (irqbalance 10 s, irqsteerd 4 s
        # calm, 2 s busy, 0.5 s near hot) instead of both at 1 s
        self.opts, self.scn, self.bal, self.service = opts, scn, bal, service
        self.defaults = defaults
        self.extra = list(extra)  # more irqsteerd arguments
        self.seed = opts.seed if seed is None else seed
        self.banned = banned  # CPUs both daemons are told to keep free
        self.name = '%s-%s' % (tag or os.path.basename(scn)[:-4], bal)
        self.work = os.path.join(opts.tmp, self.name)
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        # tree_base (tmpfs): the tree where a real /proc and sysfs are,
        # in memory; on ext4 an audit's reads and writes of its files
        # sleep in the journal now and then (wake-ups that are no tick's)
        self.root = os.path.join(tree_base, self.name + '-root') if tree_base else os.path.join(self.work, 'root')
        shutil.rmtree(self.root, ignore_errors=True)
        self.csv = os.path.join(self.work, 'ticks.csv')
        self.ticks = ticks
        self.sim = self.proc = None
        self.note = ''
        self.valid = True
        self.cpu_ms_tick = None

    def start(self):
        o = self.opts
        cmd = [o.sim, '--scenario', self.scn, '--root', self.root, '--seed', str(self.seed),
               '--csv', self.csv, '--summary', os.path.join(self.work, 'summary'),
               '--ready', os.path.join(self.work, 'ready'), '--go', os.path.join(self.work, 'go')]
        if self.ticks:
            cmd += ['--ticks', str(self.ticks)]
        if self.bal in ('none', 'static'):
            cmd.append('--fast')
        self.simlog = open(os.path.join(self.work, 'sim.log'), 'w')
        self.sim = subprocess.Popen(cmd, stdout=self.simlog, stderr=subprocess.STDOUT)
        wait_file(os.path.join(self.work, 'ready'), self.sim, 120)
        self.blog_path = os.path.join(self.work, 'balancer.log')
        blog = open(self.blog_path, 'w')
        if self.bal == 'static':
            subprocess.run([sys.executable, os.path.join(HERE, 'static-spread.py'), self.root],
                           stdout=blog, stderr=subprocess.STDOUT, check=True)
        elif self.bal == 'irqbalance':
            env = dict(os.environ)
            if self.banned:
                env['IRQBALANCE_BANNED_CPULIST'] = self.banned
            self.proc = subprocess.Popen(
                [os.path.join(HERE, 'ns-run.sh'), self.root, self.work,
                 'irqbalance', '-f'] + ([] if self.service else ['--debug']) +
                ([] if self.defaults else ['-t', '1']),
                stdout=blog, stderr=subprocess.STDOUT, env=env)
        elif self.bal == 'least':
            # the least 2 s sampler (bench/floor.c) on a simulator of its
            # own, as bench/pair.py runs it
            self.proc = subprocess.Popen([o.floor, self.root, str(FLOOR_MS), 'least'],
                                         stdout=blog, stderr=subprocess.STDOUT)
        elif self.bal == 'irqsteerd':
            state = self.state = state_dir(o, self.name)
            self.proc = subprocess.Popen(
                [o.irqsteerd, '--root', self.root] + ([] if self.service else ['--foreground']) +
                ([] if self.defaults else ['--interval', '1s']) + ['--state-dir', state] + o.irqsteerd_args +
                (['--ban-cpus', self.banned] if self.banned else []) + self.extra,
                stdout=blog, stderr=subprocess.STDOUT)
        if self.proc:
            time.sleep(0.3)
            if self.proc.poll() is not None:
                self.valid = False
                self.note = '%s exited at start (%d), see %s' % (self.bal, self.proc.returncode,
                                                                 self.blog_path)
            self.cpu0 = cpu_ns(self.proc.pid)
        open(os.path.join(self.work, 'go'), 'w').close()
        self.t0 = time.time()

    def finish(self):
        try:
            self.sim.wait(timeout=(self.ticks or 200) * 3 + 120)
        except subprocess.TimeoutExpired:
            self.sim.kill()
            raise HarnessError('%s: simulator hung' % self.name)
        if self.proc:
            cpu1 = cpu_ns(self.proc.pid)
            if self.proc.poll() is not None and self.valid:
                self.valid = False
                self.note = '%s exited during the run (%d)' % (self.bal, self.proc.returncode)
            if self.bal == 'irqsteerd' and os.path.exists(os.path.join(self.state, 'status.json')):
                # its last status.json (each CPU's "why"), gone once it stops
                shutil.copy(os.path.join(self.state, 'status.json'), self.work)
            stop(self.proc)
        if self.sim.returncode != 0:
            raise HarnessError('%s: simulator failed (%d), see %s/sim.log' %
                               (self.name, self.sim.returncode, self.work))
        self.s = read_summary(os.path.join(self.work, 'summary'))
        if self.proc and self.cpu0 is not None and cpu1 is not None:
            self.cpu_ms_tick = (cpu1 - self.cpu0) / 1e6 / self.s['ticks']
        if self.bal == 'irqbalance' and self.service:
            # no debug tree to read: valid if it changed masks at all
            moves = int(self.s.get('moves_total', 0))
            self.valid = self.valid and moves > 0
            self.note = 'irqbalance (no --debug): %d mask changes%s' % (
                moves, '' if self.valid else ' -> INVALID RUN')
        elif self.bal == 'irqbalance':
            self.check_irqbalance()
        elif self.bal == 'irqsteerd' and self.valid and self.s.get('moves_total', 0) == 0:
            self.note = 'irqsteerd made no change at all'
        return self

    def check_irqbalance(self):
        """A run where irqbalance did nothing is invalid, not a win: it must
        have classified the simulated NIC IRQs as ethernet and moved IRQs."""
        with open(self.blog_path, errors='replace') as f:
            text = f.read()
        eth = set(re.findall(r'Interrupt (\d+) node_num is -?\d+ \(ethernet/', text))
        cycles = text.count('\n-----------')
        moves = int(self.s.get('moves_total', 0))
        self.irqbalance_eth = len(eth)
        if not eth or moves == 0:
            self.valid = False
        self.note = 'irqbalance: %d IRQs classified ethernet, %d cycles, %d mask changes%s' % (
            len(eth), cycles, moves, '' if self.valid else ' -> INVALID RUN')


def irqsteerd_works(path):
    if not path or not os.access(path, os.X_OK):
        return False, 'not built'
    try:
        r = subprocess.run([path, '--help'], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    txt = r.stdout + r.stderr
    if '--root' not in txt:
        return False, 'no --root option yet (%s)' % txt.strip().splitlines()[0] if txt.strip() else 'no output'
    return True, ''


# ---------------------------------------------------------------- scenarios

def run_scenario(opts, name, ticks=None):
    scn = os.path.join(HERE, 'scenarios', name + '.scn')
    runs = []
    # none and static tick without sleeping; the two daemons run at once in
    # real time (1 s ticks) against their own trees.
    for bal in ('none', 'static'):
        if bal not in opts.balancers:
            continue
        runs.append(Run(opts, scn, bal, ticks))
        runs[-1].start()
        runs[-1].finish()
    live = []
    for bal in ('irqbalance', 'irqsteerd'):
        if bal not in opts.balancers or (bal == 'irqsteerd' and not opts.have_irqsteerd):
            continue
        r = Run(opts, scn, bal, ticks)
        r.start()
        live.append(r)
    for r in live:
        r.finish()
    runs += live
    return runs


def fmt(v, spec):
    return '-' if v is None else format(v, spec)


def table(rows):
    hdr = ['scenario', 'balancer', 'peak med%', 'peak p99%', 'imbal', 'drop%', 'moves/h', 'conv',
           'hole', 'ms/tick', 'valid']
    w = [13, 10, 9, 9, 6, 6, 8, 5, 4, 7, 5]
    lines = [' '.join(h.ljust(x) if i < 2 else h.rjust(x) for i, (h, x) in enumerate(zip(hdr, w)))]
    lines.append('-' * len(lines[0]))
    for r in rows:
        s = r.s
        conv = int(s['converge_ticks'])
        cells = [r.scenario, r.bal, fmt(s['peak_median'], '.1f'), fmt(s['peak_p99'], '.1f'),
                 fmt(s['imbalance'], '.2f'), fmt(s['dropped_pct'], '.1f'),
                 fmt(s['moves_per_hour'], '.0f'), str(conv) if conv >= 0 else 'never',
                 fmt(s.get('hole_run_max'), '.0f'), fmt(r.cpu_ms_tick, '.2f'), 'yes' if r.valid else 'NO']
        lines.append(' '.join(c.ljust(x) if i < 2 else c.rjust(x)
                              for i, (c, x) in enumerate(zip(cells, w))))
    return '\n'.join(lines)


def write_csv(path, rows):
    keys = ['peak_median', 'peak_p99', 'peak_demand_median', 'imbalance', 'imbalance_p99',
            'dropped_pct', 'moves_per_hour', 'moves_total', 'rps_moves_after_warmup',
            'converge_ref', 'converge_ticks', 'isolated_load_pct', 'bad_writes', 'ticks', 'warmup',
            'hole_ticks', 'hole_run_max']
    with open(path, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['scenario', 'balancer'] + keys + ['cpu_ms_per_tick', 'valid', 'note'])
        for r in rows:
            w.writerow([r.scenario, r.bal] + [r.s.get(k, '') for k in keys] +
                       ['' if r.cpu_ms_tick is None else '%.3f' % r.cpu_ms_tick,
                        int(r.valid), r.note])


def write_dict_csv(path, rows):
    """rows (dicts) as CSV, a column for each key any row has, sorted."""
    with open(path, 'w', newline='') as f:
        w = csv.DictWriter(f, sorted({k for r in rows for k in r}))
        w.writeheader()
        w.writerows(rows)


def write_json(path, data):
    with open(path, 'w') as f:
        json.dump(data, f, indent=1)


def add_section(report, path, write, data, heading, format_table):
    """Saves data at path with write(path, data), then adds heading and
    format_table(data) to the report as one section."""
    write(path, data)
    report.append(heading + format_table(data))


# ---------------------------------------------------------------- random hosts

RANDOM_BALANCERS = ('none', 'irqbalance', 'irqsteerd')
# irqsteerd counts as worse than irqbalance on a host when its imbalance is
# higher by more than this (the run-to-run spread of one host's median)
WORSE_MARGIN = 0.02


def run_random_host(opts, seed):
    """One host of the family: its .scn from the seed alone, then none
    (ticking fast), irqbalance and irqsteerd (both live, at once) on it.
    Returns {balancer: Run}; the trees go once read, the logs stay."""
    text = randhost.host(seed, opts.random_ticks, opts.random_warmup)
    scn = os.path.join(opts.random_dir, 'seed-%d.scn' % seed)
    with open(scn, 'w') as f:
        f.write(text)
    m = re.search(r'^banned = (\S+)', text, re.M)
    banned = m.group(1) if m else ''
    runs = {}
    live = []
    for bal in RANDOM_BALANCERS:
        if bal not in opts.balancers or (bal == 'irqsteerd' and not opts.have_irqsteerd):
            continue
        r = Run(opts, scn, bal, tag='seed%d' % seed, seed=seed, banned=banned)
        r.shape = randhost.describe(text)
        r.start()
        if bal == 'none':
            r.finish()
        else:
            live.append(r)
        runs[bal] = r
    for r in live:
        r.finish()
    for r in runs.values():
        shutil.rmtree(r.root, ignore_errors=True)
        if r.bal == 'irqsteerd' and opts.state_base:
            shutil.rmtree(r.state, ignore_errors=True)
    return runs


def run_random(opts, seeds):
    """The family, opts.jobs hosts at a time (the daemons mostly sleep)."""
    os.makedirs(opts.random_dir, exist_ok=True)
    res = {}
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as ex:
        futs = {ex.submit(run_random_host, opts, s): s for s in seeds}
        for fut in concurrent.futures.as_completed(futs):
            s = futs[fut]
            res[s] = fut.result()
            log('  host seed %d (%d/%d): %s' % (s, len(res), len(seeds), ', '.join(
                '%s %s%s' % (b, fmt(r.s.get('imbalance'), '.2f'), '' if r.valid else ' INVALID')
                for b, r in res[s].items())))
    return res, time.time() - t0


def quantile(v, q):
    """Nearest rank, as the simulator's summary."""
    v = sorted(v)
    if not v:
        return None
    return v[min(len(v) - 1, max(0, int(round(q * len(v) + 0.5)) - 1))]


def random_rows(res):
    rows = []
    for seed in sorted(res):
        for bal, r in res[seed].items():
            row = {'seed': seed, 'balancer': bal, 'valid': int(r.valid), 'note': r.note, 'host': r.shape,
                   'cpu_ms_per_tick': '' if r.cpu_ms_tick is None else '%.3f' % r.cpu_ms_tick}
            for k in ('imbalance', 'imbalance_p99', 'peak_median', 'peak_demand_median', 'dropped_pct',
                      'remote_extra_pct', 'moves_per_hour', 'moves_total', 'hole_ticks', 'hole_run_max', 'hole_ticks_avoidable',
                      'isolated_load_pct', 'bad_writes', 'converge_ticks'):
                row[k] = r.s.get(k, '')
            rows.append(row)
    return rows


def random_table(res, elapsed, opts):
    seeds = sorted(res)
    lines = ['balancer    hosts valid | imbalance med   p90   max  >1.15 >1.30 | hole hosts  ticks max |'
             ' avoidable | drop% med   max >0.1% | moves/h med   p90    max']
    for bal in RANDOM_BALANCERS:
        runs = [res[s][bal] for s in seeds if bal in res[s]]
        if not runs:
            continue
        ok = [r for r in runs if r.valid]
        im = [r.s['imbalance'] for r in ok]
        holes = [r.s.get('hole_ticks', 0) for r in ok]
        avoid = [r.s.get('hole_ticks_avoidable', 0) for r in ok]
        drop = [r.s['dropped_pct'] for r in ok]
        mv = [r.s['moves_per_hour'] for r in ok]
        lines.append('%-11s %5d %5d | %13s %5s %5s %6d %5d | %10d %6s %3s | %9d | %9s %5s %5d | %11s %5s %6s' % (
            bal, len(runs), len(ok), fmt(quantile(im, 0.5), '.2f'), fmt(quantile(im, 0.9), '.2f'),
            fmt(max(im) if im else None, '.2f'), sum(x > 1.15 for x in im), sum(x > 1.30 for x in im),
            sum(h > 0 for h in holes), fmt(quantile(holes, 0.5), '.0f'), fmt(max(holes) if holes else None, '.0f'),
            sum(h > 0 for h in avoid),
            fmt(quantile(drop, 0.5), '.2f'), fmt(max(drop) if drop else None, '.1f'), sum(d > 0.1 for d in drop),
            fmt(quantile(mv, 0.5), '.0f'), fmt(quantile(mv, 0.9), '.0f'), fmt(max(mv) if mv else None, '.0f')))
    both = [s for s in seeds if all(b in res[s] and res[s][b].valid for b in ('irqbalance', 'irqsteerd'))]
    if both:
        d = [(res[s]['irqsteerd'].s['imbalance'] - res[s]['irqbalance'].s['imbalance'], s) for s in both]
        worse = sorted(((x, s) for x, s in d if x > WORSE_MARGIN), reverse=True)
        lines.append('')
        lines.append('irqsteerd worse than irqbalance (imbalance higher by more than %.2f) on %d of %d hosts '
                     'where both ran valid%s; higher by any margin on %d' % (
                         WORSE_MARGIN, len(worse), len(both),
                         (': seeds ' + ' '.join('%d (+%.2f)' % (s, x) for x, s in worse[:20])) if worse else '',
                         sum(x > 0 for x, _ in d)))
    for bal in ('irqbalance', 'irqsteerd'):
        runs = sorted((res[s][bal] for s in seeds if bal in res[s] and res[s][bal].valid),
                      key=lambda r: -r.s['imbalance'])
        if not runs:
            continue
        lines.append('')
        lines.append('5 worst hosts for %s (run.py --random-seed N reproduces one):' % bal)
        for r in runs[:5]:
            other = res[r.seed].get('irqsteerd' if bal == 'irqbalance' else 'irqbalance')
            lines.append('  seed %-6d %s %.2f (%s %s), hole %d, drop %.2f%%: %s' % (
                r.seed, bal, r.s['imbalance'], other.bal if other else '-',
                fmt(other.s.get('imbalance') if other and other.valid else None, '.2f'),
                r.s.get('hole_ticks', 0), r.s['dropped_pct'], r.shape))
    lines.append('')
    lines.append('%d hosts, %d at a time, in %.0f s (%.1f s a host); host files in %s' % (
        len(seeds), opts.jobs, elapsed, elapsed / max(1, len(seeds)), opts.random_dir))
    return '\n'.join(lines)


def plot_random_cdf(opts, res):
    """The CDF of imbalance over the hosts, one line per balancer."""
    gp = os.path.join(opts.tmp, 'random-cdf.gp')
    png = os.path.join(opts.out, 'random-cdf.png')
    plots = []
    for bal in RANDOM_BALANCERS:
        im = sorted(res[s][bal].s['imbalance'] for s in res if bal in res[s] and res[s][bal].valid)
        if not im:
            continue
        dat = os.path.join(opts.tmp, 'random-%s.dat' % bal)
        with open(dat, 'w') as f:
            for i, x in enumerate(im):
                f.write('%.4f %.4f\n' % (x, (i + 1) / len(im)))
        plots.append('"%s" using 1:2 with steps lw 2 title "%s (%d hosts)"' % (dat, bal, len(im)))
    if not plots:
        return None
    with open(gp, 'w') as f:
        f.write('set terminal pngcairo size 900,560 font "DejaVu Sans,10"\nset output "%s"\n' % png)
        f.write('set title "Random hosts: share of hosts with imbalance (peak demand / lower bound) at most x"\n')
        f.write('set logscale x\nset xrange [1:10]\nset yrange [0:1.02]\nset grid\nset key bottom right\n'
                'set xlabel "imbalance"\nset ylabel "share of hosts"\n')
        f.write('set arrow from 1.15, graph 0 to 1.15, graph 1 nohead dt 2\n')
        f.write('plot ' + ', '.join(plots) + '\n')
    r = subprocess.run(['gnuplot', gp], capture_output=True, text=True)
    if r.returncode != 0:
        raise HarnessError('gnuplot failed: ' + r.stderr[-500:])
    return png


def keep_worst_logs(opts, res, n=8):
    """The balancers' logs of the n hosts where irqsteerd did worst, beside
    the host files, for the diagnosis."""
    runs = sorted((res[s]['irqsteerd'] for s in res if 'irqsteerd' in res[s] and res[s]['irqsteerd'].valid),
                  key=lambda r: -r.s['imbalance'])
    for r in runs[:n]:
        for b, rr in res[r.seed].items():
            for fn, suffix in (('balancer.log', 'log'), ('ticks.csv', 'csv'), ('status.json', 'status.json')):
                src = os.path.join(rr.work, fn)
                if os.path.exists(src):
                    shutil.copy(src, os.path.join(opts.random_dir, 'seed-%d-%s.%s' % (r.seed, b, suffix)))


# ---------------------------------------------------------------- plots

def plot_scenario(opts, name, runs):
    """Per-CPU network load over time, one heat-map panel per balancer, and
    the peak CPU over time for all balancers."""
    out = opts.out
    mats = []
    for r in runs:
        with open(r.csv) as f:
            rd = csv.reader(f)
            hdr = next(rd)
            rows = [list(map(float, x)) for x in rd]
        first = hdr.index('cpu0')
        ncpu = len(hdr) - first
        mat = os.path.join(r.work, 'cpu.dat')
        with open(mat, 'w') as f:
            for t, row in enumerate(rows):
                for c in range(ncpu):
                    f.write('%d %d %.1f\n' % (t, c, 100 * row[first + c]))
                f.write('\n')
        peak = os.path.join(r.work, 'peak.dat')
        with open(peak, 'w') as f:
            for row in rows:
                f.write('%d %.2f %.3f\n' % (row[0], 100 * row[3],
                                            row[2] / row[1] if row[1] > 0 else 1))
        mats.append((r, mat, peak, ncpu, len(rows)))
    n = len(mats)
    gp = os.path.join(opts.tmp, name + '.gp')
    png = os.path.join(out, name + '-cpus.png')
    with open(gp, 'w') as f:
        f.write('set terminal pngcairo size 1100,%d font "DejaVu Sans,10"\n' % (230 * n + 60))
        f.write('set output "%s"\n' % png)
        f.write('set multiplot layout %d,1 title "%s: network (irq+softirq) share of each CPU per tick, %%"\n'
                % (n, name))
        f.write('set palette defined (0 "#ffffff", 20 "#ffffb2", 50 "#fd8d3c", 80 "#e31a1c", 100 "#800026")\n')
        f.write('set cbrange [0:100]\nset ylabel "CPU"\nset xlabel "tick (s)"\n')
        for r, mat, peak, ncpu, nt in mats:
            f.write('set title "%s%s"\n' % (r.bal, '' if r.valid else ' (INVALID RUN)'))
            f.write('set xrange [-0.5:%f]\nset yrange [-0.5:%f]\n' % (nt - 0.5, ncpu - 0.5))
            f.write('plot "%s" using 1:2:3 with image notitle\n' % mat)
        f.write('unset multiplot\n')
        png2 = os.path.join(out, name + '-peak.png')
        f.write('reset\nset terminal pngcairo size 1100,420 font "DejaVu Sans,10"\n')
        f.write('set output "%s"\n' % png2)
        f.write('set multiplot layout 1,2 title "%s"\n' % name)
        f.write('set title "busiest CPU, served irq+softirq %"\nset xlabel "tick (s)"\n'
                'set yrange [0:105]\nset key bottom right\n')
        f.write('plot ' + ', '.join('"%s" using 1:2 with lines lw 2 title "%s"' % (p, r.bal)
                                    for r, _, p, _, _ in mats) + '\n')
        f.write('set title "imbalance: peak demand / lower bound"\nset yrange [0.8:*]\n'
                'set logscale y\nset key top right\n')
        f.write('plot ' + ', '.join('"%s" using 1:3 with lines lw 2 title "%s"' % (p, r.bal)
                                    for r, _, p, _, _ in mats) + '\n')
        f.write('unset multiplot\n')
    r = subprocess.run(['gnuplot', gp], capture_output=True, text=True)
    if r.returncode != 0:
        raise HarnessError('gnuplot failed: ' + r.stderr[-500:])
    return [png, png2]


# ---------------------------------------------------------------- cost

def callgrind_dumps(out):
    """Instructions (Ir) of each callgrind dump file of out.<pid>.*, by trigger."""
    res = {}
    for fn in glob.glob(out + '.*'):
        if fn.endswith('.log'):
            continue
        trig, ir = None, None
        with open(fn, errors='replace') as f:
            for line in f:
                m = re.match(r'desc: Trigger: (?:dump )?(.*)', line)
                if m:
                    trig = m.group(1).strip()
                if line.startswith(('summary:', 'totals:')):
                    ir = int(line.split()[1])
                    break
        if trig is not None and ir is not None:
            res[trig] = ir
    return res


def steady_ir(cmd, out, cwd, warm, dur, count, prefix=()):
    """Instructions per cycle in the steady state: cmd runs under callgrind;
    after warm seconds its counters are dumped and reset (callgrind_control
    -d), after dur more seconds dumped again.  The second dump holds exactly
    the cycles in between, which count() (called at both dumps) counts.
    Startup, the first placement and shutdown are outside the window."""
    full = list(prefix) + ['valgrind', '--tool=callgrind', '--callgrind-out-file=' + out + '.%p'] + cmd
    log_path = out + '.log'
    with open(log_path, 'w') as lf:
        # prefix execs valgrind (unshare without --fork): the same PID
        p = subprocess.Popen(full, stdout=lf, stderr=subprocess.STDOUT, cwd=cwd)
        try:
            time.sleep(warm)
            subprocess.run(['callgrind_control', '-d', 'warm', str(p.pid)], capture_output=True, timeout=120)
            c0 = count(log_path)
            time.sleep(dur)
            subprocess.run(['callgrind_control', '-d', 'end', str(p.pid)], capture_output=True, timeout=120)
            c1 = count(log_path)
        finally:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(120)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    ir = callgrind_dumps(out).get('end')
    cycles = (c1 - c0) if c0 is not None and c1 is not None else 0
    return (ir / cycles if ir and cycles > 0 else None), cycles


def wall_ticks(interval_s):
    """Ticks of a daemon ticking every interval_s, counted by the clock:
    irqsteerd's status.json is rewritten at full ticks only, so its ticks
    lag by up to 14 calm ticks."""
    def count(_log):
        return time.time() / interval_s
    return count


def tmpfs_dir():
    """A tmpfs directory to hold irqsteerd's state dirs, None without one."""
    with open('/proc/mounts') as f:
        mounts = {l.split()[1]: l.split()[2] for l in f}
    for d in ('/run', '/dev/shm'):
        if mounts.get(d) == 'tmpfs' and os.access(d, os.W_OK):
            return d
    return None


def state_dir(opts, name):
    """irqsteerd's state dir for a run: on tmpfs, as under systemd
    (RuntimeDirectory, /run), when the host has one.  On a disk file system
    each tick's status.json rename also costs the balancer the writeback
    ext4 starts when a file replaces another (auto_da_alloc), which the
    service never pays; the simulated tree stays in the work dir, the same
    for both balancers."""
    d = os.path.join(opts.state_base or opts.tmp, name + '-state')
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def cost_hosts(opts):
    """The cost hosts to run: --cost-host's, else cost16 alone when quick."""
    return opts.cost_hosts or (['cost16'] if opts.quick else COST_SCENARIOS)


def run_cost(opts):
    """Instructions per tick and CPU per tick on 16/64/256-CPU hosts, both
    in the steady state: after a warm-up that holds the first placement,
    each balancer running for real on its own simulated host (a sim per
    balancer, same scenario and seed)."""
    rows = []
    # The full run's warm-up holds the first RPS sets' NAPI share
    # measurement too: sets sized with the prior share keep irqsteerd's
    # ticks full for the 30 s dwell and 10 ticks more (policy.c,
    # fill_report), about 45 s from the start at 1 s; a 25 s warm-up put
    # the whole window there (cost16: 0.97 M instructions a tick against
    # 0.14 M once calm).  Quick keeps 8 s, 6 s and cost16 alone for CI's
    # budget (its run of 2026-11-26 took 1374 s of the 20 min; cost256 was
    # about 80 s of it and is quoted nowhere): it only shows the harness
    # works, and its figures are quoted nowhere.
    warm, dur = (8, 6) if opts.quick else (60, 20)
    for name in cost_hosts(opts):
        scn = os.path.join(HERE, 'scenarios', 'cost', name + '.scn')
        row = {'host': name}
        # CPU per tick, live: both balancers at once on their own trees;
        # CPU time over the window after the warm-up, one tick a second.
        # A third: irqsteerd with every tick full (irq_rate_interval = 0:
        # the inventory refresh, /proc/interrupts, the policy at each), what
        # a tick costs while CPUs are near hot; the status files are still
        # written only when due (irqsteerd(8), FILES).
        live = []
        full_conf = os.path.join(opts.tmp, 'full-ticks.conf')
        with open(full_conf, 'w') as f:
            f.write('[daemon]\nirq_rate_interval = 0\n')
        for bal, tag, extra in (('irqbalance', name, ()), ('irqsteerd', name, ()),
                                ('irqsteerd', name + '-full', ('--config', full_conf))):
            if bal == 'irqsteerd' and not opts.have_irqsteerd:
                continue
            r = Run(opts, scn, bal, warm + dur + 5, tag=tag, service=True, extra=extra)
            r.key = bal + ('_full' if extra else '')
            r.start()
            live.append(r)
        time.sleep(warm)
        marks = [(r, cpu_ns(r.proc.pid) if r.proc else None, time.time()) for r in live]
        time.sleep(dur)
        for r, c0, t0 in marks:
            c1 = cpu_ns(r.proc.pid) if r.proc else None
            if c0 is not None and c1 is not None:
                row[r.key + '_ms'] = (c1 - c0) / 1e6 / (time.time() - t0)
        for r in live:
            r.finish()
            row[r.key + '_valid'] = r.valid
        with open(os.path.join(live[0].root, 'proc/interrupts')) as f:
            row['irqs'] = sum(1 for l in f if re.match(r'\s*\d+:', l))
        # Instructions: a live simulator per balancer, so every cycle sees
        # fresh counts; the balancer acts on its tree as it would on a host.
        sim = Run(opts, scn, 'none', 1000, tag=name + '-cg-ib')
        sim.bal = 'callgrind'
        sim.start()
        ns = [os.path.join(HERE, 'ns-run.sh'), sim.root, sim.work]
        # as the service runs, without --debug: its cycles counted by the
        # clock like irqsteerd's ticks (irqbalance sleeps 1 s after each
        # cycle, so under callgrind a cycle a second overcounts its cycles
        # by its own cycle time, a few percent, in irqbalance's favour)
        row['ib_Ir_tick'], row['ib_cycles'] = steady_ir(['irqbalance', '-f', '-t', '1'],
                                                        os.path.join(sim.work, 'cg-ib'), sim.work, warm, dur,
                                                        wall_ticks(1.0), prefix=ns)
        os.kill(sim.sim.pid, signal.SIGTERM)
        sim.sim.wait()
        if opts.have_irqsteerd:
            sim = Run(opts, scn, 'none', 1000, tag=name + '-cg-isd')
            sim.bal = 'callgrind'
            sim.start()
            st = state_dir(opts, sim.name)
            # as the service runs: no --foreground (its per-CPU load line
            # is a debug message then), one tick a second
            row['isd_Ir_tick'], row['isd_ticks'] = steady_ir(
                [opts.irqsteerd, '--root', sim.root, '--interval', '1s', '--state-dir', st] + opts.irqsteerd_args,
                os.path.join(sim.work, 'cg-isd'), sim.work, warm, dur,
                wall_ticks(1.0))
            os.kill(sim.sim.pid, signal.SIGTERM)
            sim.sim.wait()
        rows.append(row)
    return rows


def cost_table(rows):
    lines = ['host      IRQs  irqbalance Ir/cycle  irqsteerd Ir/tick  ratio   irqbalance ms/tick  irqsteerd ms/tick'
             '  every tick full ms']
    for r in rows:
        ib, isd = r.get('ib_Ir_tick'), r.get('isd_Ir_tick')
        ratio = '%.3f' % (isd / ib) if ib and isd else '-'
        lines.append('%-8s %5s  %19s  %17s  %5s   %18s  %17s  %18s' % (
            r['host'], r.get('irqs') or '-', fmt(ib, ',.0f'), fmt(isd, ',.0f'), ratio,
            fmt(r.get('irqbalance_ms'), '.2f'), fmt(r.get('irqsteerd_ms'), '.2f'),
            fmt(r.get('irqsteerd_full_ms'), '.2f')))
    return '\n'.join(lines)


# ---------------------------------------------------------------- defaults

def read_ticks_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def relief(rows, step):
    """From a step run's ticks.csv: (seconds from the step to the first
    mask change, seconds to relief).  Relief: the first tick at or after
    the step whose peak demand has come down at least half of the way from
    the step tick's to the run's final level (the median of the last
    quarter); None when the peak never came down by 5 points or more.
    One tick is one second of real time."""
    if len(rows) <= step:
        return None, None
    peak = [float(r['peak_demand']) for r in rows]
    tail = peak[step + (len(peak) - step) * 3 // 4:]
    fin = sorted(tail)[len(tail) // 2]
    first = next((k - step for k in range(step, len(rows))
                  if int(rows[k]['irq_moves']) + int(rows[k]['rps_moves']) > 0), None)
    if peak[step] - fin < 0.05:
        return first, None
    half = peak[step] - 0.5 * (peak[step] - fin)
    rel = next((k - step for k in range(step, len(rows)) if peak[k] <= half), None)
    return first, rel


def median(v):
    v = sorted(x for x in v if x is not None)
    return v[len(v) // 2] if v else None


def median_late(v):
    """The median of times where None is "not within the window": later
    than any figure, not left out (a balancer that acted in 2 rounds of 5
    has no median time)."""
    m = sorted(float('inf') if x is None else x for x in v)
    return m[len(m) // 2] if m and m[len(m) // 2] != float('inf') else None


def run_relief(opts):
    """The step scenario (x3 at tick 20) with each daemon at its defaults,
    both live at once on their own simulators; several seeds, as the phase
    of a daemon's interval against the step moves its reaction by up to an
    interval."""
    scn = os.path.join(HERE, 'scenarios', 'step.scn')
    with open(scn) as f:
        step = int(re.search(r'^step\s*=\s*(\d+)', f.read(), re.M).group(1))
    seeds = [opts.seed] if opts.quick else [opts.seed, opts.seed + 1, opts.seed + 2]
    res = {}
    for seed in seeds:
        live = []
        for bal in ('irqbalance', 'irqsteerd'):
            if bal == 'irqsteerd' and not opts.have_irqsteerd:
                continue
            o = argparse.Namespace(**vars(opts))
            o.seed = seed
            # quick: 15 ticks after the step, time enough for both
            r = Run(o, scn, bal, ticks=step + 15 if opts.quick else None, tag='relief%d' % seed, defaults=True)
            r.start()
            live.append(r)
        for r in live:
            r.finish()
            first, rel = relief(read_ticks_csv(r.csv), step)
            d = res.setdefault(r.bal, {'first': [], 'relief': [], 'conv': [], 'valid': True})
            d['first'].append(first)
            d['relief'].append(rel)
            d['conv'].append(r.s.get('converge_ticks'))
            d['valid'] &= r.valid
    return res, len(seeds)


def relief_table(res):
    def rounds(v):
        return ' '.join('-' if x is None else '%d' % x for x in v)
    lines = ['%-11s %-42s %-25s %s' % ('balancer', 'interval at defaults', 'first change s (rounds)',
                                      'relief s (rounds)')]
    for bal, iv in (('irqbalance', '10 s'), ('irqsteerd', IRQSTEERD_PACES)):
        d = res.get(bal)
        if not d:
            continue
        lines.append('%-11s %-42s %-25s %s%s' % (
            bal, iv, '%s (%s)' % (fmt(median_late(d['first']), 'd'), rounds(d['first'])),
            '%s (%s)' % (fmt(median_late(d['relief']), 'd'), rounds(d['relief'])),
            '' if d['valid'] else '  INVALID'))
    return '\n'.join(lines)


def loaded_scenario(scn, work, factor):
    """A copy of scn with every NIC's load multiplied by factor."""
    out = []
    with open(scn) as f:
        for line in f:
            m = re.match(r'(\s*load\s*=\s*)([0-9.]+)(.*)', line)
            if m and not out_in_storage(out):
                line = '%s%g%s\n' % (m.group(1), float(m.group(2)) * factor, m.group(3))
            out.append(line)
    path = os.path.join(work, os.path.basename(scn)[:-4] + '-x%g.scn' % factor)
    with open(path, 'w') as f:
        f.writelines(out)
    return path


def out_in_storage(lines):
    """Whether the last section header in lines is a [storage ...] one."""
    for l in reversed(lines):
        if l.lstrip().startswith('['):
            return l.lstrip().startswith('[storage')
    return False


LOADED_FACTOR = 2


# irqsteerd's default paces (irqsteer.conf(5)); the floor's interval, issue
# 39's yardstick: the least 2 s sampler
IRQSTEERD_PACES = 'every 4 s calm, 2 s busy, 0.5 s near hot'
FLOOR_MS = 2000


# The calm window starts once a stationary host's start-up is over: the
# first placement, the RPS sets the steady-load rule starts within the first
# 40 s, and their share measured on every 5th tick for min_dwell + 10
# intervals (30 s + 20 s at the defaults; the last such full tick came 70 s
# (cost16) and 95 s (cost64) after the start in a debug log), then the
# audits' back-off from every 30th calm tick (2 min) to 5 min apart, which
# ends about 7 min after the start.  The window is the longest spacing of a
# calm host's periodic full ticks (5 min), so it holds them at their steady
# rate wherever it begins.  What the start-up costs is reported apart: CPU
# time from the exec to the window.
CALM_SETTLE_S = 420
CALM_WINDOW_S = 300


def hour_windows(opts):
    """(calm warm-up, calm window, loaded warm-up, loaded window) in seconds.
    Quick (CI) only shows the harness works; its figures are quoted nowhere."""
    return (10, 10, 10, 0) if opts.quick else (CALM_SETTLE_S, CALM_WINDOW_S, 60, 60)


def run_hour(opts):
    """CPU seconds per hour at each daemon's defaults (irqbalance every
    10 s, irqsteerd with its calm_interval, interval and fast_interval), on
    the cost hosts: a calm window (the shipped stationary scenario after
    its start-up, CALM_SETTLE_S) and a loaded one (every NIC's load x2, so
    CPUs stay near or above the thresholds and irqsteerd decides at each
    tick).  Both daemons live at once on their own simulators; CPU time over
    the window, scaled to an hour, and the CPU time each spent before the
    window (its start-up, calm only)."""
    rows = []
    calm_warm, calm_dur, loaded_warm, loaded_dur = hour_windows(opts)
    os.makedirs(os.path.join(opts.tmp, 'scn'), exist_ok=True)
    # quick: cost16 only (the CI budget); the full run has every host
    for name in cost_hosts(opts):
        base = os.path.join(HERE, 'scenarios', 'cost', name + '.scn')
        row = {'host': name}
        wins = [('calm', base)]
        # quick: the calm window only (the CI budget)
        if not opts.quick:
            wins.append(('loaded', loaded_scenario(base, os.path.join(opts.tmp, 'scn'), LOADED_FACTOR)))
        for win, scn in wins:
            live = []
            warm, dur = (calm_warm, calm_dur) if win == 'calm' else (loaded_warm, loaded_dur)
            for bal in ('irqbalance', 'irqsteerd'):
                if bal == 'irqsteerd' and not opts.have_irqsteerd:
                    continue
                r = Run(opts, scn, bal, warm + dur + 5, tag='%s-%s-hour' % (name, win), service=True,
                        defaults=True, tree_base=opts.state_base)
                r.start()
                live.append(r)
            # the floor: a process that only wakes every 2 s (FLOOR_MS)
            # and reads the file a calm tick reads, on irqsteerd's live
            # tree; its least mode (issue 39: the calm hour against it) on
            # a simulator of its own started with the daemons, as
            # bench/pair.py runs it
            floors = []
            if win == 'calm' and opts.floor and os.access(opts.floor, os.X_OK) and live:
                floors = [('floor', subprocess.Popen([opts.floor, live[-1].root, str(FLOOR_MS)]))]
                r = Run(opts, scn, 'least', warm + dur + 5, tag='%s-%s-hour' % (name, win),
                        tree_base=opts.state_base)
                r.key = 'floor_least'
                r.start()
                live.append(r)
            time.sleep(warm)
            marks = [(getattr(r, 'key', r.bal), r.proc.pid if r.proc else None) for r in live] + \
                [(k, f.pid) for k, f in floors]
            marks = [(b, p, cpu_ns(p) if p else None, wakeups(p) if p else None, time.time()) for b, p in marks]
            for bal, _, c0, _, _ in marks:
                if win == 'calm' and c0 is not None:
                    row['%s_startup_s' % bal] = c0 / 1e9  # from its exec: the start-up
            time.sleep(dur)
            for bal, pid, c0, w0, t0 in marks:
                c1 = cpu_ns(pid) if pid else None
                w1 = wakeups(pid) if pid else None
                h = 3600 / (time.time() - t0)
                if c0 is not None and c1 is not None:
                    row['%s_%s_s_h' % (bal, win)] = (c1 - c0) / 1e9 * h
                if w0 is not None and w1 is not None:
                    row['%s_%s_wakes_h' % (bal, win)] = (w1 - w0) * h
            for _, f in floors:
                stop(f)
            for r in live:
                r.finish()
                row['%s_%s_valid' % (getattr(r, 'key', r.bal), win)] = r.valid
        rows.append(row)
    return rows


def hour_table(rows):
    lines = ['host      calm: irqbalance  irqsteerd  ratio  %d s floor  least  x least    loaded x%d: irqbalance'
             '  irqsteerd  ratio   start-up s: irqbalance  irqsteerd   calm wakes/h: irqsteerd  least'
             % (FLOOR_MS // 1000, LOADED_FACTOR)]
    for r in rows:
        cells = []
        for win in ('calm', 'loaded'):
            ib, isd = r.get('irqbalance_%s_s_h' % win), r.get('irqsteerd_%s_s_h' % win)
            cells += [fmt(ib, '.2f'), fmt(isd, '.2f'), '%.2f' % (isd / ib) if ib and isd else '-']
            if win == 'calm':
                least = r.get('floor_least_calm_s_h')
                cells += [fmt(r.get('floor_calm_s_h'), '.2f'), fmt(least, '.2f'),
                          '%.2f' % (isd / least) if least and isd else '-']
        cells += [fmt(r.get('irqbalance_startup_s'), '.3f'), fmt(r.get('irqsteerd_startup_s'), '.3f'),
                  fmt(r.get('irqsteerd_calm_wakes_h'), '.0f'), fmt(r.get('floor_least_calm_wakes_h'), '.0f')]
        lines.append('%-8s %16s %10s %6s %10s %6s %8s %22s %10s %6s %24s %10s %25s %6s' % tuple([r['host']] + cells))
    return '\n'.join(lines)


# ---------------------------------------------------------------- big hosts

BIG_HOSTS = ['cost64', 'cost256', 'cost512', 'cost1024']
BIG_SWING = 'swing = 40 2.5'   # x2.5 for 20 s out of every 40


def big_scenario(scn, work, loaded):
    """A copy of scn, calm (every NIC's swing removed) or loaded (every NIC
    swinging x2.5 every 20 s): the same host both ways, whatever the file has."""
    out = []
    with open(scn) as f:
        for line in f:
            if re.match(r'\s*swing\s*=', line):
                continue
            out.append(line)
            if loaded and re.match(r'\s*\[nic ', line):
                out.append(BIG_SWING + '\n')
    path = os.path.join(work, os.path.basename(scn)[:-4] + ('-loaded.scn' if loaded else '-calm.scn'))
    with open(path, 'w') as f:
        f.writelines(out)
    return path


def vm_hwm_kb(pid):
    """Peak resident set (VmHWM) of pid in kB, None when gone."""
    try:
        with open('/proc/%d/status' % pid) as f:
            for line in f:
                if line.startswith('VmHWM:'):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def io_wchar(pid):
    """Bytes pid passed to write() and its kin so far (proc/PID/io)."""
    try:
        with open('/proc/%d/io' % pid) as f:
            for line in f:
                if line.startswith('wchar:'):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


class BigWatch:
    """Polls a daemon every 10 ms over a window: its CPU time in bursts
    (one burst, a run of polls with CPU time growing, is one tick), and the
    bytes written to its state dir: a file replaced (an atomic rename, a new
    inode) counts its size, one appended to (the undo journal) what it grew."""

    def __init__(self, pid, state):
        self.pid, self.state = pid, state
        self.ticks, self.state_bytes = [], 0
        self.seen = {}

    def scan(self):
        if not self.state:
            return
        try:
            names = os.listdir(self.state)
        except OSError:
            return
        for n in names:
            try:
                st = os.stat(os.path.join(self.state, n))
            except OSError:
                continue
            key = (st.st_ino, st.st_mtime_ns, st.st_size)
            old = self.seen.get(n)
            if old != key:
                if old and old[0] == st.st_ino and st.st_size >= old[2]:
                    self.state_bytes += st.st_size - old[2]  # appended
                elif old:
                    self.state_bytes += st.st_size  # replaced
                self.seen[n] = key

    def run(self, dur):
        end = time.time() + dur
        self.scan()
        last = cpu_ns(self.pid)
        burst = 0
        self.cpu0, self.w0, self.t0 = last, io_wchar(self.pid), time.time()
        while time.time() < end and last is not None:
            time.sleep(0.01)
            now = cpu_ns(self.pid)
            if now is None:
                break
            if now > last:
                burst += now - last
            elif burst:
                self.ticks.append(burst / 1e6)
                burst = 0
            last = now
            self.scan()
        self.cpu1, self.w1, self.t1 = last, io_wchar(self.pid), time.time()


def run_big(opts):
    """Big hosts: irqbalance and irqsteerd at their defaults, as services,
    side by side on the same simulated host (each on its own tree), calm and
    loaded; peak RSS, CPU seconds per hour, tick time and bytes written.
    The two windows run one after the other; both daemons' watchers poll in
    turn from one loop, so each is measured over the same seconds."""
    rows = []
    warm, dur = (20, 20) if opts.quick else opts.big_windows
    os.makedirs(os.path.join(opts.tmp, 'scn'), exist_ok=True)
    for name in opts.big_hosts:
        base = os.path.join(HERE, 'scenarios', 'cost', name + '.scn')
        for win in ('calm', 'loaded'):
            scn = big_scenario(base, os.path.join(opts.tmp, 'scn'), win == 'loaded')
            live = []
            for bal in ('irqbalance', 'irqsteerd'):
                if bal == 'irqsteerd' and not opts.have_irqsteerd:
                    continue
                r = Run(opts, scn, bal, warm + dur + 10, tag='%s-%s-big' % (name, win), service=True,
                        defaults=True)
                r.start()
                live.append(r)
            # calm: after the start-up, as the hour's calm window
            time.sleep(warm if opts.quick or win != 'calm' else max(warm, CALM_SETTLE_S))
            watches = []
            for r in live:
                if r.proc:
                    state = None
                    if r.bal == 'irqsteerd':
                        state = os.path.join(opts.state_base or opts.tmp, r.name + '-state')
                    watches.append((r, BigWatch(r.proc.pid, state)))
            threads = []
            for r, w in watches:
                t = threading.Thread(target=w.run, args=(dur,))
                t.start()
                threads.append(t)
            for t in threads:
                t.join()
            for r, w in watches:
                row = {'host': name, 'cpus': big_cpus(base), 'window': win, 'balancer': r.bal}
                row['rss_kb'] = vm_hwm_kb(r.proc.pid)
                span = w.t1 - w.t0
                if w.cpu0 is not None and w.cpu1 is not None and span > 0:
                    row['cpu_s_h'] = (w.cpu1 - w.cpu0) / 1e9 / span * 3600
                    row['startup_s'] = w.cpu0 / 1e9  # from its exec to the window
                if w.ticks:
                    row['tick_med_ms'] = median(w.ticks)
                    row['tick_max_ms'] = max(w.ticks)
                    row['ticks'] = len(w.ticks)
                if w.w0 is not None and w.w1 is not None and span > 0:
                    row['write_b_h'] = (w.w1 - w.w0) / span * 3600
                row['state_b_h'] = w.state_bytes / span * 3600 if w.state else 0
                if w.state:
                    for f in ('status.json', 'metrics.prom', 'undo.journal'):
                        try:
                            row[f] = os.path.getsize(os.path.join(w.state, f))
                        except OSError:
                            row[f] = None
                rows.append(row)
            for r in live:
                r.finish()
                for row in rows:
                    if row['host'] == name and row['window'] == win and row['balancer'] == r.bal:
                        row['valid'] = r.valid
                        row['note'] = r.note
            log('  %s %s: %s' % (name, win, '; '.join(
                '%s %s kB %.1f s/h' % (x['balancer'], x.get('rss_kb'), x.get('cpu_s_h') or 0)
                for x in rows if x['host'] == name and x['window'] == win)))
    return rows


def big_cpus(scn):
    with open(scn) as f:
        m = re.search(r'^\s*cpus\s*=\s*(\d+)', f.read(), re.M)
    return int(m.group(1)) if m else 0


def big_table(rows):
    lines = ['host      window  balancer     peak RSS   CPU s/h  start-up s  tick med/max ms  state B/h   write B/h  '
             'status.json metrics.prom undo.journal']
    for r in rows:
        lines.append('%-9s %-7s %-11s %7s kB %9s %11s %7s/%-8s %10s %11s %11s %11s %11s%s' % (
            r['host'], r['window'], r['balancer'], fmt(r.get('rss_kb'), 'd'), fmt(r.get('cpu_s_h'), '.2f'),
            fmt(r.get('startup_s'), '.3f'),
            fmt(r.get('tick_med_ms'), '.1f'), fmt(r.get('tick_max_ms'), '.1f'), fmt(r.get('state_b_h'), '.0f'),
            fmt(r.get('write_b_h'), '.0f'), fmt(r.get('status.json'), 'd'), fmt(r.get('metrics.prom'), 'd'),
            fmt(r.get('undo.journal'), 'd'), '' if r.get('valid', True) else '  INVALID'))
    return '\n'.join(lines)


def plot_big(opts, rows):
    """One plot per measure against the CPU count: both daemons, calm and loaded."""
    measures = [('rss_kb', 'peak RSS (kB)'), ('cpu_s_h', 'CPU s per hour'),
                ('tick_med_ms', 'tick median (ms)'), ('tick_max_ms', 'tick max (ms)'),
                ('state_b_h', 'bytes per hour to the state dir')]
    dat = os.path.join(opts.out, 'big.dat')
    series = []
    with open(dat, 'w') as f:
        for bal in ('irqbalance', 'irqsteerd'):
            for win in ('calm', 'loaded'):
                pts = sorted((r['cpus'], r) for r in rows if r['balancer'] == bal and r['window'] == win)
                if not pts:
                    continue
                f.write('# %s %s\n' % (bal, win))
                for cpus, r in pts:
                    f.write('%d %s\n' % (cpus, ' '.join(str(r.get(m) if r.get(m) is not None else 'NaN')
                                                        for m, _ in measures)))
                f.write('\n\n')
                series.append('%s %s' % (bal, win))
    out = os.path.join(opts.out, 'big-hosts.png')
    gp = ['set terminal pngcairo size 1400,900', "set output '%s'" % out, 'set multiplot layout 2,3',
          'set logscale x 2', 'set xlabel "CPUs"', 'set key top left', 'set grid']
    for col, (m, title) in enumerate(measures, start=2):
        gp.append('set title "%s"' % title)
        gp.append('plot ' + ', '.join("'%s' index %d using 1:%d with linespoints title '%s'" % (dat, i, col, s)
                                      for i, s in enumerate(series)))
    gp.append('unset multiplot')
    subprocess.run(['gnuplot'], input='\n'.join(gp) + '\n', text=True, check=True)
    return out


# ---------------------------------------------------------------- veth

def sh(cmd, check=True, **kw):
    return subprocess.run(cmd, shell=True, check=check, capture_output=True, text=True, **kw)


def read_netrx():
    with open('/proc/softirqs') as f:
        lines = f.read().splitlines()
    cpus = lines[0].split()
    for l in lines[1:]:
        p = l.split()
        if p[0] == 'NET_RX:':
            return dict(zip(cpus, map(int, p[1:])))
    return {}


def read_soft():
    out = {}
    with open('/proc/stat') as f:
        for l in f:
            p = l.split()
            if re.match(r'cpu\d+$', p[0]):
                out[p[0].upper()] = (int(p[6]) + int(p[7]), sum(int(x) for x in p[1:9]))
    return out


def save_irq_affinity():
    saved = {}
    for p in glob.glob('/proc/irq/*/smp_affinity'):
        try:
            with open(p) as f:
                saved[p] = f.read().strip()
        except OSError:
            pass
    return saved


def restore_irq_affinity(saved):
    for p, v in saved.items():
        try:
            with open(p) as f:
                if f.read().strip() == v:
                    continue
            with open(p, 'w') as f:
                f.write(v)
        except OSError:
            pass


HOST_LOCK = '/tmp/irqsteer-live-host.lock'


def with_host_lock(fn):
    """Runs fn holding the lock the live tests take (tests/live-host-lib.sh):
    a round moves host IRQs (irqbalance) and makes network namespaces, and a
    live test running beside it would see its baseline change.  One round at
    a time, so that a live test waits for a round, not for the section."""
    @functools.wraps(fn)
    def run(*a, **kw):
        with open(HOST_LOCK, 'a') as lk:
            fcntl.flock(lk, fcntl.LOCK_EX)
            return fn(*a, **kw)
    return run


def veth_setup(packets='gso'):
    veth_cleanup()
    for c in ['ip netns add bnS', 'ip netns add bnR',
              'ip link add bnS0 numrxqueues 4 numtxqueues 4 type veth peer name bnR0 '
              'numrxqueues 4 numtxqueues 4',
              'ip link set bnS0 netns bnS', 'ip link set bnR0 netns bnR',
              'ip -n bnS addr add 198.18.77.1/30 dev bnS0', 'ip -n bnR addr add 198.18.77.2/30 dev bnR0',
              'ip -n bnS link set lo up', 'ip -n bnR link set lo up',
              'ip -n bnS link set bnS0 up', 'ip -n bnR link set bnR0 up']:
        sh(c)
    if packets == 'mtu':
        sh('ip netns exec bnS ethtool -K bnS0 tso off gso off')
        sh('ip netns exec bnR ethtool -K bnR0 gro off')
    elif packets == 'flood':
        flood_path_setup()


# Rules in the receiving namespace's input hook that no packet of the
# flood matches, so that each one is compared with all of them: the heavier
# receive path of the field report (a host with a firewall), which makes
# the receive work, not the sender, the bottleneck of CPU0.
FLOOD_NFT_RULES = 300


def flood_path_setup():
    """The flood's receive path: GRO and rx-udp-gro-forwarding on the
    receiving veth (veth has NAPIs only with GRO or XDP; without them there
    is nothing to thread) and FLOOD_NFT_RULES nft rules."""
    sh('ip netns exec bnR ethtool -K bnR0 gro on rx-udp-gro-forwarding on')
    rules = ['table inet irqsteer_bench {', ' chain input {',
             '  type filter hook input priority 0; policy accept;']
    rules += ['  ip saddr 10.%d.%d.1 udp dport %d drop' % (i // 200, i % 200, 6000 + i)
              for i in range(FLOOD_NFT_RULES)]
    rules += [' }', '}', '']
    r = subprocess.run(['ip', 'netns', 'exec', 'bnR', 'nft', '-f', '-'], input='\n'.join(rules),
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise HarnessError('nft -f failed: ' + r.stderr.strip()[-200:])


def veth_cleanup():
    sh('ip netns del bnS', check=False)
    sh('ip netns del bnR', check=False)
    sh('ip link del bnS0', check=False)


VETH_PACKETS = [
    # (key, name, what it shows)
    ('gso', 'veth default: TSO/GSO segments of up to 64 KB',
     'few large packets: the per-packet work RPS can move is small'),
    ('mtu', 'sender TSO/GSO and receiver GRO off: 1500-byte packets',
     'the packet rate a NIC\'s wire delivers; per-packet protocol work dominates'),
]

VETH_RECEIVERS = [
    # (name, taskset prefix for the iperf3 receiver, what it shows)
    ('receiver on CPU0 with the sender', ['taskset', '-c', '0'],
     'the busy-CPU case: one CPU does the sending, the receiving and all of NET_RX; the other idles'),
    ('receiver unpinned', [], 'the scheduler may put the receiver on either CPU'),
]


@with_host_lock
def veth_one(opts, mode, secs, pin=(), omit=0, rep=0, packets='gso'):
    srv = subprocess.Popen(['ip', 'netns', 'exec', 'bnR'] + list(pin) + ['iperf3', '-s', '-1', '-B', '198.18.77.2'],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    bal = None
    note = ''
    saved = save_irq_affinity()
    work = os.path.join(opts.tmp, 'veth-%s-%s-%s-%d' % (packets, mode, 'pinned' if pin else 'free', rep))
    os.makedirs(work, exist_ok=True)
    blog = open(os.path.join(work, 'balancer.log'), 'w')
    try:
        if mode == 'irqbalance':
            bal = subprocess.Popen(['irqbalance', '-f', '-t', '1', '--debug'], stdout=blog,
                                   stderr=subprocess.STDOUT)
        elif mode == 'irqsteerd':
            st = os.path.join(work, 'state')
            os.makedirs(st, exist_ok=True)
            bal = subprocess.Popen(['ip', 'netns', 'exec', 'bnR', opts.irqsteerd, '--foreground',
                                    '--interval', '1s', '--state-dir', st] + opts.irqsteerd_args,
                                   stdout=blog, stderr=subprocess.STDOUT)
        time.sleep(1.0)
        # the first omit seconds (the balancers reacting) count neither in
        # iperf3's figure (-O) nor in the NET_RX split
        cl = subprocess.Popen(['ip', 'netns', 'exec', 'bnS', 'taskset', '-c', '0', 'iperf3', '-c',
                               '198.18.77.2', '-t', str(secs), '-O', str(omit), '-P', '4', '-J'],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(omit)
        n0, s0 = read_netrx(), read_soft()
        out, err = cl.communicate(timeout=secs + omit + 60)
        cl = subprocess.CompletedProcess(cl.args, cl.returncode, out, err)
        n1, s1 = read_netrx(), read_soft()
        rps = subprocess.run(['ip', 'netns', 'exec', 'bnR', 'sh', '-c',
                              'for f in /sys/class/net/bnR0/queues/rx-*/rps_cpus; do '
                              'echo "${f#/sys/class/net/bnR0/queues/}=$(cat $f)"; done'],
                             capture_output=True, text=True).stdout.split()
        try:
            bps = json.loads(cl.stdout)['end']['sum_received']['bits_per_second']
        except (ValueError, KeyError):
            bps = None
            note = 'iperf3 failed: ' + (cl.stderr or cl.stdout)[-200:]
        if bal is not None and bal.poll() is not None:
            note += ' %s exited (%d)' % (mode, bal.returncode)
    finally:
        stop(bal)
        stop(srv, 5)
        blog.close()
        restore_irq_affinity(saved)
    netrx = {c: n1.get(c, 0) - n0.get(c, 0) for c in n0}
    soft = {c: (s1[c][0] - s0[c][0]) / max(1, s1[c][1] - s0[c][1]) * 100 for c in s0}
    if mode == 'irqbalance':
        with open(os.path.join(work, 'balancer.log'), errors='replace') as f:
            txt = f.read()
        eth = set(re.findall(r'Interrupt (\d+) node_num is -?\d+ \(ethernet/', txt))
        note += ' irqbalance saw %d ethernet IRQs (the host NIC; veth has none)' % len(eth)
    trial = trial_verdicts(os.path.join(work, 'balancer.log')) if mode == 'irqsteerd' else ''
    return {'mode': mode, 'gbps': bps / 1e9 if bps else None, 'netrx': netrx, 'soft': soft,
            'rps': rps, 'note': note.strip(), 'trial': trial}


def trial_verdicts(log_path):
    """What irqsteerd's RPS and threaded NAPI trials decided in one round,
    from its log: 'kept +94%', 'given back -22%', 'threaded kept +30%',
    several in turn, 'RPS, trial undecided' / 'threaded, trial undecided'
    (a round shorter than the trial) or 'no RPS'."""
    with open(log_path, errors='replace') as f:
        txt = f.read()
    out = []
    # a verdict is one line per queue it gives back: the same text
    seen = dict.fromkeys(re.findall(r'RPS (?:kept|cost throughput): [^\n]*', txt))
    for line in seen:
        m = re.match(r'RPS (kept|cost throughput): .*?\(([+-]?\d+)%\)', line)
        if m:
            out.append('%s %s%%' % ('kept' if m.group(1) == 'kept' else 'given back',
                                    m.group(2) if m.group(2)[0] in '+-' else '+' + m.group(2)))
    for line in dict.fromkeys(re.findall(r'threaded NAPI (?:kept on|cost throughput:) [^\n]*', txt)):
        m = re.match(r'threaded NAPI (kept|cost).*?\(([+-]?\d+)%\)', line)
        if m:
            out.append('threaded %s %s%%' % ('kept' if m.group(1) == 'kept' else 'given back',
                                            m.group(2) if m.group(2)[0] in '+-' else '+' + m.group(2)))
    if not out:
        if re.search(r'bnR0 threaded NAPI 0 -> 1', txt):
            out.append('threaded, trial undecided')
        else:
            out.append('RPS, trial undecided' if re.search(r'RPS bnR0 rx-\d+ none -> ', txt) else 'no RPS')
    return ', '.join(out)


def veth_plan(opts):
    """(seconds measured, seconds left out before, rounds) of each veth run."""
    secs, omit, reps = (5, 2, 1) if opts.quick else (10, 5, 3)
    return secs, omit, opts.veth_rounds or reps


def run_veth(opts):
    if os.geteuid() != 0:
        return None, 'not root: skipped'
    for tool in ('ip', 'iperf3', 'taskset', 'ethtool'):
        if not shutil.which(tool):
            return None, tool + ' missing: skipped'
    res = []
    secs, omit, reps = veth_plan(opts)
    modes = ['none', 'irqbalance'] + (['irqsteerd'] if opts.have_irqsteerd else [])
    try:
        for packets, _, _ in VETH_PACKETS:
            if opts.veth_packets and packets not in opts.veth_packets:
                continue
            # quick (the CI budget): 1500-byte packets only, where RPS acts
            if opts.quick and not opts.veth_packets and packets != 'mtu':
                continue
            for name, pin, _ in VETH_RECEIVERS:
                # quick (the CI budget): the busy-CPU case only
                if opts.quick and name != VETH_RECEIVERS[0][0]:
                    continue
                # this VM's throughput drifts by 10% and more between
                # minutes: the modes take turns, in a rotated order each round
                for rep in range(reps):
                    for mode in modes[rep % len(modes):] + modes[:rep % len(modes)]:
                        veth_setup(packets)
                        r = veth_one(opts, mode, secs, pin, omit, rep, packets)
                        log('  %s, %s, round %d, %s: %s Gbit/s%s' % (
                            packets, 'receiver on CPU0' if pin else 'receiver unpinned', rep + 1, mode,
                            fmt(r['gbps'], '.2f'), ' (%s)' % r['trial'] if r['trial'] else ''))
                        r['packets'] = packets
                        r['receiver'] = name
                        r['rep'] = rep
                        res.append(r)
                        veth_cleanup()
    finally:
        veth_cleanup()
    return res, ''


def rps_masks():
    out = subprocess.run(['ip', 'netns', 'exec', 'bnR', 'sh', '-c',
                          'cat /sys/class/net/bnR0/queues/rx-*/rps_cpus'], capture_output=True, text=True).stdout
    return out.split()


@with_host_lock
def flood_one(opts, mode, secs, rep):
    """Seconds from the start of a UDP flood (iperf3 -u, 4 streams of
    1400-byte datagrams, sender and receiver on CPU0, CPU1 idle, through
    the heavier receive path of flood_path_setup) to the
    balancer's first change, each balancer at its defaults and started
    (and for irqsteerd ready) before the flood: for irqsteerd the veth's
    RPS masks, for irqbalance the host's IRQ affinities (veth has no
    IRQs), polled every 50 ms.  None: no change within secs.  The flood
    starts 3 s plus a random 0-10 s after that (seeded by --seed and the
    round): at a fixed delay it would meet the daemon's interval at the
    same phase each round, so the median would be that phase's."""
    # quick (CI): one round, a phase within one 2 s interval
    delay = 3.0 + random.Random(opts.seed * 1000 + rep).uniform(0, 2 if opts.quick else 10)
    work = os.path.join(opts.tmp, 'flood-%s-%d' % (mode, rep))
    os.makedirs(work, exist_ok=True)
    blog = open(os.path.join(work, 'balancer.log'), 'w')
    saved = save_irq_affinity()
    srv = subprocess.Popen(['ip', 'netns', 'exec', 'bnR', 'taskset', '-c', '0', 'iperf3', '-s', '-1', '-B',
                            '198.18.77.2'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    bal = cl = None
    try:
        if mode == 'irqbalance':
            bal = subprocess.Popen(['irqbalance', '-f', '--debug'], stdout=blog, stderr=subprocess.STDOUT)
            time.sleep(delay)
        else:
            st = os.path.join(work, 'state')
            os.makedirs(st, exist_ok=True)
            bal = subprocess.Popen(['ip', 'netns', 'exec', 'bnR', opts.irqsteerd, '--foreground',
                                    '--state-dir', st] + opts.irqsteerd_args, stdout=blog, stderr=subprocess.STDOUT)
            if not wait_file_text(os.path.join(work, 'balancer.log'), 'Ready:', 15):
                return None, 'irqsteerd not ready'
            time.sleep(delay)
        before = save_irq_affinity() if mode == 'irqbalance' else rps_masks()
        t0 = time.monotonic()
        cl = subprocess.Popen(['ip', 'netns', 'exec', 'bnS', 'taskset', '-c', '0', 'iperf3', '-c', '198.18.77.2',
                               '-u', '-b', '0', '-l', '1400', '-P', '4', '-t', str(secs)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while time.monotonic() - t0 < secs:
            now = save_irq_affinity() if mode == 'irqbalance' else rps_masks()
            if now != before:
                return time.monotonic() - t0, ''
            time.sleep(0.05)
        return None, ''
    finally:
        stop(cl, 5)
        stop(bal)
        stop(srv, 5)
        blog.close()
        restore_irq_affinity(saved)


FLOOD_MODES = [
    # (mode, what it is)
    ('none', 'no balancer'),
    ('irqbalance', 'at its defaults; veth has no IRQ, it can only move the host\'s'),
    ('irqsteerd-rps', 'at its defaults: RPS is its relief for an IRQ-less queue'),
    ('irqsteerd-threaded', 'rps = no, threaded_napi = yes: threaded NAPI relief, its kthreads placed on a cool CPU'),
]
FLOOD_THREADED_CONF = '[balance]\nrps = no\nthreaded_napi = yes\n'
FLOOD_DATAGRAM = 1400


def start_flood_balancer(opts, mode, work, blog):
    """Starts mode's balancer at its defaults (irqsteerd in the receiving
    namespace) and waits until it is up: irqsteerd's Ready line, 1 s for
    irqbalance.  (process or None, note)."""
    if mode == 'irqbalance':
        bal = subprocess.Popen(['irqbalance', '-f', '--debug'], stdout=blog, stderr=subprocess.STDOUT)
        time.sleep(1.0)
        return bal, ''
    if not mode.startswith('irqsteerd'):
        return None, ''
    st = os.path.join(work, 'state')
    os.makedirs(st, exist_ok=True)
    extra = []
    if mode == 'irqsteerd-threaded':
        conf = os.path.join(work, 'irqsteer.conf')
        with open(conf, 'w') as f:
            f.write(FLOOD_THREADED_CONF)
        extra = ['--config', conf]
    bal = subprocess.Popen(['ip', 'netns', 'exec', 'bnR', opts.irqsteerd, '--foreground', '--state-dir', st] +
                           extra + opts.irqsteerd_args, stdout=blog, stderr=subprocess.STDOUT)
    if not wait_file_text(blog.name, 'Ready:', 15):
        return bal, 'irqsteerd not ready'
    return bal, ''


def read_busy():
    """Per CPU: (busy ticks, all ticks) from /proc/stat (busy: not idle or
    iowait; threaded NAPI's kthreads show as system time, not softirq)."""
    out = {}
    with open('/proc/stat') as f:
        for l in f:
            p = l.split()
            if re.match(r'cpu\d+$', p[0]):
                v = [int(x) for x in p[1:9]]
                out[p[0].upper()] = (sum(v) - v[3] - v[4], sum(v))
    return out


@with_host_lock
def flood_rate_one(opts, mode, secs, omit, rep):
    """Received packets per second of the UDP flood (iperf3 -u -b 0, 4
    streams of FLOOD_DATAGRAM-byte datagrams, sender and receiver on CPU0,
    CPU1 idle) through the veth with the heavier receive path, over secs
    seconds after omit left out (the balancer acting), from the iperf3
    server's own per-interval byte counts; the balancer started and ready
    before the flood."""
    work = os.path.join(opts.tmp, 'floodrate-%s-%d' % (mode, rep))
    os.makedirs(work, exist_ok=True)
    blog = open(os.path.join(work, 'balancer.log'), 'w')
    saved = save_irq_affinity()
    srv = subprocess.Popen(['ip', 'netns', 'exec', 'bnR', 'taskset', '-c', '0', 'iperf3', '-s', '-1', '-J', '-B',
                            '198.18.77.2'], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    bal = cl = None
    res = {'mode': mode, 'rep': rep, 'pps': None, 'mbps': None, 'cpu1_busy': None, 'note': '', 'state': ''}
    try:
        bal, res['note'] = start_flood_balancer(opts, mode, work, blog)
        if res['note']:
            return res
        time.sleep(0.3)
        cl = subprocess.Popen(['ip', 'netns', 'exec', 'bnS', 'taskset', '-c', '0', 'iperf3', '-c', '198.18.77.2',
                               '-u', '-b', '0', '-l', str(FLOOD_DATAGRAM), '-P', '4', '-t', str(secs),
                               '-O', str(omit)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(omit)
        b0 = read_busy()
        cl.wait(timeout=secs + omit + 60)
        b1 = read_busy()
        # what the balancer left in place, read before it stops and restores
        res['state'] = ' '.join(sh('ip netns exec bnR sh -c \'echo rps=$(cat /sys/class/net/bnR0/queues/rx-*/rps_cpus) '
                                   'threaded=$(cat /sys/class/net/bnR0/threaded)\'', check=False).stdout.split())
        out, _ = srv.communicate(timeout=30)
        try:
            iv = [i['sum'] for i in json.loads(out)['intervals'] if not i['sum'].get('omitted')]
            t = sum(i['seconds'] for i in iv)
            if t > 0:
                res['mbps'] = sum(i['bytes'] for i in iv) * 8 / t / 1e6
                res['pps'] = sum(i['bytes'] for i in iv) / FLOOD_DATAGRAM / t
        except (ValueError, KeyError, TypeError):
            res['note'] = 'iperf3 server output did not parse'
        if 'CPU1' in b0 and 'CPU1' in b1:
            res['cpu1_busy'] = 100.0 * (b1['CPU1'][0] - b0['CPU1'][0]) / max(1, b1['CPU1'][1] - b0['CPU1'][1])
        if bal is not None and bal.poll() is not None:
            res['note'] += ' %s exited (%d)' % (mode, bal.returncode)
    finally:
        stop(cl, 5)
        stop(bal)
        stop(srv, 5)
        blog.close()
        restore_irq_affinity(saved)
    if mode.startswith('irqsteerd'):
        res['trial'] = trial_verdicts(os.path.join(work, 'balancer.log'))
    return res


def flood_rate_plan(opts):
    """(seconds measured, seconds left out before, rounds) of each flood
    throughput run."""
    secs, omit, reps = (4, 3, 1) if opts.quick else (10, 5, 3)
    return secs, omit, opts.veth_rounds or reps


def run_flood_rate(opts):
    why = flood_skip_reason()
    if why:
        return None, why
    secs, omit, reps = flood_rate_plan(opts)
    modes = [m for m, _ in FLOOD_MODES if opts.have_irqsteerd or not m.startswith('irqsteerd')]
    res = []
    try:
        # this VM's throughput drifts between minutes: the modes take
        # turns, in a rotated order each round
        for rep in range(reps):
            for mode in modes[rep % len(modes):] + modes[:rep % len(modes)]:
                veth_setup('flood')
                r = flood_rate_one(opts, mode, secs, omit, rep)
                log('  flood round %d, %s: %s received pkt/s, CPU1 %s%% busy%s%s' % (
                    rep + 1, mode, fmt(r['pps'], '.0f'), fmt(r['cpu1_busy'], '.0f'),
                    ' (%s)' % r['trial'] if r.get('trial') else '', ' (%s)' % r['note'] if r['note'] else ''))
                res.append(r)
                veth_cleanup()
    finally:
        veth_cleanup()
    return res, ''


def flood_rate_table(res):
    """One row per mode: the median received packets/s of its rounds (each
    round's beside it), Mbit/s, CPU1 busy and the ratio to none."""
    lines = ['mode                 rx pkt/s  Mbit/s  CPU1 busy%  / none   rounds (pkt/s)        at the end']
    med = {}
    for mode, _ in FLOOD_MODES:
        rows = [r for r in res if r['mode'] == mode]
        if rows:
            med[mode] = median([r['pps'] for r in rows if r['pps']])
    for mode, what in FLOOD_MODES:
        rows = [r for r in res if r['mode'] == mode]
        if not rows:
            continue
        mb = median([r['mbps'] for r in rows if r['mbps']])
        busy = median([r['cpu1_busy'] for r in rows if r['cpu1_busy'] is not None])
        ratio = '%.2f' % (med[mode] / med['none']) if med.get(mode) and med.get('none') else '-'
        lines.append('%-19s %9s %7s %10s %8s   %-21s %s' % (
            mode, fmt(med[mode], '.0f'), fmt(mb, '.0f'), fmt(busy, '.0f'), ratio,
            ' '.join(fmt(r['pps'], '.0f') for r in rows), rows[-1]['state'] if mode.startswith('irqsteerd') else ''))
        lines.append('                    (%s)' % what)
        for note in dict.fromkeys(r['note'] for r in rows if r['note']):
            lines.append('                    note: ' + note)
        if any(r.get('trial') for r in rows):
            lines.append('                    relief by round: ' + '; '.join(r.get('trial', '') for r in rows))
    return '\n'.join(lines)


def flood_skip_reason():
    if os.geteuid() != 0:
        return 'not root: skipped'
    for tool in ('ip', 'iperf3', 'taskset', 'ethtool', 'nft'):
        if not shutil.which(tool):
            return tool + ' missing (Debian: %s): skipped' % ('nftables' if tool == 'nft' else tool)
    return ''


def wait_file_text(path, text, timeout):
    end = time.time() + timeout
    while time.time() < end:
        try:
            with open(path, errors='replace') as f:
                if text in f.read():
                    return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


def run_flood(opts):
    why = flood_skip_reason()
    if why:
        return None, why
    res = {}
    reps = 1 if opts.quick else 5
    modes = ['irqbalance'] + (['irqsteerd'] if opts.have_irqsteerd else [])
    try:
        for rep in range(reps):
            for mode in modes:
                veth_setup('flood')
                t, note = flood_one(opts, mode, 15, rep)
                log('  flood round %d, %s: first change %s s%s' % (rep + 1, mode, fmt(t, '.1f'),
                                                                   ' (%s)' % note if note else ''))
                res.setdefault(mode, []).append(t)
                veth_cleanup()
    finally:
        veth_cleanup()
    return res, ''


def flood_table(res):
    lines = ['%-12s %-42s %s' % ('balancer', 'defaults', 'first change s, median (rounds)')]
    for mode, iv in (('irqbalance', 'every 10 s'), ('irqsteerd', IRQSTEERD_PACES)):
        if mode not in res:
            continue
        v = res[mode]
        lines.append('%-12s %-42s %s (%s)%s' % (
            mode, iv, fmt(median_late(v), '.1f') if median_late(v) is not None else 'none in 15 s',
            ' '.join(fmt(x, '.1f') for x in v),
            '  (veth has no IRQ: it can only move the host\'s)' if mode == 'irqbalance' else ''))
    return '\n'.join(lines)


def veth_tables(res):
    out = []
    for packets, pname, pwhat in VETH_PACKETS:
        for name, _, what in VETH_RECEIVERS:
            rows = [r for r in res if r.get('packets', 'gso') == packets and r.get('receiver') == name]
            if rows:
                out.append('-- %s, %s\n   (%s;\n    %s)\n%s' % (pname, name, pwhat, what, veth_table(rows)))
    return '\n\n'.join(out)


def veth_table(res):
    """One row per balancer: the median throughput of its rounds (each
    round's figure beside it) and the NET_RX split and softirq share summed
    over the rounds; ratios of the medians."""
    cpus = sorted(res[0]['netrx'], key=lambda c: int(c[3:]))
    lines = ['balancer     Gbit/s  ' + '  '.join('%s NET_RX  soft%%' % c for c in cpus) +
             '  rounds (Gbit/s)      rps_cpus at the end']
    med = {}
    for mode in dict.fromkeys(r['mode'] for r in res):
        rows = [r for r in res if r['mode'] == mode]
        g = sorted(r['gbps'] for r in rows if r['gbps'])
        med[mode] = g[len(g) // 2] if g else None
        netrx = {c: sum(r['netrx'][c] for r in rows) for c in cpus}
        tot = sum(netrx.values()) or 1
        cells = '  '.join('%9.0f%% %5.1f' % (100 * netrx[c] / tot, sum(r['soft'][c] for r in rows) / len(rows))
                          for c in cpus)
        rounds = ' '.join(fmt(r['gbps'], '.2f') for r in rows)
        lines.append('%-10s %8s  %s  %-20s %s' % (mode, fmt(med[mode], '.2f'), cells, rounds, ' '.join(rows[-1]['rps'])))
        for note in dict.fromkeys(r['note'] for r in rows if r['note']):
            lines.append('           note: ' + note)
        if any(r.get('trial') for r in rows):
            lines.append('           RPS trial by round: ' + '; '.join(r['trial'] for r in rows))
    for mode, g in med.items():
        if mode != 'none' and g and med.get('none'):
            lines.append('throughput %s / none = %.2f' % (mode, g / med['none']))
    if med.get('irqsteerd') and med.get('irqbalance'):
        lines.append('throughput irqsteerd / irqbalance = %.2f' % (med['irqsteerd'] / med['irqbalance']))
    return '\n'.join(lines)


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--sim', required=True)
    ap.add_argument('--irqsteerd', default='')
    ap.add_argument('--floor', default='', help='bench/irqsteer-floor: the cost floor of a sampler every 2 s')
    ap.add_argument('--irqsteerd-arg', action='append', default=[], dest='irqsteerd_args',
                    help='extra argument for irqsteerd (repeat)')
    ap.add_argument('--srcdir', default=os.path.dirname(HERE))
    ap.add_argument('--out', default=os.path.join(HERE, 'results'))
    ap.add_argument('--quick', action='store_true')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--scenario', action='append', help='run only these scenarios')
    ap.add_argument('--balancer', action='append', choices=BALANCERS, dest='balancers',
                    help='run only these balancers on the scenarios (repeat; default all)')
    ap.add_argument('--no-cost', action='store_true')
    ap.add_argument('--only-cost', action='store_true',
                    help='only the per-tick cost and CPU seconds per hour sections')
    ap.add_argument('--only-hour', action='store_true', help='only the CPU seconds per hour section')
    ap.add_argument('--cost-host', action='append', dest='cost_hosts', choices=COST_SCENARIOS,
                    help='run only these hosts in the per-tick cost and hour sections')
    ap.add_argument('--no-veth', action='store_true')
    ap.add_argument('--no-big', action='store_true', help='skip the big-host section')
    ap.add_argument('--only-big', action='store_true', help='only the big-host section')
    ap.add_argument('--big-host', action='append', dest='big_hosts', choices=BIG_HOSTS,
                    help='big-host section: only these hosts (repeat; default all)')
    ap.add_argument('--big-windows', default='60,120',
                    help='big-host section: warm-up and window seconds (default 60,120)')
    ap.add_argument('--no-relief', action='store_true', help='skip the time to relief at defaults')
    ap.add_argument('--veth-rounds', type=int, default=0,
                    help='rounds per veth and flood throughput case (default 3, quick 1)')
    ap.add_argument('--only-flood', action='store_true',
                    help='run only the real-kernel UDP flood sections (throughput per mode, time to first change)')
    ap.add_argument('--veth-packets', action='append', choices=[p[0] for p in VETH_PACKETS],
                    help='run only these veth packet kinds (repeat; default all)')
    ap.add_argument('--keep', action='store_true', help='keep the work directory')
    ap.add_argument('--random', type=int, default=0, metavar='N',
                    help='run N hosts of the random family (bench/randhost.py), seeds from --random-base')
    ap.add_argument('--random-base', type=int, default=1, metavar='SEED', help='first seed of --random')
    ap.add_argument('--random-seed', type=int, action='append', default=[], metavar='SEED',
                    help='run only this random host (repeat); nothing else')
    ap.add_argument('--only-random', action='store_true', help='run only the random hosts')
    ap.add_argument('--random-ticks', type=int, default=0,
                    help='ticks of a random host (default %d with %d of warm-up; quick 30 with 10)'
                    % (randhost.TICKS, randhost.WARMUP))
    ap.add_argument('--jobs', type=int, default=8, help='random hosts run at once (default 8)')
    opts = ap.parse_args()
    opts.balancers = opts.balancers or BALANCERS
    opts.big_hosts = opts.big_hosts or BIG_HOSTS
    opts.big_windows = tuple(int(x) for x in opts.big_windows.split(','))
    opts.sim = os.path.abspath(opts.sim)
    if opts.irqsteerd:
        opts.irqsteerd = os.path.abspath(opts.irqsteerd)
    os.makedirs(opts.out, exist_ok=True)
    opts.tmp = tempfile.mkdtemp(prefix='irqsteer-bench.')
    shm = tmpfs_dir()
    opts.state_base = tempfile.mkdtemp(prefix='irqsteer-bench.', dir=shm) if shm else None
    opts.have_irqsteerd, why = irqsteerd_works(opts.irqsteerd)
    for tool in ('irqbalance', 'gnuplot', 'unshare', 'valgrind'):
        if not shutil.which(tool):
            raise HarnessError(tool + ' not installed (make bench installs it)')
    if not opts.have_irqsteerd:
        log('irqsteerd not usable (%s): running without it' % why)
    log('work directory %s, irqsteerd state in %s' % (
        opts.tmp, opts.state_base or 'it (no tmpfs at /run or /dev/shm: status.json renames cost more)'))
    t_start = time.time()
    report = []
    rows = []
    scen = opts.scenario or (QUICK_SCENARIOS if opts.quick else SCENARIOS)
    if opts.only_flood:
        scen = []
        opts.no_cost = opts.no_relief = True
    if opts.only_hour:
        opts.only_cost = True
    if opts.only_cost:
        scen = []
        opts.no_veth = opts.no_relief = opts.no_big = True
    if opts.only_flood:
        opts.no_big = True
    if opts.only_big:
        scen = []
        opts.no_veth = opts.no_relief = opts.no_cost = True
    if opts.random_seed or opts.only_random:
        scen = []
        opts.no_cost = opts.no_veth = opts.no_relief = opts.no_big = True
    seeds = opts.random_seed or list(range(opts.random_base, opts.random_base + opts.random))
    if opts.random_ticks:
        opts.random_warmup = min(randhost.WARMUP, opts.random_ticks * 3 // 7)
    else:
        opts.random_ticks, opts.random_warmup = (30, 10) if opts.quick else (randhost.TICKS, randhost.WARMUP)
    opts.random_dir = os.path.join(opts.out, 'random')
    for name in scen:
        log('scenario %s' % name)
        runs = run_scenario(opts, name, ticks=20 if opts.quick else None)
        for r in runs:
            r.scenario = name
            if r.note:
                log('  %s: %s' % (r.bal, r.note))
        rows += runs
        for p in plot_scenario(opts, name, runs):
            log('  plot ' + p)
    if rows:
        add_section(report, os.path.join(opts.out, 'results.csv'), write_csv, rows,
                    '== Simulated hosts (seed %d; peak = busiest CPU served irq+softirq share after warm-up;\n'
                    '   imbal = median of peak demand / lower bound; conv = ticks until the peak stays within\n'
                    '   10%% of its final level, from the step or from the start; hole = the longest run of\n'
                    '   ticks with a CPU under 5%% idle carrying 25%% network work while an eligible CPU has\n'
                    '   over 40%% idle and under 2%% network work; ms/tick = balancer CPU)\n'
                    % opts.seed, table)
    if seeds:
        log('random hosts: %d, %d at a time' % (len(seeds), opts.jobs))
        res, elapsed = run_random(opts, seeds)
        write_dict_csv(os.path.join(opts.out, 'random.csv'), random_rows(res))
        report.append('== Random hosts (bench/randhost.py, seeds %s; %d ticks of 1 s, the first %d left out;\n'
                      '   imbalance = median over ticks of peak demand / lower bound, remote work at its cost;\n'
                      '   hole: hosts with any hole tick, median and max of the count; avoidable: hosts with a hole\n'
                      '   tick where every indivisible item fits one CPU beside the least user load; drop%% of the work;\n'
                      '   moves/h: IRQ and RPS mask changes after warm-up)\n'
                      % (('%d-%d' % (seeds[0], seeds[-1])) if seeds == list(range(seeds[0], seeds[-1] + 1))
                         else ' '.join(map(str, seeds)), opts.random_ticks, opts.random_warmup)
                      + random_table(res, elapsed, opts))
        keep_worst_logs(opts, res)
        png = plot_random_cdf(opts, res)
        if png:
            log('  plot ' + png)
    if not opts.no_cost and not opts.only_hour:
        log('per-tick cost (callgrind + live CPU time)')
        add_section(report, os.path.join(opts.out, 'cost.csv'), write_dict_csv, run_cost(opts),
                    '== Per-tick cost in the steady state (after a warm-up that holds the first placement;\n'
                    '   instructions: callgrind counters dumped after the warm-up and again after the window,\n'
                    '   divided by the cycles in between; ms/tick: balancer CPU time over the window, 1 s interval)\n',
                    cost_table)
    if not opts.no_cost:
        log('CPU seconds per hour at defaults (calm and loaded windows)')
        add_section(report, os.path.join(opts.out, 'hour.csv'), write_dict_csv, run_hour(opts),
                    '== CPU seconds per hour at defaults (irqbalance every 10 s, irqsteerd %s;\n'
                    '   CPU time over a window scaled to an hour: calm %d s after a %d s start-up, loaded %d s\n'
                    '   after %d s; loaded: every NIC\'s load x%d; %d s floor: a process that only wakes every\n'
                    '   %d s by sd-event and reads /proc/stat; least: its least mode, x least: irqsteerd over it;\n'
                    '   start-up s: CPU seconds from the exec to the calm window, apart from the hour)\n'
                    % ((IRQSTEERD_PACES,) + tuple(hour_windows(opts)[i] for i in (1, 0, 3, 2)) +
                       (LOADED_FACTOR, FLOOR_MS // 1000, FLOOR_MS // 1000)),
                    hour_table)
    if not opts.no_big and not opts.quick and not opts.scenario:
        log('big hosts: %s at defaults, calm and loaded' % ', '.join(opts.big_hosts))
        big = run_big(opts)
        add_section(report, os.path.join(opts.out, 'big.csv'), write_dict_csv, big,
                    '== Big hosts at defaults, each daemon as a service beside the other on the same host\n'
                    '   (calm: stationary load; loaded: every NIC x2.5 for 20 s of every 40; %d s warm-up (calm:\n'
                    '   at least %d s, the start-up), %d s window; start-up s: CPU seconds from the exec to the\n'
                    '   window; peak RSS: VmHWM at the window\'s end; tick: CPU time of one wake-up; state\n'
                    '   B/h: bytes of the files replaced in irqsteerd\'s state dir; write B/h: all write()s)\n'
                    % (opts.big_windows[0], CALM_SETTLE_S, opts.big_windows[1]), big_table)
        log('  plot ' + plot_big(opts, big))
    if not opts.no_relief and (not opts.scenario or 'step' in opts.scenario):
        log('time to relief at defaults (step)')
        rr, n = run_relief(opts)
        report.append('== Time to relief at defaults (simulator, step: load x3 at tick 20 on 16 CPUs, 8 queues;\n'
                      '   first change: seconds from the step to the first mask change; relief: to the first\n'
                      '   tick whose peak demand came down half of the way to its final level; median of %d)\n'
                      % n + relief_table(rr))
    if not opts.no_veth and not opts.only_flood:
        log('real kernel: veth in network namespaces with iperf3')
        res, why = run_veth(opts)
        if res:
            secs, omit, reps = veth_plan(opts)
            add_section(report, os.path.join(opts.out, 'veth.json'), write_json, res,
                        '== Real kernel: veth (4 queues) between netns, iperf3 -P 4, sender on CPU0; '
                        '%d round%s (modes in turn) of %d s after %d s left out, median\n'
                        % (reps, '' if reps == 1 else 's', secs, omit), veth_tables)
        else:
            report.append('== Real kernel: ' + why)
    if not opts.no_veth:
        log('real kernel: UDP flood, received packets per mode')
        fr, why = run_flood_rate(opts)
        if fr:
            secs, omit, reps = flood_rate_plan(opts)
            add_section(report, os.path.join(opts.out, 'flood.json'), write_json, fr,
                        '== Real kernel: UDP flood through the veth (4 queues; GRO and rx-udp-gro-forwarding on and %d\n'
                        '   nft rules in the receiving namespace; iperf3 -u -b 0, 4 streams of %d-byte datagrams,\n'
                        '   sender and receiver on CPU0, CPU1 idle); received packets/s from the iperf3 server,\n'
                        '   %d round%s (modes in turn) of %d s after %d s left out, median\n'
                        % (FLOOD_NFT_RULES, FLOOD_DATAGRAM, reps, '' if reps == 1 else 's', secs, omit),
                        flood_rate_table)
        else:
            report.append('== Real kernel flood throughput: ' + why)
    if not opts.no_veth:
        log('real kernel: time from a UDP flood to the first change, at defaults')
        fr, why = run_flood(opts)
        if fr:
            report.append('== Real kernel: seconds from the start of the same UDP flood (the receive path as above:\n'
                          '   GRO, rx-udp-gro-forwarding, %d nft rules; sender and receiver on CPU0) to the first\n'
                          '   change, each balancer at its defaults and started (irqsteerd ready) before the flood\n'
                          % FLOOD_NFT_RULES + flood_table(fr))
        else:
            report.append('== Real kernel flood: ' + why)
    if not opts.have_irqsteerd:
        report.append('NOTE: irqsteerd was not usable (%s); its rows are missing.' % why)
    text = '\n\n'.join(report) + '\n\nelapsed %.0f s; results in %s\n' % (time.time() - t_start, opts.out)
    with open(os.path.join(opts.out, 'report.txt'), 'w') as f:
        f.write(text)
    print(text)
    if not opts.keep:
        shutil.rmtree(opts.tmp, ignore_errors=True)
        if opts.state_base:
            shutil.rmtree(opts.state_base, ignore_errors=True)


if __name__ == '__main__':
    try:
        main()
    except (HarnessError, subprocess.CalledProcessError, OSError) as e:
        print('bench: HARNESS ERROR: %s' % e, file=sys.stderr)
        sys.exit(1)

#!/usr/bin/env python3
"""The random host family: a simulator scenario (.scn) drawn from a seed
alone, so that `randhost.py SEED` (or `run.py --random-seed SEED`) gives
the same host again.  The draws lean towards common hosts (most have 4-64
CPUs, one or two NICs) but cover the ranges of bench/README.md, "Random
hosts": 2-256 CPUs, 1-4 sockets, SMT on or off, 1-4 NICs of every family
the simulator knows, 1 queue to more queues than CPUs, split or combined
vectors, uniform, Zipf and elephant loads, interrupt/NAPI share 0.1-0.9
with per-queue spread, user load 0-70% with per-CPU spread, noise, steps
and ramps, isolated and banned CPUs.

usage: randhost.py SEED [TICKS WARMUP]"""
import random
import sys

FAMILIES = ['i40e', 'txrx', 'rxtx', 'mlx5', 'virtio', 'single']
# (CPUs, weight): most hosts 4-64 CPUs, a few tiny and a few very large
CPU_CHOICES = [(2, 3), (4, 8), (6, 2), (8, 11), (12, 5), (16, 12), (20, 3), (24, 8), (32, 10),
               (40, 3), (48, 6), (56, 2), (64, 8), (80, 2), (96, 4), (128, 4), (160, 1),
               (192, 2), (256, 3)]
MAX_Q = 256  # the simulator's limit per device
TICKS, WARMUP = 70, 30


def pick(r, pairs):
    return r.choices([v for v, _ in pairs], [w for _, w in pairs])[0]


def cpulist(cpus):
    """A sorted list of CPU numbers as ranges: 1,3-5."""
    out, cpus = [], sorted(cpus)
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else '%d-%d' % (cpus[i], cpus[j]))
        i = j + 1
    return ','.join(out)


def node_of(cpu, ncpu, sockets, smt):
    """The simulator's numbering: every core's first thread socket by
    socket, then the siblings in the same order."""
    return (cpu % (ncpu // smt)) // (ncpu // smt // sockets)


def shape(r):
    """CPUs, sockets, SMT: a combination the simulator accepts (CPUs a
    multiple of sockets x SMT) and that exists (no 4 sockets of 1 core)."""
    while True:
        ncpu = pick(r, CPU_CHOICES)
        smt = 2 if ncpu >= 4 and r.random() < 0.6 else 1
        if ncpu < 16:
            sockets = pick(r, [(1, 9), (2, 1)])
        elif ncpu < 48:
            sockets = pick(r, [(1, 6), (2, 4)])
        else:
            sockets = pick(r, [(1, 4), (2, 5), (4, 2)])
        cores = ncpu // (sockets * smt) if ncpu % (sockets * smt) == 0 else 0
        if cores >= 1:
            return ncpu, sockets, smt


def queues(r, ncpu, fam):
    if fam == 'single':
        return 1
    kind = pick(r, [('cpus', 35), ('fewer', 30), ('few', 15), ('more', 20)])
    if kind == 'cpus':
        q = ncpu
    elif kind == 'fewer':
        q = max(1, ncpu // pick(r, [(2, 3), (4, 2), (8, 1)]))
    elif kind == 'few':
        q = r.randint(1, 4)
    else:
        q = ncpu + r.randint(1, max(1, ncpu))
    if fam == 'virtio':
        q = min(q, 64)
    return max(1, min(q, MAX_Q))


def host(seed, ticks=TICKS, warmup=WARMUP):
    """The .scn text of the host of this seed."""
    r = random.Random(seed)
    ncpu, sockets, smt = shape(r)
    lines = ['# random host, seed %d (bench/randhost.py)' % seed, '[run]',
             'ticks = %d' % ticks, 'warmup = %d' % warmup, 'seed = %d' % seed, '[host]',
             'cpus = %d' % ncpu, 'sockets = %d' % sockets, 'smt = %d' % smt]
    user = round(0.7 * r.random() ** 1.3, 3)
    lines += ['user = %s' % user, 'user_spread = %s' % round(r.uniform(0, 0.2) if r.random() < 0.6 else 0, 3),
              'system = %s' % round(r.uniform(0.005, 0.04), 3)]
    # isolated (+ nohz_full) and banned CPUs, leaving every node most of
    # its CPUs: the last CPUs of the host, or a few chosen at random
    off = set()
    if ncpu >= 4 and r.random() < 0.12:
        k = r.randint(1, max(1, ncpu // 4))
        iso = list(range(ncpu - k, ncpu))
        off.update(iso)
        lines.append('isolated = %s' % cpulist(iso))
        if r.random() < 0.7:
            lines.append('nohz_full = %s' % cpulist(iso))
    if ncpu >= 4 and r.random() < 0.12:
        k = r.randint(1, max(1, ncpu // 8))
        ban = set(r.sample([c for c in range(ncpu) if c not in off], k))
        for n in range(sockets):
            # a node keeps at least one eligible CPU
            left = [c for c in range(ncpu) if node_of(c, ncpu, sockets, smt) == n and c not in off | ban]
            if not left:
                ban.discard(min(c for c in ban if node_of(c, ncpu, sockets, smt) == n))
        if ban:
            off.update(ban)
            lines.append('banned = %s' % cpulist(ban))
    eligible = ncpu - len(off)
    nnics = pick(r, [(1, 55), (2, 28), (3, 10), (4, 7)])
    # all network work, in CPUs: mostly light, sometimes a large share of
    # what user space leaves
    room = max(0.05, 0.95 - user)
    net = eligible * room * min(1.0, r.lognormvariate(-1.6, 0.8))
    net = max(0.05, net)
    split = [r.random() + 0.2 for _ in range(nnics)]
    for i in range(nnics):
        fam = r.choice(FAMILIES if sockets == 1 else [f for f in FAMILIES if f != 'virtio'])
        nq = queues(r, ncpu, fam)
        load = net * split[i] / sum(split)
        share = r.uniform(0.1, 0.9)
        # a queue's interrupt + NAPI work runs on one CPU, where NAPI's
        # budget and the ring bound it: on average at most 0.9 CPU of it a
        # queue (a Zipf-heavy queue may still go past one CPU)
        load = min(load, nq * 0.9 / share)
        lines += ['[nic %s]' % ('ens%df0' % (i + 1) if fam not in ('virtio', 'single') else 'eth%d' % i),
                  'family = %s' % fam, 'queues = %d' % nq, 'node = %d' % r.randrange(sockets),
                  'load = %.3f' % load]
        d = pick(r, [('uniform', 50), ('zipf', 35), ('elephant', 15)])
        if d == 'zipf':
            lines.append('dist = zipf %.2f' % r.uniform(0.4, 1.6))
        elif d == 'elephant':
            lines.append('dist = %s' % (r.choice(['uniform', 'zipf %.2f' % r.uniform(0.4, 1.2)])))
            lines.append('elephant = %d %.3f' % (r.randrange(nq), r.uniform(0.2, 1.0) * min(1.0, load + 0.3)))
        lines += ['irq_share = %.3f' % share,
                  'irq_share_spread = %.3f' % (r.uniform(0, min(0.15, share - 0.05)) if r.random() < 0.6 else 0)]
        lines.append('rps_overhead = %.3f' % r.uniform(0.03, 0.12))
        if r.random() < 0.7:
            lines.append('noise = %.3f' % r.choice([r.uniform(0.01, 0.08), r.uniform(0.08, 0.25)]))
        # times as shares of the run drawn with random() alone, so that the
        # run's length does not change the rest of the host
        prof = pick(r, [('flat', 65), ('step', 18), ('ramp', 17)])
        a, b, up, down, f_up = r.random(), r.random(), r.random(), r.random(), r.random() < 0.5
        if prof == 'step':
            lines.append('step = %d %.2f' % (warmup // 2 + int(a * (warmup // 2 + (ticks - warmup) // 3)),
                                             1.5 + 1.5 * up if f_up else 0.3 + 0.5 * down))
        elif prof == 'ramp':
            start = int(a * warmup)
            end = start + 5 + int(b * max(1, warmup + (ticks - warmup) // 2 - start - 5))
            lines.append('ramp = %d %d %.2f' % (start, end, 1.3 + 1.2 * up if f_up else 0.4 + 0.4 * down))
    if r.random() < 0.3:
        lines += ['[storage nvme0]', 'queues = %d' % min(ncpu, 32), 'node = %d' % r.randrange(sockets),
                  'load = %.3f' % r.uniform(0.02, 0.3)]
    return '\n'.join(lines) + '\n'


def describe(text):
    """One line: the host's shape from its .scn text."""
    kv, nics, sec = {}, [], None
    for ln in text.splitlines():
        ln = ln.split('#')[0].strip()
        if ln.startswith('['):
            sec = ln.strip('[]')
            if sec.startswith('nic'):
                nics.append({})
            continue
        if '=' in ln:
            k, v = (x.strip() for x in ln.split('=', 1))
            (nics[-1] if sec and sec.startswith('nic') else kv)[k] = v
    out = '%s CPUs, %s socket%s, SMT %s, user %.0f%%' % (
        kv['cpus'], kv['sockets'], '' if kv['sockets'] == '1' else 's', 'on' if kv['smt'] == '2' else 'off',
        100 * float(kv['user']))
    for k in ('isolated', 'banned'):
        if k in kv:
            out += ', %s %s' % (k, kv[k])
    for n in nics:
        out += '; %s %sq node %s %.2f CPUs %s share %.2f' % (
            n['family'], n['queues'], n['node'], float(n['load']), n.get('dist', 'uniform'),
            float(n['irq_share']))
        for k in ('elephant', 'noise', 'step', 'ramp'):
            if k in n:
                out += ' %s %s' % (k, n[k])
    return out


if __name__ == '__main__':
    if len(sys.argv) not in (2, 4):
        sys.exit(__doc__.strip().splitlines()[-1])
    a = [int(x) for x in sys.argv[1:]]
    sys.stdout.write(host(*a))

#!/usr/bin/env python3
"""One-shot static IRQ spread, the way vendor scripts do it
(Intel set_irq_affinity, Mellanox set_irq_affinity_cpulist.sh): for every
NIC, its queue IRQs get one CPU each, in queue order, over the NIC's
NUMA-local CPUs minus isolated/nohz_full ones; rx and tx IRQs of a queue
share the CPU.  Every NIC starts again from its first local CPU, as running
the vendor script once per interface does.  No RPS, never runs again.

usage: static-spread.py ROOT"""
import os
import re
import sys


def cpulist(s):
    out = []
    for part in s.strip().split(','):
        if not part:
            continue
        if '-' in part:
            a, b = part.split('-')
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def hexmask(cpus, ncpu):
    v = 0
    for c in cpus:
        v |= 1 << c
    chunks = max(1, (ncpu + 31) // 32)
    return ','.join('%08x' % ((v >> (32 * i)) & 0xffffffff) for i in reversed(range(chunks)))


def read(path, default=''):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def main():
    root = sys.argv[1]
    names = {}
    with open(os.path.join(root, 'proc/interrupts')) as f:
        next(f)
        for line in f:
            m = re.match(r'\s*(\d+):', line)
            if m:
                names[int(m.group(1))] = line.split()[-1]
    online = cpulist(read(os.path.join(root, 'sys/devices/system/cpu/online')))
    banned = set(cpulist(read(os.path.join(root, 'sys/devices/system/cpu/isolated'))))
    banned |= set(cpulist(read(os.path.join(root, 'sys/devices/system/cpu/nohz_full'))))
    ncpu = max(online) + 1
    netdir = os.path.join(root, 'sys/class/net')
    moved = 0
    for dev in sorted(os.listdir(netdir)):
        devdir = os.path.realpath(os.path.join(netdir, dev, 'device'))
        pci = devdir if os.path.isdir(os.path.join(devdir, 'msi_irqs')) else os.path.dirname(devdir)
        if not os.path.isdir(os.path.join(pci, 'msi_irqs')):
            continue
        local = cpulist(read(os.path.join(pci, 'local_cpulist'), read(
            os.path.join(root, 'sys/devices/system/cpu/online'))))
        cpus = [c for c in local if c not in banned] or [c for c in online if c not in banned]
        vdev = os.path.basename(devdir)
        queues = []
        for irq in sorted(int(x) for x in os.listdir(os.path.join(pci, 'msi_irqs'))):
            n = names.get(irq, '')
            m = (re.search(r'(?:TxRx|-rx|-tx|-fp|Tx-Rx)-(\d+)$', n) or
                 re.match(r'mlx5_comp(\d+)@', n) or
                 re.match(re.escape(vdev) + r'-(?:input|output)\.(\d+)$', n))
            if m:
                queues.append((int(m.group(1)), irq))
            elif n == dev:
                queues.append((0, irq))
        for q, irq in queues:
            cpu = cpus[q % len(cpus)]
            with open(os.path.join(root, 'proc/irq/%d/smp_affinity' % irq), 'w') as f:
                f.write(hexmask([cpu], ncpu) + '\n')
            moved += 1
    print('static-spread: pinned %d queue IRQs' % moved)


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Checks irqsteerctl inventory against real /proc/interrupts captures.

Each directory of tests/fixtures/captures holds a capture (`interrupts`),
the NICs of the host it came from (`nics`) and what the drivers' naming
code says each IRQ is (`truth`).  For each, a fixture tree is built around
the capture (sys/class/net, the PCI functions with their msi_irqs, queue
directories, proc/irq, the CPUs of the capture's header), `irqsteerctl
inventory --json` is run on it, and every IRQ whose class, NIC, queue or
role differs from the truth is named.  Exit 1 if any does.

  captures.py [--keep DIR] [CASE...]

nics: one NIC a line, "NAME DRIVER PCI_ADDR RX TX [key=value...]":
  msi=LIST      the function's MSI vectors (default: the IRQs whose chip
                names PCI_ADDR, as PCI-MSIX-<addr> does)
  dev_port=N    port of a multi-port function (mlx4)
  virtio=NAME   a virtio device under the PCI function (virtio_net)
  vmbus=GUID    a VMBus device, no PCI function (hv_netvsc)
truth: "IRQ CLASS NIC QUEUE ROLE" (NIC/QUEUE "-" for none); IRQs it does
not list are nobody's ("other - - none"); "map NIC SOURCE" checks a NIC's
IRQ map ("msi-order" is the one warned as a guess).
"""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ.get("IRQSTEER_SRCDIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CAPTURES = os.path.join(SRC, "tests", "fixtures", "captures")
CTL = os.environ.get("IRQSTEERCTL") or os.path.join(SRC, "build", "irqsteerctl")

spec = importlib.util.spec_from_file_location("gen", os.path.join(SRC, "tests", "fixtures", "gen-inventory-fixtures.py"))
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)


def parse_list(s):
    out = []
    for part in filter(None, s.split(",")):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def read_rows(text):
    """CPU numbers of the header; (irq, chip-and-rest) of the numeric rows."""
    lines = [l for l in text.splitlines() if l.strip()]
    cpus = [int(t[3:]) for t in lines[0].split()]
    rows = []
    for l in lines[1:]:
        m = re.match(r"\s*(\d+):(.*)", l)
        if m:
            rows.append((int(m.group(1)), m.group(2)))
    return cpus, rows


def build(root, case):
    cdir = os.path.join(CAPTURES, case)
    text = open(os.path.join(cdir, "interrupts")).read()
    cpus, rows = read_rows(text)
    n = max(cpus) + 1
    t = gen.Tree(root)
    base = "sys/devices/system/cpu"
    t.write(base + "/present", "0-%d" % (n - 1))
    t.write(base + "/possible", "0-%d" % (n - 1))
    t.write(base + "/online", gen.cpulist(cpus))
    t.write(base + "/isolated", "")
    gen.cpu_topology(t, n, cpus, lambda c: c, lambda c: 0, lambda c: c, None, lambda c: [])
    t.write("proc/irq/default_smp_affinity", gen.hexmask(cpus, n))
    for irq, _ in rows:
        gen.proc_irq(t, irq, cpus, [cpus[0]], -1, n)
    ifindex = 2
    for line in open(os.path.join(cdir, "nics")):
        line = line.split("#")[0].split()
        if not line:
            continue
        name, driver, addr, nrx, ntx = line[:5]
        opts = dict(o.split("=", 1) for o in line[5:])
        if "vmbus" in opts:
            devpath = "devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/" + opts["vmbus"]
            t.write("sys/%s/class_id" % devpath, "{f8615163-df3e-46c5-913f-f2d2f965ed0e}")
            t.link("sys/%s/driver" % devpath, gen.up_to_sys(devpath) + "/bus/vmbus/drivers/" + driver)
            parent = devpath
        else:
            devpath = "devices/pci%s/%s" % (addr[:-8], addr)
            if "msi" in opts:
                msi = parse_list(opts["msi"])
            else:
                msi = [irq for irq, rest in rows if re.search(r"PCI-MSIX?-%s\b" % re.escape(addr), rest)]
            if not os.path.exists(os.path.join(t.root, "sys", devpath)):
                gen.pci_device(t, devpath, "virtio-pci" if "virtio" in opts else driver, -1, None, n, msi)
            parent = devpath
            if "virtio" in opts:
                vdir = "sys/%s/%s" % (devpath, opts["virtio"])
                t.link(vdir + "/driver", gen.up_to_sys(devpath + "/" + opts["virtio"]) + "/bus/virtio/drivers/" + driver)
                t.write(vdir + "/device", "0x0001")
                parent = devpath + "/" + opts["virtio"]
        ndir = gen.netdev(t, name, parent, ifindex, int(nrx), int(ntx), n)
        if "dev_port" in opts:
            t.write(ndir + "/dev_port", opts["dev_port"])
        ifindex += 1
    gen.netdev(t, "lo", None, 1, 1, 1, n, operstate="unknown")
    t.write("proc/interrupts", text)


def read_truth(case):
    want, maps, where = {}, {}, {}
    path = os.path.join(CAPTURES, case, "truth")
    for k, line in enumerate(open(path), 1):
        f = line.split("#")[0].split()
        if not f:
            continue
        if f[0] == "map":
            maps[f[1]] = f[2]
            continue
        irq, cls, nic, queue, role = f
        want[int(irq)] = (cls, None if nic == "-" else nic, None if queue == "-" else int(queue), role)
        where[int(irq)] = "%s:%d" % (os.path.relpath(path, SRC), k)
    return want, maps, where


def check(case, keep):
    root = os.path.join(keep, case) if keep else tempfile.mkdtemp(prefix="irqsteer-capture-")
    try:
        build(root, case)
        p = subprocess.run([CTL, "inventory", "--root", root, "--json", "--config", "/dev/null"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print("%s: irqsteerctl inventory exited %d: %s" % (case, p.returncode, p.stderr.strip()))
            return 1
        inv = json.loads(p.stdout)
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    want, maps, where = read_truth(case)
    bad = 0
    got_irqs = {i["irq"]: i for i in inv["irqs"]}
    _, rows = read_rows(open(os.path.join(CAPTURES, case, "interrupts")).read())
    for irq, _ in rows:
        g = got_irqs.get(irq)
        if g is None:
            print("%s: IRQ %d is missing from the inventory" % (case, irq))
            bad += 1
            continue
        got = (g["class"], g["nic"], g["queue"], g["role"])
        w = want.get(irq, ("other", None, None, "none"))
        if got != w:
            fmt = lambda v: "%s nic=%s queue=%s role=%s" % (v[0], v[1] or "-", "-" if v[2] is None else v[2], v[3])
            print("%s: IRQ %d (%s): got %s, want %s (%s)" % (case, irq, g["name"], fmt(got), fmt(w),
                                                          where.get(irq, "not in the truth: nobody's")))
            bad += 1
    nics = {n["name"]: n for n in inv["nics"]}
    for nic, source in maps.items():
        got = nics[nic]["mapping"] if nic in nics else None
        if got != source:
            print("%s: NIC %s: IRQ map %s, want %s" % (case, nic, got, source))
            bad += 1
    print("%s: %d IRQs, %d differences from the truth" % (case, len(rows), bad))
    return bad


def check_unreadable():
    """A /proc/interrupts with no CPU header is refused, named, and the
    inventory exits non-zero; a row it cannot read is skipped alone."""
    bad = 0
    root = tempfile.mkdtemp(prefix="irqsteer-capture-")
    try:
        build(root, "tg3-rss")
        path = os.path.join(root, "proc", "interrupts")
        good = open(path).read()
        open(path, "w").write("this is no /proc/interrupts\n")
        p = subprocess.run([CTL, "inventory", "--root", root, "--config", "/dev/null"], capture_output=True, text=True)
        if p.returncode == 0 or "proc/interrupts" not in p.stderr:
            print("unreadable proc/interrupts: exit %d, stderr %r" % (p.returncode, p.stderr))
            bad += 1
        lines = good.splitlines(True)
        open(path, "w").write("".join(lines[:2] + ["FIQ:              fiq_glue\n"] + lines[2:]))
        p = subprocess.run([CTL, "inventory", "--root", root, "--json", "--config", "/dev/null"],
                           capture_output=True, text=True)
        if p.returncode != 0 or len(json.loads(p.stdout)["irqs"]) != 5:
            print("FIQ row: exit %d, stderr %r" % (p.returncode, p.stderr))
            bad += 1
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("unreadable rows and files: %d wrong" % bad)
    return bad


def main(argv):
    keep = None
    if argv[:1] == ["--keep"]:
        keep, argv = argv[1], argv[2:]
    cases = argv or sorted(d for d in os.listdir(CAPTURES) if os.path.isfile(os.path.join(CAPTURES, d, "truth")))
    bad = sum(check(c, keep) for c in cases)
    if not argv:
        bad += check_unreadable()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

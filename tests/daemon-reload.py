#!/usr/bin/env python3
"""What a reload must do on a fixture root: `manage = no` for a NIC puts
its queue IRQs back where they were before irqsteerd (the undo journal's
originals), not only its RPS and XPS masks, and leaves the other NICs as
irqsteerd laid them out.
Needs no root: everything happens below a temporary copy of
tests/fixtures/vm2.  Run by tests/test-daemon-reload.sh (about 4 s)."""
import os
import shutil
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemonlib as dl  # noqa: E402

# Generous: the suite also runs under ASan.
T = 15.0

c = dl.Checker()
tmp = dl.tmpdir("irqsteer-reload.")

# vm2: eth0 is virtio2 (queue IRQs 38-41), eth1 the e1000 on IRQ 11.
ETH0_IRQS = ("38", "39", "40", "41")
ETH1_IRQS = ("11",)


def affinity(root, irq):
    with open(os.path.join(root, "proc/irq", irq, "smp_affinity_list")) as f:
        return f.read().strip()


def run_manage_no():
    d = os.path.join(tmp, "manage")
    root = dl.make_root(d)
    state = os.path.join(d, "state")
    log = os.path.join(d, "daemon.log")
    conf = os.path.join(d, "irqsteer.conf")
    with open(conf, "w") as f:
        f.write("[daemon]\n")
    pristine = {irq: affinity(root, irq) for irq in ETH0_IRQS + ETH1_IRQS}
    p = dl.start_daemon(["--root", root, "--config", conf, "--state-dir", state, "--interval", "200ms", "-f"], log)
    try:
        moved = lambda irqs: all(affinity(root, i) != pristine[i] for i in irqs)  # noqa: E731
        ok = dl.wait_until(lambda: moved(ETH0_IRQS) and moved(ETH1_IRQS), T)
        c.check(ok, "manage: the initial layout moves eth0's and eth1's queue IRQs",
                f"{ {i: affinity(root, i) for i in pristine} } vs {pristine}")
        laid = {i: affinity(root, i) for i in ETH1_IRQS}
        with open(conf, "w") as f:
            f.write("[daemon]\n[interface eth0]\nmanage = no\n")
        p.send_signal(signal.SIGHUP)
        ok = dl.wait_until(lambda: all(affinity(root, i) == pristine[i] for i in ETH0_IRQS), T)
        c.check(ok, "manage = no by reload: eth0's queue IRQs back to their original affinity",
                f"{ {i: affinity(root, i) for i in ETH0_IRQS} } vs {pristine}\n" + dl.read_log(log)[-1500:])
        c.check("manage = no for eth0: IRQ back to the original" in dl.read_log(log),
                "manage = no by reload: the log says why each IRQ went back", dl.read_log(log)[-1500:])
        c.check({i: affinity(root, i) for i in ETH1_IRQS} == laid,
                "manage = no by reload: eth1 (still managed) stays where irqsteerd put it")
        c.check(dl.stop(p, timeout=T) == 0, "manage: SIGTERM exit 0", dl.read_log(log)[-1500:])
        c.check({i: affinity(root, i) for i in pristine} == pristine, "manage: everything original after the stop")
    finally:
        dl.stop(p, signal.SIGKILL, timeout=5)


try:
    dl.run_cases(c, [run_manage_no])
finally:
    if c.failed and os.environ.get("IRQSTEER_KEEP_TMP"):
        print(f"kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
c.exit()

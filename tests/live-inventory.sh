#!/bin/sh
# Live, root, read-only: issue 2's "done when" on this host.
# `irqsteerctl inventory --json` lists eth0 (driver virtio_net) with its
# queue 0 mapped to the IRQs /proc/interrupts names virtioK-input.0 and
# virtioK-output.0 (K: the virtio device under /sys/class/net/eth0/device),
# and every IRQ's "affinity" and "effective" equal
# /proc/irq/N/smp_affinity_list and effective_affinity_list (null/absent
# when the file is).  It takes the host lock so that no other live test
# moves an IRQ between the two readings.  Exit 77 = skipped (automake).
# Changes this host: runs only when asked (make check-live sets IRQSTEER_LIVE=1).
[ "${IRQSTEER_LIVE:-}" = 1 ] || { echo "SKIP: live test: run make check-live"; exit 77; }
set -u
. "${IRQSTEER_SRCDIR:-$(dirname "$0")/..}/tests/live-host-lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (reads every /proc/irq/N as the daemon does)"
[ -d "/sys/class/net/$E2E_IF" ] || skip "no interface $E2E_IF (set IRQSTEER_E2E_IFACE)"
drv=$(basename "$(readlink "/sys/class/net/$E2E_IF/device/driver" 2>/dev/null)" 2>/dev/null)
[ "$drv" = virtio_net ] || skip "$E2E_IF is not virtio-net (driver '${drv:-none}')"
vdev=$(basename "$(readlink "/sys/class/net/$E2E_IF/device")")
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
[ -x "$CTL" ] || { echo "FAIL irqsteerctl not found at $CTL (set IRQSTEERCTL)"; exit 1; }

e2e_begin inventory
json=$E2E_TMP/inventory.json
"$CTL" inventory --json >"$json" 2>"$E2E_TMP/inventory.err"
rc=$?
check "irqsteerctl inventory --json exits 0" [ "$rc" = 0 ] || cat "$E2E_TMP/inventory.err"
out=$(python3 - "$json" "$E2E_IF" "$vdev" <<'PY'
import json, os, re, sys

path, ifname, vdev = sys.argv[1:4]
inv = json.load(open(path))
res = []


def check(ok, what, detail=""):
    res.append(("ok   " if ok else "FAIL ") + what + ("" if ok or not detail else f": {detail}"))


def cpulist(s):
    out = []
    for part in s.strip().split(","):
        if "-" in part:
            a, b = part.split("-")
            out += range(int(a), int(b) + 1)
        elif part:
            out.append(int(part))
    return out


names = {}
with open("/proc/interrupts") as f:
    for line in f:
        m = re.match(r"\s*(\d+):.*\s(\S+)\s*$", line)
        if m:
            names[int(m.group(1))] = m.group(2)
want_rx = [n for n, v in names.items() if v == f"{vdev}-input.0"]
want_tx = [n for n, v in names.items() if v == f"{vdev}-output.0"]
check(len(want_rx) == 1 and len(want_tx) == 1,
      f"/proc/interrupts names {vdev}-input.0 and {vdev}-output.0 once each", f"{want_rx} {want_tx}")

nic = next((n for n in inv.get("nics", []) if n.get("name") == ifname), None)
check(nic is not None, f"{ifname} listed")
nic = nic or {}
check(nic.get("driver") == "virtio_net", f"{ifname} driver virtio_net", repr(nic.get("driver")))
check(nic.get("mapping") == "names", f"{ifname} IRQs mapped by name", repr(nic.get("mapping")))
q0 = next((q for q in nic.get("queues", []) if q.get("index") == 0), {})
check(want_rx and q0.get("rx_irq") == want_rx[0], f"queue 0 rx IRQ is {vdev}-input.0 ({want_rx})",
      repr(q0.get("rx_irq")))
check(want_tx and q0.get("tx_irq") == want_tx[0], f"queue 0 tx IRQ is {vdev}-output.0 ({want_tx})",
      repr(q0.get("tx_irq")))
check(sorted(q0.get("irqs", [])) == sorted(want_rx + want_tx), "queue 0 irqs[] are exactly those two",
      repr(q0.get("irqs")))

bad_aff, bad_eff, n = [], [], 0
for irq in inv.get("irqs", []):
    num = irq.get("irq")
    d = f"/proc/irq/{num}"
    try:
        aff = cpulist(open(f"{d}/smp_affinity_list").read())
    except OSError:
        aff = None
    try:
        eff = cpulist(open(f"{d}/effective_affinity_list").read())
    except OSError:
        eff = None
    n += 1
    # the schema: an unreadable file gives null (or an empty set)
    if (irq.get("affinity") or None) != (aff or None):
        bad_aff.append(f"IRQ {num}: json {irq.get('affinity')} /proc {aff}")
    if (irq.get("effective") or None) != (eff or None):
        bad_eff.append(f"IRQ {num}: json {irq.get('effective')} /proc {eff}")
    if num in want_rx + want_tx:
        check(irq.get("nic") == ifname and irq.get("queue") == 0, f"IRQ {num} ({names.get(num)}) belongs to "
              f"{ifname} queue 0", f"nic {irq.get('nic')!r} queue {irq.get('queue')!r}")
        check(irq.get("affinity") == aff and aff, f"IRQ {num} affinity {irq.get('affinity')} = smp_affinity_list")
        check(irq.get("effective") == eff and eff, f"IRQ {num} effective {irq.get('effective')} = "
              "effective_affinity_list")
check(n > 0 and not bad_aff, f"every IRQ's affinity equals its smp_affinity_list ({n} IRQs)", "; ".join(bad_aff))
check(n > 0 and not bad_eff, "every IRQ's effective equals its effective_affinity_list", "; ".join(bad_eff))
print("\n".join(res))
PY
)
echo "$out"
E2E_PASS=$((E2E_PASS + $(echo "$out" | grep -c '^ok ')))
E2E_FAIL=$((E2E_FAIL + $(echo "$out" | grep -c '^FAIL')))
[ -n "$out" ] || check "the JSON could be checked" false
e2e_finish

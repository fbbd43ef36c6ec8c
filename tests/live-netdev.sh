#!/bin/sh
# Live test (root): the netdev genetlink module (src/netdev.c, through
# tests/netdev-dump) on a veth with 4 rx and 4 tx queues, GRO on (veth then
# polls each rx queue with a NAPI of its own) and threaded NAPI, in a network
# namespace of its own.  The dump must list the 4 rx and 4 tx queues, any
# NAPI a queue names must be one of the device's, and the device must have
# 4 NAPIs; with threaded on each reports threaded and the PID of its kthread,
# whose /proc/PID/comm is napi/DEV-ID; with threaded off none reports a PID.
# irqsteerctl inventory --json lists the same NAPIs under the NIC, each with
# the CPU its kthread last ran on (as /proc/PID/stat says).
# Linux 6.18's veth binds no queue to its NAPI (queue-get sends no napi-id
# for it); the test says so rather than require it.  Skips without root, and
# when the kernel has no netdev family or no queue-get (before 6.8).  Names
# prefixed "nd"; the namespace is deleted on exit, on failure too.
# Exit 77 = skipped (automake).
# Changes this host: runs only when asked (make check-live sets IRQSTEER_LIVE=1).
[ "${IRQSTEER_LIVE:-}" = 1 ] || { echo "SKIP: live test: run make check-live"; exit 77; }
set -u

DUMP=${IRQSTEER_BUILDDIR:-.}/tests/netdev-dump

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
command -v ip >/dev/null 2>&1 || skip "needs ip (iproute2)"
command -v ethtool >/dev/null 2>&1 || skip "needs ethtool"
[ -x "$DUMP" ] || fail "tests/netdev-dump not found at $DUMP (set IRQSTEER_BUILDDIR)"

NS=ndns$$
VA=ndva$$
VB=ndvb$$
TMP=$(mktemp -d /tmp/nd-live-netdev.XXXXXX) || fail "mktemp"

cleanup() {
        ip netns del "$NS" 2>/dev/null
        rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

in_ns() { ip netns exec "$NS" "$@"; }

ip netns add "$NS" || fail "ip netns add"
ip -n "$NS" link add "$VA" numrxqueues 4 numtxqueues 4 type veth peer name "$VB" numrxqueues 4 numtxqueues 4 ||
        fail "ip link add veth"
ip -n "$NS" link set "$VA" up || fail "link up"
ip -n "$NS" link set "$VB" up || fail "link up"
in_ns ethtool -K "$VA" gro on >/dev/null || fail "ethtool -K $VA gro on"
[ -e /sys/class/net/lo/threaded ] || skip "no /sys/class/net/DEV/threaded (threaded NAPI needs Linux 5.12)"
# The kthreads are named at creation after the NAPI's id then; threaded is
# switched on only after GRO made the NAPIs, so the names are current.
# (Measured on 6.18: a down/up gives the NAPIs new ids, the kthreads keep
# their names.)
in_ns sh -c "echo 1 > /sys/class/net/$VA/threaded" || fail "threaded on"
IFX=$(in_ns cat "/sys/class/net/$VA/ifindex") || fail "ifindex"

in_ns "$DUMP" >"$TMP/on" 2>"$TMP/err"
rc=$?
[ $rc = 77 ] && skip "the kernel has no netdev genetlink family or no queue-get (Linux 6.8)"
[ $rc = 0 ] || fail "netdev-dump exited $rc: $(cat "$TMP/err")"

# queue IFINDEX rx|tx ID napi NAPI_ID
for t in rx tx; do
        n=$(awk -v i="$IFX" -v t="$t" '$1 == "queue" && $2 == i && $3 == t' "$TMP/on" | wc -l)
        ids=$(awk -v i="$IFX" -v t="$t" '$1 == "queue" && $2 == i && $3 == t { print $4 }' "$TMP/on" | sort -n | tr '\n' ' ')
        [ "$n" = 4 ] && [ "$ids" = "0 1 2 3 " ] || fail "$VA: $t queues '$ids', want 0 1 2 3"
done
napis=$(awk -v i="$IFX" '$1 == "napi" && $4 == i { print $2 }' "$TMP/on" | sort -n | tr '\n' ' ')
set -- $napis
[ $# = 4 ] || fail "$VA: $# NAPIs ($napis), want 4 (one per rx queue with GRO on)"
bound=0
for nid in $(awk -v i="$IFX" '$1 == "queue" && $2 == i && $6 != 0 { print $6 }' "$TMP/on"); do
        case " $napis" in
        *" $nid "*) bound=$((bound + 1)) ;;
        *) fail "$VA: a queue names NAPI $nid, not one of the device's ($napis)" ;;
        esac
done
echo "queues: 4 rx, 4 tx; NAPIs $napis; queues bound to a NAPI: $bound (0 is veth on 6.18)"

# napi ID ifindex IFINDEX irq IRQ pid PID threaded MODE
pids=
awk -v i="$IFX" '$1 == "napi" && $4 == i { print $2, $8, $10 }' "$TMP/on" >"$TMP/napis"
while read -r nid pid mode; do
        # before 6.17 the kernel reports no threaded state per NAPI
        [ "$mode" = on ] || [ "$mode" = unknown ] || fail "NAPI $nid: threaded '$mode' with $VA/threaded = 1"
        [ "$pid" -gt 0 ] 2>/dev/null || fail "NAPI $nid: no kthread PID with threaded on"
        comm=$(cat "/proc/$pid/comm" 2>/dev/null) || fail "NAPI $nid: PID $pid has no /proc/$pid/comm"
        [ "$comm" = "napi/$VA-$nid" ] || fail "NAPI $nid: PID $pid is '$comm', want napi/$VA-$nid"
        echo "NAPI $nid: kthread $pid '$comm', threaded $mode"
        pids="$pids $pid"
done <"$TMP/napis"
[ "$(echo $pids | tr ' ' '\n' | sort -u | wc -l)" = 4 ] || fail "kthread PIDs not distinct:$pids"

# irqsteerctl inventory --json: the same NAPIs under the NIC, each with its
# kthread and the CPU it last ran on: field 39 of /proc/PID/stat, read here
# before and after (an idle veth's kthreads do not run in between).
CTL=${IRQSTEERCTL:-${IRQSTEER_BUILDDIR:-.}/irqsteerctl}
stat_cpus() {
        for pid in $pids; do
                echo "$pid $(sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f37)"
        done
}
if [ -x "$CTL" ] && command -v python3 >/dev/null 2>&1; then
        stat_cpus >"$TMP/cpu.before" || fail "reading /proc/PID/stat"
        in_ns "$CTL" inventory --json >"$TMP/inv.json" 2>"$TMP/err" || fail "irqsteerctl inventory: $(cat "$TMP/err")"
        stat_cpus >"$TMP/cpu.after" || fail "reading /proc/PID/stat"
        python3 - "$TMP/inv.json" "$VA" "$TMP/napis" "$TMP/cpu.before" "$TMP/cpu.after" <<'PY' ||
import json, sys
inv = json.load(open(sys.argv[1]))
nic = [n for n in inv["nics"] if n["name"] == sys.argv[2]]
assert len(nic) == 1, f"{sys.argv[2]} not in the inventory"
got = {n["id"]: n for n in nic[0]["napis"]}
want = {int(l.split()[0]): int(l.split()[1]) for l in open(sys.argv[3])}
cpus = [dict(map(int, l.split()) for l in open(f)) for f in sys.argv[4:6]]
assert set(got) == set(want), f"napis {sorted(got)}, want {sorted(want)}"
for i, pid in want.items():
    n = got[i]
    assert n["pid"] == pid, f"NAPI {i}: pid {n['pid']}, want {pid}"
    assert n["threaded"] in ("on", None), f"NAPI {i}: threaded {n['threaded']}"
    assert n["irq"] is None, f"NAPI {i}: veth registers no IRQ, got {n['irq']}"
    ok = {c[pid] for c in cpus}
    assert n["cpu"] in ok, f"NAPI {i}: cpu {n['cpu']}, /proc/{pid}/stat says {sorted(ok)}"
for q in nic[0]["queues"]:
    for k in ("irq_source", "napi_id", "napi_threaded", "napi_pid", "napi_cpu"):
        assert k in q, f"queue {q['index']}: no {k}"
print(f"irqsteerctl inventory: NAPIs {sorted(got)}, kthread CPUs "
      f"{[got[i]['cpu'] for i in sorted(got)]} as /proc/PID/stat says")
PY
                fail "irqsteerctl inventory --json"
else
        echo "irqsteerctl or python3 missing: inventory JSON not checked"
fi

# Threaded off: the kernel stops the kthreads, the NAPIs stay.
in_ns sh -c "echo 0 > /sys/class/net/$VA/threaded" || fail "threaded off"
in_ns "$DUMP" >"$TMP/off" 2>"$TMP/err" || fail "netdev-dump (threaded off): $(cat "$TMP/err")"
off=$(awk -v i="$IFX" '$1 == "napi" && $4 == i { print $2 }' "$TMP/off" | sort -n | tr '\n' ' ')
[ "$off" = "$napis" ] || fail "threaded off: NAPIs '$off', want the same '$napis'"
awk -v i="$IFX" '$1 == "napi" && $4 == i && ($8 != 0 || ($10 != "off" && $10 != "unknown")) { exit 1 }' \
        "$TMP/off" || fail "threaded off: a NAPI still reports a kthread or threaded on: $(grep '^napi' "$TMP/off")"
echo "threaded off: NAPIs $off without kthreads"

# Per-queue packet rates, as the daemon's sampling computes them from two
# qstats readings (netdev-dump --rates): every queue whose packet counter
# the kernel gives has a rate.  The host's namespace (a real NIC's driver
# such as virtio_net keeps them) with a ping to its first default gateway,
# and the veth, which may keep none (then it is said).
rates_check() { # NAME NS-PREFIX... : what the dump and the rates said
        name=$1
        shift
        "$@" "$DUMP" >"$TMP/q.$name" 2>"$TMP/err" || fail "netdev-dump ($name): $(cat "$TMP/err")"
        "$@" "$DUMP" --rates 500 >"$TMP/r.$name" 2>"$TMP/err"
        rc=$?
        if [ $rc = 77 ]; then
                echo "$name: the kernel has no qstats-get (Linux 6.9): no per-queue rates"
                return
        fi
        [ $rc = 0 ] || fail "netdev-dump --rates ($name) exited $rc: $(cat "$TMP/err")"
        want=$(awk '$1 == "qstats" && (($3 == "rx" && $6 != "-") || ($3 == "tx" && $10 != "-")) { print $2, $3, $4 }' \
                "$TMP/q.$name" | sort)
        got=$(awk '$1 == "rate" { print $2, $3, $4 }' "$TMP/r.$name" | sort)
        [ "$got" = "$want" ] || fail "$name: rates for '$(echo $got)', want every queue with counters: '$(echo $want)'"
        awk '$1 == "rate" && $6 < 0 { exit 1 }' "$TMP/r.$name" || fail "$name: a negative rate: $(cat "$TMP/r.$name")"
        echo "$name: $(echo "$want" | grep -c .) queues with packet counters, rates: $(awk '$1 == "rate" { printf "%s-%s/%s %s/s  ", $3, $4, $2, $6 }' "$TMP/r.$name")"
}
# udp_to ADDR DEV [PREFIX...]: 40 datagrams out of DEV ("": by route) to
# ADDR's discard port over a second (python3; without it no traffic: the
# rates are 0, still there)
udp_to() {
        command -v python3 >/dev/null 2>&1 || return 0
        a=$1
        d=$2
        shift 2
        "$@" python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
if sys.argv[2]:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, sys.argv[2].encode())
for _ in range(40):
    try:
        s.sendto(b"x" * 64, (sys.argv[1], 9))
    except OSError:
        pass
    time.sleep(0.025)' "$a" "$d"
}
GW=$(ip -4 route show default 2>/dev/null | awk '{ print $3; exit }')
[ -n "$GW" ] && { udp_to "$GW" "" & }
rates_check host env
wait
# both ends are in one namespace: a broadcast out of one end crosses the pair
in_ns ip addr add 198.18.3.1/30 dev "$VA" || fail "address $VA"
udp_to 198.18.3.3 "$VA" in_ns &
rates_check veth in_ns
wait
vq=$(awk -v i="$IFX" '$1 == "qstats" && $2 == i' "$TMP/q.veth" | wc -l)
echo "veth $VA: $vq queue-scope qstats replies (0: veth keeps no per-queue counters in this kernel)"
echo "PASS"

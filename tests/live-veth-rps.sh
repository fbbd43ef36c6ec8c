#!/bin/sh
# Live test (root) of the whole daemon for NICs without queue IRQs, the
# container-host case: irqsteerd runs inside a network namespace and manages
# its veth, whose receive work runs as NET_RX softirq on the SENDING CPU
# (veth_xmit -> netif_rx -> that CPU's backlog) unless rps_cpus steer it.
#
# Two namespaces joined by a veth pair with 4 rx and 4 tx queues; an iperf3
# server in the receiving one, a TCP client in the sending one pinned to
# CPU0.  First a baseline without irqsteerd, then the same traffic with
# `irqsteerd --foreground --interval 1s` inside the receiving namespace.
# Asserted:
# - irqsteerd set rps_cpus on every rx queue of the receiving veth, to a
#   mask without CPU0 (the hot sender's CPU);
# - CPU1's share of all softirq time (/proc/stat, over a 4 s window while
#   the traffic runs) rose by at least 15 percentage points against the
#   baseline.  On this 2-CPU VM the baseline share is ~10% and ~50% with
#   RPS: 15 points leaves room for other tests' traffic on the shared host;
# - after SIGTERM the masks (and rps_flow_cnt) are back to what they were;
# - the namespace rule of issue 3, "leave IRQs of devices it cannot see
#   alone": every /proc/irq/*/smp_affinity_list of the host is the same
#   before irqsteerd starts, while it steers and after it stopped, and its
#   log has no IRQ action.  For that the test holds the host lock of
#   tests/live-host-lib.sh, so no other live test moves an IRQ meanwhile.
# NET_RX counts from /proc/softirqs and iperf3 throughput are printed, not
# asserted (runs, not time: docs/DESIGN.md "Kernel traps").
# Addresses 198.18.0.0/30 only, names prefixed "vr"; everything created here
# is deleted on exit, on failure too.  About 35 s.  Exit 77 = skipped.
# Changes this host: runs only when asked (make check-live sets IRQSTEER_LIVE=1).
[ "${IRQSTEER_LIVE:-}" = 1 ] || { echo "SKIP: live test: run make check-live"; exit 77; }
set -u

D=${IRQSTEERD:-./irqsteerd}
PY=$(command -v python3 || true)

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; [ -n "${TMP:-}" ] && [ -s "$TMP/d.log" ] && sed 's/^/  irqsteerd: /' "$TMP/d.log" | tail -40; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root"
command -v ip >/dev/null 2>&1 || skip "needs ip (iproute2)"
command -v taskset >/dev/null 2>&1 || skip "needs taskset (util-linux)"
command -v iperf3 >/dev/null 2>&1 || skip "needs iperf3"
[ -n "$PY" ] || skip "needs python3"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
[ -x "$D" ] || fail "irqsteerd not found at $D (set IRQSTEERD)"

NSS=vrS$$
NSR=vrR$$
VS=vrs$$
VR=vrr$$
PORT=5201
SRV_PID=
CLI_PID=
D_PID=
TMP=$(mktemp -d /tmp/vr-live-veth-rps.XXXXXX) || fail "mktemp"
if command -v flock >/dev/null 2>&1; then
        exec 9>/tmp/irqsteer-live-host.lock
        flock -w 300 9 || fail "another live host test holds /tmp/irqsteer-live-host.lock"
fi

# Every host IRQ's affinity, "PATH VALUE" lines.
irq_snap() {
        for f in /proc/irq/*/smp_affinity_list; do
                v=$(cat "$f" 2>/dev/null) || continue
                echo "$f $v"
        done >"$1"
}
# irq_same FILE WHEN: fails, naming the IRQs, if any changed since irqs.orig.
irq_same() {
        irq_snap "$1"
        cmp -s "$TMP/irqs.orig" "$1" ||
                fail "host IRQ affinity changed $2: $(diff "$TMP/irqs.orig" "$1" | grep '^[<>]' | tr '\n' ' ')"
}

cleanup() {
        for p in $CLI_PID $D_PID $SRV_PID; do
                kill "$p" 2>/dev/null
        done
        wait 2>/dev/null
        ip link del "$VS" 2>/dev/null
        ip netns del "$NSS" 2>/dev/null
        ip netns del "$NSR" 2>/dev/null
        rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

ip netns add "$NSS" || skip "cannot create network namespaces"
ip netns add "$NSR" || fail "ip netns add $NSR"
ip link add "$VS" numtxqueues 4 numrxqueues 4 type veth \
        peer name "$VR" numtxqueues 4 numrxqueues 4 || fail "cannot create a 4-queue veth pair"
ip link set "$VS" netns "$NSS" || fail "move $VS"
ip link set "$VR" netns "$NSR" || fail "move $VR"
ip -n "$NSS" addr add 198.18.0.1/30 dev "$VS" || fail "address S"
ip -n "$NSR" addr add 198.18.0.2/30 dev "$VR" || fail "address R"
for ns in "$NSS" "$NSR"; do
        ip -n "$ns" link set lo up || fail "lo up in $ns"
done
ip -n "$NSS" link set "$VS" up || fail "up $VS"
ip -n "$NSR" link set "$VR" up || fail "up $VR"

# The receiving veth's queue files, as the namespace sees them (ip netns
# exec mounts a sysfs of the namespace).
queue_values() {
        ip netns exec "$NSR" sh -c '
for q in /sys/class/net/'"$VR"'/queues/rx-*; do
        echo "$(basename "$q") rps_cpus=$(cat "$q/rps_cpus") rps_flow_cnt=$(cat "$q/rps_flow_cnt")"
done'
}
queue_values >"$TMP/orig" || fail "cannot read $VR's queues"
[ "$(grep -c '^rx-' "$TMP/orig")" = 4 ] || fail "$VR has not 4 rx queues: $(cat "$TMP/orig")"
echo "original masks:"; sed 's/^/  /' "$TMP/orig"

# A server for both runs; it ends with the trap.
ip netns exec "$NSR" timeout 120 iperf3 -s -B 198.18.0.2 -p "$PORT" >"$TMP/srv.log" 2>&1 &
SRV_PID=$!
sleep 0.5

snap() { # file: cpu lines of /proc/stat, then /proc/softirqs
        { grep '^cpu[0-9]' /proc/stat; cat /proc/softirqs; } >"$1"
}

# start_client SECONDS NAME: TCP from CPU0, bounded.
start_client() {
        ip netns exec "$NSS" timeout $(($1 + 10)) taskset -c 0 \
                iperf3 -c 198.18.0.2 -p "$PORT" -t "$1" -J >"$TMP/$2.json" 2>"$TMP/$2.err" &
        CLI_PID=$!
}

wait_client() {
        wait "$CLI_PID" || fail "iperf3 client ($1) failed: $(cat "$TMP/$1.err") $(tail -5 "$TMP/$1.json")"
        CLI_PID=
}

# report NAME: per-CPU softirq split of the window and NET_RX runs; prints
# CPU1's percent of all softirq time on the last line.
report() {
        "$PY" - "$TMP/$1.a" "$TMP/$1.b" "$1" <<'EOF'
import json, sys
def read(path):
    stat, soft = {}, {}
    lines = open(path).read().splitlines()
    for l in lines:
        f = l.split()
        if f and f[0].startswith("cpu") and f[0][3:].isdigit():
            stat[int(f[0][3:])] = [int(x) for x in f[1:]]
    hdr = None
    for l in lines:
        f = l.split()
        if f and f[0].startswith("CPU"):
            hdr = [int(x[3:]) for x in f]
        elif hdr and f and f[0] == "NET_RX:":
            soft = dict(zip(hdr, [int(x) for x in f[1:]]))
    return stat, soft
(sa, qa), (sb, qb) = read(sys.argv[1]), read(sys.argv[2])
cpus = sorted(set(sa) & set(sb))
soft = {c: sb[c][6] - sa[c][6] for c in cpus}
total = {c: sum(sb[c][:8]) - sum(sa[c][:8]) for c in cpus}
allsoft = sum(soft.values()) or 1
for c in cpus:
    print("  %-6s CPU%d: softirq %5.1f%% of its time, %5.1f%% of all softirq time (%d ticks); NET_RX runs %d"
          % (sys.argv[3], c, 100.0 * soft[c] / (total[c] or 1), 100.0 * soft[c] / allsoft, soft[c],
             qb.get(c, 0) - qa.get(c, 0)))
print("%.1f" % (100.0 * soft.get(1, 0) / allsoft))
EOF
}

# throughput RUN: iperf3's figures for the whole run.
throughput() {
        "$PY" - "$TMP/$1.json" "$1" <<'EOF'
import json, sys
end = json.load(open(sys.argv[1])).get("end", {})
print("  %-6s iperf3 (whole run, TCP from CPU0): %.2f Gbit/s sent, %.2f Gbit/s received" % (sys.argv[2],
      end.get("sum_sent", {}).get("bits_per_second", 0) / 1e9,
      end.get("sum_received", {}).get("bits_per_second", 0) / 1e9))
EOF
}

# window NAME: a 3 s window of the running traffic; prints the split
# and sets SHARE (CPU1's percent of all softirq time).
window() {
        snap "$TMP/$1.a"
        sleep 3
        snap "$TMP/$1.b"
        report "$1" >"$TMP/$1.out" || fail "report ($1)"
        sed '$d' "$TMP/$1.out"
        SHARE=$(tail -1 "$TMP/$1.out")
}

# The host is shared with other tests whose traffic comes in bursts: the
# baseline is the lower of two windows, the result with irqsteerd the
# higher of up to two.
min() { "$PY" -c 'import sys; print(min(float(x) for x in sys.argv[1:]))' "$@"; }
max() { "$PY" -c 'import sys; print(max(float(x) for x in sys.argv[1:]))' "$@"; }

# --- baseline: no irqsteerd; windows 2-5 s and 5-8 s into a 9 s run ---
start_client 9 base
sleep 2
window base1
B1=$SHARE
window base2
BASE_SHARE=$(min "$B1" "$SHARE")
wait_client base
throughput base
queue_values | cmp -s - "$TMP/orig" || fail "masks changed without irqsteerd: $(queue_values)"

# --- irqsteerd in the receiving namespace, same traffic ---
# Thresholds for this 2-CPU VM: one TCP stream gives CPU0 ~40% softirq
# (the rest is the sender's own system time), so CPU0 is hot by the
# default hot_enter (80%) never, and by the saturated rule only when CPU1,
# which runs the iperf3 server, keeps 20% idle: on this shared host it
# often does not.  What is tested is the steering, not the thresholds.
# rps_trial = no: whether RPS costs this VM throughput varies by the
# minute (0-44%), and a given-back RPS would end the steering under test.
# rfs = yes (off by default) so each queue's rps_flow_cnt is written and
# restored for real too; rps_sock_flow_entries is not visible in a netns.
# other_irqs = no: /proc/irq is the host's, and whether its disk IRQ is
# busy (over 200/s) depends on what else the host does that minute; a try
# there fails with EPERM and is logged, which the check below forbids.
cat >"$TMP/test.conf" <<'EOF'
[balance]
hot_enter = 25%
hot_exit = 15%
rps_trial = no
rfs = yes
other_irqs = no
EOF
irq_snap "$TMP/irqs.orig"
[ -s "$TMP/irqs.orig" ] || fail "cannot read /proc/irq/*/smp_affinity_list"
ip netns exec "$NSR" "$D" --foreground --interval 1s --config "$TMP/test.conf" \
        --state-dir "$TMP/state" >"$TMP/d.log" 2>&1 &
D_PID=$!
i=0
until [ -s "$TMP/state/status.json" ]; do
        i=$((i + 1))
        [ $i -le 50 ] || fail "irqsteerd wrote no status.json in 5 s"
        kill -0 "$D_PID" 2>/dev/null || fail "irqsteerd exited"
        sleep 0.1
done

# CPU0 is hot after hot_samples (3) smoothed samples at or above 25%
# irq+softirq, and the packet rate is known from the second tick: ~3-4 s.
start_client 16 rps
T0=$(date +%s)
while :; do
        queue_values >"$TMP/now"
        cmp -s "$TMP/now" "$TMP/orig" || break
        [ $(($(date +%s) - T0)) -le 12 ] || fail "irqsteerd set no rps_cpus on $VR within 12 s of traffic"
        kill -0 "$D_PID" 2>/dev/null || fail "irqsteerd exited"
        sleep 0.25
done
sleep 1 # every queue written, the first packets steered
queue_values >"$TMP/set"
echo "masks set by irqsteerd within $(($(date +%s) - T0)) s of traffic:"; sed 's/^/  /' "$TMP/set"
grep -q "rps_flow_cnt=0$" "$TMP/set" && { sleep 2; queue_values >"$TMP/set"; }
! grep -q "rps_flow_cnt=0$" "$TMP/set" || fail "rfs = yes but a queue's rps_flow_cnt is still 0: $(cat "$TMP/set")"
grep -h "RPS $VR" "$TMP/d.log" | sed 's/^/  irqsteerd: /' | head -4
while read -r q mask flow; do
        m=${mask#rps_cpus=}
        v=$(printf '%d' "0x$(echo "$m" | tr -d ,)")
        [ "$v" -ne 0 ] || fail "$q: empty rps_cpus"
        [ $((v & 1)) -eq 0 ] || fail "$q: rps_cpus $m includes CPU0, the hot sender"
done <"$TMP/set"

irq_same "$TMP/irqs.during" "while irqsteerd steers the veth"

enough() { "$PY" -c 'import sys; sys.exit(0 if float(sys.argv[2]) - float(sys.argv[1]) >= 15 else 1)' "$@"; }
window rps1
RPS_SHARE=$SHARE
if ! enough "$BASE_SHARE" "$RPS_SHARE" && kill -0 "$CLI_PID" 2>/dev/null; then
        window rps2
        RPS_SHARE=$(max "$RPS_SHARE" "$SHARE")
fi
wait_client rps
throughput rps
echo "CPU1 share of softirq time: baseline $BASE_SHARE%, with irqsteerd $RPS_SHARE% (need +15 points)"
enough "$BASE_SHARE" "$RPS_SHARE" || fail "CPU1's softirq share rose by less than 15 points"

# --- SIGTERM: everything back ---
kill -TERM "$D_PID"
i=0
while kill -0 "$D_PID" 2>/dev/null; do
        i=$((i + 1))
        [ $i -le 100 ] || fail "irqsteerd did not stop within 10 s of SIGTERM"
        sleep 0.1
done
wait "$D_PID"
rc=$?
D_PID=
[ $rc = 0 ] || fail "irqsteerd exited with $rc after SIGTERM"
queue_values >"$TMP/after"
cmp -s "$TMP/after" "$TMP/orig" || fail "masks not restored: $(cat "$TMP/after")"
echo "after SIGTERM the masks are the originals again"
irq_same "$TMP/irqs.after" "after irqsteerd ran in the namespace"
! grep -E '^([0-9-]+ [0-9:.]+ [a-z]+: )?(dry-run: would set )?IRQ [0-9]+ ' "$TMP/d.log" ||
        fail "irqsteerd in the namespace logged IRQ actions"
echo "host IRQs untouched: $(wc -l <"$TMP/irqs.orig") smp_affinity_list files the same before, during and after"
echo "PASS"

#!/bin/sh
# Live test (root): threaded NAPI as a relief (threaded_napi = yes).  Two
# namespaces joined by a veth pair with 4 rx and 4 tx queues; the receiving
# end has GRO on (so it has NAPIs) and threaded off.  A UDP flood whose
# sender and receiver both run on CPU0 makes CPU0 hot with the veth's
# receive work (NET_RX on the sending CPU).  irqsteerd runs in the
# receiving namespace with rps = no, threaded_napi = yes and low
# thresholds.  Asserted:
# - within 15 s of traffic irqsteerd sets the veth's threaded to 1, and its
#   kthreads get one-CPU masks (napi placement of the NICs it threaded);
# - SIGTERM: exit 0, threaded is 0 again and the kthreads are gone;
# - a second run killed with SIGKILL after it turned threaded on:
#   `irqsteerctl restore` sets threaded back to 0.
# Received throughput without irqsteerd, and with it, and the trial's
# verdict are printed, not asserted (this VM is shared and noisy).
# Addresses 198.18.0.4/30 only, names prefixed "tn"; everything created is
# deleted on exit, on failure too.  About 45 s.  Exit 77 = skipped.
# Changes this host: runs only when asked (make check-live sets IRQSTEER_LIVE=1).
[ "${IRQSTEER_LIVE:-}" = 1 ] || { echo "SKIP: live test: run make check-live"; exit 77; }
set -u

D=${IRQSTEERD:-${IRQSTEER_BUILDDIR:-.}/irqsteerd}
CTL=${IRQSTEERCTL:-${IRQSTEER_BUILDDIR:-.}/irqsteerctl}
PY=$(command -v python3 || true)

skip() { echo "SKIP: $*"; exit 77; }
fail() {
        echo "FAIL: $*"
        [ -n "${LOG:-}" ] && [ -s "$LOG" ] && sed 's/^/  irqsteerd: /' "$LOG" | tail -30
        exit 1
}

[ "$(id -u)" = 0 ] || skip "needs root"
for c in ip ethtool taskset iperf3; do
        command -v $c >/dev/null 2>&1 || skip "needs $c"
done
[ -n "$PY" ] || skip "needs python3"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
[ -e /sys/class/net/lo/threaded ] || skip "no /sys/class/net/DEV/threaded (threaded NAPI needs Linux 5.12)"
[ -x "$D" ] || fail "irqsteerd not found at $D (set IRQSTEERD)"
[ -x "$CTL" ] || fail "irqsteerctl not found at $CTL (set IRQSTEERCTL)"

NSS=tnS$$
NSR=tnR$$
VS=tns$$
VR=tnr$$
D_PID=
SRV_PID=
CLI_PID=
LOG=
TMP=$(mktemp -d /tmp/tn-live-threaded.XXXXXX) || fail "mktemp"

cleanup() {
        # TERM, not KILL: the iperf3 PIDs are timeout(1)'s, which pass TERM
        # on to iperf3 but would leave it running if killed; irqsteerd
        # restores on TERM
        for p in $CLI_PID $D_PID $SRV_PID; do
                kill "$p" 2>/dev/null
        done
        wait 2>/dev/null
        ip netns del "$NSS" 2>/dev/null
        ip netns del "$NSR" 2>/dev/null
        rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

ip netns add "$NSS" || skip "cannot create network namespaces"
ip netns add "$NSR" || fail "ip netns add"
ip -n "$NSS" link add "$VS" numtxqueues 4 numrxqueues 4 type veth peer name "$VR" numtxqueues 4 numrxqueues 4 ||
        fail "cannot create a 4-queue veth pair"
ip -n "$NSS" link set "$VR" netns "$NSR" || fail "move $VR"
ip -n "$NSS" addr add 198.18.0.5/30 dev "$VS" || fail "address S"
ip -n "$NSR" addr add 198.18.0.6/30 dev "$VR" || fail "address R"
for ns in "$NSS" "$NSR"; do
        ip -n "$ns" link set lo up || fail "lo up"
done
ip -n "$NSS" link set "$VS" up || fail "up $VS"
ip -n "$NSR" link set "$VR" up || fail "up $VR"
ip netns exec "$NSR" ethtool -K "$VR" gro on >/dev/null || fail "gro on"
threaded() { ip netns exec "$NSR" cat "/sys/class/net/$VR/threaded"; }
[ "$(threaded)" = 0 ] || fail "$VR starts with threaded $(threaded), want 0"

ip netns exec "$NSR" timeout 200 taskset -c 0 iperf3 -s -B 198.18.0.6 >"$TMP/srv.log" 2>&1 &
SRV_PID=$!
sleep 0.5

# flood SECONDS NAME: UDP from CPU0 as fast as it goes, in the background.
flood() {
        ip netns exec "$NSS" timeout $(($1 + 10)) taskset -c 0 \
                iperf3 -c 198.18.0.6 -u -b 0 -l 1200 -t "$1" -J >"$TMP/$2.json" 2>"$TMP/$2.err" &
        CLI_PID=$!
}
flood_wait() {
        wait "$CLI_PID" || fail "iperf3 client ($1) failed: $(cat "$TMP/$1.err")"
        CLI_PID=
        "$PY" - "$TMP/$1.json" "$1" <<'EOF'
import json, sys
end = json.load(open(sys.argv[1])).get("end", {})
s = end.get("sum", {})
print("  %-10s UDP from CPU0: %.0f Mbit/s received, %.1f%% lost" % (sys.argv[2],
      s.get("bits_per_second", 0) / 1e6, s.get("lost_percent", 0)))
EOF
}
napi_pids() {
        for p in /proc/[0-9]*; do
                case "$(cat "$p/comm" 2>/dev/null)" in
                "napi/$VR-"*) echo "${p#/proc/}" ;;
                esac
        done
}

# printed, not asserted: make check-asan leaves it to the plain pass
if [ -z "${IRQSTEER_SANITIZER_PASS:-}" ]; then
        echo "baseline, no irqsteerd:"
        flood 8 base
        flood_wait base
fi

# The flood's softirq share of CPU0 was 9-17% in the runs of 2026-11-27
# on this VM, where a threshold of 15% missed the 15 s twice in a row.
cat >"$TMP/test.conf" <<'EOF'
[balance]
hot_enter = 8%
hot_exit = 5%
rps = no
xps = no
threaded_napi = yes
other_irqs = no
EOF
start() {
        LOG=$TMP/$1.log
        ip netns exec "$NSR" "$D" --foreground --interval 1s --config "$TMP/test.conf" --state-dir "$TMP/$1" \
                >"$LOG" 2>&1 &
        D_PID=$!
}
# wait_on: threaded 1 within 15 s of traffic.
wait_on() {
        T0=$(date +%s)
        until [ "$(threaded)" = 1 ]; do
                [ $(($(date +%s) - T0)) -le 15 ] || fail "irqsteerd did not turn threaded on within 15 s"
                kill -0 "$D_PID" 2>/dev/null || fail "irqsteerd exited"
                sleep 0.25
        done
        echo "threaded turned on by irqsteerd within $(($(date +%s) - T0)) s:"
        grep -h "threaded NAPI" "$LOG" | head -2 | sed 's/^/  irqsteerd: /'
}

echo "irqsteerd with threaded_napi = yes:"
start run1
flood 20 with
wait_on
T0=$(date +%s)
placed=
while [ $(($(date +%s) - T0)) -le 6 ]; do
        pids=$(napi_pids)
        placed=1
        [ -n "$pids" ] || placed=
        for p in $pids; do
                case "$(taskset -pc "$p" 2>/dev/null | sed 's/.*: //')" in
                *[,-]* | "") placed= ;;
                esac
        done
        [ -n "$placed" ] && break
        [ "$(threaded)" = 1 ] || break # the trial gave it back: nothing to place
        sleep 0.25
done
if [ "$(threaded)" = 1 ]; then
        [ -n "$placed" ] || fail "threaded on but its kthreads not placed within 6 s"
        echo "kthreads placed:"
        for p in $(napi_pids); do echo "  $p $(cat /proc/$p/comm) $(taskset -pc "$p" | sed 's/.*: //')"; done
fi
flood_wait with
grep -h "threaded NAPI kept\|threaded NAPI cost\|no trial verdict" "$LOG" | sed 's/^/  irqsteerd: /'
kill -TERM "$D_PID"
wait "$D_PID"
rc=$?
D_PID=
[ $rc = 0 ] || fail "irqsteerd exited with $rc after SIGTERM"
[ "$(threaded)" = 0 ] || fail "after SIGTERM threaded is $(threaded), want 0"
[ -z "$(napi_pids)" ] || fail "after SIGTERM kthreads are left: $(napi_pids)"
echo "after SIGTERM: threaded 0, no kthreads"

echo "second run, SIGKILL:"
start run2
flood 12 kill
wait_on
kill -KILL "$D_PID"
wait "$D_PID" 2>/dev/null
D_PID=
flood_wait kill
ip netns exec "$NSR" "$CTL" restore --state-dir "$TMP/run2" >"$TMP/restore.out" 2>&1 ||
        fail "irqsteerctl restore: $(cat "$TMP/restore.out")"
sed 's/^/  irqsteerctl: /' "$TMP/restore.out"
[ "$(threaded)" = 0 ] || fail "after SIGKILL and restore threaded is $(threaded), want 0"
echo "after SIGKILL and irqsteerctl restore: threaded 0"
echo "PASS"

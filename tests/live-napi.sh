#!/bin/sh
# Live test (root): irqsteerd places threaded NAPI's kernel threads
# (napi_threads = yes) and gives them back.  A veth with 4 rx and 4 tx
# queues, GRO on (one NAPI per rx queue) and /sys/class/net/DEV/threaded =
# 1, in a network namespace of its own; irqsteerd runs inside it with
# banned_cpus = 0, so every kthread must end on a CPU other than 0.
# Asserted:
# - within 10 s every kthread napi/DEV-ID of the veth has a one-CPU
#   affinity, never CPU0, and the log names each placement;
# - SIGTERM: exit 0, every kthread's affinity is its original again;
# - a second run killed with SIGKILL leaves the kthreads placed;
#   `irqsteerctl restore` on its state dir puts every original back.
# The kthreads' original masks are put back by the EXIT trap whatever
# happens.  Skips without root, 2 CPUs, threaded NAPI (5.12) or the netdev
# genetlink family with napi-get (6.8), which is how irqsteerd finds the
# kthreads.  Names prefixed "np"; everything created is deleted on exit, on
# failure too.  About 15 s.  Exit 77 = skipped (automake).
# Changes this host: runs only when asked (make check-live sets IRQSTEER_LIVE=1).
[ "${IRQSTEER_LIVE:-}" = 1 ] || { echo "SKIP: live test: run make check-live"; exit 77; }
set -u

D=${IRQSTEERD:-${IRQSTEER_BUILDDIR:-.}/irqsteerd}
CTL=${IRQSTEERCTL:-${IRQSTEER_BUILDDIR:-.}/irqsteerctl}

skip() { echo "SKIP: $*"; exit 77; }
fail() {
        echo "FAIL: $*"
        [ -n "${LOG:-}" ] && [ -s "$LOG" ] && sed 's/^/  irqsteerd: /' "$LOG" | tail -30
        exit 1
}

[ "$(id -u)" = 0 ] || skip "needs root"
command -v ip >/dev/null 2>&1 || skip "needs ip (iproute2)"
command -v ethtool >/dev/null 2>&1 || skip "needs ethtool"
command -v taskset >/dev/null 2>&1 || skip "needs taskset (util-linux)"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
[ -e /sys/class/net/lo/threaded ] || skip "no /sys/class/net/DEV/threaded (threaded NAPI needs Linux 5.12)"
[ -x "$D" ] || fail "irqsteerd not found at $D (set IRQSTEERD)"
[ -x "$CTL" ] || fail "irqsteerctl not found at $CTL (set IRQSTEERCTL)"

NS=npns$$
VA=npa$$
VB=npb$$
D_PID=
LOG=
PIDS=
TMP=$(mktemp -d /tmp/np-live-napi.XXXXXX) || fail "mktemp"

# put_back: each kthread's original affinity (TMP/orig: "PID LIST").
put_back() {
        [ -s "$TMP/orig" ] || return 0
        while read -r pid list; do
                taskset -pc "$list" "$pid" >/dev/null 2>&1
        done <"$TMP/orig"
}
cleanup() {
        [ -n "$D_PID" ] && kill -9 "$D_PID" 2>/dev/null
        wait 2>/dev/null
        put_back
        ip netns del "$NS" 2>/dev/null
        rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

in_ns() { ip netns exec "$NS" "$@"; }

ip netns add "$NS" || skip "cannot create network namespaces"
ip -n "$NS" link add "$VA" numrxqueues 4 numtxqueues 4 type veth peer name "$VB" numrxqueues 4 numtxqueues 4 ||
        fail "ip link add veth"
ip -n "$NS" addr add 198.18.0.9/30 dev "$VA" || fail "address"
ip -n "$NS" link set "$VA" up || fail "link up"
ip -n "$NS" link set "$VB" up || fail "link up"
in_ns ethtool -K "$VA" gro on >/dev/null || fail "ethtool -K $VA gro on"
in_ns sh -c "echo 1 > /sys/class/net/$VA/threaded" || fail "threaded on"

# The kthreads, by name (the kernel names them napi/DEV-NAPI_ID).
i=0
while :; do
        PIDS=
        for p in /proc/[0-9]*; do
                case "$(cat "$p/comm" 2>/dev/null)" in
                "napi/$VA-"*) PIDS="$PIDS ${p#/proc/}" ;;
                esac
        done
        set -- $PIDS
        [ $# = 4 ] && break
        i=$((i + 1))
        [ $i -le 20 ] || fail "$VA: $# napi kthreads, want 4 (one per rx queue with GRO and threaded on)"
        sleep 0.1
done
affinity() { taskset -pc "$1" 2>/dev/null | sed 's/.*: //'; }
for pid in $PIDS; do
        echo "$pid $(affinity "$pid")"
done >"$TMP/orig"
echo "kthreads of $VA and their affinity:"; sed 's/^/  /' "$TMP/orig"

cat >"$TMP/test.conf" <<'EOF'
[balance]
napi_threads = yes
banned_cpus = 0
other_irqs = no
rps = no
xps = no
EOF

# start NAME: irqsteerd in the namespace, state dir TMP/NAME.
start() {
        LOG=$TMP/$1.log
        # not through in_ns: $! must be irqsteerd itself (ip netns exec
        # execs it), not a subshell a signal would end instead
        ip netns exec "$NS" "$D" --foreground --interval 1s --config "$TMP/test.conf" --state-dir "$TMP/$1" \
                >"$LOG" 2>&1 &
        D_PID=$!
}
# placed: every kthread on one CPU other than 0, within 10 s.
placed() {
        T0=$(date +%s)
        while :; do
                ok=1
                for pid in $PIDS; do
                        a=$(affinity "$pid") || fail "kthread $pid gone"
                        case "$a" in
                        *[,-]* | 0 | "") ok=0 ;;
                        esac
                done
                [ $ok = 1 ] && break
                [ $(($(date +%s) - T0)) -le 10 ] || fail "kthreads not placed within 10 s: $(for p in $PIDS; do printf '%s:%s ' "$p" "$(affinity "$p")"; done)"
                kill -0 "$D_PID" 2>/dev/null || fail "irqsteerd exited"
                sleep 0.2
        done
        echo "placed by irqsteerd within $(($(date +%s) - T0)) s:"
        for pid in $PIDS; do echo "  $pid $(affinity "$pid")"; done
}
same_as_orig() {
        while read -r pid list; do
                [ "$(affinity "$pid")" = "$list" ] || fail "$1: kthread $pid has CPUs $(affinity "$pid"), its original was $list"
        done <"$TMP/orig"
        echo "$1: every kthread's original affinity is back"
}

# --- run 1: placement, SIGTERM ---
start run1
placed
n=$(grep -c "NAPI [0-9]* of $VA (kthread napi/$VA-" "$LOG")
[ "$n" -ge 4 ] || fail "the log names $n kthread placements, want 4"
grep "NAPI [0-9]* of $VA" "$LOG" | head -4 | sed 's/^/  irqsteerd: /'
kill -TERM "$D_PID"
wait "$D_PID"
rc=$?
D_PID=
[ $rc = 0 ] || fail "irqsteerd exited with $rc after SIGTERM"
same_as_orig "after SIGTERM"

# --- run 2: SIGKILL, then irqsteerctl restore ---
start run2
placed
kill -KILL "$D_PID"
wait "$D_PID" 2>/dev/null
D_PID=
for pid in $PIDS; do
        case "$(affinity "$pid")" in
        *[,-]*) fail "after SIGKILL kthread $pid is already back: nothing to recover" ;;
        esac
done
in_ns "$CTL" restore --state-dir "$TMP/run2" >"$TMP/restore.out" 2>&1 || fail "irqsteerctl restore: $(cat "$TMP/restore.out")"
sed 's/^/  irqsteerctl: /' "$TMP/restore.out"
same_as_orig "after SIGKILL and irqsteerctl restore"
echo "PASS"

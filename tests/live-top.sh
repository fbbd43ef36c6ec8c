#!/bin/sh
# Live test (root): a veth pair with 4 rx and 4 tx queues between two
# network namespaces.  `irqsteerctl inventory --json` inside a namespace must
# list the veth with its queues, and `irqsteerctl top --json` must show
# NET_RX/s rising on the CPU that receives the traffic: a UDP sender pinned
# to one CPU, whose packets veth hands to that same CPU's backlog (no RPS),
# compared with an idle baseline of the same CPU.
# Addresses 198.18.0.0/30 only, names prefixed "ct"; everything created here
# is deleted on exit, on failure too.  Exit 77 = skipped (automake).
# Changes this host: runs only when asked (make check-live sets IRQSTEER_LIVE=1).
[ "${IRQSTEER_LIVE:-}" = 1 ] || { echo "SKIP: live test: run make check-live"; exit 77; }
set -u

CTL=${IRQSTEERCTL:-./irqsteerctl}
PY=$(command -v python3 || true)

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root"
command -v ip >/dev/null 2>&1 || skip "needs ip (iproute2)"
command -v taskset >/dev/null 2>&1 || skip "needs taskset (util-linux)"
[ -n "$PY" ] || skip "needs python3"
[ -x "$CTL" ] || fail "irqsteerctl not found at $CTL (set IRQSTEERCTL)"

NSA=ctA$$
NSB=ctB$$
VA=ctva$$
VB=ctvb$$
SINK_PID=
SEND_PID=
TMP=$(mktemp -d /tmp/ct-live-top.XXXXXX) || fail "mktemp"

cleanup() {
        [ -n "$SEND_PID" ] && kill "$SEND_PID" 2>/dev/null
        [ -n "$SINK_PID" ] && kill "$SINK_PID" 2>/dev/null
        wait 2>/dev/null
        ip link del "$VA" 2>/dev/null
        ip netns del "$NSA" 2>/dev/null
        ip netns del "$NSB" 2>/dev/null
        rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

ip netns add "$NSA" || skip "cannot create network namespaces"
ip netns add "$NSB" || fail "ip netns add $NSB"
ip link add "$VA" numtxqueues 4 numrxqueues 4 type veth \
        peer name "$VB" numtxqueues 4 numrxqueues 4 || fail "cannot create a 4-queue veth pair"
ip link set "$VA" netns "$NSA" || fail "move $VA"
ip link set "$VB" netns "$NSB" || fail "move $VB"
ip -n "$NSA" addr add 198.18.0.1/30 dev "$VA" || fail "address A"
ip -n "$NSB" addr add 198.18.0.2/30 dev "$VB" || fail "address B"
ip -n "$NSA" link set lo up
ip -n "$NSB" link set lo up
ip -n "$NSA" link set "$VA" up || fail "up A"
ip -n "$NSB" link set "$VB" up || fail "up B"

# --- inventory inside the namespace: ip netns exec remounts /sys for it ---
ip netns exec "$NSB" "$CTL" inventory --json >"$TMP/inv.json" 2>"$TMP/inv.err" ||
        fail "inventory --json in $NSB failed: $(cat "$TMP/inv.err")"
"$PY" - "$TMP/inv.json" "$VB" <<'EOF' || fail "inventory does not show $VB with 4 rx / 4 tx queues"
import json, sys
doc = json.load(open(sys.argv[1]))
nics = {n["name"]: n for n in doc["nics"]}
nic = nics.get(sys.argv[2])
if nic is None:
    sys.exit("veth missing; NICs: %s" % sorted(nics))
ok = (nic["rx_queues"] == 4 and nic["tx_queues"] == 4 and len(nic["queues"]) == 4
      and [q["index"] for q in nic["queues"]] == [0, 1, 2, 3]
      and all(q["rx"] and q["tx"] for q in nic["queues"])
      and all(q["rx_irq"] is None and q["irqs"] == [] for q in nic["queues"])
      and nic["up"] is True and nic["mapping"] == "none")
print("inventory:", nic["name"], nic["rx_queues"], "rx", nic["tx_queues"], "tx, up", nic["up"])
sys.exit(0 if ok else "unexpected veth entry: %s" % json.dumps(nic))
EOF

# --- traffic on one CPU ---
CPU=$(( $(nproc) - 1 ))

# top's JSON: net_rx of CPU $CPU over the samples in $2, reduced by $1
# ("min" or "max")
net_rx_of() {
        "$PY" - "$1" "$2" "$CPU" <<'EOF'
import json, sys
vals = []
for line in open(sys.argv[2]):
    line = line.strip()
    if not line:
        continue
    for c in json.loads(line)["cpus"]:
        if c["cpu"] == int(sys.argv[3]) and c["net_rx"] is not None:
            vals.append(c["net_rx"])
print(-1 if not vals else int(min(vals) if sys.argv[1] == "min" else max(vals)))
EOF
}

# One measurement: idle baseline (the quietest of three samples: the host
# is shared and other tests' traffic comes in bursts), then the busiest of
# four samples while our sender runs.  Returns 0 when NET_RX/s rose.
measure() {
        "$CTL" top --json --count 3 --interval 0.3 >"$TMP/base.jsonl" 2>"$TMP/top.err" ||
                fail "top (baseline) failed: $(cat "$TMP/top.err")"
        BASE=$(net_rx_of min "$TMP/base.jsonl")
        [ "$BASE" -ge 0 ] || fail "baseline has no net_rx for CPU $CPU: $(cat "$TMP/base.jsonl")"

        # A sink so the datagrams are received, not answered with ICMP;
        # both sides end on their own (bounded), the trap kills them otherwise.
        ip netns exec "$NSB" timeout 15 "$PY" -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.18.0.2", 9999))
s.settimeout(3)
try:
    while True:
        s.recv(2048)
except socket.timeout:
    pass
' &
        SINK_PID=$!
        ip netns exec "$NSA" timeout 15 taskset -c "$CPU" "$PY" -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
payload = b"x" * 64
end = time.monotonic() + 3
while time.monotonic() < end:
    for _ in range(256):
        s.sendto(payload, ("198.18.0.2", 9999))
' &
        SEND_PID=$!
        sleep 0.3

        "$CTL" top --json --count 4 --interval 0.5 >"$TMP/load.jsonl" 2>"$TMP/top.err" ||
                fail "top (under load) failed: $(cat "$TMP/top.err")"
        LOAD=$(net_rx_of max "$TMP/load.jsonl")
        wait "$SEND_PID" 2>/dev/null
        SEND_PID=
        wait "$SINK_PID" 2>/dev/null
        SINK_PID=

        echo "CPU$CPU NET_RX/s: idle baseline $BASE, with traffic $LOAD"
        # Twice the baseline and 1000 runs/s more: the sender alone makes
        # tens of thousands per second here, an idle CPU a few dozen.
        [ "$LOAD" -ge $(( BASE * 2 )) ] && [ "$LOAD" -ge $(( BASE + 1000 )) ]
}

ok=
for attempt in 1 2 3; do
        if measure; then
                ok=1
                break
        fi
        echo "attempt $attempt: no clear rise (other traffic on the host?), retrying"
done
[ -n "$ok" ] || fail "NET_RX/s on CPU$CPU did not rise with our traffic in 3 attempts"
echo "PASS"
exit 0

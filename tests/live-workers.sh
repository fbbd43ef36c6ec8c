#!/bin/sh
# Live, root, on this host: worker pinning by `irqsteerd --once` with a
# [worker t] section matching a process of our own (python3, comm
# "isthreads", a main thread and 4 sleeping threads), then
# `irqsteerctl restore` gives every thread its original affinity back.
#
# For each case (spread, avoid-net, colocate with interface = eth0, and
# spread / colocate limited by the section's cpus to the queue's CPU) the
# expected set of every thread is computed from the rules of
# src/policy-workers.c and the placement --once made (the CPUs serving
# eth0's queue IRQs after its initial layout; no CPU can be hot after a
# single rate sample with hot_samples >= 2):
#   spread    one CPU per thread (threads in TID order), round-robin over
#             the allowed CPUs serving no queue IRQ; if there are none, over
#             the allowed CPUs;
#   avoid-net every allowed CPU serving no queue IRQ (all allowed if none);
#   colocate  thread i on the CPU of queue i mod (queues on allowed CPUs) of
#             the interface; spread when no queue is on an allowed CPU.
# Checked: exit 0, Cpus_allowed_list of every thread in /proc/PID/task,
# one log line and one journal line per thread, and after restore every
# thread and every IRQ/RPS value as before.  Then the same by a running
# daemon (avoid-net, colocate), stopped with SIGTERM, which must give every
# thread back.  The process is killed and the
# host's values restored on every exit path.  Exit 77 = skipped.
# Changes this host: runs only when asked (make check-live sets IRQSTEER_LIVE=1).
[ "${IRQSTEER_LIVE:-}" = 1 ] || { echo "SKIP: live test: run make check-live"; exit 77; }
set -u
. "${IRQSTEER_SRCDIR:-$(dirname "$0")/..}/tests/live-host-lib.sh"

e2e_require
command -v python3 >/dev/null 2>&1 || skip "needs python3 (the threaded worker)"
[ -z "$(cat /sys/devices/system/cpu/isolated 2>/dev/null)" ] || skip "isolated CPUs: expected sets assume none"
case $(cat /sys/devices/system/cpu/nohz_full 2>/dev/null) in
"" | "(null)") ;;
*) skip "nohz_full CPUs: expected sets assume none" ;;
esac
e2e_begin workers
T=$E2E_TMP
ONLINE=$(cat /sys/devices/system/cpu/online)
WPID=

NW=0
start_worker() {
        # A new output file each time: the shell truncates it only once the
        # background job runs, and the previous worker's "ready" must not
        # count.
        NW=$((NW + 1))
        WOUT=$T/worker.$NW.out
        python3 - >"$WOUT" 2>&1 <<'EOF' &
import signal, threading
with open("/proc/self/comm", "w") as f:
    f.write("isthreads")
for _ in range(4):
    threading.Thread(target=threading.Event().wait, daemon=True).start()
print("ready", flush=True)
while True:
    signal.pause()
EOF
        WPID=$!
        E2E_PIDS="$E2E_PIDS $WPID"
        e2e_wait 10 grep -q ready "$WOUT" || fail "the threaded worker did not start: $(cat "$WOUT")"
        [ "$(cat /proc/"$WPID"/comm)" = isthreads ] || fail "worker comm is $(cat /proc/"$WPID"/comm)"
}

stop_worker() { e2e_kill "$WPID" 9; }

# Every thread of the worker as "TID CPULIST", in TID order.
thread_sets() {
        for d in /proc/"$WPID"/task/*; do
                echo "$(basename "$d") $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$d/status")"
        done | sort -n
}

# The CPU of each queue of $E2E_IF, in queue order: where its rx IRQ
# (virtioK-input.N, else the first IRQ named for the queue) is pinned.
queue_cpus() {
        dev=$(basename "$(readlink "/sys/class/net/$E2E_IF/device")")
        awk -v dev="$dev" '$1 ~ /^[0-9]+:$/ && $NF ~ ("^" dev "-input\\.[0-9]+$") {
                n = $NF; sub(/.*\./, "", n); print n, substr($1, 1, length($1) - 1) }' /proc/interrupts |
                sort -n | while read -r q irq; do cat /proc/irq/"$irq"/smp_affinity_list; done
}

# expected POLICY CPUS QUEUECPUS THREADFILE: "TID CPULIST" lines of the
# expected sets (see the header) for the TIDs of THREADFILE.
expected() {
        python3 - "$@" "$ONLINE" <<'EOF'
import sys

def parse(s):
    out = set()
    for part in filter(None, s.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out

def fmt(cpus):
    cpus = sorted(cpus)
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)

policy, wcpus, qcpus, tfile, online = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], parse(sys.argv[5])
base = online & parse(wcpus) if wcpus != "-" else online
queues = [int(c) for c in qcpus.split()]
net = set(queues)
tids = [int(l.split()[0]) for l in open(tfile) if l.strip()]

def spread():
    cand = sorted(base - net) or sorted(base)
    return {t: {cand[i % len(cand)]} for i, t in enumerate(tids)}

if policy == "spread":
    want = spread()
elif policy == "avoid-net":
    want = {t: (base - net) or base for t in tids}
elif policy == "colocate":
    qs = [c for c in queues if c in base]
    want = {t: {qs[i % len(qs)]} for i, t in enumerate(tids)} if qs else spread()
else:
    sys.exit("unknown policy " + policy)
for t in tids:
    print(t, fmt(want[t]))
EOF
}

# run_case WHAT POLICY CPUS(- for none) EXTRA_KEYS
run_case() {
        what=$1 policy=$2 wcpus=$3 extra=$4
        echo "== $what"
        S=$T/state-$policy-$wcpus
        conf=$T/$policy-$wcpus.conf
        # other_irqs = no: the checks forbid any warning, and a try on the
        # host's disk IRQ, busy or not that minute, may be refused (EPERM)
        {
                printf '[balance]\nother_irqs = no\n'
                printf '[worker t]\nmatch_name = isthreads\npolicy = %s\n' "$policy"
                [ "$wcpus" = - ] || printf 'cpus = %s\n' "$wcpus"
                [ -z "$extra" ] || printf '%s\n' "$extra"
        } >"$conf"
        start_worker
        thread_sets >"$T/threads.orig"
        e2e_snapshot "$T/case.orig"
        nthreads=$(wc -l <"$T/threads.orig")
        check "$what: the worker has 5 threads" [ "$nthreads" -eq 5 ]
        "$D" --once --foreground --interval 500ms --config "$conf" --state-dir "$S" >"$T/once.log" 2>&1
        rc=$?
        check "$what: --once exits 0" [ "$rc" -eq 0 ] || cat "$T/once.log"
        qc=$(queue_cpus | tr '\n' ' ')
        thread_sets >"$T/threads.after"
        expected "$policy" "$wcpus" "$qc" "$T/threads.orig" >"$T/threads.want"
        check "$what: an expected set for each of the $nthreads threads" [ "$(wc -l <"$T/threads.want")" -eq "$nthreads" ]
        echo "queue CPUs of $E2E_IF: $qc"
        grep -E '^([0-9-]+ [0-9:.]+ [a-z]+: )?thread ' "$T/once.log"
        while read -r tid want; do
                got=$(awk -v t="$tid" '$1 == t { print $2 }' "$T/threads.after")
                check "$what: thread $tid on CPUs $want (has $got)" [ "$got" = "$want" ]
        done <"$T/threads.want"
        nlog=$(grep -cE "^([0-9-]+ [0-9:.]+ [a-z]+: )?thread [0-9]+ \(pid $WPID\) .* -> .*: worker t: " "$T/once.log")
        nchg=$(join "$T/threads.orig" "$T/threads.after" | awk '$2 != $3' | wc -l)
        check "$what: one log line per re-pinned thread ($nlog = $nchg)" [ "$nlog" -eq "$nchg" ]
        check "$what: threads were re-pinned" [ "$nchg" -gt 0 ]
        njour=$(grep -c "^thread $WPID " "$S/undo.journal" 2>/dev/null)
        check "$what: one journal line per re-pinned thread ($njour)" [ "${njour:-0}" -eq "$nchg" ]
        check "$what: no thread failed to pin" sh -c "! grep -E '^[0-9-]+ [0-9:.]+ (emerg|alert|crit|error|warning): ' '$T/once.log'" ||
                grep -E '^[0-9-]+ [0-9:.]+ (emerg|alert|crit|error|warning): ' "$T/once.log"

        "$CTL" restore --state-dir "$S" >"$T/restore.out" 2>&1
        rc=$?
        check "$what: irqsteerctl restore exits 0" [ "$rc" -eq 0 ] || cat "$T/restore.out"
        thread_sets >"$T/threads.back"
        check "$what: every thread has its original affinity back" cmp -s "$T/threads.orig" "$T/threads.back" ||
                diff "$T/threads.orig" "$T/threads.back"
        e2e_snapshot "$T/case.back"
        changed=$(e2e_changed "$T/case.orig" "$T/case.back")
        check "$what: every IRQ/RPS value back" [ -z "$changed" ] || echo "changed: $changed"
        check "$what: journal removed" [ ! -e "$S/undo.journal" ]
        stop_worker
}

# run_daemon_case WHAT POLICY EXTRA_KEYS: the same pinning by a running
# irqsteerd (workers are pinned on the ticks after the initial layout),
# then SIGTERM gives every thread back.
#
# The per-thread sets here guard against taking a quiet queue IRQ's CPU
# from its stale effective_affinity_list (it follows a new mask only at
# the IRQ's next interrupt on x86): that pinned colocate workers to the
# wrong CPU once.
run_daemon_case() {
        what=$1 policy=$2 extra=$3
        echo "== $what"
        S=$T/dstate-$policy
        conf=$T/daemon-$policy.conf
        {
                printf '[balance]\nother_irqs = no\n'
                printf '[worker t]\nmatch_name = isthreads\npolicy = %s\n' "$policy"
                [ -z "$extra" ] || printf '%s\n' "$extra"
        } >"$conf"
        start_worker
        thread_sets >"$T/threads.orig"
        e2e_snapshot "$T/case.orig"
        nthreads=$(wc -l <"$T/threads.orig")
        "$D" --foreground --interval 500ms --config "$conf" --state-dir "$S" >"$T/daemon.log" 2>&1 &
        DPID=$!
        E2E_PIDS="$E2E_PIDS $DPID"
        pinned() { [ "$(grep -cE "^([0-9-]+ [0-9:.]+ [a-z]+: )?thread [0-9]+ \(pid $WPID\) " "$T/daemon.log")" -ge "$nthreads" ]; }
        check "$what: all $nthreads threads pinned within 10 s" e2e_wait 10 pinned || cat "$T/daemon.log"
        qc=$(queue_cpus | tr '\n' ' ')
        thread_sets >"$T/threads.after"
        expected "$policy" - "$qc" "$T/threads.orig" >"$T/threads.want"
        echo "queue CPUs of $E2E_IF (smp_affinity_list): $qc"
        grep -E '^([0-9-]+ [0-9:.]+ [a-z]+: )?thread ' "$T/daemon.log"
        check "$what: an expected set for each of the $nthreads threads" [ "$(wc -l <"$T/threads.want")" -eq "$nthreads" ]
        while read -r tid want; do
                got=$(awk -v t="$tid" '$1 == t { print $2 }' "$T/threads.after")
                check "$what: thread $tid on CPUs $want (has $got)" [ "$got" = "$want" ]
        done <"$T/threads.want"
        check "$what: journal lists the pinned threads" [ "$(grep -c "^thread $WPID " "$S/undo.journal" 2>/dev/null)" -eq "$nthreads" ]
        e2e_kill "$DPID" TERM
        rc=$?
        check "$what: SIGTERM exit 0" [ "$rc" -eq 0 ] || tail -5 "$T/daemon.log"
        thread_sets >"$T/threads.back"
        check "$what: SIGTERM gave every thread its original affinity back" cmp -s "$T/threads.orig" "$T/threads.back" ||
                diff "$T/threads.orig" "$T/threads.back"
        e2e_snapshot "$T/case.back"
        changed=$(e2e_changed "$T/case.orig" "$T/case.back")
        check "$what: every IRQ/RPS value back" [ -z "$changed" ] || echo "changed: $changed"
        check "$what: journal removed" [ ! -e "$S/undo.journal" ]
        stop_worker
}

QCPU=
run_case "spread" spread - ""
run_case "avoid-net" avoid-net - ""
run_case "colocate with eth0" colocate - "interface = $E2E_IF"
# Limited to the CPU eth0's queue is laid out on (CPU0 here): spread has
# no CPU free of queue IRQs and falls back to the allowed ones; colocate
# finds its queue there.
QCPU=$(queue_cpus | head -1)
if [ -n "$QCPU" ]; then
        # The layout target is what --once picks, not the current value:
        # take it from a dry run.
        "$D" --once --dry-run --interval 500ms --state-dir "$T/dry" >"$T/dry.log" 2>&1
        lay=$(e2e_log_changes "$T/dry.log" | awk -v f="/proc/irq/$(e2e_queue_irqs | head -1)/smp_affinity_list" '$1 == f { print $3 }')
        [ -n "$lay" ] && QCPU=$lay
        run_case "spread, cpus = $QCPU (the queue's CPU)" spread "$QCPU" ""
        run_case "colocate with eth0, cpus = $QCPU" colocate "$QCPU" "interface = $E2E_IF"
        OCPU=$(python3 -c "import sys; print(next((c for c in range(8192) if str(c) != sys.argv[1]), ''))" "$QCPU")
        # No queue on an allowed CPU: colocate spreads instead.
        run_case "colocate with eth0, cpus = $OCPU (no queue there)" colocate "$OCPU" "interface = $E2E_IF"
fi

run_daemon_case "running daemon: avoid-net" avoid-net ""
run_daemon_case "running daemon: colocate with eth0" colocate "interface = $E2E_IF"

e2e_finish

#!/bin/sh
# Live, root, on this host's real IRQs and eth0: irqsteerd (not --once) in
# the foreground, killed or stopped, must always give the host its
# original values back.
#
# A. kill -9, then a new start: after the first start's changes (log and
#    status.json), `irqsteerctl restore` without --force refuses while the
#    daemon runs; kill -9 leaves the journal and the changed values; a new
#    irqsteerd on the same state dir logs that it restores the crashed
#    run's originals (every object restored), lays out again, journals the
#    true originals (not the crashed run's values), and on SIGTERM exits 0
#    with every value as before the first start, journal and status.json
#    removed.
# B. SIGTERM: start, changes, SIGTERM: exit 0, every value back, journal
#    and status.json gone; over 4 more ticks nothing but eth0's objects
#    changes.
# C. kill -9, an administrator changes one of the objects, then
#    `irqsteerctl restore` (status.json names a dead pid: no --force
#    needed) puts back everything else, leaves the administrator's value
#    and removes the journal.
# D. An administrator re-pins an IRQ while the daemon runs: the daemon
#    notices, leaves it, and SIGTERM restores everything else only.
# Every value is restored by the EXIT trap whatever happens.  Exit 77 =
# skipped (automake).
# Changes this host: runs only when asked (make check-live sets IRQSTEER_LIVE=1).
[ "${IRQSTEER_LIVE:-}" = 1 ] || { echo "SKIP: live test: run make check-live"; exit 77; }
set -u
. "${IRQSTEER_SRCDIR:-$(dirname "$0")/..}/tests/live-host-lib.sh"

e2e_require
command -v python3 >/dev/null 2>&1 || skip "needs python3 (reads status.json)"
e2e_begin crash-recovery
T=$E2E_TMP
ORIG=$E2E_BASE
DPID=

# other_irqs = no: the checks count what the daemon journals for the
# NIC; whether the host's disk IRQ is busy (over 200/s, then placed and
# journalled too) depends on what else the host does that minute.
printf '[balance]\nother_irqs = no\n' >"$T/test.conf"

# start_daemon STATE LOG: irqsteerd in the background, pid in DPID.
start_daemon() {
        "$D" --foreground --interval 500ms --config "$T/test.conf" --state-dir "$1" >"$2" 2>&1 &
        DPID=$!
        E2E_PIDS="$E2E_PIDS $DPID"
}

eq2() { [ "$1" = "$2" ] && [ "$3" = "$4" ]; }

ready() { grep -q 'Ready:' "$1"; }
# wait_ready LOG: the first decision is applied before "Ready:".
wait_ready() {
        e2e_wait 15 ready "$1" && return 0
        echo "  daemon not ready; log:"
        cat "$1"
        return 1
}

# status.json's managed objects as "OBJECT|CURRENT|ORIGINAL" lines.
managed() {
        python3 - "$1" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    sys.exit(f"status.json: {e}")
for m in d.get("managed", []):
    print(f"{m.get('object')}|{m.get('current')}|{m.get('original')}")
EOF
}

# journal_key PATH: the journal's name for a snapshot path.
journal_key() {
        case $1 in
        /proc/irq/default_smp_affinity) echo defaffinity ;;
        /proc/irq/*) echo "irq $(echo "$1" | cut -d/ -f4)" ;;
        */rps_cpus) echo "rps $(echo "$1" | cut -d/ -f5) $(echo "$1" | cut -d/ -f7 | sed 's/^rx-//')" ;;
        */xps_cpus) echo "xps $(echo "$1" | cut -d/ -f5) $(echo "$1" | cut -d/ -f7 | sed 's/^tx-//')" ;;
        */rps_flow_cnt) echo "flowcnt $(echo "$1" | cut -d/ -f5) $(echo "$1" | cut -d/ -f7 | sed 's/^rx-//')" ;;
        */rps_sock_flow_entries) echo sockflow ;;
        *) echo "?" ;;
        esac
}

# journal_original JOURNAL KEY (an IRQ's line carries its handler names
# after the number: skipped)
journal_original() {
        awk -v k="$2" -v nk="$(echo "$2" | wc -w)" \
                '$1 == "irq" && NF == 6 { $3 = ""; $0 = $0; } { s = $1; for (i = 2; i <= nk; i++) s = s " " $i; if (s == k) print $(nk + 1) }' "$1"
}

# same_as_orig WHAT SNAPSHOT: checks SNAPSHOT equals the original one.
same_as_orig() {
        diff=$(e2e_changed "$ORIG" "$2")
        check "$1" [ -z "$diff" ] || for f in $diff; do
                echo "  $f: original $(e2e_value "$ORIG" "$f"), now $(e2e_value "$2" "$f")"
        done
}

# admin_repin WHAT: like an administrator, sets an IRQ the daemon moved to
# a CPU that is neither its original nor the daemon's value (ADMIN_F,
# ADMIN_V).
admin_repin() {
        ADMIN_F=
        for f in $(grep '^/proc/irq/' "$T/a1.changed"); do
                o=$(e2e_value "$ORIG" "$f")
                r=$(cat "$f")
                c=0
                while [ "$c" -lt "$(nproc)" ]; do
                        if [ "$c" != "$o" ] && [ "$c" != "$r" ]; then
                                ADMIN_F=$f
                                ADMIN_V=$c
                                break 2
                        fi
                        c=$((c + 1))
                done
        done
        [ -n "$ADMIN_F" ] || fail "$1: no moved IRQ to re-pin"
        echo "$ADMIN_V" >"$ADMIN_F" || fail "$1: cannot write $ADMIN_F"
        echo "administrator: $ADMIN_F = $ADMIN_V"
}

# --- A. kill -9 and a new start ---
echo "== A. kill -9, then a new start on the same state dir"
S=$T/a
t0=$(date +%s)
start_daemon "$S" "$T/a1.log"
wait_ready "$T/a1.log" || fail "first start not ready"
e2e_snapshot "$T/a1.snap"
e2e_changed "$ORIG" "$T/a1.snap" >"$T/a1.changed"
N=$(wc -l <"$T/a1.changed")
check "first start changed something ($N objects)" [ "$N" -gt 0 ] || cat "$T/a1.log"
e2e_log_changes "$T/a1.log" | cut -d' ' -f1 | sort -u >"$T/a1.logged"
check "first start: the changed objects are the logged ones" cmp -s "$T/a1.changed" "$T/a1.logged" ||
        diff "$T/a1.logged" "$T/a1.changed"
e2e_wait 5 test -s "$S/status.json"
managed "$S/status.json" >"$T/a1.managed"
check "status.json lists $N managed objects" [ "$(wc -l <"$T/a1.managed")" -eq "$N" ] || cat "$T/a1.managed"
while read -r f; do
        key=$(journal_key "$f")
        line=$(grep "^$key[ |]" "$T/a1.managed" | sed 's/^irq \([0-9]*\) [^|]*|/irq \1|/')
        cur=$(echo "$line" | cut -d'|' -f2)
        org=$(echo "$line" | cut -d'|' -f3)
        check "status.json: $key current $cur, original $org" \
                eq2 "$(e2e_norm "$f" "$cur")" "$(e2e_norm "$f" "$(e2e_value "$T/a1.snap" "$f")")" \
                "$(e2e_norm "$f" "$org")" "$(e2e_norm "$f" "$(e2e_value "$ORIG" "$f")")"
done <"$T/a1.changed"

"$CTL" restore --state-dir "$S" >"$T/refuse.out" 2>&1
rc=$?
check "irqsteerctl restore without --force refuses while the daemon runs (exit $rc)" [ "$rc" -ne 0 ] ||
        cat "$T/refuse.out"
e2e_snapshot "$T/refuse.snap"
check "the refused restore changed nothing" [ -z "$(e2e_changed "$T/a1.snap" "$T/refuse.snap")" ]

kill -9 "$DPID"
wait "$DPID" 2>/dev/null
rc=$?
check "kill -9: the daemon died of SIGKILL (status $rc)" [ "$rc" -eq 137 ]
check "kill -9: the undo journal is left" [ -f "$S/undo.journal" ]
e2e_snapshot "$T/a1k.snap"
check "kill -9: the changed values stay" [ -z "$(e2e_changed "$T/a1.snap" "$T/a1k.snap")" ]

start_daemon "$S" "$T/a2.log"
wait_ready "$T/a2.log" || fail "second start not ready"
echo "--- second start ---"
cat "$T/a2.log"
echo "---"
check "second start: logs that the previous run did not stop cleanly" \
        grep -q 'a previous run did not stop cleanly, restoring' "$T/a2.log"
check "second start: Recovery: $N restored, nothing else" \
        grep -q "Recovery: $N restored, 0 already original, 0 changed by others (left alone), 0 gone, 0 failed, 0 unreadable" "$T/a2.log"
rec=$(grep -n 'Recovery:' "$T/a2.log" | head -1 | cut -d: -f1)
first=$(grep -n -E '^([0-9-]+ [0-9:.]+ [a-z]+: )?(IRQ|RPS|XPS|rps_)' "$T/a2.log" | head -1 | cut -d: -f1)
check "second start: recovery (line ${rec:-none}) comes before the new changes (line ${first:-none})" \
        sh -c '[ -n "$1" ] && [ -n "$2" ] && [ "$1" -lt "$2" ]' - "$rec" "$first"
e2e_snapshot "$T/a2.snap"
e2e_log_changes "$T/a2.log" >"$T/a2.logged"
while read -r f from to; do
        check "second start: $f logged from $from, the original" [ "$from" = "$(e2e_norm "$f" "$(e2e_value "$ORIG" "$f")")" ]
done <"$T/a2.logged"
check "second start: the journal exists" [ -f "$S/undo.journal" ]
while read -r f; do
        key=$(journal_key "$f")
        jo=$(journal_original "$S/undo.journal" "$key")
        check "second start: journal keeps the true original of $key (${jo:-missing})" \
                eq2 "$jo" "$jo" "$(e2e_norm "$f" "${jo:-?}")" "$(e2e_norm "$f" "$(e2e_value "$ORIG" "$f")")"
done <"$T/a1.changed"

kill -TERM "$DPID"
wait "$DPID"
rc=$?
check "SIGTERM: second daemon exits 0" [ "$rc" -eq 0 ] || tail -5 "$T/a2.log"
check "SIGTERM: log says the originals were restored" grep -q 'Restored original values: .* 0 failed' "$T/a2.log"
e2e_snapshot "$T/a2t.snap"
same_as_orig "A: every value as before the first start" "$T/a2t.snap"
check "A: journal removed" [ ! -e "$S/undo.journal" ]
check "A: status.json removed" [ ! -e "$S/status.json" ]
echo "A took $(($(date +%s) - t0)) s"

# --- B. SIGTERM ---
echo "== B. start, SIGTERM"
S=$T/b
start_daemon "$S" "$T/b.log"
wait_ready "$T/b.log" || fail "B: not ready"
e2e_snapshot "$T/b.snap"
check "B: changes applied before SIGTERM" [ -n "$(e2e_changed "$ORIG" "$T/b.snap")" ]
# A few ticks more: still only the objects it logged changed.
sleep 2
e2e_snapshot "$T/b2.snap"
e2e_log_changes "$T/b.log" | cut -d' ' -f1 | sort -u >"$T/b.logged"
extra=$(e2e_changed "$ORIG" "$T/b2.snap" | comm -23 - "$T/b.logged")
check "B: after 4 more ticks nothing changed that the log does not name" [ -z "$extra" ] || echo "  $extra"
others=$(e2e_changed "$ORIG" "$T/b2.snap" | grep '^/proc/irq/' | while read -r f; do
        n=$(echo "$f" | cut -d/ -f4)
        e2e_is_qirq "$n" || echo "$n"
done)
check "B: no IRQ but $E2E_IF's queue IRQs touched" [ -z "$others" ] || echo "  IRQs: $others"
check "B: journal written" [ -f "$S/undo.journal" ]
kill -TERM "$DPID"
wait "$DPID"
rc=$?
check "B: SIGTERM exit 0" [ "$rc" -eq 0 ] || tail -5 "$T/b.log"
check "B: log says SIGTERM and restored" \
        sh -c "grep -q 'Received SIGTERM, stopping' '$T/b.log' && grep -q 'Restored original values: [1-9][0-9]* restored' '$T/b.log'"
e2e_snapshot "$T/bt.snap"
same_as_orig "B: every value back after SIGTERM" "$T/bt.snap"
check "B: journal gone" [ ! -e "$S/undo.journal" ]
check "B: status.json gone" [ ! -e "$S/status.json" ]

# --- C. kill -9, an administrator's change, irqsteerctl restore ---
echo "== C. kill -9, an administrator re-pins one IRQ, irqsteerctl restore"
S=$T/c
start_daemon "$S" "$T/c.log"
wait_ready "$T/c.log" || fail "C: not ready"
e2e_snapshot "$T/c.snap"
kill -9 "$DPID"
wait "$DPID" 2>/dev/null
admin_repin C
NC=$(grep -vc '^#\|^root ' "$S/undo.journal")
"$CTL" restore --state-dir "$S" >"$T/c.restore" 2>&1
rc=$?
cat "$T/c.restore"
check "C: irqsteerctl restore after kill -9 exits 0 without --force" [ "$rc" -eq 0 ]
check "C: restore reports $((NC - 1)) restored, 1 changed by someone else" \
        grep -q "^Restored $((NC - 1)), already original 0, changed by someone else since (left alone) 1, gone 0, failed 0" "$T/c.restore"
check "C: the administrator's value stays ($ADMIN_V)" [ "$(cat "$ADMIN_F")" = "$ADMIN_V" ]
e2e_snapshot "$T/cr.snap"
left=$(e2e_changed "$ORIG" "$T/cr.snap")
check "C: everything else is back" [ "$left" = "$ADMIN_F" ] || echo "  differing from the original: $left"
check "C: journal removed" [ ! -e "$S/undo.journal" ]

# --- D. an administrator's change while the daemon runs, then SIGTERM ---
echo "== D. an administrator re-pins one IRQ while the daemon runs, SIGTERM"
# C left its administrator's value in place: back to the originals first.
e2e_restore "$ORIG" >/dev/null
S=$T/d
start_daemon "$S" "$T/d.log"
wait_ready "$T/d.log" || fail "D: not ready"
NJ=$(grep -vc '^#\|^root ' "$S/undo.journal")
admin_repin D
IRQN=$(echo "$ADMIN_F" | cut -d/ -f4)
noticed() { grep -q "IRQ $IRQN was changed by someone else" "$T/d.log"; }
check "D: the daemon notices the change within 5 s" e2e_wait 5 noticed
check "D: and does not move it back" [ "$(cat "$ADMIN_F")" = "$ADMIN_V" ]
e2e_kill "$DPID" TERM
rc=$?
check "D: SIGTERM exit 0" [ "$rc" -eq 0 ] || tail -5 "$T/d.log"
check "D: log: $((NJ - 1)) restored, 1 changed by others" \
        grep -q "Restored original values: $((NJ - 1)) restored, 0 already original, 1 changed by others (left alone), 0 gone, 0 failed" "$T/d.log" ||
        grep -E 'Restored|someone|Received' "$T/d.log"
check "D: the administrator's value stays ($ADMIN_V)" [ "$(cat "$ADMIN_F")" = "$ADMIN_V" ]
e2e_snapshot "$T/dt.snap"
left=$(e2e_changed "$ORIG" "$T/dt.snap")
check "D: everything else is back" [ "$left" = "$ADMIN_F" ] || echo "  differing from the original: $left"
check "D: journal removed" [ ! -e "$S/undo.journal" ]

e2e_finish

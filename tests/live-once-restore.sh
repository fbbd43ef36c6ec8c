#!/bin/sh
# Live, root, on this host's real IRQs: `irqsteerd --once` with built-in
# defaults lays out the queue IRQs of eth0 (names virtioK-input.N /
# virtioK-output.N, or DEV-...) and sets its RPS/RFS; then
# `irqsteerctl restore` puts every original back exactly.
#
# Checked:
# - a --dry-run --once first writes nothing and leaves no journal; when it
#   would not move any eth0 queue IRQ (already on its layout CPU), the test
#   moves those IRQs to another CPU itself and that becomes the original;
# - --once exits 0; each object it logged as changed holds the value it
#   logged (an IRQ: the single CPU), the "from" it logged is the original,
#   at least one eth0 queue IRQ moved, and nothing it did not log changed;
# - it changes only eth0's queue IRQs: every other IRQ, kernel-managed ones
#   (writes refused with EIO/EPERM, e.g. a virtio-blk queue) included, has
#   the same affinity before, during (sampled while it runs) and after;
# - the undo journal in the state dir lists exactly the changed objects
#   with their originals;
# - `irqsteerctl restore --state-dir` puts back every value exactly (IRQ
#   affinity, rps_cpus, rps_flow_cnt, rps_sock_flow_entries), reports the
#   count and removes the journal; a second restore finds nothing to do.
# Every value is restored by the EXIT trap whatever happens.  Exit 77 =
# skipped (automake).
# Changes this host: runs only when asked (make check-live sets IRQSTEER_LIVE=1).
[ "${IRQSTEER_LIVE:-}" = 1 ] || { echo "SKIP: live test: run make check-live"; exit 77; }
set -u
. "${IRQSTEER_SRCDIR:-$(dirname "$0")/..}/tests/live-host-lib.sh"

e2e_require
e2e_begin once-restore
T=$E2E_TMP
echo "interface $E2E_IF, queue IRQs: $(echo $E2E_QIRQS)"
MANAGED=$(e2e_unwritable_irqs)
echo "IRQs refusing affinity writes (kernel-managed): ${MANAGED:-none}"

# other_irqs = no: the checks allow no IRQ but the NIC's queue IRQs to
# change; whether the host's disk IRQ is busy (over 200/s, then placed)
# depends on what else the host does that minute.
printf '[balance]\nother_irqs = no\n' >"$T/test.conf"

# run_once DIR [ARGS]: one --once cycle with its state in DIR, log in DIR.log.
run_once() {
        dir=$1
        shift
        "$D" --once --foreground --interval 500ms --config "$T/test.conf" --state-dir "$dir" "$@" >"$dir.log" 2>&1
}

qirq_moves() { e2e_log_changes "$1" | awk '$1 ~ /^\/proc\/irq\// { split($1, p, "/"); print p[4] }'; }

eth_moves_in() {
        for n in $(qirq_moves "$1"); do
                e2e_is_qirq "$n" && return 0
        done
        return 1
}

# --- dry run: what would move; force a move if nothing would ---
run_once "$T/dry" --dry-run
check "--dry-run --once exits 0" [ $? -eq 0 ] || cat "$T/dry.log"
e2e_snapshot "$T/dry.snap"
check "--dry-run --once changes nothing" [ -z "$(e2e_changed "$E2E_BASE" "$T/dry.snap")" ] ||
        e2e_changed "$E2E_BASE" "$T/dry.snap"
check "--dry-run --once leaves no undo journal" [ ! -e "$T/dry/undo.journal" ]
if ! eth_moves_in "$T/dry.log"; then
        ncpu=$(nproc)
        for n in $E2E_QIRQS; do
                cur=$(cat /proc/irq/"$n"/smp_affinity_list)
                case $cur in
                *[,-]*) other=0 ;;
                *) other=$(((cur + 1) % ncpu)) ;;
                esac
                echo "$other" >/proc/irq/"$n"/smp_affinity_list || fail "cannot set IRQ $n to CPU $other"
                echo "IRQ $n already on its layout CPU $cur: set it to CPU $other first"
        done
        run_once "$T/dry2" --dry-run
        eth_moves_in "$T/dry2.log" || fail "no eth0 queue IRQ would move even from another CPU: $(cat "$T/dry2.log")"
fi

# --- the real --once, with a watcher sampling every object meanwhile ---
e2e_snapshot "$T/orig.snap"
mkdir "$T/watch"
(
        i=0
        while [ ! -e "$T/watch/stop" ]; do
                e2e_snapshot "$T/watch/$i"
                i=$((i + 1))
        done
) &
WATCHER=$!
E2E_PIDS="$WATCHER"
t0=$(date +%s.%N)
run_once "$T/state"
rc=$?
t1=$(date +%s.%N)
: >"$T/watch/stop"
wait "$WATCHER"
e2e_snapshot "$T/after.snap"
echo "--- irqsteerd --once log ($(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") s) ---"
cat "$T/state.log"
echo "---"
check "--once exits 0" [ "$rc" -eq 0 ]
check "--once: log says the cycle is done" grep -q -- "--once: decision cycle done" "$T/state.log"
check "--once: no warnings or errors logged" sh -c "! grep -E '^[0-9-]+ [0-9:.]+ (emerg|alert|crit|error|warning): ' '$T/state.log'"

e2e_log_changes "$T/state.log" | sort >"$T/logged"
e2e_changed "$T/orig.snap" "$T/after.snap" >"$T/changed"
check "--once logged at least one change" [ -s "$T/logged" ]
check "--once moved at least one $E2E_IF queue IRQ" eth_moves_in "$T/state.log"

# Each logged change: "from" is the original, the object holds "to" now.
while read -r f from to; do
        o=$(e2e_norm "$f" "$(e2e_value "$T/orig.snap" "$f")")
        a=$(e2e_norm "$f" "$(e2e_value "$T/after.snap" "$f")")
        check "$f: logged from $from = original $o" [ "$from" = "$o" ]
        check "$f: now $a = logged $to" [ "$a" = "$to" ]
        case $f in
        /proc/irq/*)
                n=$(echo "$f" | cut -d/ -f4)
                check "IRQ $n: a queue IRQ of $E2E_IF" e2e_is_qirq "$n"
                check "IRQ $n: moved to one CPU ($a)" sh -c "echo '$a' | grep -Eqx '[0-9]+'"
                ;;
        esac
done <"$T/logged"

# Nothing changed that the log does not name, also transiently.
cut -d' ' -f1 "$T/logged" | sort -u >"$T/logged.paths"
unlogged=$(sort -u "$T/changed" | comm -23 - "$T/logged.paths")
check "no object changed without a log line" [ -z "$unlogged" ] || echo "  changed without a log line: $unlogged"
nwatch=$(ls "$T/watch" | grep -c '^[0-9]')
transient=$(for s in "$T"/watch/[0-9]*; do e2e_changed "$T/orig.snap" "$s"; done | sort -u | comm -23 - "$T/logged.paths")
check "no other object changed while --once ran ($nwatch samples)" [ -z "$transient" ] ||
        echo "  changed meanwhile: $transient"
check "the watcher took samples while --once ran" [ "$nwatch" -ge 1 ]
others=$(grep '^/proc/irq/' "$T/changed" | while read -r f; do
        n=$(echo "$f" | cut -d/ -f4)
        e2e_is_qirq "$n" || echo "$n"
done)
check "no IRQ other than $E2E_IF's queue IRQs changed" [ -z "$others" ] || echo "  changed: $others"
for n in $MANAGED; do
        f=/proc/irq/$n/smp_affinity_list
        check "managed IRQ $n: same affinity before and after ($(e2e_value "$T/after.snap" "$f"))" \
                [ "$(e2e_value "$T/orig.snap" "$f")" = "$(e2e_value "$T/after.snap" "$f")" ]
        check "managed IRQ $n: not mentioned in the log" sh -c "! grep -E '(^|[^0-9])IRQ ${n}[^0-9]' '$T/state.log'"
done

# --- the journal ---
J=$T/state/undo.journal
check "--once left the undo journal" [ -f "$J" ]
if [ -f "$J" ]; then
        echo "--- journal ---"
        cat "$J"
        jn=$(grep -vc '^#\|^root ' "$J")
        check "journal has one line per changed object ($jn = $(wc -l <"$T/changed"))" [ "$jn" -eq "$(wc -l <"$T/changed")" ]
        while read -r f; do
                o=$(e2e_value "$T/orig.snap" "$f")
                case $f in
                /proc/irq/default_smp_affinity) key=defaffinity ;;
                /proc/irq/*) key="irq $(echo "$f" | cut -d/ -f4)" ;;
                */rps_cpus) key="rps $(echo "$f" | cut -d/ -f5) $(echo "$f" | cut -d/ -f7 | sed 's/^rx-//')" ;;
                */xps_cpus) key="xps $(echo "$f" | cut -d/ -f5) $(echo "$f" | cut -d/ -f7 | sed 's/^tx-//')" ;;
                */rps_flow_cnt) key="flowcnt $(echo "$f" | cut -d/ -f5) $(echo "$f" | cut -d/ -f7 | sed 's/^rx-//')" ;;
                */rps_sock_flow_entries) key=sockflow ;;
                *) key="?" ;;
                esac
                nk=$(echo "$key" | wc -w)
                # an IRQ's line carries its handler names after the number
                jo=$(awk -v k="$key" -v nk="$nk" '$1 == "irq" && NF == 6 { $3 = ""; $0 = $0; } { s = $1; for (i = 2; i <= nk; i++) s = s " " $i; if (s == k) print $(nk + 1) }' "$J")
                check "journal: $key original $jo = $o" [ "$(e2e_norm "$f" "$jo")" = "$(e2e_norm "$f" "$o")" ]
        done <"$T/changed"
fi

# --- irqsteerctl restore ---
"$CTL" restore --state-dir "$T/state" >"$T/restore.out" 2>&1
rc=$?
cat "$T/restore.out"
e2e_snapshot "$T/restored.snap"
check "irqsteerctl restore exits 0" [ "$rc" -eq 0 ]
check "irqsteerctl restore reports $(wc -l <"$T/changed") restored" \
        grep -q "^Restored $(wc -l <"$T/changed"), .* failed 0" "$T/restore.out"
back=$(e2e_changed "$T/orig.snap" "$T/restored.snap")
check "every value is back exactly as before --once" [ -z "$back" ] || {
        for f in $back; do
                echo "  $f: original $(e2e_value "$T/orig.snap" "$f"), now $(e2e_value "$T/restored.snap" "$f")"
        done
}
for f in $(grep -E 'rps_cpus|rps_flow_cnt|rps_sock_flow_entries' "$T/changed"); do
        check "$f back to $(e2e_value "$T/orig.snap" "$f")" [ "$(cat "$f")" = "$(e2e_value "$T/orig.snap" "$f")" ]
done
check "restore removed the journal" [ ! -e "$J" ]
"$CTL" restore --state-dir "$T/state" >"$T/restore2.out" 2>&1
rc=$?
check "a second restore exits 0 (nothing to do)" [ "$rc" -eq 0 ] || cat "$T/restore2.out"
e2e_snapshot "$T/restored2.snap"
check "a second restore changes nothing" [ -z "$(e2e_changed "$T/orig.snap" "$T/restored2.snap")" ]

e2e_finish

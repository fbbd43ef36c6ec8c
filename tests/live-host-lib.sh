# Shared by the end-to-end live tests that let irqsteerd change this host's
# real IRQ affinities and eth0's RPS/RFS (tests/live-once-restore.sh,
# live-crash-recovery.sh, live-workers.sh).  Sourced, not run.
#
# What it gives a test:
# - skip/fail/check helpers printing one line per check and a closing
#   "N passed, N failed" line (exit 77 = skipped for automake);
# - a host lock (flock), so that two of these tests started in parallel by
#   `make -j check` never steer the same IRQs at the same time;
# - a snapshot of every object irqsteerd could write (every IRQ's
#   smp_affinity_list, every interface's rps_cpus, rps_flow_cnt and
#   xps_cpus, rps_sock_flow_entries), a diff of two snapshots, and a
#   restore that writes back every value differing from the first
#   snapshot: the tests' EXIT trap runs it, so the host gets its affinities
#   back even when an assertion or the daemon failed;
# - the queue IRQs of the interface under test, from /proc/interrupts
#   names (virtioK-input.N / virtioK-output.N, or names starting with
#   DEV-), independent of irqsteer's own inventory.
#
# Variables a test may set before sourcing: none.  Set by the lib:
# E2E_IF (interface, default eth0, or IRQSTEER_E2E_IFACE), E2E_TMP (private
# temporary directory), D and CTL (the binaries), E2E_BASE (the snapshot
# file taken by e2e_begin).

D=${IRQSTEERD:-./irqsteerd}
CTL=${IRQSTEERCTL:-./irqsteerctl}
E2E_IF=${IRQSTEER_E2E_IFACE:-eth0}
E2E_PASS=0
E2E_FAIL=0
E2E_TMP=
E2E_BASE=
E2E_PIDS=

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL $*"; E2E_FAIL=$((E2E_FAIL + 1)); e2e_summary; exit 1; }

# check WHAT COMMAND...: runs COMMAND, counts and prints the result.
check() {
        _e2e_what=$1
        shift
        if "$@"; then
                echo "ok   $_e2e_what"
                E2E_PASS=$((E2E_PASS + 1))
                return 0
        fi
        echo "FAIL $_e2e_what"
        E2E_FAIL=$((E2E_FAIL + 1))
        return 1
}

e2e_summary() {
        echo "$E2E_PASS passed, $E2E_FAIL failed"
}

e2e_finish() {
        # An ASan/UBSan build reports into the logs the tests keep.
        san=$(grep -rlE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$E2E_TMP" 2>/dev/null)
        check "no sanitizer report in any daemon or irqsteerctl output" [ -z "$san" ] ||
                for f in $san; do echo "--- $f"; grep -A30 -E 'Sanitizer|runtime error:' "$f" | head -60; done
        trap - EXIT
        e2e_cleanup
        e2e_summary
        [ "$E2E_FAIL" -eq 0 ] || exit 1
        exit 0
}

# The checks every live host test needs before touching anything.
e2e_require() {
        [ "$(id -u)" = 0 ] || skip "needs root (writes /proc/irq and /sys/class/net)"
        [ -r /proc/interrupts ] && [ -d /proc/irq ] || skip "no /proc/interrupts or /proc/irq"
        [ -d "/sys/class/net/$E2E_IF" ] || skip "no interface $E2E_IF (set IRQSTEER_E2E_IFACE)"
        [ -x "$D" ] || { echo "FAIL irqsteerd not found at $D (set IRQSTEERD)"; exit 1; }
        [ -x "$CTL" ] || { echo "FAIL irqsteerctl not found at $CTL (set IRQSTEERCTL)"; exit 1; }
        [ "$(nproc)" -ge 2 ] || skip "needs at least 2 CPUs for an IRQ to move"
        E2E_QIRQS=$(e2e_queue_irqs)
        [ -n "$E2E_QIRQS" ] || skip "no queue IRQs of $E2E_IF found in /proc/interrupts"
}

# Queue IRQs of $E2E_IF, one number a line, from /proc/interrupts names.
e2e_queue_irqs() {
        dev=$(basename "$(readlink "/sys/class/net/$E2E_IF/device" 2>/dev/null)" 2>/dev/null)
        awk -v dev="$dev" -v nic="$E2E_IF" '
                $1 ~ /^[0-9]+:$/ {
                        name = $NF
                        if ((dev ~ /^virtio[0-9]+$/ && name ~ ("^" dev "-(input|output)\\.[0-9]+$")) ||
                            index(name, nic "-") == 1)
                                print substr($1, 1, length($1) - 1)
                }' /proc/interrupts
}

# e2e_is_qirq N: whether IRQ N is one of $E2E_QIRQS.
e2e_is_qirq() {
        for q in $E2E_QIRQS; do
                [ "$q" = "$1" ] && return 0
        done
        return 1
}

# Every object irqsteerd could write, as "PATH VALUE" lines (sorted).
e2e_snapshot() {
        for f in /proc/irq/*/smp_affinity_list /sys/class/net/*/queues/rx-*/rps_cpus \
                 /sys/class/net/*/queues/rx-*/rps_flow_cnt /sys/class/net/*/queues/tx-*/xps_cpus \
                 /proc/sys/net/core/rps_sock_flow_entries /proc/irq/default_smp_affinity; do
                [ -e "$f" ] || continue
                v=$(cat "$f" 2>/dev/null) || continue
                echo "$f $v"
        done | sort >"$1"
}

# e2e_value SNAPSHOT PATH: the value PATH had in SNAPSHOT.
e2e_value() { awk -v p="$2" '$1 == p { print $2 }' "$1"; }

# e2e_changed A B: the paths whose values differ between two snapshots
# (or that exist in only one), one a line.
e2e_changed() {
        join -a1 -a2 -e '<none>' -o 0,1.2,2.2 "$1" "$2" | awk '$2 != $3 { print $1 }'
}

# e2e_restore SNAPSHOT: writes back every value that differs now.
e2e_restore() {
        [ -f "$1" ] || return 0
        while read -r f v; do
                [ -e "$f" ] || continue
                cur=$(cat "$f" 2>/dev/null) || continue
                [ "$cur" = "$v" ] && continue
                if ! echo "$v" >"$f" 2>/dev/null; then
                        echo "cleanup: could not restore $f to $v (now $cur)"
                else
                        echo "cleanup: restored $f to $v (was $cur)"
                fi
        done <"$1"
}

# IRQs whose affinity cannot be written (kernel-managed: EIO/EPERM), found
# by writing each IRQ's current value back, which changes nothing.
e2e_unwritable_irqs() {
        for d in /proc/irq/[0-9]*; do
                v=$(cat "$d/smp_affinity_list" 2>/dev/null) || continue
                echo "$v" >"$d/smp_affinity_list" 2>/dev/null || basename "$d"
        done
}

# e2e_wait SECONDS COMMAND...: polls COMMAND every 0.1 s.
e2e_wait() {
        n=$(($1 * 10))
        shift
        while [ "$n" -gt 0 ]; do
                "$@" && return 0
                sleep 0.1
                n=$((n - 1))
        done
        return 1
}

# e2e_kill PID SIGNAL: signals and reaps a process this test started.
e2e_kill() {
        kill -"$2" "$1" 2>/dev/null
        wait "$1" 2>/dev/null
}

# e2e_mask_list MASK: the kernel's comma-grouped hex mask ("3",
# "00000000,00000005") as a cpulist ("0-1", "0,2"; empty for none).
e2e_mask_list() {
        echo "$1" | awk '{
                n = split($0, ch, ",")
                out = ""; start = -1; prev = -2
                for (i = n; i >= 1; i--) {
                        base = (n - i) * 32
                        h = tolower(ch[i])
                        for (k = length(h); k >= 1; k--) {
                                d = index("0123456789abcdef", substr(h, k, 1)) - 1
                                for (b = 0; b < 4; b++) {
                                        cpu = base + (length(h) - k) * 4 + b
                                        if (int(d / 2 ^ b) % 2 == 1) {
                                                if (cpu != prev + 1) {
                                                        if (start >= 0) out = out (out == "" ? "" : ",") (start == prev ? start : start "-" prev)
                                                        start = cpu
                                                }
                                                prev = cpu
                                        }
                                }
                        }
                }
                if (start >= 0) out = out (out == "" ? "" : ",") (start == prev ? start : start "-" prev)
                print out
        }'
}

# e2e_log_changes LOG: the writes a daemon log reports, one a line as
# "PATH FROM TO", FROM and TO as in the file (cpulist for IRQs, cpulist for
# RPS/XPS masks, "-" for an empty one, decimal for RFS counts).  Lines
# irqsteerd prefixes with "dry-run: would set " count too.
e2e_log_changes() {
        sed -E 's/^([0-9-]+ [0-9:.]+ [a-z]+: )?(dry-run: would set )?//' "$1" | awk '
        function cpus(s) {
                if (s == "none") return "-"
                sub(/^CPUs /, "", s)
                sub(/^CPU/, "", s)
                return s
        }
        /^IRQ [0-9]+ / {
                if (match($0, / (CPU[0-9]+|CPUs [0-9,-]+|none) -> (CPU[0-9]+|CPUs [0-9,-]+|none): /)) {
                        m = substr($0, RSTART + 1, RLENGTH - 3)
                        split(m, ft, / -> /)
                        print "/proc/irq/" $2 "/smp_affinity_list", cpus(ft[1]), cpus(ft[2])
                }
                next
        }
        /^(RPS|XPS) [^ ]+ (rx|tx)-[0-9]+ / {
                if (match($0, / (CPU[0-9]+|CPUs [0-9,-]+|none) -> (CPU[0-9]+|CPUs [0-9,-]+|none): /)) {
                        m = substr($0, RSTART + 1, RLENGTH - 3)
                        split(m, ft, / -> /)
                        f = $1 == "RPS" ? "rps_cpus" : "xps_cpus"
                        print "/sys/class/net/" $2 "/queues/" $3 "/" f, cpus(ft[1]), cpus(ft[2])
                }
                next
        }
        /^rps_flow_cnt [^ ]+ rx-[0-9]+ [0-9]+ -> [0-9]+: / {
                v = $6; sub(/:$/, "", v)
                print "/sys/class/net/" $2 "/queues/" $3 "/rps_flow_cnt", $4, v
                next
        }
        /^default_smp_affinity / {
                if (match($0, / (CPU[0-9]+|CPUs [0-9,-]+|none) -> (CPU[0-9]+|CPUs [0-9,-]+|none): /)) {
                        m = substr($0, RSTART + 1, RLENGTH - 3)
                        split(m, ft, / -> /)
                        print "/proc/irq/default_smp_affinity", cpus(ft[1]), cpus(ft[2])
                }
                next
        }
        /^rps_sock_flow_entries [0-9]+ -> [0-9]+: / {
                v = $4; sub(/:$/, "", v)
                print "/proc/sys/net/core/rps_sock_flow_entries", $2, v
        }'
}

# e2e_norm PATH VALUE: VALUE as e2e_log_changes writes it (masks as
# cpulists, "-" for none).
e2e_norm() {
        case $1 in
        */rps_cpus | */xps_cpus | */default_smp_affinity)
                l=$(e2e_mask_list "$2")
                echo "${l:--}"
                ;;
        *) echo "$2" ;;
        esac
}

e2e_cleanup() {
        for p in $E2E_PIDS; do
                kill -9 "$p" 2>/dev/null
                wait "$p" 2>/dev/null
        done
        [ -n "$E2E_BASE" ] && e2e_restore "$E2E_BASE"
        if [ -n "$E2E_TMP" ]; then
                if [ "$E2E_FAIL" -ne 0 ] && [ -n "${IRQSTEER_KEEP_TMP:-}" ]; then
                        echo "kept $E2E_TMP"
                else
                        rm -rf "$E2E_TMP"
                fi
        fi
}

# Takes the host lock, makes the temporary directory, takes the baseline
# snapshot and installs the cleanup trap.  $1: a name for the temporary
# directory.
e2e_begin() {
        E2E_TMP=$(mktemp -d "/tmp/irqsteer-$1.XXXXXX") || { echo "FAIL mktemp"; exit 1; }
        trap e2e_cleanup EXIT
        trap 'exit 1' INT TERM HUP
        if command -v flock >/dev/null 2>&1; then
                exec 9>/tmp/irqsteer-live-host.lock
                flock -w 300 9 || { echo "FAIL another live host test holds /tmp/irqsteer-live-host.lock"; exit 1; }
        fi
        E2E_BASE=$E2E_TMP/base.snap
        e2e_snapshot "$E2E_BASE"
}

#!/bin/sh
# Runs each libFuzzer harness for a set time: run.sh BINDIR SEEDDIR SECONDS
# HARNESS...  New inputs go to BINDIR/corpus-HARNESS (the seeds in
# SEEDDIR/HARNESS are only read); a finding (crash, sanitizer report,
# leak, failed check, timeout) is kept as BINDIR/findings/HARNESS-* and
# fails the run once every harness has had its turn.
set -u
bindir=$1 seeddir=$2 seconds=$3
shift 3
mkdir -p "$bindir/findings"
failed=
for h in "$@"; do
        work=$bindir/corpus-$h
        log=$bindir/fuzz-$h.log
        mkdir -p "$work"
        echo "fuzz: $h for ${seconds}s (log $log)"
        if "$bindir/fuzz-$h" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
                -artifact_prefix="$bindir/findings/$h-" "$work" "$seeddir/$h" >"$log" 2>&1; then
                execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
                rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
                echo "fuzz: $h: no finding, $execs executions, $rate exec/s"
        else
                echo "fuzz: $h: FINDING, see $log" >&2
                grep -E 'ERROR:|runtime error:|check failed|Test unit written to' "$log" | head -5 >&2
                failed="$failed $h"
        fi
done
if [ -n "$failed" ]; then
        echo "fuzz: findings in:$failed (inputs in $bindir/findings)" >&2
        exit 1
fi

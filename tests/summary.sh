#!/bin/sh
# Adds up the test cases of one `make check` run: cmocka binaries count per
# case ([ OK ] / [ FAILED ] / [ SKIPPED ]); shell tests by their own closing
# "N passed, N failed" line when they print one, else as one case from
# automake's .trs result.  Prints the tail of each failed test's log, then
# "tests: N passed, N failed, N skipped", and how many live tests were
# skipped with how to run them.  A second argument, the tests of the run
# (tests/live-top.sh ...), limits the count to them (make check-live).
build=${1:-build}
if [ -n "${2:-}" ]; then
        trss=$(for t in $2; do echo "$build/${t%.sh}.trs"; done)
else
        trss=$(find "$build/tests" -name '*.trs' 2>/dev/null | sort)
fi
pass=0 fail=0 skip=0 live=0
for trs in $trss; do
        [ -f "$trs" ] || continue
        log=${trs%.trs}.log
        if [ -f "$log" ] && grep -q '^\[==========\]' "$log"; then
                p=$(grep -c '^\[       OK \]' "$log")
                f=$(grep '^\[  FAILED  \] [^0-9]' "$log" | sort -u | wc -l)
                # cmocka names a skipped case twice: when it runs and in the summary
                s=$(grep '^\[  SKIPPED \] [^0-9]' "$log" | sort -u | wc -l)
                # a crash before the cmocka summary still counts as a failure
                if grep -q '^:test-result: FAIL' "$trs" && [ "$f" -eq 0 ]; then f=1; fi
                pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
        else
                result=$(sed -n 's/^:test-result: //p' "$trs")
                # a script that counts its checks ends with "N passed, N failed"
                counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" 2>/dev/null | tail -n 1)
                if [ -n "$counts" ] && [ "$result" != SKIP ]; then
                        p=${counts%% passed*}
                        f=${counts#*passed, }
                        f=${f%% failed*}
                        if [ "$result" != PASS ] && [ "$f" -eq 0 ]; then f=1; fi
                        pass=$((pass + p)) fail=$((fail + f))
                else
                        case $result in
                        PASS) pass=$((pass + 1)) ;;
                        SKIP) skip=$((skip + 1)) ;;
                        *) fail=$((fail + 1)) ;;
                        esac
                fi
        fi
done
# what a failed test said last, so that a CI log that keeps only this
# output still shows why
for trs in $trss; do
        [ -f "$trs" ] || continue
        n=$(grep -c 'live test: run make check-live' "${trs%.trs}.log" 2>/dev/null) || n=0
        live=$((live + n))
        grep -qE '^:test-result: (FAIL|ERROR)' "$trs" || continue
        echo "--- the last lines of ${trs%.trs}.log:"
        tail -n 25 "${trs%.trs}.log" 2>/dev/null
done
echo "tests: $pass passed, $fail failed, $skip skipped"
if [ "$live" -gt 0 ]; then
        echo "tests: $live live tests skipped (they change this host's IRQs, RPS masks, threads or network);"
        echo "tests: run them with 'make check-live' as root"
fi

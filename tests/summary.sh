#!/bin/sh
# Adds up the test cases of one `make check` run: cmocka binaries count per
# case ([ OK ] / [ FAILED ] / [ SKIPPED ]), shell tests count as one case
# each from automake's .trs result.  Prints "N passed, N failed, N skipped".
build=${1:-build}
pass=0 fail=0 skip=0
for trs in $(find "$build/tests" -name '*.trs' 2>/dev/null | sort); do
        log=${trs%.trs}.log
        if [ -f "$log" ] && grep -q '^\[==========\]' "$log"; then
                p=$(grep -c '^\[       OK \]' "$log")
                f=$(grep '^\[  FAILED  \] [^0-9]' "$log" | sort -u | wc -l)
                s=$(grep -c '^\[  SKIPPED \] [^0-9]' "$log")
                # a crash before the cmocka summary still counts as a failure
                if grep -q '^:test-result: FAIL' "$trs" && [ "$f" -eq 0 ]; then f=1; fi
                pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
        else
                case $(sed -n 's/^:test-result: //p' "$trs") in
                PASS) pass=$((pass + 1)) ;;
                SKIP) skip=$((skip + 1)) ;;
                *) fail=$((fail + 1)) ;;
                esac
        fi
done
echo "tests: $pass passed, $fail failed, $skip skipped"

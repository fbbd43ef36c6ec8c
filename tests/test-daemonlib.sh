#!/bin/sh
# The test harness itself: tests/daemonlib.py's run_cases verdicts
# (tests/test-daemonlib.py does the work; ~3 s).
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
exec python3 "${IRQSTEER_SRCDIR:-$(dirname "$0")/..}/tests/test-daemonlib.py"

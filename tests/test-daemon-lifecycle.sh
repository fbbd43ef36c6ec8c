#!/bin/sh
# irqsteerd's lifecycle against a fixture root: no catch-up burst after a
# stall, one instance per state directory, restore summaries that name the
# failed object (tests/daemon-lifecycle.py does the work).
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
exec python3 "${IRQSTEER_SRCDIR:-$(dirname "$0")/..}/tests/daemon-lifecycle.py"

#!/bin/sh
# The operator's contract against a fixture root: what a reload must apply
# or refuse, problems shown, irqsteerctl plan beside the daemon
# (tests/daemon-operator.py does the work).
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
exec python3 "${IRQSTEER_SRCDIR:-$(dirname "$0")/..}/tests/daemon-operator.py"

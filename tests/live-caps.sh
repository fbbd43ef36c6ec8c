#!/bin/sh
# Live, root: the exact capability sets irqsteerd keeps per configuration
# (tests/live-caps.py does the work; skips with a reason otherwise).
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
exec python3 "${IRQSTEER_SRCDIR:-$(dirname "$0")/..}/tests/live-caps.py"

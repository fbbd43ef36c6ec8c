#!/bin/sh
# Live, root: the exact capability sets irqsteerd keeps per configuration
# (tests/live-caps.py does the work; skips with a reason otherwise).
# Changes this host: runs only when asked (make check-live sets IRQSTEER_LIVE=1).
[ "${IRQSTEER_LIVE:-}" = 1 ] || { echo "SKIP: live test: run make check-live"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
exec python3 "${IRQSTEER_SRCDIR:-$(dirname "$0")/..}/tests/live-caps.py"

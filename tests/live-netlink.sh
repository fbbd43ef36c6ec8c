#!/bin/sh
# Live, root: rtnetlink link monitoring in a network namespace
# (tests/live-netlink.py does the work; skips with a reason otherwise).
# Changes this host: runs only when asked (make check-live sets IRQSTEER_LIVE=1).
[ "${IRQSTEER_LIVE:-}" = 1 ] || { echo "SKIP: live test: run make check-live"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
exec python3 "${IRQSTEER_SRCDIR:-$(dirname "$0")/..}/tests/live-netlink.py"

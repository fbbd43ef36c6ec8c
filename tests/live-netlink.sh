#!/bin/sh
# Live, root: rtnetlink link monitoring in a network namespace
# (tests/live-netlink.py does the work; skips with a reason otherwise).
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
exec python3 "${IRQSTEER_SRCDIR:-$(dirname "$0")/..}/tests/live-netlink.py"

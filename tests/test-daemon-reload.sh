#!/bin/sh
# What a reload must apply, against a fixture root (tests/daemon-reload.py
# does the work).
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
exec python3 "${IRQSTEER_SRCDIR:-$(dirname "$0")/..}/tests/daemon-reload.py"

#!/bin/sh
# No vector-space trap: irqsteerd on a simulator tree under a simulated x86
# vector space that refuses the 201st IRQ on a CPU (tests/daemon-vectors.py
# does the work).
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
exec python3 "${IRQSTEER_SRCDIR:-$(dirname "$0")/..}/tests/daemon-vectors.py"

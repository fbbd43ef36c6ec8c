#!/bin/sh
# irqsteerctl inventory on fixture trees built around real /proc/interrupts
# captures: every IRQ's class, NIC, queue and role as the drivers' naming
# code says (tests/captures.py does the work; tests/fixtures/captures/README.md
# names the sources).
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
exec python3 "${IRQSTEER_SRCDIR:-$(dirname "$0")/..}/tests/captures.py"

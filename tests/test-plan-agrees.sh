#!/bin/sh
# irqsteerctl plan and irqsteerd --dry-run decide the same actions at the
# same ticks on one simulator tree (tests/plan-agrees.py does the work).
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
exec python3 "${IRQSTEER_SRCDIR:-$(dirname "$0")/..}/tests/plan-agrees.py"

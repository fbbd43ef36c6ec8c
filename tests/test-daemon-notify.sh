#!/bin/sh
# irqsteerd's sd_notify protocol, reload, status file, --check-config,
# --dry-run, --once, crash recovery, SIGINT, restore_on_exit = no, the
# effective-affinity check, when /proc/interrupts is read and irqsteerctl
# plan, against a fixture root
# (tests/daemon-notify.py does the work).
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
exec python3 "${IRQSTEER_SRCDIR:-$(dirname "$0")/..}/tests/daemon-notify.py"

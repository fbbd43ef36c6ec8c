#!/bin/sh
# irqsteerd's metrics scraped through Debian's prometheus-node-exporter
# (textfile collector) on 127.0.0.1, irqsteerd on a fixture tree; root,
# installs the exporter when missing (tests/live-metrics.py does the work).
# Changes this host: runs only when asked (make check-live sets IRQSTEER_LIVE=1).
[ "${IRQSTEER_LIVE:-}" = 1 ] || { echo "SKIP: live test: run make check-live"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
exec python3 "${IRQSTEER_SRCDIR:-$(dirname "$0")/..}/tests/live-metrics.py"

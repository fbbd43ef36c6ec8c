#!/bin/sh
# Runtime CPU bans (irqsteerctl ban/unban/bans) against irqsteerd running
# on a fixture root (tests/daemon-bans.py does the work).
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
exec python3 "${IRQSTEER_SRCDIR:-$(dirname "$0")/..}/tests/daemon-bans.py"

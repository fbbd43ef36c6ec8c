#!/bin/sh
# The unit cases that write this host's real IRQ affinities (test-rootfs's
# held /proc/irq file, test-apply's live IRQ and managed IRQ) or add network
# namespaces (test-inventory's veth pair, IRQSTEER_LIVE=1), run here
# under the host lock the other live scripts take, so a parallel
# `make check` never changes an IRQ under their baseline snapshots.  The
# unit binaries skip those cases unless IRQSTEER_HOST_LOCKED=1.  Each case
# restores what it changed.  Root; exit 77 = skipped.  About 1 s.
# Changes this host: runs only when asked (make check-live sets IRQSTEER_LIVE=1).
[ "${IRQSTEER_LIVE:-}" = 1 ] || { echo "SKIP: live test: run make check-live"; exit 77; }
set -u
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v flock >/dev/null 2>&1 || { echo "SKIP: flock not installed"; exit 77; }
b=${IRQSTEER_BUILDDIR:-$(dirname "$0")/..}/tests
for t in test-rootfs test-apply test-inventory; do
        [ -x "$b/$t" ] || { echo "SKIP: $b/$t not built (cmocka missing?)"; exit 77; }
done
exec 9>/tmp/irqsteer-live-host.lock
flock -w 300 9 || { echo "FAIL another live host test holds /tmp/irqsteer-live-host.lock"; exit 1; }
rc=0
for t in test-rootfs test-apply test-inventory; do
        IRQSTEER_HOST_LOCKED=1 "$b/$t" || rc=1
done
exit $rc

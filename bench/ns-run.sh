#!/bin/sh
# Runs a command (irqbalance) against a simulated host: in a private mount
# namespace, /proc is covered by a tmpfs of symlinks (to the real proc for
# everything but interrupts, stat, softirqs and irq, which point into the
# simulator's tree), and the simulator's sys/devices and sys/bus are
# bind-mounted over /sys/devices and /sys/bus (whole trees: the entries of
# /sys/bus/pci/devices are symlinks into /sys/devices).  Symlinks rather than
# file bind mounts because the simulator replaces its proc files by rename
# each tick: a bind mount of a file would keep showing the old inode.
#
# usage: ns-run.sh SIMROOT WORKDIR COMMAND [ARG...]
set -eu
if [ "${IRQSTEER_BENCH_IN_NS:-}" != 1 ]; then
        IRQSTEER_BENCH_IN_NS=1 exec unshare -m --propagation private "$0" "$@"
fi
root=$(readlink -f "$1")
work=$(readlink -f "$2")
shift 2
real="$work/realproc"
mkdir -p "$real"
mount --rbind /proc "$real"
mount -t tmpfs -o mode=0555 irqsteer-bench-proc /proc
for e in "$real"/*; do
        n=${e##*/}
        case "$n" in
        interrupts|stat|softirqs|irq) ;;
        *) ln -s "$e" "/proc/$n" ;;
        esac
done
for n in interrupts stat softirqs irq; do
        ln -s "$root/proc/$n" "/proc/$n"
done
# irqbalance's control socket lives in /run/irqbalance; keep ours private.
mkdir -p /run/irqbalance
mount -t tmpfs -o mode=0755 irqsteer-bench-run /run/irqbalance
mount --bind "$root/sys/devices" /sys/devices
mount --bind "$root/sys/bus" /sys/bus
exec "$@"

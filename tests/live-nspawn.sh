#!/bin/sh
# Live, root: irqsteerd under a real systemd, booted in a systemd-nspawn
# container (DESIGN.md 6).  Checks that the shipped unit verifies, that
# Type=notify readiness, StatusText, the watchdog, reload and stop work, and
# that the sandbox (ProtectSystem=strict, the syscall filter, the capability
# bounding set) leaves the daemon running with the capabilities it needs.
#
# The Debian tree is built once with debootstrap into
# $IRQSTEER_NSPAWN_CACHE (default /var/cache/irqsteer-test/bookworm) and
# reused; the container boots it with --volatile=overlay, so the cache is
# never modified, and gets the built daemon and unit by read-only binds.
# The container is powered off (killed if need be) on every exit path.
set -u

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (systemd-nspawn)"
for c in systemd-nspawn nsenter debootstrap; do
        command -v "$c" >/dev/null 2>&1 || skip "$c not installed (packages systemd-container, util-linux, debootstrap)"
done

builddir=${IRQSTEER_BUILDDIR:-$(pwd)}
daemon=${IRQSTEERD:-$builddir/irqsteerd}
unit=$builddir/systemd/irqsteerd.service
[ -x "$daemon" ] || skip "no built irqsteerd at $daemon"
[ -f "$unit" ] || skip "no generated unit at $unit (make all builds it)"
if ldd "$daemon" 2>/dev/null | grep -Eq 'libasan|libubsan|libtsan'; then
        skip "sanitizer build: the container has no sanitizer runtime"
fi

cache=${IRQSTEER_NSPAWN_CACHE:-/var/cache/irqsteer-test/bookworm}
# procps for /bin/kill (the unit's ExecReload=).
if [ ! -x "$cache/lib/systemd/systemd" ] || [ ! -x "$cache/bin/kill" ]; then
        echo "building the container tree in $cache (once; about a minute)"
        mkdir -p "$(dirname "$cache")" || skip "cannot create $(dirname "$cache")"
        rm -rf "$cache.tmp" "$cache"
        if ! debootstrap --variant=minbase \
                --include=systemd,systemd-sysv,dbus,procps,libnl-3-200,libnl-route-3-200,libnl-genl-3-200,libcap2,libsystemd0 \
                bookworm "$cache.tmp" http://deb.debian.org/debian >"$cache.log" 2>&1; then
                rm -rf "$cache.tmp"
                skip "debootstrap failed (no network?), see $cache.log"
        fi
        mv "$cache.tmp" "$cache"
fi

fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
check() { # check WHAT COMMAND...
        what=$1; shift
        if "$@"; then pass "$what"; else fail "$what"; fi
}

exec_start=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit")
[ -n "$exec_start" ] || { echo "FAIL no ExecStart= in $unit"; exit 1; }
machine=isdnsp$$
tmp=$(mktemp -d /tmp/irqsteer-nspawn.XXXXXX)
nspawn_pid=
ct=

cleanup() {
        if [ -n "$ct" ] && kill -0 "$ct" 2>/dev/null; then
                nsenter -t "$ct" -a systemctl poweroff >/dev/null 2>&1
        fi
        if [ -n "$nspawn_pid" ]; then
                i=0
                while kill -0 "$nspawn_pid" 2>/dev/null && [ $i -lt 150 ]; do sleep 0.2; i=$((i + 1)); done
                if kill -0 "$nspawn_pid" 2>/dev/null; then
                        echo "container did not power off, killing it"
                        kill -KILL "$nspawn_pid" 2>/dev/null
                        wait "$nspawn_pid" 2>/dev/null
                fi
        fi
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# A config file in the container so reload has something to read.
printf '[daemon]\nlog_level = %s\n' "${IRQSTEER_NSPAWN_LOG_LEVEL:-info}" > "$tmp/irqsteer.conf"
# Where this build looks for it (SYSCONFDIR depends on --prefix).
conf_path=$("$daemon" --help | sed -n 's/.*configuration file (default \([^;]*\);.*/\1/p')
[ -n "$conf_path" ] || { echo "FAIL cannot find the default config path in --help"; exit 1; }

# --private-network: the container sees only its own lo, so the daemon
# has no NIC to steer and never touches the host's IRQs (nspawn leaves
# /proc/irq writable).
systemd-nspawn -q -D "$cache" --boot --register=no --keep-unit --volatile=overlay --private-network \
        --machine="$machine" --console=pipe \
        --bind-ro="$daemon:$exec_start" \
        --bind-ro="$unit:/etc/systemd/system/irqsteerd.service" \
        --bind-ro="$tmp/irqsteer.conf:$conf_path" \
        </dev/null >"$tmp/console.log" 2>&1 &
nspawn_pid=$!

# The container's systemd is the child of systemd-nspawn.
i=0
while [ $i -lt 150 ]; do
        for p in $(pgrep -P "$nspawn_pid" 2>/dev/null); do
                [ "$(cat /proc/"$p"/comm 2>/dev/null)" = systemd ] && ct=$p
        done
        [ -n "$ct" ] && break
        kill -0 "$nspawn_pid" 2>/dev/null || break
        sleep 0.2; i=$((i + 1))
done
if [ -z "$ct" ]; then
        echo "FAIL container did not boot"; cat "$tmp/console.log"; exit 1
fi
in_ct() { nsenter -t "$ct" -a "$@"; }

# systemctl needs the manager's private socket, which comes a moment later.
i=0
while ! in_ct test -S /run/systemd/private 2>/dev/null && [ $i -lt 150 ]; do sleep 0.2; i=$((i + 1)); done

state=$(in_ct timeout 60 systemctl is-system-running --wait 2>/dev/null)
case $state in
running|degraded) pass "container booted ($state)" ;;
*) fail "container booted (state '$state')"; in_ct systemctl --failed --no-pager ;;
esac

check "systemd-analyze verify of the installed unit is clean" \
        in_ct systemd-analyze verify --man=no /etc/systemd/system/irqsteerd.service
exposure=$(in_ct systemd-analyze security --offline=true --no-pager /etc/systemd/system/irqsteerd.service 2>/dev/null |
        sed -n 's/.*Overall exposure level for irqsteerd.service: \([0-9.]*\).*/\1/p')
echo "info systemd-analyze security exposure: ${exposure:-?}"
check "security exposure below 3.0 (got ${exposure:-?})" \
        awk -v e="${exposure:-99}" 'BEGIN { exit !(e < 3.0) }'

t0=$(date +%s)
check "systemctl start irqsteerd (waits for READY=1)" in_ct timeout 60 systemctl start irqsteerd
prop() { in_ct systemctl show -p "$1" --value irqsteerd; }
check "active (running)" test "$(prop ActiveState)/$(prop SubState)" = "active/running"
status=$(prop StatusText)
echo "info StatusText: $status"
case $status in
"hot: "*"queue IRQs"*) pass "StatusText is our status line" ;;
*) fail "StatusText is our status line (got '$status')" ;;
esac
check "Type=notify" test "$(prop Type)" = notify
check "WatchdogUSec=30s" test "$(prop WatchdogUSec)" = 30s

pid=$(prop MainPID)
capeff=$(in_ct cat /proc/"$pid"/status | awk '/^CapEff/ { print $2 }')
check "running daemon keeps only CAP_NET_ADMIN with the default settings (CapEff $capeff)" \
        test "$capeff" = 0000000000001000
seccomp=$(in_ct cat /proc/"$pid"/status | awk '/^Seccomp:/ { print $2 }')
check "syscall filter active (Seccomp: $seccomp)" test "$seccomp" = 2
in_ct test -s /run/irqsteer/status.json && pass "status.json in the RuntimeDirectory" ||
        fail "status.json in the RuntimeDirectory"

# The watchdog keeps it alive past several ping periods (30 s / 2 = 15 s
# would be too slow for this test; a restart would change MainPID).
check "systemctl reload irqsteerd" in_ct timeout 30 systemctl reload irqsteerd
sleep 1
check "still active after reload" test "$(prop ActiveState)" = active
check "same process after reload" test "$(prop MainPID)" = "$pid"
in_ct journalctl -u irqsteerd --no-pager -o cat >"$tmp/journal.txt" 2>&1
check "journal: reload logged" grep -q "Configuration reloaded" "$tmp/journal.txt"
check "journal: the config file was read" grep -q "configuration $conf_path" "$tmp/journal.txt"
check "journal: ready logged" grep -q "^Ready: hot: " "$tmp/journal.txt"
check "NRestarts=0" test "$(prop NRestarts)" = 0

check "systemctl stop irqsteerd" in_ct timeout 30 systemctl stop irqsteerd
check "inactive after stop" test "$(prop ActiveState)" = inactive
check "Result=success" test "$(prop Result)" = success
check "ExecMainStatus=0" test "$(prop ExecMainStatus)" = 0
in_ct journalctl -u irqsteerd --no-pager -o cat >"$tmp/journal.txt" 2>&1
check "journal: stop logged" grep -q "Received SIGTERM, stopping" "$tmp/journal.txt"
if [ $fails -gt 0 ]; then
        echo "--- journal"; cat "$tmp/journal.txt"
fi
echo "took $(( $(date +%s) - t0 ))s after boot"

echo "$fails failed"
[ $fails -eq 0 ]

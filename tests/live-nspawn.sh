#!/bin/sh
# Live, root: irqsteerd under a real systemd, booted in a systemd-nspawn
# container (tests/README.md).  Checks that the shipped unit verifies, that
# Type=notify readiness, StatusText, the watchdog, reload and stop work, and
# that the sandbox (ProtectSystem=strict, the syscall filter, the capability
# bounding set) leaves the daemon running with the capabilities it needs.
#
# The Debian tree is built once with debootstrap into
# $IRQSTEER_NSPAWN_CACHE (default /var/cache/irqsteer-test/bookworm) and
# reused; the container boots it with --volatile=overlay, so the cache is
# never modified, and gets the built daemon and unit by read-only binds.
# The container is powered off (killed if need be) on every exit path.
# Changes this host: runs only when asked (make check-live sets IRQSTEER_LIVE=1).
[ "${IRQSTEER_LIVE:-}" = 1 ] || { echo "SKIP: live test: run make check-live"; exit 77; }
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
# The unit's PrivateTmp= and ProtectHome= hide /tmp, /var/tmp and /home
# from the service: a build configured under them (make distcheck's
# _inst, a clone in /tmp) runs from a copy of the binary elsewhere, named
# by a drop-in.
run_path=$exec_start
case $exec_start in
/tmp/* | /var/tmp/* | /home/* | /root/* | /run/user/*) run_path=/usr/local/libexec/irqsteer-test/irqsteerd ;;
esac
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

# A writable fixture root (tests/fixtures/vm2) for the second run, where the
# daemon lays out its NIC IRQs and logs actions with journal fields.
srcdir=${IRQSTEER_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
mkdir -p "$tmp/fixture"
if ! IRQSTEER_FIXTURES=${IRQSTEER_FIXTURES:-$srcdir/tests/fixtures} python3 -c '
import sys; sys.path.insert(0, sys.argv[1]); import daemonlib as dl; dl.make_root(sys.argv[2])' \
        "$srcdir/tests" "$tmp/fixture"; then
        echo "FAIL cannot make the fixture root"; exit 1
fi

path_bind= path_dropin=
if [ "$run_path" != "$exec_start" ]; then
        # the configuration file under the same prefix is hidden as well
        conf_path=/etc/irqsteer-test/irqsteer.conf
        printf '[Service]\nExecStart=\nExecStart=%s --config %s\nExecReload=\nExecReload=%s --reload $MAINPID\n' \
                "$run_path" "$conf_path" "$run_path" > "$tmp/00-path.conf"
        path_bind="--bind-ro=$daemon:$run_path"
        path_dropin="--bind-ro=$tmp/00-path.conf:/etc/systemd/system/irqsteerd.service.d/00-path.conf"
fi

# --private-network: the container sees only its own lo, so the daemon
# has no NIC to steer and never touches the host's IRQs (nspawn leaves
# /proc/irq writable).
systemd-nspawn -q -D "$cache" --boot --register=no --keep-unit --volatile=overlay --private-network \
        --machine="$machine" --console=pipe \
        --bind-ro="$daemon:$exec_start" ${path_bind:+"$path_bind"} ${path_dropin:+"$path_dropin"} \
        --bind-ro="$unit:/etc/systemd/system/irqsteerd.service" \
        --bind-ro="$tmp/irqsteer.conf:$conf_path" \
        --bind="$tmp/fixture:/srv/irqsteer-fixture" \
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
# README reports 2.0 (systemd 252); a weaker unit fails here.
check "security exposure at most 2.0 (got ${exposure:-?})" \
        awk -v e="${exposure:-99}" 'BEGIN { exit !(e <= 2.0) }'

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

# The sandbox keeps what the daemon writes writable, in the service's own
# mount namespace (nsenter -m into MainPID).  /proc/irq is the host's, so
# access(W_OK) only, no write; ProtectKernelTunables= would fail this.
check "writable in the service's sandbox: /proc/irq" \
        in_ct nsenter -t "$pid" -m test -w /proc/irq/default_smp_affinity
# The files of the container's lo: written back with the value they hold
# where the container lets us (nspawn's /sys is read-only sysfs, which no
# unit setting can lift).  The rest of the file system stays read-only.
for f in /proc/sys/net/core/rps_sock_flow_entries \
        /sys/devices/virtual/net/lo/queues/rx-0/rps_cpus /sys/devices/virtual/net/lo/queues/rx-0/rps_flow_cnt \
        /sys/devices/virtual/net/lo/queues/tx-0/xps_cpus; do
        if ! in_ct test -w "$f" 2>/dev/null; then
                in_ct nsenter -t "$pid" -m test -w "$f" 2>/dev/null && w=writable || w=read-only
                echo "info $f: read-only in the container itself (nspawn's API file systems), $w in the service's sandbox"
                continue
        fi
        check "writable in the service's sandbox: $f" \
                in_ct nsenter -t "$pid" -m sh -c 'v=$(cat "$1") && printf "%s\n" "$v" > "$1"' sh "$f"
done
check "read-only in the service's sandbox: /usr/sbin (ProtectSystem=strict)" \
        in_ct nsenter -t "$pid" -m sh -c '! touch /usr/sbin/.irqsteer-probe 2>/dev/null'
check "read-only in the service's sandbox: /etc (ProtectSystem=strict)" \
        in_ct nsenter -t "$pid" -m sh -c '! touch /etc/.irqsteer-probe 2>/dev/null'

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

# An invalid file: the reload fails (ExecReload= checks it before the
# signal), systemctl status shows each problem, the daemon keeps running
# with the previous configuration.  Written in place: the bind follows the
# host file's inode.
good_conf=$(cat "$tmp/irqsteer.conf")
printf '[daemon]\nlog_level = info\nbogus_key = 1\n[balance]\nhot_samples = -3\n' > "$tmp/irqsteer.conf"
check "invalid file: systemctl reload fails" sh -c '! nsenter -t "$1" -a timeout 30 systemctl reload irqsteerd' sh "$ct"
in_ct systemctl status --no-pager -n 20 irqsteerd >"$tmp/status.txt" 2>&1
check "invalid file: systemctl status shows FILE:LINE of the unknown key" \
        grep -q "$conf_path:3: bogus_key: unknown key" "$tmp/status.txt"
check "invalid file: systemctl status shows FILE:LINE of the bad value" \
        grep -q "$conf_path:5: hot_samples: invalid number" "$tmp/status.txt"
check "invalid file: still active, same process" test "$(prop ActiveState)/$(prop MainPID)" = "active/$pid"

# A restart with the invalid file: no restart loop (exit status 78 is in
# RestartPreventExitStatus=), the unit failed, FILE:LINE in its status text.
in_ct timeout 30 systemctl restart irqsteerd >/dev/null 2>&1
sleep 5
check "invalid file at restart: failed, not restarting ($(prop ActiveState), NRestarts=$(prop NRestarts))" \
        test "$(prop ActiveState)/$(prop NRestarts)" = failed/0
check "invalid file at restart: exit status 78 ($(prop ExecMainStatus))" test "$(prop ExecMainStatus)" = 78
status=$(prop StatusText)
echo "info StatusText: $status"
check "invalid file at restart: FILE:LINE in StatusText" \
        test "$status" = "startup failed: $conf_path:3: bogus_key: unknown key in [daemon]"
printf '%s\n' "$good_conf" > "$tmp/irqsteer.conf"
in_ct systemctl reset-failed irqsteerd
check "fixed file: systemctl start" in_ct timeout 60 systemctl start irqsteerd
pid=$(prop MainPID)

# README's irqbalance line, as a provisioning script would run it (set -e)
# on a host without irqbalance, then a stray start is refused, not
# silently stopping irqsteerd through Conflicts=.
mask_line=$(sed -n 's/^\(systemctl mask --now irqbalance[^ ]*\).*/\1/p' "$srcdir/README.md")
[ -n "$mask_line" ] || fail "README has no 'systemctl mask --now irqbalance' line"
check "README's '$mask_line' works under sh -e without irqbalance" in_ct sh -ec "$mask_line"
check "masked: systemctl start irqbalance is refused" \
        sh -c '! nsenter -t "$1" -a timeout 30 systemctl start irqbalance.service 2>/dev/null' sh "$ct"
check "masked: irqsteerd still running" test "$(prop ActiveState)/$(prop MainPID)" = "active/$pid"
in_ct systemctl unmask irqbalance.service >/dev/null 2>&1

# A reload that changes a key taking a restart: the reload succeeds, and
# the status text says a restart is needed until the file is set back.
printf '%s\ndry_run = yes\n' "$good_conf" > "$tmp/irqsteer.conf"
check "dry_run = yes: systemctl reload" in_ct timeout 30 systemctl reload irqsteerd
status=$(prop StatusText)
check "dry_run = yes: StatusText starts with 'restart needed for dry_run' (got '$status')" \
        test "${status#restart needed for dry_run; hot: }" != "$status"
printf '%s\n' "$good_conf" > "$tmp/irqsteer.conf"
check "set back: systemctl reload" in_ct timeout 30 systemctl reload irqsteerd
status=$(prop StatusText)
check "set back: no restart needed in StatusText (got '$status')" test "${status#hot: }" != "$status"

# A reload adding the first [worker] section needs cap_sys_nice, which the
# daemon dropped at startup (the default file needs only cap_net_admin):
# ExecReload='s --check-config sees that in status.json, so systemctl
# reload fails and says to restart, and the daemon runs on unchanged.
printf '%s\n[worker web]\nmatch_name = nosuchworker\npolicy = spread\n' "$good_conf" > "$tmp/irqsteer.conf"
check "[worker] added: systemctl reload fails (cap_sys_nice was dropped at startup)" \
        sh -c '! nsenter -t "$1" -a timeout 30 systemctl reload irqsteerd' sh "$ct"
in_ct systemctl status --no-pager -n 20 irqsteerd >"$tmp/status.txt" 2>&1
check "[worker] added: systemctl status says it needs cap_sys_nice and a restart" \
        grep -q "needs cap_sys_nice, dropped at startup; restart irqsteerd to apply it" "$tmp/status.txt"
check "[worker] added: still active, same process" test "$(prop ActiveState)/$(prop MainPID)" = "active/$pid"
printf '%s\n' "$good_conf" > "$tmp/irqsteer.conf"

# metrics_file under a directory made after the start: the unit's
# ReadWritePaths= was fixed at the start, so the write fails (EROFS).  The
# reload says so and fails, the status text and the metrics show the
# problem, the journal has it with its reason code; a restart takes the
# new directory in and all is well again.
mdir=/var/lib/prometheus/node-exporter
check "metrics_file: $mdir absent at the start" sh -c '! nsenter -t "$1" -a test -e "$2"' sh "$ct" "$mdir"
in_ct mkdir -p "$mdir"
printf '%s\nmetrics_file = %s/irqsteer.prom\n' "$good_conf" "$mdir" > "$tmp/irqsteer.conf"
in_ct timeout 30 systemctl reload irqsteerd >"$tmp/reload.txt" 2>&1
rc=$?
check "metrics_file made after start: systemctl reload fails (exit $rc)" test "$rc" != 0
in_ct systemctl status --no-pager -n 20 irqsteerd >"$tmp/status.txt" 2>&1
check "metrics_file made after start: systemctl status says the file and the error" \
        grep -q "not applied by irqsteerd.*$mdir/irqsteer.prom: Read-only file system" "$tmp/status.txt"
status=$(prop StatusText)
echo "info StatusText: $status"
case $status in
*"metrics-file-write: Failed to write the metrics to $mdir/irqsteer.prom: Read-only file system"*)
        pass "metrics_file made after start: in StatusText" ;;
*) fail "metrics_file made after start: in StatusText" ;;
esac
check "metrics_file made after start: irqsteer_problem{reason=\"metrics-file-write\"} 1" \
        in_ct grep -qx 'irqsteer_problem{reason="metrics-file-write"} 1' /run/irqsteer/metrics.prom
check "metrics_file made after start: journal entry with REASON=metrics-file-write" \
        sh -c 'nsenter -t "$1" -a journalctl -u irqsteerd --no-pager -o cat REASON=metrics-file-write | grep -q "Read-only file system"' sh "$ct"
check "metrics_file made after start: still active, same process" test "$(prop ActiveState)/$(prop MainPID)" = "active/$pid"
check "metrics_file: systemctl restart" in_ct timeout 60 systemctl restart irqsteerd
pid=$(prop MainPID)
i=0
while ! in_ct test -s "$mdir/irqsteer.prom" && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
check "metrics_file after the restart: written" in_ct test -s "$mdir/irqsteer.prom"
check "metrics_file after the restart: systemctl reload succeeds" in_ct timeout 30 systemctl reload irqsteerd
status=$(prop StatusText)
check "metrics_file after the restart: StatusText clean (got '$status')" test "${status#hot: }" != "$status"
printf '%s\n' "$good_conf" > "$tmp/irqsteer.conf"
check "metrics_file unset: systemctl reload" in_ct timeout 30 systemctl reload irqsteerd

# --state-dir given only on ExecStart= (a drop-in): the reload still finds
# the running daemon's state and fails for a [worker] section it cannot
# apply (ExecReload= reads the daemon's own options).
in_ct mkdir -p /run/systemd/system/irqsteerd.service.d
in_ct sh -c "printf '[Service]\nExecStart=\nExecStart=%s --config %s --state-dir /run/irqsteer-alt\nRuntimeDirectory=irqsteer-alt\n' '$run_path' '$conf_path' > /run/systemd/system/irqsteerd.service.d/statedir.conf"
in_ct systemctl daemon-reload
check "--state-dir on ExecStart= only: systemctl restart" in_ct timeout 60 systemctl restart irqsteerd
pid=$(prop MainPID)
check "--state-dir on ExecStart= only: status.json there" in_ct test -s /run/irqsteer-alt/status.json
printf '%s\n[worker web]\nmatch_name = nosuchworker\npolicy = spread\n' "$good_conf" > "$tmp/irqsteer.conf"
check "--state-dir on ExecStart= only: [worker] added: systemctl reload fails" \
        sh -c '! nsenter -t "$1" -a timeout 30 systemctl reload irqsteerd' sh "$ct"
in_ct systemctl status --no-pager -n 20 irqsteerd >"$tmp/status.txt" 2>&1
check "--state-dir on ExecStart= only: systemctl status says it needs cap_sys_nice" \
        grep -q "needs cap_sys_nice, dropped at startup; restart irqsteerd to apply it" "$tmp/status.txt"
printf '%s\n' "$good_conf" > "$tmp/irqsteer.conf"
check "--state-dir on ExecStart= only: a good file reloads" in_ct timeout 30 systemctl reload irqsteerd
in_ct rm -f /run/systemd/system/irqsteerd.service.d/statedir.conf
in_ct systemctl daemon-reload

# Conflicts=irqbalance.service: starting it stops irqsteerd, and the journal
# says why, and what to do where irqbalance then does not run (a stand-in
# irqbalance unit: the container has none).
check "conflict: systemctl restart irqsteerd" in_ct timeout 60 systemctl restart irqsteerd
in_ct sh -c "printf '[Service]\nExecStart=/bin/sleep infinity\n' > /run/systemd/system/irqbalance.service"
in_ct systemctl daemon-reload
check "conflict: systemctl start irqbalance" in_ct timeout 30 systemctl start irqbalance.service
check "conflict: irqsteerd stopped ($(prop ActiveState))" test "$(prop ActiveState)" = inactive
in_ct journalctl -u irqsteerd --no-pager -o cat REASON=conflict-start >"$tmp/conflict.txt" 2>&1
check "conflict: the journal says irqbalance.service's start stopped it" \
        grep -q "stopping: irqbalance.service is being started and conflicts with irqsteerd" "$tmp/conflict.txt"
check "conflict: the journal says what to do if irqbalance does not run" \
        grep -q "systemctl mask --now irqbalance.service" "$tmp/conflict.txt"
in_ct systemctl stop irqbalance.service
in_ct rm -f /run/systemd/system/irqbalance.service
in_ct systemctl daemon-reload
check "conflict: systemctl start irqsteerd again" in_ct timeout 60 systemctl start irqsteerd
# a plain stop names no conflict
in_ct journalctl -u irqsteerd --no-pager -o cat REASON=conflict-start >"$tmp/conflict.txt" 2>&1
n_conflict=$(grep -c "is being started and conflicts" "$tmp/conflict.txt")

check "systemctl stop irqsteerd" in_ct timeout 30 systemctl stop irqsteerd
check "inactive after stop" test "$(prop ActiveState)" = inactive
check "Result=success" test "$(prop Result)" = success
check "ExecMainStatus=0" test "$(prop ExecMainStatus)" = 0
in_ct journalctl -u irqsteerd --no-pager -o cat >"$tmp/journal.txt" 2>&1
check "journal: stop logged" grep -q "Received SIGTERM, stopping" "$tmp/journal.txt"
in_ct journalctl -u irqsteerd --no-pager -o cat REASON=conflict-start >"$tmp/conflict.txt" 2>&1
check "a plain systemctl stop names no conflict" test "$(grep -c "is being started and conflicts" "$tmp/conflict.txt")" = "$n_conflict"

# Second run against the fixture root (a drop-in, as an operator would add
# one): the initial layout moves its NIC IRQs, and the journal holds the
# action entries with their structured fields.
in_ct mkdir -p /run/systemd/system/irqsteerd.service.d
in_ct sh -c "printf '[Service]\nExecStart=\nExecStart=%s --config %s --root /srv/irqsteer-fixture/root --interval 500ms\nReadWritePaths=/srv/irqsteer-fixture\n' '$run_path' '$conf_path' > /run/systemd/system/irqsteerd.service.d/fixture.conf"
in_ct systemctl daemon-reload
pristine=$(grep -H . "$tmp"/fixture/root/proc/irq/*/smp_affinity_list 2>/dev/null)
check "fixture run: systemctl start" in_ct timeout 60 systemctl start irqsteerd
fpid=$(prop MainPID)
i=0
while [ $i -lt 50 ]; do
        in_ct journalctl -u irqsteerd --no-pager -o json >"$tmp/journal.json" 2>/dev/null
        grep -q '"IRQ"' "$tmp/journal.json" && break
        sleep 0.2; i=$((i + 1))
done
check "journal -o json: an action entry with IRQ=, CPU_FROM=, CPU_TO=, DEVICE=, QUEUE=, REASON=, REASON_TEXT=, ACTION=" \
        python3 -c '
import json, sys
entries = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
acts = [e for e in entries if "REASON" in e and "ACTION" in e]
for e in acts[:3]:
    print("info journal entry:", {k: e[k] for k in ("MESSAGE", "ACTION", "IRQ", "CPU_FROM", "CPU_TO", "DEVICE", "QUEUE",
                                                     "REASON", "REASON_TEXT", "PRIORITY") if k in e})
ok = [e for e in acts if e.get("ACTION") == "irq-affinity" and e.get("IRQ", "").isdigit() and e.get("DEVICE")
      and e.get("QUEUE", "").isdigit() and e.get("CPU_TO") and "CPU_FROM" in e and e.get("REASON")
      and e["REASON"].replace("_", "").isalpha() and e.get("REASON_TEXT", "?") in e.get("MESSAGE", "")
      and e.get("PRIORITY") == "6"
      and e.get("SYSLOG_IDENTIFIER") == "irqsteerd"]
rps = [e for e in acts if e.get("ACTION") == "rps" and e.get("DEVICE") and "IRQ" not in e]
print(f"info {len(acts)} action entries, {len(ok)} IRQ moves with every field, {len(rps)} RPS")
sys.exit(0 if ok and rps else 1)' "$tmp/journal.json"
affinities() { grep -H . "$tmp"/fixture/root/proc/irq/*/smp_affinity_list 2>/dev/null; }
check "fixture run: the sandboxed daemon wrote IRQ affinities under its root" \
        test "$(affinities)" != "$pristine"
# A reload that bans CPU0: within a tick or two (500 ms each) no IRQ, RPS
# or XPS mask in the tree uses CPU0 any more, without a restart.
printf '%s\n[balance]\nbanned_cpus = 0\n' "$good_conf" > "$tmp/irqsteer.conf"
check "fixture run: reload with banned_cpus = 0" in_ct timeout 30 systemctl reload irqsteerd
on_cpu0() {
        python3 - "$tmp/fixture/root" <<'PY'
import glob, os, sys
root = sys.argv[1]
bad = []
for p in glob.glob(os.path.join(root, "proc/irq/*/smp_affinity_list")):
    v = open(p).read().strip()
    cpus = set()
    for part in v.split(","):
        a, _, b = part.partition("-")
        if a.isdigit():
            cpus.update(range(int(a), int(b or a) + 1))
    if 0 in cpus:
        bad.append(f"IRQ {p.split('/')[-2]}={v}")
for pat in ("rps_cpus", "xps_cpus"):
    for p in glob.glob(os.path.join(root, "sys/class/net/*/queues/*/" + pat)):
        v = open(p).read().strip().replace(",", "")
        if v and int(v, 16) & 1:
            bad.append(f"{os.path.relpath(p, root)}={v}")
print(" ".join(sorted(bad)))
PY
}
i=0
while [ -n "$(on_cpu0)" ] && [ $i -lt 15 ]; do sleep 0.2; i=$((i + 1)); done
check "fixture run: CPU0 vacated within $((i * 200)) ms of the reload (left: $(on_cpu0))" test -z "$(on_cpu0)"
check "fixture run: same process after the reload" test "$(prop MainPID)" = "$fpid"
printf '%s\n' "$good_conf" > "$tmp/irqsteer.conf"
check "fixture run: systemctl stop" in_ct timeout 30 systemctl stop irqsteerd
check "fixture run: stop restored them" test "$(affinities)" = "$pristine"
check "fixture run: Result=success" test "$(prop Result)" = success
in_ct rm -rf /run/systemd/system/irqsteerd.service.d
if [ $fails -gt 0 ]; then
        echo "--- journal"; cat "$tmp/journal.txt"
fi
echo "took $(( $(date +%s) - t0 ))s after boot"

echo "$fails failed"
[ $fails -eq 0 ]

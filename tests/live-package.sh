#!/bin/sh
# Live, root: the Debian package in a booted container (systemd-nspawn).
# Builds the .deb twice from this source tree (the second with a bumped
# version), then in a bookworm container: install (the unit enabled and
# started, irqsteerctl in /usr/bin and usable by nobody, the conffile),
# cri-o's and tuned's irqbalance sequences (the CPUs they ban vacated,
# every command exit 0), upgrade (the daemon restarted, an edited
# conffile kept), remove (every mask of the tree back as it was) and purge
# (nothing left).  The daemon runs on a copy of tests/fixtures/vm2 through
# a unit drop-in, so no IRQ of the host or the container moves.
#
# The container tree is tests/live-nspawn.sh's (IRQSTEER_NSPAWN_CACHE,
# default /var/cache/irqsteer-test/bookworm; booted with
# --volatile=overlay, never modified).  IRQSTEER_DEBS=DIR takes two
# packages built already (irqsteer_V1_*.deb and a higher version) instead.
set -u

skip() { echo "SKIP: $*"; exit 77; }
[ "${IRQSTEER_LIVE:-}" = 1 ] || skip "live test: run make check-live"
# it builds its own binaries from the source (not the sanitizer build's):
# the pass without sanitizers runs it
[ -z "${IRQSTEER_SANITIZER_PASS:-}" ] || skip "builds from source, not the sanitizer build: run in the plain pass"
[ "$(id -u)" = 0 ] || skip "needs root (systemd-nspawn)"
for c in systemd-nspawn nsenter debootstrap dpkg-buildpackage dh python3 runuser; do
        command -v "$c" >/dev/null 2>&1 ||
                skip "$c not installed (packages systemd-container, util-linux, debootstrap, dpkg-dev, debhelper, python3)"
done
srcdir=${IRQSTEER_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
[ -f "$srcdir/debian/control" ] || skip "no debian/ in $srcdir"
. "$srcdir/tests/nspawn-lib.sh"

cache=${IRQSTEER_NSPAWN_CACHE:-/var/cache/irqsteer-test/bookworm}
nspawn_tree "$cache" systemd,systemd-sysv,dbus,procps,libnl-3-200,libnl-route-3-200,libnl-genl-3-200,libcap2,libsystemd0

tmp=$(mktemp -d /tmp/irqsteer-package.XXXXXX)
chmod 755 "$tmp"
ct= nspawn_pid=
trap 'nspawn_cleanup; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
t_start=$(date +%s)

# ---- the two packages ----
v1=$(sed -n '1s/^irqsteer (\([^)]*\)).*/\1/p' "$srcdir/debian/changelog")
v2=$v1+upgradetest1
build_deb() { # build_deb VERSION OUTDIR: a copy of the tree, its changelog at VERSION
        _src=$tmp/src-$1
        mkdir -p "$2"
        copy_tree "$srcdir" "$_src" || return 1
        if [ "$1" != "$v1" ]; then
                { printf 'irqsteer (%s) unstable; urgency=medium\n\n  * Upgrade test build.\n\n' "$1"
                  printf ' -- irqsteer developers <dev@irqsteer.invalid>  %s\n\n' "$(date -R)"
                  cat "$srcdir/debian/changelog"; } > "$_src/debian/changelog"
        fi
        (cd "$_src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -us -uc -b) \
                >"$tmp/build-$1.log" 2>&1 || { tail -30 "$tmp/build-$1.log"; return 1; }
        mv "$tmp"/irqsteer_"$1"_*.deb "$2/"
}
debs=$tmp/debs
if [ -n "${IRQSTEER_DEBS:-}" ]; then
        mkdir -p "$debs/1" "$debs/2"
        cp "$IRQSTEER_DEBS"/irqsteer_"$v1"_*.deb "$debs/1/" || skip "no irqsteer_${v1}_*.deb in $IRQSTEER_DEBS"
        for f in "$IRQSTEER_DEBS"/irqsteer_*.deb; do
                v=$(dpkg-deb -f "$f" Version)
                dpkg --compare-versions "$v" gt "$v1" && { cp "$f" "$debs/2/"; v2=$v; }
        done
        [ -n "$(ls "$debs/2")" ] || skip "no package above $v1 in $IRQSTEER_DEBS"
else
        t0=$(date +%s)
        check "dpkg-buildpackage -us -uc -b of $v1" build_deb "$v1" "$debs/1"
        check "dpkg-buildpackage -us -uc -b of $v2" build_deb "$v2" "$debs/2"
        echo "info two package builds took $(( $(date +%s) - t0 ))s"
        [ $fails -eq 0 ] || exit 1
fi

# ---- the container, the fixture and the drop-in ----
fx=$tmp/fixture
mkdir -p "$fx"
if ! IRQSTEER_FIXTURES=${IRQSTEER_FIXTURES:-$srcdir/tests/fixtures} python3 -c '
import sys; sys.path.insert(0, sys.argv[1]); import daemonlib as dl; dl.make_root(sys.argv[2])' \
        "$srcdir/tests" "$fx"; then
        echo "FAIL cannot make the fixture root"; exit 1
fi
chmod -R a+rX "$fx"
root=/srv/irqsteer-fixture/root
state=$root/run/irqsteer
# The operator's drop-in, in place before the package: the daemon on the
# fixture tree (its state directory then ROOT/run/irqsteer).
mkdir -p "$tmp/dropin"
printf '[Service]\nExecStart=\nExecStart=/usr/sbin/irqsteerd --root %s --interval 500ms\nReadWritePaths=/srv/irqsteer-fixture\n' \
        "$root" > "$tmp/dropin/fixture.conf"
nspawn_boot "$cache" --bind-ro="$debs:/srv/debs" --bind="$fx:/srv/irqsteer-fixture" \
        --bind-ro="$tmp/dropin:/etc/systemd/system/irqsteerd.service.d"
pristine=$(tree_masks "$fx/root")
[ -n "$pristine" ] || { echo "FAIL no masks in the fixture"; exit 1; }

prop() { in_ct systemctl show -p "$1" --value irqsteerd; }
wait_for() { # wait_for SECONDS COMMAND...: until it succeeds
        _n=$(( $1 * 5 )); shift
        while ! "$@" && [ $_n -gt 0 ]; do sleep 0.2; _n=$((_n - 1)); done
        "$@"
}
moved() { [ "$(tree_masks "$fx/root")" != "$pristine" ]; }
off_cpus() { # off_cpus N...: no mask of the tree names these CPUs
        _used=" $(cpus_used "$fx/root") "
        for _c in "$@"; do case $_used in *" $_c "*) return 1 ;; esac; done
}
bans_show() { in_ct irqsteerctl bans --state-dir "$state" | sed -n 's/^irqbalance-env  *//p'; }
bans_are() { [ "$(bans_show)" = "$1" ]; }

# ---- install ----
t0=$(date +%s)
check "dpkg -i irqsteer $v1" in_ct sh -c 'dpkg -i /srv/debs/1/irqsteer_*.deb >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; exit 1; }'
echo "info install took $(( $(date +%s) - t0 ))s"
check "installed: the unit enabled" test "$(in_ct systemctl is-enabled irqsteerd)" = enabled
check "installed: started, active/running ($(prop ActiveState)/$(prop SubState))" \
        test "$(prop ActiveState)/$(prop SubState)" = active/running
check "installed: /usr/bin/irqsteerctl, none in /usr/sbin" \
        in_ct sh -c 'test -x /usr/bin/irqsteerctl && ! test -e /usr/sbin/irqsteerctl && test -x /usr/sbin/irqsteerd'
check "installed: /etc/irqsteer/irqsteer.conf a conffile" \
        in_ct sh -c "dpkg-query -W -f='\${Conffiles}' irqsteer | grep -q '^ /etc/irqsteer/irqsteer.conf '"
check "installed: the daemon placed the fixture's IRQs" wait_for 10 moved
check "installed: systemctl is-enabled irqbalance succeeds (the alias)" in_ct systemctl is-enabled irqbalance
pid1=$(prop MainPID)

# Read-only commands as a user with no privilege at all.
for cmd in "status --state-dir $state" "bans --state-dir $state" "metrics --state-dir $state" \
        "top --root $root --count 1" "inventory --root $root" "plan --root $root"; do
        check "as nobody: irqsteerctl $cmd" in_ct runuser -u nobody -- sh -c "irqsteerctl $cmd >/dev/null 2>/tmp/ctl.err || { cat /tmp/ctl.err; exit 1; }"
done

# ---- cri-o: IRQBALANCE_BANNED_CPUS into /etc/sysconfig/irqbalance, then
# its own test: is-enabled -> restart, else irqbalance --oneshot if there
# is one ----
in_ct sh -c 'mkdir -p /etc/sysconfig && printf "IRQBALANCE_BANNED_CPUS=\"00000000,00000002\"\n" > /etc/sysconfig/irqbalance'
crio='if systemctl is-enabled irqbalance >/dev/null; then systemctl restart irqbalance;
elif command -v irqbalance >/dev/null; then irqbalance --oneshot; fi'
check "cri-o's sequence exits 0" in_ct sh -c "$crio"
check "cri-o: the daemon restarted through the alias" test "$(prop MainPID)" != "$pid1"
check "cri-o: irqsteerctl bans shows irqbalance-env on CPU 1 (got '$(bans_show)')" wait_for 10 bans_are 1
check "cri-o: no mask of the tree on CPU 1 (used: $(cpus_used "$fx/root"))" wait_for 10 off_cpus 1
pid2=$(prop MainPID)

# ---- tuned: IRQBALANCE_BANNED_CPULIST into /etc/default/irqbalance, then
# try-restart ----
in_ct sh -c 'printf "IRQBALANCE_BANNED_CPULIST=2\n" > /etc/default/irqbalance'
check "tuned's systemctl try-restart irqbalance exits 0" in_ct systemctl try-restart irqbalance
check "tuned: the running daemon restarted" test "$(prop MainPID)" != "$pid2" -a "$(prop ActiveState)" = active
check "tuned: irqsteerctl bans shows irqbalance-env on CPUs 1-2 (got '$(bans_show)')" wait_for 10 bans_are 1-2
check "tuned: no mask of the tree on CPUs 1-2 (used: $(cpus_used "$fx/root"))" wait_for 10 off_cpus 1 2
# and live, without any restart: the ban lifted when tuned's line goes
pid3=$(prop MainPID)
in_ct sh -c 'printf "IRQBALANCE_BANNED_CPULIST=\n" > /etc/default/irqbalance'
check "without a restart: the ban follows the file within a tick (got '$(bans_show)')" wait_for 5 bans_are 1
check "without a restart: same process" test "$(prop MainPID)" = "$pid3"
check "no failed unit" test -z "$(in_ct systemctl list-units --failed --plain --no-legend)"

# ---- upgrade ----
in_ct sh -c 'printf "\n# edited by the administrator\n" >> /etc/irqsteer/irqsteer.conf'
t0=$(date +%s)
check "dpkg -i irqsteer $v2 (upgrade)" in_ct sh -c 'dpkg -i /srv/debs/2/irqsteer_*.deb >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; exit 1; }'
echo "info upgrade took $(( $(date +%s) - t0 ))s"
check "upgraded: version $v2" test "$(in_ct dpkg-query -W -f='${Version}' irqsteer)" = "$v2"
check "upgraded: restarted (new MainPID), active" test "$(prop MainPID)" != "$pid3" -a "$(prop ActiveState)" = active
check "upgraded: still enabled" test "$(in_ct systemctl is-enabled irqsteerd)" = enabled
check "upgraded: the edited conffile kept" in_ct grep -q "edited by the administrator" /etc/irqsteer/irqsteer.conf
check "upgraded: the ban still in force (got '$(bans_show)')" wait_for 10 bans_are 1
check "upgraded: no mask of the tree on CPU 1" wait_for 10 off_cpus 1

# ---- remove ----
check "dpkg -r irqsteer" in_ct sh -c 'dpkg -r irqsteer >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; exit 1; }'
check "removed: the unit is gone ($(prop LoadState)/$(prop ActiveState))" \
        test "$(prop ActiveState)" = inactive
check "removed: every mask of the tree back as it was" test "$(tree_masks "$fx/root")" = "$pristine"
if [ "$(tree_masks "$fx/root")" != "$pristine" ]; then
        printf '%s\n' "$pristine" > "$tmp/before"; tree_masks "$fx/root" > "$tmp/after"
        diff "$tmp/before" "$tmp/after"
fi
check "removed: the conffile stays until purge" in_ct test -f /etc/irqsteer/irqsteer.conf
check "removed: no irqsteerctl" in_ct sh -c '! test -e /usr/bin/irqsteerctl'
check "removed: irqbalance's name no longer answers" sh -c "! nsenter -t $ct -a systemctl is-enabled irqbalance >/dev/null 2>&1"

# ---- purge ----
check "dpkg -P irqsteer" in_ct sh -c 'dpkg -P irqsteer >/tmp/dpkg.log 2>&1 || { cat /tmp/dpkg.log; exit 1; }'
left=$(in_ct sh -c 'find /etc /run /var/lib /lib/systemd /usr -xdev \( -name "*irqsteer*" -o -name irqbalance.service \) \
        ! -path /etc/systemd/system/irqsteerd.service.d ! -path "/etc/systemd/system/irqsteerd.service.d/*" 2>/dev/null')
check "purged: nothing left (${left:-none})" test -z "$left"
check "purged: dpkg knows no irqsteer" sh -c "! nsenter -t $ct -a dpkg-query -W irqsteer >/dev/null 2>&1"
check "purged: the tree's masks still as they were" test "$(tree_masks "$fx/root")" = "$pristine"

if [ $fails -gt 0 ]; then
        echo "--- journal"; in_ct journalctl -u irqsteerd --no-pager -n 60 -o cat
fi
echo "took $(( $(date +%s) - t_start ))s"
echo "$fails failed"
[ $fails -eq 0 ]

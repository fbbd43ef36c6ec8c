# Sourced by the live tests that run a Debian tree with systemd-nspawn
# (tests/live-package.sh, tests/live-bare-host.sh); sh, after `set -u`.  Sets and uses: $tmp (a
# temporary directory the caller made), $ct (the container's systemd
# PID), $nspawn_pid.  nspawn_cleanup powers the container off (killing it
# if need be); the caller traps it on EXIT.

fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
check() { # check WHAT COMMAND...
        what=$1; shift
        if "$@"; then pass "$what"; else fail "$what"; fi
}

# copy_tree SRC DEST: the source tree as a fresh clone has it: the files
# git tracks or would (uncommitted edits included), nothing generated; from
# a release tarball, everything but the build directories.
copy_tree() {
        mkdir -p "$2" || return 1
        if [ "$(git -C "$1" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$1" && pwd -P)" ]; then
                (cd "$1" && git ls-files -z --cached --others --exclude-standard |
                        xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
                        tar --null -T - -cf -) | tar -xf - -C "$2"
        else
                (cd "$1" && tar --exclude=./build --exclude=./build-asan --exclude=./build-fuzz \
                        --exclude=./build-deb --exclude=./debian/build --exclude=./debian/irqsteer \
                        --exclude=./debian/.debhelper --exclude=./autom4te.cache -cf - .) | tar -xf - -C "$2"
        fi
}

# nspawn_tree DIR INCLUDES: a debootstrapped bookworm (minbase and
# INCLUDES) in DIR, built once and reused; skips the test when debootstrap
# fails (no network).
nspawn_tree() {
        _dir=$1 _inc=$2
        [ -x "$_dir/lib/systemd/systemd" ] && [ -x "$_dir/bin/kill" ] && return 0
        echo "building the container tree in $_dir (once; about a minute)"
        mkdir -p "$(dirname "$_dir")" || skip "cannot create $(dirname "$_dir")"
        rm -rf "$_dir.tmp" "$_dir"
        if ! debootstrap --variant=minbase --include="$_inc" bookworm "$_dir.tmp" \
                http://deb.debian.org/debian >"$_dir.log" 2>&1; then
                rm -rf "$_dir.tmp"
                skip "debootstrap failed (no network?), see $_dir.log"
        fi
        mv "$_dir.tmp" "$_dir"
}

# nspawn_boot DIR NSPAWN-OPTION...: boots DIR (--volatile=overlay: the tree
# itself is never modified; --private-network: no NIC of the host in
# sight) and waits for its systemd to finish starting up.
nspawn_boot() {
        _dir=$1; shift
        systemd-nspawn -q -D "$_dir" --boot --register=no --keep-unit --volatile=overlay --private-network \
                --machine="isdpkg$$" --console=pipe "$@" </dev/null >"$tmp/console.log" 2>&1 &
        nspawn_pid=$!
        _i=0
        while [ $_i -lt 150 ]; do
                for _p in $(pgrep -P "$nspawn_pid" 2>/dev/null); do
                        [ "$(cat /proc/"$_p"/comm 2>/dev/null)" = systemd ] && ct=$_p
                done
                [ -n "$ct" ] && break
                kill -0 "$nspawn_pid" 2>/dev/null || break
                sleep 0.2; _i=$((_i + 1))
        done
        if [ -z "$ct" ]; then
                echo "FAIL container did not boot"; cat "$tmp/console.log"; exit 1
        fi
        _i=0
        while ! in_ct test -S /run/systemd/private 2>/dev/null && [ $_i -lt 150 ]; do sleep 0.2; _i=$((_i + 1)); done
        _state=$(in_ct timeout 60 systemctl is-system-running --wait 2>/dev/null)
        case $_state in
        running|degraded) pass "container booted ($_state)" ;;
        *) fail "container booted (state '$_state')"; in_ct systemctl --failed --no-pager ;;
        esac
}

in_ct() { nsenter -t "$ct" -a "$@"; }

nspawn_cleanup() {
        if [ -n "${ct:-}" ] && kill -0 "$ct" 2>/dev/null; then
                nsenter -t "$ct" -a systemctl poweroff >/dev/null 2>&1
        fi
        if [ -n "${nspawn_pid:-}" ]; then
                _i=0
                while kill -0 "$nspawn_pid" 2>/dev/null && [ $_i -lt 150 ]; do sleep 0.2; _i=$((_i + 1)); done
                if kill -0 "$nspawn_pid" 2>/dev/null; then
                        echo "container did not power off, killing it"
                        kill -KILL "$nspawn_pid" 2>/dev/null
                        wait "$nspawn_pid" 2>/dev/null
                fi
        fi
}

# cpus_used ROOT: the CPUs any IRQ affinity or RPS/XPS mask under the
# fixture ROOT names, as "N N ..." (sorted, unique).
cpus_used() {
        python3 - "$1" <<'PY'
import glob, os, sys
root = sys.argv[1]
cpus = set()
for p in glob.glob(os.path.join(root, "proc/irq/*/smp_affinity_list")):
    for part in open(p).read().strip().split(","):
        a, _, b = part.partition("-")
        if a.isdigit():
            cpus.update(range(int(a), int(b or a) + 1))
for pat in ("rps_cpus", "xps_cpus"):
    for p in glob.glob(os.path.join(root, "sys/class/net/*/queues/*/" + pat)):
        v = int(open(p).read().strip().replace(",", "") or "0", 16)
        cpus.update(c for c in range(v.bit_length()) if v >> c & 1)
print(" ".join(map(str, sorted(cpus))))
PY
}

# tree_masks ROOT: every IRQ affinity and RPS/XPS mask under ROOT, a line
# each, to compare before and after.
tree_masks() {
        grep -H . "$1"/proc/irq/*/smp_affinity_list "$1"/proc/irq/*/smp_affinity \
                "$1"/sys/class/net/*/queues/*/rps_cpus "$1"/sys/class/net/*/queues/*/xps_cpus 2>/dev/null
}

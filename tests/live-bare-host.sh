#!/bin/sh
# Live, root, network: the README's two commands, as written, on a bare
# Debian 12 (debootstrap --variant=minbase bookworm, nothing added) in a
# systemd-nspawn container: the set-up and run line, then the set-up and
# test line.  The commands are read from README.md: the ```sh block after
# the line `<!-- bare-host-commands -->` (its first line runs, its second
# tests).
#
# The run line's daemon works on the host's real /proc and /sys as seen
# from the container, read-only there (/sys and /proc/sys by nspawn,
# /proc/irq bound read-only, checked before it starts), and with
# RUN_ARGS=--dry-run in the environment as well: it finds the CPUs and
# NICs, samples, decides and logs its plan, and writes nothing.  Once it
# says Ready it gets SIGINT, as Ctrl-C would, and must stop cleanly (make
# run exit 0).  The test line runs the whole make check there (live tests
# skip without IRQSTEER_LIVE=1, which is refused unless every live test
# has that gate); IRQSTEER_BARE_HOST_STEPS=run stops after the run line.
#
# The tree is built once into $IRQSTEER_MINBASE_CACHE (default
# /var/cache/irqsteer-test-minbase/bookworm) and booted with
# --volatile=overlay, so it stays bare.
set -u

skip() { echo "SKIP: $*"; exit 77; }
[ "${IRQSTEER_LIVE:-}" = 1 ] || skip "live test: run make check-live"
# it builds its own binaries from the source (not the sanitizer build's):
# the pass without sanitizers runs it
[ -z "${IRQSTEER_SANITIZER_PASS:-}" ] || skip "builds from source, not the sanitizer build: run in the plain pass"
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, systemd-nspawn)"
for c in systemd-nspawn debootstrap; do
        command -v "$c" >/dev/null 2>&1 || skip "$c not installed (packages systemd-container, debootstrap)"
done
srcdir=${IRQSTEER_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
readme=${IRQSTEER_README:-$srcdir/README.md}
steps=${IRQSTEER_BARE_HOST_STEPS:-run,test}

. "$srcdir/tests/nspawn-lib.sh"

cmds=$(awk '/^<!-- bare-host-commands -->/ { m = 1; next }
        m == 1 && /^```/ { m = 2; next }
        m == 2 && /^```/ { exit }
        m == 2 && NF { print }' "$readme")
run_cmd=$(printf '%s\n' "$cmds" | sed -n 1p)
test_cmd=$(printf '%s\n' "$cmds" | sed -n 2p)
if [ -z "$run_cmd" ] || [ -z "$test_cmd" ]; then
        echo "FAIL $readme has no \`<!-- bare-host-commands -->\` line before a \`\`\`sh block of two commands"
        exit 1
fi
echo "info run line:  $run_cmd"
echo "info test line: $test_cmd"

cache=${IRQSTEER_MINBASE_CACHE:-/var/cache/irqsteer-test-minbase/bookworm}
if [ ! -x "$cache/usr/bin/apt-get" ]; then
        echo "building the bare tree in $cache (once; about a minute)"
        mkdir -p "$(dirname "$cache")" || skip "cannot create $(dirname "$cache")"
        rm -rf "$cache.tmp" "$cache"
        if ! debootstrap --variant=minbase bookworm "$cache.tmp" http://deb.debian.org/debian >"$cache.log" 2>&1; then
                rm -rf "$cache.tmp"
                skip "debootstrap failed (no network?), see $cache.log"
        fi
        mv "$cache.tmp" "$cache"
fi

tmp=$(mktemp -d /tmp/irqsteer-bare.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
mkdir -p "$tmp/log"
copy_tree "$srcdir" "$tmp/src" || { echo "FAIL cannot copy $srcdir"; exit 1; }

cat > "$tmp/inner.sh" <<'INNER'
# in the container: $1 the run line, $2 the test line, $3 the steps
set -m  # job control: the backgrounded run line keeps SIGINT
cd /src/irqsteer || exit 1
for f in /proc/irq/default_smp_affinity /proc/sys/net/core/rps_sock_flow_entries /sys/class/net/*/queues/rx-0/rps_cpus; do
        [ -e "$f" ] || continue
        if test -w "$f"; then echo "result writable $f"; exit 1; fi
done
echo "result read-only"
t0=$(date +%s)
RUN_ARGS=--dry-run sh -c "$1" >/log/run.log 2>&1 &
job=$!
i=0
while kill -0 $job 2>/dev/null && ! grep -q '^.*Ready: ' /log/run.log && [ $i -lt 1800 ]; do sleep 1; i=$((i + 1)); done
pid=
for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = irqsteerd ] && pid=${p#/proc/}; done
echo "result ready_after $(( $(date +%s) - t0 ))"
if [ -n "$pid" ]; then
        sleep 5  # a few ticks of its main job
        kill -INT "$pid"
fi
wait $job
echo "result run_rc $?"
echo "result run_seconds $(( $(date +%s) - t0 ))"
case $3 in *test*) ;; *) exit 0 ;; esac
for f in tests/live-*.sh; do
        case $f in *-lib.sh) continue ;; esac  # sourced by the tests, not one
        grep -q 'IRQSTEER_LIVE' "$f" || { echo "result ungated $f"; exit 0; }
done
unset IRQSTEER_LIVE
t0=$(date +%s)
sh -c "$2" >/log/test.log 2>&1
echo "result test_rc $?"
echo "result test_seconds $(( $(date +%s) - t0 ))"
INNER

t0=$(date +%s)
# --console=pipe: no terminal, so the backgrounded run line (its own
# process group) is never stopped for touching one (apt does)
systemd-nspawn -q -D "$cache" --volatile=overlay --register=no --keep-unit --as-pid2 --console=pipe \
        --bind-ro=/proc/irq --bind="$tmp/src:/src/irqsteer" --bind="$tmp/log:/log" \
        --bind-ro="$tmp/inner.sh:/inner.sh" -- /bin/sh /inner.sh "$run_cmd" "$test_cmd" "$steps" \
        >"$tmp/nspawn.log" 2>&1 </dev/null
echo "info container ran $(( $(date +%s) - t0 ))s"
r() { sed -n "s/^result $1 //p" "$tmp/nspawn.log" | tail -n 1; }

if grep -q '^result writable' "$tmp/nspawn.log"; then
        fail "the host's IRQ or RPS files are writable in the container: $(sed -n 's/^result writable //p' "$tmp/nspawn.log"); not running"
        exit 1
fi
grep -q '^result read-only' "$tmp/nspawn.log" && pass "/proc/irq, /proc/sys and /sys read-only in the container" ||
        { fail "the container did not start"; cat "$tmp/nspawn.log"; exit 1; }
log=$tmp/log/run.log
echo "info run line took $(r run_seconds)s, Ready after $(r ready_after)s"
[ "$(r run_rc)" = 0 ] && pass "'$run_cmd' exit 0 after SIGINT to the daemon" ||
        fail "'$run_cmd' exit $(r run_rc)"
grep -q 'Ready: ' "$log" && pass "the daemon said Ready" || fail "the daemon said Ready"
grep -q 'topology: [0-9]* CPUs online' "$log" && pass "it read the host's CPUs" || fail "it read the host's CPUs"
grep -q 'Received SIGINT, stopping' "$log" && pass "SIGINT stopped it" || fail "SIGINT stopped it"
grep -Eq '(^|: )error: ' "$log" && fail "errors in its log: $(grep -E '(^|: )error: ' "$log" | head -3)" ||
        pass "no error in its log"
if [ $fails -gt 0 ]; then echo "--- run.log"; tail -40 "$log"; fi

case $steps in
*test*)
        if [ -n "$(r ungated)" ]; then
                fail "$(r ungated) runs without IRQSTEER_LIVE=1: make check as root there would change this host; not run"
        else
                echo "info test line took $(r test_seconds)s: $(grep -Ec '^PASS:' "$tmp/log/test.log") passed," \
                        "$(grep -Ec '^SKIP:' "$tmp/log/test.log") skipped, $(grep -Ec '^(FAIL|ERROR):' "$tmp/log/test.log") failed"
                [ "$(r test_rc)" = 0 ] && pass "'$test_cmd' exit 0" || {
                        fail "'$test_cmd' exit $(r test_rc)"
                        grep -E '^(FAIL|ERROR|XPASS):' "$tmp/log/test.log"; tail -30 "$tmp/log/test.log"
                }
        fi
        ;;
esac
echo "$fails failed"
[ $fails -eq 0 ]

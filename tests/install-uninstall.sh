#!/bin/sh
# `make install` and `make uninstall` with DESTDIR, from the build directory
# under test: install puts the binaries, the man pages, the unit, the
# example and, when none exists, /etc/irqsteer/irqsteer.conf (the example)
# in place; an existing configuration is never overwritten; the installed
# daemon reads the installed file and its drop-ins; uninstall removes
# everything again but an edited configuration, as the top-level Makefile
# promises.  Only the build directory and a temporary DESTDIR are written,
# so it also runs under `make distcheck` (read-only source tree).
set -u

skip() { echo "SKIP: $*"; exit 77; }

srcdir=${IRQSTEER_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${IRQSTEER_BUILDDIR:-$(pwd)}
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
check() { # check DESCRIPTION COMMAND...: ok when the command succeeds
        what=$1
        shift
        if "$@"; then pass "$what"; else fail "$what"; fi
}

[ -f "$builddir/Makefile" ] || skip "no Makefile in $builddir (run from make check)"
MAKE=${MAKE:-make}
command -v "$MAKE" >/dev/null 2>&1 || skip "$MAKE not found"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/irqsteer-install.XXXXXX") || exit 1
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
dest=$tmp/dest
log=$tmp/make.log

# The installation directories exactly as this build's Makefile has them
# (configure's --prefix, --sysconfdir, ...; distcheck picks its own).  The
# last line: make may first bring the Makefile itself up to date.
var() {
        printf 'print-var:\n\t@echo $(%s)\n' "$1" |
                env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
                        $MAKE -s --no-print-directory -C "$builddir" -f Makefile -f - print-var 2>/dev/null |
                tail -n 1
}
sbindir=$(var sbindir)
bindir=$(var bindir)
sysconfdir=$(var sysconfdir)
docdir=$(var docdir)
mandir=$(var mandir)
unitdir=$(var systemdsystemunitdir)
for v in "$sbindir" "$bindir" "$sysconfdir" "$docdir" "$mandir" "$unitdir"; do
        case $v in
        /*) ;;
        *) fail "installation directory \"$v\" from $builddir/Makefile is not absolute"; exit 1 ;;
        esac
done

# A make started from the test, not from make's recipe: the parent's job
# server is not ours to use.
run_make() {
        env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $MAKE -C "$builddir" "$@" DESTDIR="$dest" >"$log" 2>&1
}

conf=$dest$sysconfdir/irqsteer/irqsteer.conf
example_src=$srcdir/systemd/irqsteer.conf.example
installed="$dest$sbindir/irqsteerd $dest$bindir/irqsteerctl $dest$docdir/irqsteer.conf.example
$dest$mandir/man5/irqsteer.conf.5 $dest$mandir/man8/irqsteerd.8 $dest$mandir/man8/irqsteerctl.8
$dest$unitdir/irqsteerd.service $conf"

# ---- install ----
if run_make install; then
        pass "make install DESTDIR=..."
else
        fail "make install DESTDIR=... failed:"
        cat "$log"
        exit 1
fi
for f in $installed; do
        check "installed: ${f#"$dest"}" test -f "$f"
done
check "irqsteerd and irqsteerctl are executable" test -x "$dest$sbindir/irqsteerd" -a -x "$dest$bindir/irqsteerctl"
check "irqsteer.conf is the example (every key commented out)" cmp -s "$example_src" "$conf"
check "the documentation's example is the example" cmp -s "$example_src" "$dest$docdir/irqsteer.conf.example"
check "the unit starts the installed daemon ($sbindir/irqsteerd)" \
        grep -q "^ExecStart=$sbindir/irqsteerd" "$dest$unitdir/irqsteerd.service"
check "the unit reloads through the installed daemon (--reload, the verdict awaited)" \
        grep -qxF "ExecReload=$sbindir/irqsteerd --reload \$MAINPID" "$dest$unitdir/irqsteerd.service"

# The installed daemon with the installed file: valid as shipped, and its
# drop-in directory read (a problem there is reported as FILE:LINE).
out=$("$dest$sbindir/irqsteerd" --check-config --config "$conf" 2>&1)
check "irqsteerd --check-config on the installed file: configuration OK" test "$out" = "configuration OK"
mkdir -p "$conf.d"
printf '[balance]\nhot_samples = 0\n' >"$conf.d/50-test.conf"
out=$("$dest$sbindir/irqsteerd" --check-config --config "$conf" 2>&1)
check "--check-config reads the drop-ins: $out" \
        test "$out" = "$conf.d/50-test.conf:2: hot_samples: \"0\" is out of range (1..100)"
rm -r "$conf.d"

# ---- an existing configuration survives a second install ----
printf '[balance]\nbanned_cpus = 0\n' >"$conf"
if run_make install; then
        pass "make install again"
else
        fail "make install again failed:"
        cat "$log"
fi
check "install keeps an existing irqsteer.conf" grep -q "^banned_cpus = 0" "$conf"
check "install says it keeps it" grep -q "keeping the existing" "$log"

# ---- uninstall with an edited configuration ----
if run_make uninstall; then
        pass "make uninstall DESTDIR=..."
else
        fail "make uninstall DESTDIR=... failed:"
        cat "$log"
fi
for f in $installed; do
        [ "$f" = "$conf" ] && continue
        check "removed: ${f#"$dest"}" test ! -e "$f"
done
check "uninstall keeps the edited irqsteer.conf" grep -q "^banned_cpus = 0" "$conf"

# ---- uninstall of an unchanged configuration leaves nothing ----
rm -f "$conf"
if run_make install && run_make uninstall; then
        pass "make install, then make uninstall, with the example as irqsteer.conf"
else
        fail "make install / uninstall failed:"
        cat "$log"
fi
check "uninstall removes the unchanged irqsteer.conf" test ! -e "$conf"
check "uninstall removes the empty $sysconfdir/irqsteer" test ! -e "$dest$sysconfdir/irqsteer"
left=$(find "$dest" ! -type d)
check "no file left under DESTDIR${left:+: $left}" test -z "$left"

echo "$fails failed"
[ "$fails" -eq 0 ]

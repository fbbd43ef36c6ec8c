#!/bin/sh
# The manual pages: clean under `mandoc -Tlint -Wwarning`, and true to the
# code: every configuration key of src/config.c's key tables documented in
# irqsteer.conf(5) (as an ".It Cm KEY" entry) and present in
# systemd/irqsteer.conf.example, every option of `irqsteerd --help`,
# `irqsteerctl --help` and `irqsteerctl COMMAND --help` in its man page.
set -u

skip() { echo "SKIP: $*"; exit 77; }
command -v mandoc >/dev/null 2>&1 || skip "mandoc not installed (Debian package mandoc)"

srcdir=${IRQSTEER_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${IRQSTEER_BUILDDIR:-$(pwd)}
daemon=${IRQSTEERD:-$builddir/irqsteerd}
ctl=${IRQSTEERCTL:-$builddir/irqsteerctl}
man=$srcdir/man
fails=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

for page in "$man"/irqsteerd.8 "$man"/irqsteerctl.8 "$man"/irqsteer.conf.5; do
        out=$(mandoc -Tlint -Wwarning "$page" 2>&1)
        rc=$?
        if [ $rc -eq 0 ] && [ -z "$out" ]; then
                pass "mandoc -Tlint -Wwarning $(basename "$page")"
        else
                fail "mandoc -Tlint -Wwarning $(basename "$page") (exit $rc)"
                echo "$out"
        fi
done

# One date on all three pages (.TH's fourth field, or mdoc's .Dd line).
dates=$(for page in "$man"/irqsteerd.8 "$man"/irqsteerctl.8 "$man"/irqsteer.conf.5; do
        d=$(sed -n -e 's/^\.Dd //p' -e 's/^\.TH [^ ]* [^ ]* \([^ ]*\).*/\1/p' "$page" | head -n 1)
        date -d "$d" +%F 2>/dev/null || echo "unparsable:$d"
done | sort -u)
if [ "$(echo "$dates" | wc -l)" -eq 1 ]; then
        pass "the three man pages carry the same date ($dates)"
else
        fail "the man pages carry different dates:" $dates
fi

keys=$(sed -n 's/.*KEY("\([a-z_]*\)".*/\1/p' "$srcdir/src/config.c" | sort -u)
[ -n "$keys" ] || { echo "FAIL no KEY(\"...\") entries found in src/config.c"; exit 1; }
example=$srcdir/systemd/irqsteer.conf.example
for k in $keys; do
        grep -Eq "^\.It Cm $k( |$)" "$man/irqsteer.conf.5" || fail "key $k: no '.It Cm $k' entry in irqsteer.conf.5"
        grep -Eq "^#?$k =" "$example" || fail "key $k: not in irqsteer.conf.example"
done
pass "$(echo "$keys" | wc -l) config keys checked against irqsteer.conf.5 and irqsteer.conf.example"

# The rendered text, overstrike removed: "\-\-once" (man) and "Fl -once"
# (mdoc) both come out as "--once".
render() { mandoc -Tascii -O width=300 "$1" | sed 's/.\x08//g'; }

opts_in_page() { # opts_in_page WHAT PAGE HELP-TEXT
        what=$1; page=$2; help=$3
        text=$(render "$page")
        opts=$(printf '%s\n' "$help" | grep -o -- '--[a-z][a-z-]*' | sort -u)
        [ -n "$opts" ] || { fail "$what: no options found in its --help"; return; }
        for o in $opts; do
                printf '%s\n' "$text" | grep -q -- "$o\b" || fail "$what: $o not in $(basename "$page")"
        done
        pass "$what: $(echo "$opts" | wc -l) options of --help checked against $(basename "$page")"
}

[ -x "$daemon" ] || skip "no built irqsteerd at $daemon"
[ -x "$ctl" ] || skip "no built irqsteerctl at $ctl"
opts_in_page "irqsteerd" "$man/irqsteerd.8" "$("$daemon" --help)"
opts_in_page "irqsteerctl" "$man/irqsteerctl.8" "$("$ctl" --help)"
cmds=$("$ctl" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z]*\) .*/\1/p')
[ -n "$cmds" ] || fail "irqsteerctl --help lists no commands"
for c in $cmds; do
        render "$man/irqsteerctl.8" | grep -Eq "^ *irqsteerctl.* $c( |$)|^ +$c( |$)" ||
                fail "irqsteerctl $c: command not described in irqsteerctl.8"
        opts_in_page "irqsteerctl $c" "$man/irqsteerctl.8" "$("$ctl" "$c" --help 2>&1)"
done

echo "$fails failed"
[ $fails -eq 0 ]

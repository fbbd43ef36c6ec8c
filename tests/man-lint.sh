#!/bin/sh
# The manual pages: all in mdoc(7), clean under `mandoc -Tlint -Wstyle`
# (but for references to pages not installed here), and true to the code:
# every configuration key of src/config.c's key tables documented in
# irqsteer.conf(5) (as an ".It Cm KEY" entry) and present in
# systemd/irqsteer.conf.example, every option of `irqsteerd --help`,
# `irqsteerctl --help` and `irqsteerctl COMMAND --help` in its man page;
# every metric name the pages, README.md and the example quote written by
# src/metrics.c, every one it writes listed in irqsteerctl(8), none inside
# another's label braces; the series counts they quote the ones
# tests/test-report.c holds the code to (per CPU for at most
# include/metrics.h's METRICS_CPUS_MAX CPUs).
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
        # style too; a page not installed on this machine (ours, or
        # irqbalance(1)) is the machine's, not the page's
        out=$(mandoc -Tlint -Wstyle "$page" 2>&1 | grep -v -e 'referenced manual not found' -e 'mandoc.db')
        if [ -z "$out" ]; then
                pass "mandoc -Tlint -Wstyle $(basename "$page")"
        else
                fail "mandoc -Tlint -Wstyle $(basename "$page")"
                echo "$out"
        fi
        # one style: mdoc(7), as most of the pages were written
        if head -n 1 "$page" | grep -q '^\.Dd '; then
                pass "$(basename "$page") is mdoc(7)"
        else
                fail "$(basename "$page") is not mdoc(7) (first line: $(head -n 1 "$page"))"
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

# each built-in default (CKEY's last argument) is the one irqsteer.conf(5)
# states ("Default X", "Default .Ql X" or "Default .Cm X") and the example's
# commented line
defaults=$(sed -n 's/.*CKEY("\([a-z_]*\)",.*, "\([^"][^"]*\)"),$/\1 \2/p' "$srcdir/src/config.c")
[ -n "$defaults" ] || fail "no CKEY(..., \"DEFAULT\") entries found in src/config.c"
echo "$defaults" | while read -r k d; do
        text=$(awk -v k="$k" '$0 ~ "^\\.It Cm " k "( |$)" { f = 1; next } f && /^\.It / { f = 0 } f' \
                "$man/irqsteer.conf.5" | tr '\n' ' ')
        case "$text" in
        *"Default $d "* | *"Default $d."* | *"Default $d,"* | *"Default .Ql $d "* | *"Default .Cm $d "*) ;;
        *) echo "FAIL key $k: irqsteer.conf.5 does not state its default $d" ;;
        esac
        grep -Fqx "#$k = $d" "$example" || echo "FAIL key $k: irqsteer.conf.example does not show '#$k = $d'"
done > "${TMPDIR:-/tmp}/man-lint-defaults.$$"
if [ -s "${TMPDIR:-/tmp}/man-lint-defaults.$$" ]; then
        cat "${TMPDIR:-/tmp}/man-lint-defaults.$$"
        fails=$((fails + $(wc -l < "${TMPDIR:-/tmp}/man-lint-defaults.$$")))
else
        pass "$(echo "$defaults" | wc -l) built-in defaults stated in irqsteer.conf.5 and irqsteer.conf.example"
fi
rm -f "${TMPDIR:-/tmp}/man-lint-defaults.$$"

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

# Quoting that went wrong renders as a doubled quote or a quote opened
# inside another (".Ql a , Ql b" in a .Pq: `a, `b').
for page in "$man"/irqsteerd.8 "$man"/irqsteerctl.8 "$man"/irqsteer.conf.5; do
        bad=$(render "$page" | grep -n -e '""' -e "\`[^'\`]*\`")
        if [ -z "$bad" ]; then pass "$(basename "$page"): quotes balanced"
        else fail "$(basename "$page"): garbled quoting:"; echo "$bad"; fi
done

# Metric names: what the docs quote, the code writes.
code_metrics=$(grep -o '"irqsteer_[a-z_]*"' "$srcdir/src/metrics.c" | tr -d '"' | sort -u)
[ -n "$code_metrics" ] || { echo "FAIL no metric names found in src/metrics.c"; exit 1; }
docs_text=$( (for page in "$man"/irqsteerd.8 "$man"/irqsteerctl.8 "$man"/irqsteer.conf.5; do render "$page"; done
        cat "$srcdir/README.md" "$srcdir/systemd/irqsteer.conf.example") 2>/dev/null)
doc_metrics=$(printf '%s\n' "$docs_text" | grep -o 'irqsteer_[a-z_]*[a-z]' | sort -u)
n=0
for m in $doc_metrics; do
        n=$((n + 1))
        printf '%s\n' "$code_metrics" | grep -qx "$m" || fail "metric $m is quoted in the docs but src/metrics.c writes no such series"
done
pass "$n metric names quoted in the docs checked against src/metrics.c"
ctl_text=$(render "$man/irqsteerctl.8")
for m in $code_metrics; do
        # a histogram's _sum, _count and _bucket series are its family's
        case $m in
        *_sum | *_count | *_bucket)
                grep -q "family(f, \"${m%_*}\", \"histogram\"" "$srcdir/src/metrics.c" && m=${m%_*} ;;
        esac
        printf '%s\n' "$ctl_text" | grep -q -- "$m\b" || fail "metric $m is written by src/metrics.c but not listed in irqsteerctl.8"
done
pass "$(echo "$code_metrics" | wc -l) metrics of src/metrics.c listed in irqsteerctl.8"
# a label list swallowing the next name ("x_total{result, y}")
merged=$(printf '%s\n' "$docs_text" | grep -o '{[^}]*irqsteer_[^}]*}')
if [ -z "$merged" ]; then pass "no metric name inside another's label braces"
else fail "a metric name inside label braces: $merged"; fi

# The series counts the docs quote: tests/test-report.c holds the code to
# METRICS_PER_CPU per CPU plus METRICS_OTHERS.
per_cpu=$(sed -n 's/^#define METRICS_PER_CPU \([0-9]*\)$/\1/p' "$srcdir/tests/test-report.c")
others=$(sed -n 's/^#define METRICS_OTHERS \([0-9]*\)$/\1/p' "$srcdir/tests/test-report.c")
[ -n "$per_cpu" ] && [ -n "$others" ] || { echo "FAIL no METRICS_PER_CPU/METRICS_OTHERS in tests/test-report.c"; exit 1; }
# per-CPU series for at most METRICS_CPUS_MAX CPUs (include/metrics.h)
cpus_max=$(sed -n 's/^#define METRICS_CPUS_MAX \([0-9]*\)$/\1/p' "$srcdir/include/metrics.h")
[ -n "$cpus_max" ] || { echo "FAIL no METRICS_CPUS_MAX in include/metrics.h"; exit 1; }
shown=$((cpus_max < 256 ? cpus_max : 256))
at256=$((per_cpu * shown + others))
flat=$(printf '%s\n' "$docs_text" | tr '\n' ' ' | tr -s ' ')
quoted=$(printf '%s\n' "$flat" | grep -o '[0-9][0-9,]* \(series \)\{0,1\}on a 256-CPU host' | sed 's/[^0-9].*//')
[ -n "$quoted" ] || fail "the docs quote no series count for a 256-CPU host"
for q in $quoted; do
        [ "$q" = "$at256" ] || fail "the docs quote $q series on a 256-CPU host; the code writes $at256"
done
for q in $(printf '%s\n' "$flat" | grep -o '[0-9]* series per CPU plus [0-9]* others' | tr -dc '0-9 \n' | tr -s ' ' | sed 's/ /:/'); do
        [ "$q" = "$per_cpu:$others" ] || fail "the docs quote ${q%%:*} series per CPU plus ${q#*:} others; the code writes $per_cpu and $others"
done
pass "series counts in the docs: $per_cpu per CPU plus $others, $at256 on a 256-CPU host"

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

#!/bin/sh
# contrib/prometheus/irqsteer.rules.yml and contrib/grafana/irqsteer.json:
# every series either names is one irqsteerd exports (irqsteerctl(8),
# METRICS), the dashboard is JSON whose queries parse as PromQL, and the
# alerts fire as tests/prometheus/irqsteer.rules.test.yml expects
# (promtool test rules).  Without promtool (package prometheus) only the
# series names and the JSON are checked, and the test is a skip.
set -u
srcdir=${IRQSTEER_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/irqsteer-prom.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0

# The series names and the dashboard's queries as a rules file (Grafana's
# variables replaced), for promtool to parse.
if ! python3 - "$srcdir" "$tmp/dashboard.rules.yml" <<'PY'
import json, re, sys
src, out = sys.argv[1], sys.argv[2]
man = open(f"{src}/man/irqsteerctl.8").read()
sec = man[man.index(".Sh METRICS"):man.index(".Sh FILES")]
known = set()
for line in sec.splitlines():
    if line.startswith(".It Li irqsteer_"):
        known.update(re.findall(r"\birqsteer_[a-z_]+", line))
if len(known) < 20:
    sys.exit(f"FAIL only {len(known)} series in irqsteerctl(8) METRICS")
bad = 0
def names(where, text):
    global bad
    found = set(re.findall(r"\birqsteer_[a-z_]+\b", text))
    for n in sorted(found - known):
        print(f"FAIL {where}: {n} is not a series of irqsteerctl(8) METRICS")
        bad += 1
    return found
rules = open(f"{src}/contrib/prometheus/irqsteer.rules.yml").read()
exprs = [l.split("expr:", 1)[1].strip() for l in rules.splitlines() if l.strip().startswith("expr:")]
used = set()
for e in exprs:
    used |= names("irqsteer.rules.yml", e)
print(f"ok   irqsteer.rules.yml: {len(exprs)} alerts over {len(used)} known series")
try:
    dash = json.load(open(f"{src}/contrib/grafana/irqsteer.json"))
except ValueError as e:
    sys.exit(f"FAIL contrib/grafana/irqsteer.json is not JSON: {e}")
qs = []
def walk(v):
    if isinstance(v, dict):
        for k, x in v.items():
            if k in ("expr", "definition") and isinstance(x, str):
                qs.append(x)
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
walk(dash)
used = set()
for q in qs:
    used |= names("irqsteer.json", q)
if not qs or any(not t.get("expr") for p in dash.get("panels", []) for t in p.get("targets", [])):
    print("FAIL irqsteer.json: a panel target without a query"); bad += 1
print(f"ok   irqsteer.json: JSON, {len(qs)} queries over {len(used)} known series")
with open(out, "w") as f:
    f.write("groups:\n  - name: dashboard\n    rules:\n")
    for i, q in enumerate(q for q in qs if not q.startswith("label_values(")):
        q = q.replace("$__rate_interval", "5m").replace("$instance", ".*")
        f.write(f"      - record: irqsteer_dashboard_query_{i}\n        expr: {json.dumps(q)}\n")
sys.exit(1 if bad else 0)
PY
then
        fails=$((fails + 1))
fi

if ! command -v promtool >/dev/null 2>&1; then
        [ $fails -eq 0 ] || exit 1
        echo "SKIP: promtool not installed (package prometheus): the rules and queries not parsed or tested"
        exit 77
fi
if promtool check rules "$srcdir/contrib/prometheus/irqsteer.rules.yml" >"$tmp/out" 2>&1; then
        echo "ok   promtool check rules irqsteer.rules.yml"
else
        echo "FAIL promtool check rules irqsteer.rules.yml:"; cat "$tmp/out"; fails=$((fails + 1))
fi
if promtool check rules "$tmp/dashboard.rules.yml" >"$tmp/out" 2>&1; then
        echo "ok   the dashboard's queries parse (promtool)"
else
        echo "FAIL the dashboard's queries do not all parse:"; cat "$tmp/out"; fails=$((fails + 1))
fi
# promtool resolves rule_files against the test file's directory
if (cd "$srcdir/tests/prometheus" && promtool test rules irqsteer.rules.test.yml) >"$tmp/out" 2>&1; then
        echo "ok   promtool test rules: every alert fires when and where expected"
else
        echo "FAIL promtool test rules:"; cat "$tmp/out"; fails=$((fails + 1))
fi
echo "$fails failed"
[ $fails -eq 0 ]

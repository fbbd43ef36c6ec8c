"""The harness itself: run_cases' verdict from throwaway cases, each test
script run in a child python with daemonlib from IRQSTEER_DAEMONLIB_DIR
(default: this directory), its exit code checked: a failed case fails the
test whatever the others did, a skip alone skips it, a skip beside a pass
passes it."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import daemonlib as dl  # noqa: E402 (the Checker of this test)

LIB = os.environ.get("IRQSTEER_DAEMONLIB_DIR", HERE)

CASES = '''
import sys
def ok():
    c.check(True, "a check that holds")
def bad():
    c.check(False, "a check that fails")
def skip():
    print("SKIP: not here")
    sys.exit(77)
def boom():
    raise RuntimeError("a case that raises")
def bare_exit_after_fail():
    c.check(False, "a check that fails")
    sys.exit()
def bare_exit():
    c.check(True, "a check that holds")
    sys.exit()
def exit_two():
    sys.exit(2)
def own_exit_fail():
    c.check(False, "a check that fails")
    c.exit()
'''

# (what, the cases run in this order, expected verdict)
TABLE = [
    ("fail then skip fails", "bad, skip", "fail"),
    ("skip then fail fails", "skip, bad", "fail"),
    ("a raise fails", "boom", "fail"),
    ("a raise beside a pass fails", "ok, boom", "fail"),
    ("every case skipped skips", "skip, skip", "skip"),
    ("pass then skip passes", "ok, skip", "pass"),
    ("skip then pass passes", "skip, ok", "pass"),
    ("all passed passes", "ok, ok", "pass"),
    ("bare sys.exit() after a failed check fails", "bare_exit_after_fail, ok", "fail"),
    ("bare sys.exit() with its checks held passes", "bare_exit, ok", "pass"),
    ("sys.exit(2) with no check fails", "exit_two, ok", "fail"),
    ("checker.exit() after a failed check, then a skip, fails", "own_exit_fail, skip", "fail"),
]


def run(cases):
    script = (f"import sys\nsys.path.insert(0, {LIB!r})\nimport daemonlib as dl\n"
              f"c = dl.Checker()\n{CASES}\ndl.run_cases(c, [{cases}])\nc.exit()\n")
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(script)
    try:
        p = subprocess.run([sys.executable, f.name], capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(f.name)
    return p.returncode, p.stdout + p.stderr


def verdict(code):
    """automake's reading of an exit code (99, a hard error, fails too)."""
    return {0: "pass", 77: "skip"}.get(code, "fail")


c = dl.Checker()
for what, cases, want in TABLE:
    code, out = run(cases)
    c.check(verdict(code) == want, what, f"exit {code} ({verdict(code)}), want {want}; output:\n{out}")
c.exit()

"""Hostile inputs that are not bad scenario files: files that are not
files, budgets inside long steps, signals, random zero-time draws, names
that are not ASCII through the Python API. Each was a crash, a hang or a
late error (issue 15); each must end cleanly, promptly, with a message."""
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from conftest import BUILD, ROOT

VFSSIM = pathlib.Path(os.environ.get("VFSSIM_BINARY", BUILD / "vfssim"))

# One op of a million local compute steps: a task runs them ahead of the
# clock inside one event, so a budget checked only between events never fires.
MILLION_STEPS = """scenario: million-steps
machine: nehalem-ep-2s
workload: {tasks: process, loop: [big], warmup: 0us, duration: 10s, cpus: [1]}
strategies:
  s:
    ops:
      big:
        - repeat: 1000
          body:
            - repeat: 1000
              body:
                - compute: 1ns
"""


def vfssim(*args, **kw):
    return subprocess.run([str(VFSSIM), *map(str, args)], capture_output=True, text=True, errors="replace",
                          timeout=kw.pop("timeout", 120), **kw)


def test_max_wall_stops_a_point_of_long_steps_within_twice_its_budget(tmp_path):
    path = tmp_path / "million.yaml"
    path.write_text(MILLION_STEPS)
    # What the run costs besides the point (start, load, plan), measured on the
    # same machine under the same load: a point stopped by its first event budget.
    t0 = time.monotonic()
    fixed = vfssim("run", path, "--db", "", "-q", "--max-events", "1")
    overhead = time.monotonic() - t0
    assert fixed.returncode == 1 and "event budget" in fixed.stderr, fixed.stderr
    t0 = time.monotonic()
    r = vfssim("run", path, "--db", "", "-q", "--max-wall", "2")
    wall = time.monotonic() - t0
    assert r.returncode == 1, r.stderr
    assert "wall-time budget exceeded" in r.stderr
    assert wall - overhead < 4.0, f"stopped {wall - overhead:.1f} s after its start ({overhead:.1f} s to start) for a 2 s budget"


def test_sigint_stops_a_point_of_long_steps_within_seconds(tmp_path):
    path = tmp_path / "million.yaml"
    path.write_text(MILLION_STEPS)
    p = subprocess.Popen([str(VFSSIM), "run", str(path), "--db", "", "-q"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    # The sweep catches SIGINT once it runs (before, loading, the default action applies):
    # wait for the handler (SigCgt of /proc/PID/status), which a loaded machine may take
    # seconds to reach, then let the point run into its long steps.
    deadline = time.monotonic() + 60
    while int(next(l for l in open(f"/proc/{p.pid}/status") if l.startswith("SigCgt:")).split()[1], 16) \
            & (1 << (signal.SIGINT - 1)) == 0:
        assert time.monotonic() < deadline and p.poll() is None, "the sweep never began"
        time.sleep(0.02)
    time.sleep(1.0)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    # The point would run for minutes: stopping within seconds is the point's budget check
    # inside its long steps, not a speed claim (2 cores shared with the test run: a loose bound).
    assert time.monotonic() - t0 < 5.0
    assert p.returncode == 130, err
    assert "interrupted" in err


@pytest.mark.parametrize("kind", ["fifo", "device", "directory", "too-large"])
def test_a_scenario_path_must_be_a_regular_file_of_bounded_size(kind, tmp_path):
    if kind == "fifo":
        path = tmp_path / "fifo.yaml"
        os.mkfifo(path)
    elif kind == "device":
        path = pathlib.Path("/dev/zero")
    elif kind == "directory":
        path = tmp_path
    else:
        path = tmp_path / "big.yaml"
        path.write_text("#" * (5 << 20))
    r = vfssim("run", path, "--db", "", timeout=20)
    assert r.returncode == 2, r.stderr
    first = r.stderr.splitlines()[0]
    assert first.startswith(f"{path}:0:0: ")
    assert ("not a regular file" in first) if kind != "too-large" else ("bytes" in first)


def scenario(compute):
    return f"""scenario: zero-draws
machine: nehalem-ep-2s
workload: {{tasks: process, loop: [a], warmup: 0ns, duration: 200ns, cpus: [1, 2]}}
strategies:
  s:
    ops:
      a:
        - compute: {compute}
"""


@pytest.mark.parametrize("compute", ["{exp: 1ns}", "{uniform: [0ps, 1ps]}", "0000000000000000001ns"])
def test_times_that_may_draw_zero_are_valid_and_run(compute, tmp_path):
    path = tmp_path / "z.yaml"
    path.write_text(scenario(compute))
    r = vfssim("run", path, "--db", "", "-q", "--json")
    assert r.returncode == 0, r.stderr


# Through Python, in a child interpreter: a crash must show as a signal,
# not take the test process down.
PY_CASES = {
    "non-ascii name": 'vfssim.Scenario.from_yaml("scenario: b\\u00e4se\\n")',
    "nul in a name": 'vfssim.Scenario.from_yaml("scenario: \\"a\\\\0b\\"\\n")',
    "self-containing alias": 'vfssim.Scenario.from_yaml(open(%r).read())'
    % str(ROOT / "tests/bad-scenarios/alias-contains-itself.yaml"),
    "second document": 'vfssim.Scenario.from_yaml(open(%r).read())'
    % str(ROOT / "tests/bad-scenarios/second-document.yaml"),
}


@pytest.mark.parametrize("case", sorted(PY_CASES))
def test_python_refuses_hostile_text_with_a_scenario_error(case):
    code = f"""
import vfssim
try:
    {PY_CASES[case]}
except vfssim.ScenarioError as e:
    msg = str(e)
    msg.encode("utf-8")
    print("refused:", msg[:200])
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(BUILD / "python")})
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr[-1500:]}"
    assert r.stdout.startswith("refused:"), r.stdout + r.stderr


def test_python_entry_points_refuse_none_as_the_scenario():
    """None as the scenario of every entry point: an exception, not a null dereference (was a segfault)."""
    code = """
from vfssim import _vfssim
for name in ["sweep", "document", "run_point", "run_points", "validate", "next_bottlenecks"]:
    try:
        getattr(_vfssim, name)(None)
    except (TypeError, ValueError) as e:
        print(name, "refused")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(BUILD / "python")})
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr[-1500:]}"
    assert r.stdout.count("refused") == 6, r.stdout


@pytest.mark.parametrize("args", [["--seed", "-1"], ["--seed=-2"], ["--jobs", "-1"], ["-j", "-3"]])
def test_negative_values_of_unsigned_options_are_refused(args):
    r = vfssim("run", ROOT / "tests/bad-scenarios/valid/base.yaml", "--db", "", "-q", *args)
    assert r.returncode == 2, r.stderr
    assert "must be 0 or more" in r.stderr


@pytest.mark.parametrize("seconds", ["nan", "1e300", "0", "-1"])
def test_bench_refuses_sim_seconds_out_of_range(seconds):
    r = vfssim("bench", "--sim-seconds", seconds)
    assert r.returncode == 2, r.stderr
    assert "--sim-seconds" in r.stderr


@pytest.mark.parametrize("version", [-1, 1, 3, 5])
def test_a_foreign_sqlite_file_is_refused_untouched(version, tmp_path):
    """A SQLite file vfssim did not write (another user_version, no runs table)
    is refused before anything is written: no tables added, no switch to WAL."""
    import sqlite3
    db = tmp_path / "foreign.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (x)")
    con.execute(f"PRAGMA user_version = {version}")
    con.commit()
    con.close()
    before = db.read_bytes()
    r = vfssim("run", ROOT / "tests/bad-scenarios/valid/base.yaml", "--db", db, "-q", "--cpus", "1")
    assert r.returncode == 2, r.stderr
    assert "not a vfssim results database" in r.stderr
    assert db.read_bytes() == before
    assert not (tmp_path / "foreign.db-wal").exists()

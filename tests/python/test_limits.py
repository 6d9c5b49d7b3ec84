"""Absurd parameters run within memory or stop with a clear error: 0 and
100000 CPUs, machines beyond what vfssim supports, 10^9 operations, 1 ps
holds, hours of simulated time (event and wall-time budgets), and
deadlocking strategies, which are results naming the CPUs and the locks."""
import json
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import BUILD, ROOT

VFSSIM = str(BUILD / "vfssim")
BASE = ROOT / "tests/bad-scenarios/valid/base.yaml"


def vfssim(*args, **kw):
    return subprocess.run([VFSSIM, *map(str, args)], capture_output=True, text=True, timeout=300, **kw)


def variant(tmp_path, name, *edits):
    text = BASE.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("cpus,words", [("0", "not a positive CPU count"), ("100000", "is more than machine"),
                                        ("-4", "not a positive CPU count"), ("1,x", "not a positive CPU count")])
def test_cpu_counts_the_machine_cannot_have(cpus, words, tmp_path):
    db = tmp_path / "r.db"
    r = vfssim("run", BASE, "--cpus", cpus, "--db", db)
    assert r.returncode == 2 and words in r.stderr, r.stderr
    assert not db.exists()


def test_machine_preset_larger_than_supported(tmp_path):
    (tmp_path / "machines").mkdir()
    (tmp_path / "machines/huge.yaml").write_text(
        "machine: huge\nlevels:\n  - {name: socket, count: 100, transfer: 100ns}\n  - {name: core, count: 1000}\n"
        "interconnect: {base: 100ns, hop: 0ns}\nlocal_hit: 1ns\nlocal_atomic: 10ns\n")
    (tmp_path / "scen").mkdir()
    scen = variant(tmp_path, "scen/huge.yaml", ("machine: nehalem-ep-2s", "machine: huge"))
    r = vfssim("run", scen, "--db", "")
    assert r.returncode == 2, r.stderr
    assert str(tmp_path / "scen/../machines/huge.yaml") in r.stderr or "huge.yaml" in r.stderr
    assert "more than 4096 hardware threads" in r.stderr


def test_a_billion_operations_stop_at_the_event_budget(tmp_path):
    # An hour of simulated time is about 10^9 iterations of this loop.
    scen = variant(tmp_path, "hour.yaml", ("duration: 20us", "duration: 3600s"))
    db = tmp_path / "r.db"
    t0 = time.time()
    r = vfssim("run", scen, "--cpus", "1,2", "--max-events", "1e6", "--db", db)
    assert time.time() - t0 < 60
    assert r.returncode == 1, r.stderr
    assert "event budget exceeded: 1000000 events at " in r.stderr
    assert "(the run ends at 3600s)" in r.stderr and "raise --max-events" in r.stderr
    assert "--resume" in r.stderr
    con = sqlite3.connect(db)
    assert con.execute("select status from runs").fetchall() == [("failed",)]
    assert con.execute("select count(*) from curve").fetchone()[0] == 0  # no partial point stored
    con.close()


def test_hours_of_simulated_time_stop_at_the_wall_budget_within_memory(tmp_path):
    scen = variant(tmp_path, "hours.yaml", ("duration: 20us", "duration: 36000s"))
    # The run's own peak: RUSAGE_CHILDREN of this process is the largest of every child the
    # tests ran before, so a Python process between runs vfssim alone and reports its peak.
    measure = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(r.returncode)")
    t0 = time.time()
    r = subprocess.run([sys.executable, "-c", measure, str(VFSSIM), "run", str(scen), "--cpus", "4", "--max-wall", "1",
                        "--db", ""], capture_output=True, text=True, timeout=120)
    took = time.time() - t0
    assert r.returncode == 1, r.stderr
    assert "wall-time budget exceeded: 1 s of wall-clock time at " in r.stderr and "raise --max-wall" in r.stderr
    assert took < 30
    peak_kib = int(r.stderr.strip().splitlines()[-1])
    assert peak_kib < 512 * 1024, f"{peak_kib} KiB"


def test_budget_arguments_are_checked(tmp_path):
    for args in (["--max-events", "lots"], ["--max-events", "-5"], ["--max-events", "1.5"], ["--max-wall", "-1"]):
        r = vfssim("run", BASE, *args, "--db", "")
        assert r.returncode == 2, (args, r.stderr)


def test_picosecond_holds_run(tmp_path):
    scen = variant(tmp_path, "ps.yaml", ("hold: 40ns", "hold: 1ps"), ("hold: 50ns", "hold: 1ps"),
                   ("hold: 30ns", "hold: 1ps"), ("compute: 100ns", "compute: 1ps"))
    r = vfssim("run", scen, "--json", "--db", "", "-q")
    assert r.returncode == 0, r.stderr
    assert all(p["ops_per_sec"] > 0 and p["stop"] == "time-limit" for p in json.loads(r.stdout)["points"])


def test_cpu_time_beyond_the_clock_is_refused_before_running(tmp_path):
    scen = variant(tmp_path, "wide.yaml", ("duration: 20us", "duration: 86400s"),
                   ("machine: nehalem-ep-2s", "machine:\n  levels:\n    - {name: socket, count: 4, transfer: 100ns}\n"
                    "    - {name: core, count: 1024}\n  interconnect: {base: 100ns, hop: 0ns}\n  local_hit: 1ns\n"
                    "  local_atomic: 10ns"))
    db = tmp_path / "r.db"
    r = vfssim("run", scen, "--cpus", "4096", "--db", db)
    assert r.returncode == 2 and "shorten the warmup and duration" in r.stderr, r.stderr
    assert not db.exists()


DEADLOCK_MACHINE = """machine:
  levels:
    - {name: socket, count: 1, transfer: 20ns}
    - {name: core, count: 8}
  local_hit: 1ns
  local_atomic: 10ns
workload:
  tasks: process
  loop: [pick]
  warmup: 1us
  duration: 200us
  cpus: [1, 4]
"""

ABBA = "scenario: abba\n" + DEADLOCK_MACHINE + """strategies:
  abba:
    locks:
      a: {kind: mcs, scope: global}
      b: {kind: ticket, scope: global}
    ops:
      pick:
        - compute: 100ns
        - branch: 0.5
          then: [{call: ab}]
          else: [{call: ba}]
      ab:
        - lock: a
          body: [{compute: 50ns}, {lock: b, hold: 50ns}]
      ba:
        - lock: b
          body: [{compute: 50ns}, {lock: a, hold: 50ns}]
"""

SELF = "scenario: self\n" + DEADLOCK_MACHINE + """strategies:
  twice:
    locks:
      a: {kind: ticket, scope: global}
    ops:
      pick:
        - compute: 100ns
        - lock: a
          body: [{compute: 50ns}, {call: again}]
      again:
        - lock: a
          hold: 10ns
"""


@pytest.mark.parametrize("text,words", [
    (ABBA, ["waiting for lock 'b' at _raw_spin_lock <- ab <- pick held by cpu",
            "waiting for lock 'a' at _raw_spin_lock <- ba <- pick held by cpu"]),
    (SELF, ["waiting for lock 'a' at _raw_spin_lock <- again <- pick held by cpu", "itself"]),
], ids=["abba", "self"])
def test_a_deadlock_is_a_stored_result_naming_cpus_locks_and_steps(text, words, tmp_path):
    scen = tmp_path / "deadlock.yaml"
    scen.write_text(text)
    db = tmp_path / "r.db"
    t0 = time.time()
    r = vfssim("run", scen, "--db", db, "-q")
    assert time.time() - t0 < 60
    assert r.returncode == 1, r.stderr
    lines = [l for l in r.stderr.splitlines() if "deadlock: cpu " in l]
    assert lines, r.stderr
    assert all(w in lines[-1] for w in words), lines
    assert "@ 4 CPUs: deadlock: cpu " in r.stderr
    assert "stored as run 1" in r.stdout  # the finished points, printed and stored
    con = sqlite3.connect(db)
    stops = dict(con.execute("select cpus, stop from points").fetchall())
    con.close()
    assert set(stops) == {1, 4}
    assert stops[4].startswith("deadlock: cpu ")
    j = vfssim("run", scen, "--db", "", "--json", "-q")
    assert j.returncode == 1
    point4 = [p for p in json.loads(j.stdout)["points"] if p["cpus"] == 4][0]
    assert point4["stop"] == stops[4]

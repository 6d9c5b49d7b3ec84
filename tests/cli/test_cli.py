#!/usr/bin/env python3
"""CLI test: `vfssim run --json` shape, determinism, exit codes, the store.

usage: test_cli.py VFSSIM_BINARY SOURCE_DIR
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

binary, src = sys.argv[1], sys.argv[2]
scenario = os.path.join(src, "scenarios/seed/open-close-power5.yaml")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(*args, cwd=None):
    return subprocess.run([binary, *args], capture_output=True, text=True, cwd=cwd)


with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "runs.db")
    a = run("run", scenario, "--cpus", "1,2,4", "--json", "--db", db, "-q")
    check(a.returncode == 0, "run --json exits 0: " + a.stderr[-300:])
    doc = json.loads(a.stdout)
    check(doc["scenario"] == "open-close-power5" and doc["machine"] == "power5p-64" and doc["seed"] == 1,
          "document names scenario, machine, seed")
    pts = doc["points"]
    check(len(pts) == 6, "2 strategies x 3 CPU counts")
    for key in ("strategy", "cpus", "ops_per_sec", "stddev", "events"):
        check(all(key in p for p in pts), "every point has " + key)
    check(all(p["ops_per_sec"] > 0 and p["events"] > 0 for p in pts), "points have positive rates and events")

    b = run("run", scenario, "--cpus", "1,2,4", "--json", "--db", db, "-q")
    check(a.stdout == b.stdout, "same seed gives byte-identical JSON")
    c = run("run", scenario, "--cpus", "1,2,4", "--json", "--db", "", "-q", "--seed", "2")
    check(c.stdout != a.stdout, "another seed gives other numbers")
    j1 = run("run", scenario, "--cpus", "1,2,4", "--json", "--db", "", "-q", "--jobs", "1")
    check(j1.stdout == a.stdout, "--jobs 1 gives the same bytes as all cores")

    con = sqlite3.connect(db)
    check(con.execute("select count(*) from runs").fetchone()[0] == 2, "two runs stored")
    check(con.execute("select count(*) from curve").fetchone()[0] == 12, "curve rows stored")
    check(con.execute("select count(*) from lock_stats").fetchone()[0] > 0, "lock_stat rows stored")
    check(con.execute("pragma user_version").fetchone()[0] == 1, "schema version 1")
    con.close()

    h = run("history", "--db", db)
    check(h.returncode == 0 and "open-close-power5" in h.stdout, "history lists the runs")

    human = run("run", scenario, "--cpus", "1,2", "-q", cwd=tmp)
    check(human.returncode == 0 and "strategy baseline" in human.stdout and "CPUs" in human.stdout,
          "human output has the table and the chart")
    check(os.path.exists(os.path.join(tmp, "vfssim.db")), "default database vfssim.db in the working directory")

    bad = os.path.join(tmp, "bad.yaml")
    with open(scenario) as f:
        text = f.read()
    with open(bad, "w") as f:
        f.write(text.replace("hold: 40ns", "hold: 40", 1))
    r = run("run", bad, "--db", "")
    check(r.returncode == 2 and "bad.yaml:" in r.stderr and "no unit" in r.stderr, "bad unit: exit 2 with position")
    r = run("run", scenario, "--cpus", "1,999", "--db", "")
    check(r.returncode == 2, "too many CPUs: exit 2")
    foreign = os.path.join(tmp, "foreign.db")
    with open(foreign, "w") as f:
        f.write("not a database at all, just text\n" * 20)
    before = open(foreign).read()
    r = run("run", scenario, "--cpus", "1", "--db", foreign)
    check(r.returncode == 2 and "foreign.db" in r.stderr, "foreign database: clear error")
    check(open(foreign).read() == before, "foreign database untouched")
    check(run("--version").stdout.startswith("vfssim "), "--version")
    check(run("--help").returncode == 0, "--help")

print(f"cli: {len(failures)} failed")
sys.exit(1 if failures else 0)

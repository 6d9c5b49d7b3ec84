#!/usr/bin/env python3
"""CLI test: `vfssim run --json` shape, determinism, exit codes, the store.

usage: test_cli.py VFSSIM_BINARY SOURCE_DIR
"""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

binary, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
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
    n_strategies = len({p["strategy"] for p in pts})
    check(n_strategies >= 2 and len(pts) == 3 * n_strategies, "every strategy x 3 CPU counts")
    for key in ("strategy", "cpus", "ops_per_sec", "stddev", "events"):
        check(all(key in p for p in pts), "every point has " + key)
    check(all(p["ops_per_sec"] > 0 and p["events"] > 0 for p in pts), "points have positive rates and events")

    b = run("run", scenario, "--cpus", "1,2,4", "--json", "--db", db, "-q")
    check(a.stdout == b.stdout, "same seed gives byte-identical JSON")
    c = run("run", scenario, "--cpus", "1,2,4", "--json", "--db", "", "-q", "--seed", "2")
    check(c.stdout != a.stdout, "another seed gives other numbers")
    j1 = run("run", scenario, "--cpus", "1,2,4", "--json", "--db", "", "-q", "--jobs", "1")
    check(j1.stdout == a.stdout, "--jobs 1 gives the same bytes as all cores")

    # The JSON profile is the whole profile, as Python and the database hold it; --json-profile-top cuts it.
    con = sqlite3.connect(db)
    big = max(pts, key=lambda p: len(p["profile"]))
    stored = con.execute("select count(*) from profile p join runs r on r.id = p.run_id where r.id = 1 and "
                         "p.strategy = ? and p.cpus = ? and p.rep = 0", (big["strategy"], big["cpus"])).fetchone()[0]
    check(len(big["profile"]) == stored and stored > 3, f"JSON profile complete: {len(big['profile'])} = {stored} rows stored")
    t3 = json.loads(run("run", scenario, "--cpus", "1,2,4", "--json", "--db", "", "-q", "--json-profile-top", "3").stdout)
    check(all(len(p["profile"]) == min(3, len(q["profile"])) and p["profile"] == q["profile"][:3]
              for p, q in zip(t3["points"], pts)), "--json-profile-top 3: the 3 largest entries")
    r = run("run", scenario, "--cpus", "1", "--db", "", "-q", "--json-profile-top", "3")
    check(r.returncode == 2 and "--json-profile-top needs --json" in r.stderr, "--json-profile-top without --json: exit 2")
    check(con.execute("select count(*) from runs").fetchone()[0] == 2, "two runs stored")
    check(con.execute("select count(*) from curve").fetchone()[0] == 2 * len(pts), "curve rows stored")
    check(con.execute("select count(*) from lock_stats").fetchone()[0] > 0, "lock_stat rows stored")
    check(con.execute("pragma user_version").fetchone()[0] >= 2, "schema version 2 or later")
    con.close()

    h = run("history", "--db", db)
    check(h.returncode == 0 and "open-close-power5" in h.stdout, "history lists the runs")

    # Stored runs: history --json, show, show --resolved, diff, export --csv; none creates a database.
    hj = run("history", "--db", db, "--json")
    hdoc = json.loads(hj.stdout)
    check(hj.returncode == 0 and [r["id"] for r in hdoc["runs"]] == [1, 2]
          and all(r["kind"] == "run" and r["scenario"] == "open-close-power5" and r["points"] == len(pts)
                  for r in hdoc["runs"]), "history --json: both runs, their kind, scenario and points")
    check(json.loads(run("history", "--db", db, "--json", "--kind", "validate").stdout)["runs"] == []
          and json.loads(run("history", "--db", db, "--json", "--scenario", "nonesuch").stdout)["runs"] == [],
          "history --kind / --scenario filter")
    nodb = os.path.join(tmp, "none.db")
    hn = run("history", "--db", nodb)
    check(hn.returncode == 0 and "no results database" in hn.stdout and not os.path.exists(nodb),
          "history without a database says so and creates none")
    check(json.loads(run("history", "--db", nodb, "--json").stdout)["runs"] == [] and not os.path.exists(nodb),
          "history --json without a database: no runs, no file")
    sn = run("show", "1", "--db", nodb)
    check(sn.returncode == 2 and "none.db" in sn.stderr and not os.path.exists(nodb), "show without a database: exit 2, no file")
    s1 = run("show", "1", "--db", db)
    check(s1.returncode == 0 and "run 1 of" in s1.stdout and "strategy baseline" in s1.stdout, "show prints the run's curves")
    sj = json.loads(run("show", "1", "--db", db, "--json").stdout)
    sj_run = sj.pop("run")
    check(sj == doc and sj_run["id"] == 1 and sj_run["status"] == "done", "show --json is the run's --json document, and its row")
    s9 = run("show", "9", "--db", db)
    check(s9.returncode == 2 and "no run 9" in s9.stderr, "show of a missing run names it: " + s9.stderr.strip())
    resolved = run("show", "1", "--db", db, "--resolved")
    rpath = os.path.join(tmp, "resolved.yaml")
    with open(rpath, "w") as f:
        f.write(resolved.stdout)
    check(resolved.returncode == 0 and "extends:" not in resolved.stdout and "levels:" in resolved.stdout,
          "show --resolved: the machine inlined, extends applied")
    rr = run("run", rpath, "--cpus", "1,2,4", "--json", "--db", "", "-q")
    rdoc = json.loads(rr.stdout)
    check(rr.returncode == 0 and {k: v for k, v in rdoc.items() if k != "scenario_hash"}
          == {k: v for k, v in doc.items() if k != "scenario_hash"}, "the resolved scenario runs to the same results")
    d = run("diff", "1", "2", "--db", db)
    check(d.returncode == 0 and "%stddev     %change         %stddev" in d.stdout
          and "baseline.vfssim.ops_per_sec@4" in d.stdout, "diff prints LKP's layout, one row per point")
    dj = json.loads(run("diff", "1", "2", "--db", db, "--json").stdout)
    thr = [r for r in dj["rows"] if r["metric"] == "baseline.vfssim.ops_per_sec@4"][0]
    p4 = [p for p in pts if p["strategy"] == "baseline" and p["cpus"] == 4][0]
    check(dj["base"]["id"] == 1 and dj["new"]["id"] == 2 and thr["base"] == p4["ops_per_sec"] and thr["change_pct"] == 0.0,
          "diff --json: run 1 against run 2 (the same seed: no change)")
    import csv, io
    for table, key in (("points", None), ("lock_stat", "lock_stat"), ("profile", "profile")):
        e = run("export", "1", "--csv", "--table", table, "--db", db)
        rows = list(csv.DictReader(io.StringIO(e.stdout)))
        want = sum(len(p[key]) for p in pts) if key else len(pts)
        check(e.returncode == 0 and len(rows) == want, f"export --csv --table {table}: {len(rows)} rows, {want} expected")
    e = list(csv.DictReader(io.StringIO(run("export", "1", "--csv", "--table", "lock_stat", "--db", db).stdout)))
    first = [p for p in pts if p["lock_stat"]][0]
    row = [r for r in e if r["strategy"] == first["strategy"] and int(r["cpus"]) == first["cpus"]][0]
    check(float(row["waittime_total_us"]) == first["lock_stat"][0]["waittime_total_us"] and row["name"] == first["lock_stat"][0]["name"],
          "export --csv: the JSON document's values")
    check(run("export", "1", "--table", "points", "--db", db).returncode == 2, "export without --csv: exit 2")

    human = run("run", scenario, "--cpus", "1,2", "-q", cwd=tmp)
    check(human.returncode == 0 and "strategy baseline" in human.stdout and "CPUs" in human.stdout,
          "human output has the table and the chart")
    check(os.path.exists(os.path.join(tmp, "vfssim.db")), "default database vfssim.db in the working directory")

    bad = os.path.join(tmp, "bad.yaml")
    with open(scenario) as f:
        text = f.read()
    with open(bad, "w") as f:
        f.write(text.replace("compute: 2ns", "compute: 2", 1))
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

# ---- validate, compare, fits, --plot, bottlenecks (design review) ----
# A 4-CPU machine and a process per CPU: the small scenarios below.
TINY_MACHINE = """\
machine:
  levels:
    - {name: machine, count: 1, transfer: 100ns}
    - {name: cpu, count: 4}
  local_hit: 1ns
  local_atomic: 10ns
workload:
  tasks: process
  placement: compact
"""
REVIEW_SCENARIO = """\
scenario: review-test
""" + TINY_MACHINE + """\
  loop: [iter]
  warmup: 10us
  duration: 1ms
  cpus: [1, 2, 4]
strategies:
  free:
    ops:
      iter:
        - compute: 1us
  locked:
    locks:
      big: {kind: mcs, scope: global}
    ops:
      iter:
        - lock: big
          hold: 1us
expect:
  - figure: two-cpus-double
    ratio: {new: free@2, base: free@1}
    reported: 2.0
    tolerance: 1%
    source: 'test: a lock-free loop scales linearly'
  - figure: one-cpu-latency
    value: {point: free@1}
    metric: us_per_op
    reported: 1.0
    tolerance: 1%
    source: 'test: one iteration is 1 us of compute'
  - figure: compute-share
    value: {point: free@2}
    metric: 'share:iter'
    reported: 1.0
    tolerance: 2%
    source: 'test: all the time is the compute step'
  - figure: share-at-least
    value: {point: free@2}
    metric: 'share:iter'
    reported: 40%
    bound: at_least
    tolerance: 1%
    source: 'test: a bound (">40%") is met anywhere above it'
  - figure: latency-at-most
    value: {point: free@1}
    metric: us_per_op
    reported: 5
    bound: at_most
    tolerance: 1%
    source: 'test: a bound ("under 5 us") is met anywhere below it'
  - figure: locked-throughput
    value: {point: locked@1}
    reported: 990000
    tolerance: 5%
    source: 'test: one CPU, 1 us hold, no waiting'
  - figure: fitted-off
    value: {point: locked@1}
    reported: 990000
    tolerance: 10%
    fitted: true
    source: 'test: a fitted figure (met here; tests/cli/test_cli.py makes it miss in a second file)'
"""
WRONG_FIGURE = """\
  - figure: wrong-direction
    ratio: {new: free@4, base: free@1}
    reported: 0.5
    tolerance: 10%
    source: 'test: must fail'
  - figure: bound-missed
    value: {point: free@4}
    metric: us_per_op
    reported: 2
    bound: at_least
    tolerance: 10%
    source: 'test: 1 us against ">= 2 us" is 50% short'
"""

with tempfile.TemporaryDirectory() as tmp:
    good_dir = os.path.join(tmp, "good")
    os.mkdir(good_dir)
    good = os.path.join(good_dir, "review.yaml")
    with open(good, "w") as f:
        f.write(REVIEW_SCENARIO)
    vdb = os.path.join(tmp, "val.db")
    v = run("validate", good, "--db", vdb, "-q")
    check(v.returncode == 0, "validate: all predictions within tolerance exits 0"
          + ("" if v.returncode == 0 else ": " + v.stdout[-600:] + v.stderr[-300:]))
    check("two-cpus-double" in v.stdout and "summary:" in v.stdout and "fitted" in v.stdout,
          "validate prints the figure table and a summary")
    vj = run("validate", good_dir, "--json", "--db", "", "-q", "--reps", "2", "--jobs", "1")
    check(vj.returncode == 0, "validate --json exits 0")
    doc = json.loads(vj.stdout)
    check(set(doc) == {"figures", "summary", "per_scenario"}, "validate --json has figures, summary, per_scenario")
    figs = {f["figure"]: f for f in doc["figures"]}
    check(len(figs) == 7, "seven figures")
    keys = {"scenario", "figure", "reported", "predicted", "fitted", "within_tolerance", "direction_ok", "error",
            "tolerance", "bound", "kind", "source", "restated", "restates", "factor", "metric", "new", "base", "curve",
            "fit_missed", "discrepancy"}
    check(all(set(f) == keys for f in doc["figures"]), "every figure has exactly the documented keys")
    check(all(set(f["discrepancy"]) == {"kind_class", "bound_class", "log_error"} for f in doc["figures"]),
          "every figure gives its discrepancy class and log(reported/predicted)")
    r2 = figs["two-cpus-double"]
    check(abs(r2["predicted"] - 2.0) < 0.02 and r2["within_tolerance"] and r2["direction_ok"] is True
          and r2["kind"] == "ratio" and r2["scenario"] == "review-test", "lock-free ratio 2 CPUs / 1 CPU = 2.0")
    check(abs(figs["one-cpu-latency"]["predicted"] - 1.0) < 0.01, "us_per_op of a 1 us loop is 1.0")
    check(abs(figs["compute-share"]["predicted"] - 1.0) < 0.02, "share:iter of a compute-only loop is 1.0")
    check(figs["one-cpu-latency"]["direction_ok"] is None, "value figures have no direction")
    check(figs["share-at-least"]["bound"] == "at_least" and figs["share-at-least"]["error"] == 0
          and figs["share-at-least"]["within_tolerance"], "an at_least bound is met above it, error 0")
    check(figs["latency-at-most"]["error"] == 0 and figs["latency-at-most"]["within_tolerance"]
          and figs["one-cpu-latency"]["bound"] == "about", "an at_most bound is met below it; default bound about")
    off = figs["fitted-off"]
    check(off["fitted"] and off["within_tolerance"] and off["fit_missed"] is False, "a fitted figure within tolerance is met")
    # Restated: the same simulation as a fitted figure (locked@1), or the same
    # kind and metric of the same simulations as an earlier prediction.
    check(figs["locked-throughput"]["restated"] and figs["locked-throughput"]["restates"] == "fitted-off",
          "a figure of a fitted figure's point is restated")
    check(figs["share-at-least"]["restates"] == "compute-share" and figs["latency-at-most"]["restates"] == "one-cpu-latency"
          and not figs["compute-share"]["restated"], "a second figure of the same point and metric is restated")
    s = doc["summary"]
    check(s["scenarios"] == 1 and s["figures"] == 7 and s["predictions"] == 3 and s["restated"] == 3
          and s["fitted"] == 1 and s["fit_missed"] == 0 and s["within_factor_1_5"] == 3
          and s["levels"]["workload"]["predictions"] == 3 and set(s["levels"]) == {"workload"}
          and s["predictions_within_tolerance"] == 3 and s["fraction_within"] == 1.0
          and s["directions_right"] == 1 and s["directions_total"] == 1 and s["wall_seconds"] >= 0,
          "validate summary counts: " + json.dumps(s))
    con = sqlite3.connect(vdb)
    check(con.execute("select count(*) from validations").fetchone()[0] == 1, "validate stores a validations row")
    check(con.execute("select count(*) from validation_figures").fetchone()[0] == 7, "validate stores its figures")
    check(json.loads(con.execute("select summary_json from validations").fetchone()[0])["figures"] == 7,
          "stored summary_json is the summary")
    con.close()

    bad_dir = os.path.join(tmp, "bad")
    os.mkdir(bad_dir)
    with open(os.path.join(bad_dir, "a.yaml"), "w") as f:
        f.write(REVIEW_SCENARIO)
    with open(os.path.join(bad_dir, "b.yaml"), "w") as f:
        f.write(REVIEW_SCENARIO.replace("scenario: review-test", "scenario: review-test-wrong\nlevel: locks") + WRONG_FIGURE)
    # A fitted figure its constant could not reach: fit_missed, counted and failing (c.yaml, level hardware).
    with open(os.path.join(bad_dir, "c.yaml"), "w") as f:
        f.write(REVIEW_SCENARIO.replace("scenario: review-test", "scenario: review-test-fit\nlevel: hardware")
                .replace("reported: 990000\n    tolerance: 10%\n    fitted: true", "reported: 1\n    tolerance: 10%\n    fitted: true"))
    vb = run("validate", bad_dir, "--json", "--db", "", "-q")
    check(vb.returncode == 1, "validate: a prediction outside tolerance exits 1")
    docb = json.loads(vb.stdout)
    missed = [f for f in docb["figures"] if f["figure"] == "fitted-off" and f["scenario"] == "review-test-fit"]
    check(len(missed) == 1 and missed[0]["fit_missed"] and not missed[0]["within_tolerance"],
          "a fitted figure outside tolerance is fit_missed")
    lv = docb["summary"]["levels"]
    check(docb["summary"]["fit_missed"] == 1 and lv["hardware"]["fit_missed"] == 1 and lv["locks"]["fit_missed"] == 0
          and lv["workload"]["scenarios"] == 1 and lv["locks"]["scenarios"] == 1 and lv["hardware"]["scenarios"] == 1,
          "the summary counts fit_missed, per level too: " + json.dumps(lv))
    check([p["level"] for p in docb["per_scenario"]] == ["workload", "locks", "hardware"], "per_scenario gives each file's level")
    vt = run("validate", os.path.join(bad_dir, "c.yaml"), "--db", "", "-q")
    check(vt.returncode == 1 and "MISSED" in vt.stdout and "fits missed: 1 of 1" in vt.stdout
          and "level hardware" in vt.stdout, "validate's table marks a missed fit and its summary counts it")
    wrong = [f for f in docb["figures"] if f["figure"] == "wrong-direction"]
    check(len(wrong) == 1 and wrong[0]["direction_ok"] is False and not wrong[0]["within_tolerance"],
          "the failing figure is marked: wrong direction, outside tolerance")
    short = [f for f in docb["figures"] if f["figure"] == "bound-missed"]
    check(len(short) == 1 and abs(short[0]["error"] - 0.5) < 0.01 and not short[0]["within_tolerance"],
          "a missed at_least bound scores the shortfall past it (1 us vs >= 2 us: 50%)")
    check(docb["summary"]["scenarios"] == 3 and [f["scenario"] for f in docb["figures"]][0] == "review-test",
          "a directory's scenarios are validated in name order")
    # Figure kinds: a curve (one value figure per point, one fitted), a peak,
    # a spread, and a change scored on the change (error relative to
    # max(|reported change|, 10%)).
    kinds = os.path.join(tmp, "kinds.yaml")
    with open(kinds, "w") as f:
        f.write(REVIEW_SCENARIO.split("expect:")[0] + """expect:
  - figure: free-curve
    curve: {strategy: free}
    reported: {1: 1.0e6, 2: 2.0e6, 4: 3.0e6}
    fitted_at: 1
    tolerance: 10%
    source: 'test: 4 CPUs at 3e6 is a 25% miss of the 4e6 a lock-free loop gives'
  - figure: free-peak
    peak: {strategy: free, cpus: [1, 2, 4]}
    metric: speedup
    reported: {cpus: 2, value: 4}
    tolerance: 5%
    source: 'test: the peak is at 4 CPUs (within a doubling of 2), speedup 4'
  - figure: free-spread
    spread: {point: free@4}
    metric: us_per_op
    reported: [1, 1.5]
    tolerance: 5%
    source: 'test: every task runs 1 us per iteration: the slowest end misses by 33%'
  - figure: free-double
    change: {new: free@2, base: free@1}
    reported: +90%
    tolerance: 25%
    source: 'test: +100% against +90% is an error of 10/90'
  - figure: locked-small-change
    change: {new: locked@2, base: locked@1}
    reported: +5%
    tolerance: 25%
    source: 'test: a 5% change is scored relative to the 10% floor'
""")
    kj = run("validate", kinds, "--json", "--db", "", "-q")
    kdoc = json.loads(kj.stdout)
    kf = {f["figure"]: f for f in kdoc["figures"]}
    check(sorted(kf) == ["free-curve@1", "free-curve@2", "free-curve@4", "free-double", "free-peak", "free-spread",
                         "locked-small-change"] and kf["free-curve@4"]["curve"] == "free-curve",
          "a curve is one value figure per point, named CURVE@CPUS: " + str(sorted(kf)))
    check(kf["free-curve@1"]["fitted"] and not kf["free-curve@2"]["fitted"], "fitted_at marks one point of the curve")
    check(abs(kf["free-curve@4"]["error"] - 1 / 3) < 0.01 and abs(kf["free-curve@4"]["factor"] - 4 / 3) < 0.01
          and not kf["free-curve@4"]["within_tolerance"], "a curve point is scored like a value, with its factor")
    pk = kf["free-peak"]
    check(pk["predicted_cpus"] == 4 and pk["reported_cpus"] == 2 and pk["cpus_within_doubling"]
          and abs(pk["predicted"] - 4) < 0.05 and pk["within_tolerance"], "peak: where and how high: " + json.dumps(pk))
    sp = kf["free-spread"]
    check(abs(sp["predicted"] - 1) < 0.01 and abs(sp["predicted_slowest"] - 1) < 0.01
          and abs(sp["error"] - 1 / 3) < 0.01 and not sp["within_tolerance"], "spread: fastest and slowest task")
    dbl = kf["free-double"]
    check(abs(dbl["error"] - (dbl["predicted"] - 1.9) / 0.9) < 1e-9 and dbl["within_tolerance"],
          "a change's error is the change's miss over the reported change")
    small = kf["locked-small-change"]
    check(abs(small["error"] - abs(small["predicted"] - 1.05) / 0.10) < 1e-9,
          "a small change's error is relative to the 10% floor: " + json.dumps(small))
    ks = kdoc["summary"]
    check(ks["peaks"] == 1 and ks["peaks_within_doubling"] == 1 and ks["predictions"] == 6 and ks["fitted"] == 1,
          "the summary counts peaks: " + json.dumps(ks))
    check(kdoc["per_scenario"][0]["scenario"] == "review-test" and kdoc["per_scenario"][0]["predictions"] == 6,
          "per_scenario carries each scenario's counts")
    kh = run("validate", kinds, "--db", "", "-q")
    check("4@4" in kh.stdout and "restated" in kh.stdout and "within a factor 1.5" in kh.stdout,
          "the table prints a peak as HEIGHT@CPUS and the new counts")

    # Spread statistics of the point's tasks (stat:): a lock-free 1 us loop
    # has every per-op latency 1 us exactly and its tasks equally fast; the
    # FIFO lock held 1 us by 4 CPUs makes each iteration wait ~4 holds.
    stats = os.path.join(tmp, "stats.yaml")
    with open(stats, "w") as f:
        f.write(REVIEW_SCENARIO.split("expect:")[0] + """expect:
  - figure: free-p99
    spread: {point: free@4}
    stat: p99_latency
    reported: 1.0
    tolerance: 1%
    source: 'test: every iteration is 1 us of compute'
  - figure: free-fair
    spread: {point: free@4}
    stat: fairness
    reported: 1.0
    tolerance: 1%
    source: 'test: four equal tasks'
  - figure: free-median
    spread: {point: free@4}
    stat: median
    metric: us_per_op
    reported: 1.0
    tolerance: 1%
    source: 'test: the median task runs 1 us per iteration'
  - figure: locked-tail
    spread: {point: locked@4}
    stat: p99_latency
    bound: at_most
    reported: 2
    tolerance: 10%
    source: 'test: a 1 us hold shared by 4 CPUs cannot finish 99% of iterations within 2 us'
""")
    sdb = os.path.join(tmp, "stats.db")
    sj = run("validate", stats, "--json", "--db", sdb, "-q")
    sf = {f["figure"]: f for f in json.loads(sj.stdout)["figures"]}
    check(sf["free-p99"]["stat"] == "p99_latency" and sf["free-p99"]["predicted"] == 1.0
          and sf["free-p99"]["within_tolerance"] and sf["free-p99"]["reported_slowest"] is None,
          "spread stat p99_latency: a fixed 1 us loop's p99 is 1 us exactly: " + json.dumps(sf["free-p99"]))
    check(1.0 <= sf["free-fair"]["predicted"] < 1.01 and sf["free-fair"]["within_tolerance"],
          "spread stat fairness: equal tasks, max/min ~ 1: " + json.dumps(sf["free-fair"]))
    check(abs(sf["free-median"]["predicted"] - 1.0) < 0.01 and sf["free-median"]["within_tolerance"],
          "spread stat median (us_per_op)")
    lt = sf["locked-tail"]
    check(lt["predicted"] > 3.5 and not lt["within_tolerance"] and abs(lt["error"] - (lt["predicted"] - 2) / 2) < 1e-9,
          "an at_most latency bound missed scores the excess over the bound: " + json.dumps(lt))
    check(not any(f["restated"] for f in sf.values()), "spreads of one point with different stats are all predictions")
    rows = sqlite3.connect(sdb).execute("select figure, stat from validation_figures order by figure").fetchall()
    check(rows == [("free-fair", "fairness"), ("free-median", "median"), ("free-p99", "p99_latency"),
                   ("locked-tail", "p99_latency")], f"validation_figures.stat: {rows}")
    st = run("validate", stats, "--db", "", "-q")
    check(re.search(r"free-p99\s+spread\s+1 us\s+1 us", st.stdout) is not None and re.search(r"locked-tail\s+spread\s+<=2 us", st.stdout),
          "the table prints a one-number spread as a value (with its bound): " + st.stdout[-800:])

    broken = os.path.join(tmp, "broken.yaml")
    with open(broken, "w") as f:
        f.write(REVIEW_SCENARIO.replace("new: free@2", "new: nonesuch@2"))
    vx = run("validate", broken, "--db", "")
    check(vx.returncode == 2 and "broken.yaml:" in vx.stderr, "validate: a bad scenario exits 2 with its position")
    check(run("validate", os.path.join(tmp, "missing.yaml"), "--db", "").returncode == 2,
          "validate: a missing path exits 2")

    # run: fits, bottleneck, next_bottleneck and --plot.
    svg = os.path.join(tmp, "curves.svg")
    rr = run("run", good, "--json", "--db", vdb, "-q", "--plot", svg, "--next-bottleneck")
    check(rr.returncode == 0, "run --plot --next-bottleneck exits 0: " + rr.stderr[-300:])
    rdoc = json.loads(rr.stdout)
    fits = {f["strategy"]: f for f in rdoc.get("fits", [])}
    check(set(fits) == {"free", "locked"}, "run --json has one fit per strategy")
    check(all(set(f["amdahl"]) == {"sigma", "lambda"} and set(f["usl"]) == {"sigma", "kappa", "lambda", "peak_cpus"}
              and f["variant"] == "default" for f in fits.values()), "fits have amdahl and usl parameters")
    check(fits["free"]["usl"]["sigma"] < 0.01 and fits["free"]["usl"]["kappa"] < 1e-3
          and abs(fits["free"]["usl"]["lambda"] - 1e6) < 1e4, "a lock-free loop fits sigma ~ 0, lambda ~ 1/(1 us)")
    check(fits["locked"]["amdahl"]["sigma"] > 0.9, "a loop that holds one lock throughout fits sigma ~ 1")
    locked4 = [p for p in rdoc["points"] if p["strategy"] == "locked" and p["cpus"] == 4][0]
    free4 = [p for p in rdoc["points"] if p["strategy"] == "free" and p["cpus"] == 4][0]
    bn = locked4["bottleneck"]
    check(bn is not None and bn["name"] == "big" and bn["kind"] == "lock" and 0.5 < bn["share"] <= 1.0,
          "bottleneck of the locked loop is its lock: " + json.dumps(bn))
    check(free4["bottleneck"] is None and free4.get("next_bottleneck", 0) is None, "a lock-free loop has no bottleneck")
    check("next_bottleneck" in locked4 and locked4["next_bottleneck"] is None,
          "with the only lock made free nothing waits next")
    con = sqlite3.connect(vdb)
    check(con.execute("select count(*) from fits").fetchone()[0] == 4, "run stores amdahl and usl fits per curve")
    con.close()
    plain = json.loads(run("run", good, "--json", "--db", "", "-q").stdout)
    check(all("next_bottleneck" not in p and "bottleneck" in p for p in plain["points"]),
          "next_bottleneck only with --next-bottleneck")
    check(os.path.exists(svg), "--plot writes the SVG")
    with open(svg) as f:
        svg_text = f.read()
    import xml.etree.ElementTree as ET
    ET.fromstring(svg_text)
    check(svg_text.count("<polyline") == 2, "one polyline per strategy")
    check(svg_text.count('class="reported value"') == 4,
          "reported values in ops/s and in us per op (not shares) are overlaid as hollow circles")
    check(svg_text.count('class="reported ratio"') == 1, "the reported ratio is drawn against its base")
    check("review-test" in svg_text and "free" in svg_text and "locked" in svg_text, "title and legend")
    human = run("run", good, "--db", "", "-q", "--next-bottleneck")
    check("scalability fits" in human.stdout and "bottleneck: big" in human.stdout,
          "human run output shows fits and bottlenecks")

    chain = run("run", good, "--db", "", "-q", "--json", "--cpus", "4", "--strategy", "locked", "--next-bottleneck",
                "--bottleneck-depth", "3")
    pts = json.loads(chain.stdout)["points"]
    check(chain.returncode == 0 and pts[0]["bottleneck_chain"][0]["name"] == "big"
          and pts[0]["bottleneck_chain"][0]["ops_per_sec_without"] > pts[0]["ops_per_sec"]
          and pts[0]["next_bottleneck"] is None and len(pts[0]["bottleneck_chain"]) == 1,
          "--bottleneck-depth: the chain stops when nothing waits: " + json.dumps(pts[0].get("bottleneck_chain")))
    check(run("run", good, "--db", "", "--bottleneck-depth", "2").returncode == 2,
          "--bottleneck-depth without --next-bottleneck is bad input")

    # Speedup is relative to the 1-CPU rate of the same curve, never to the sweep's first point.
    alone = json.loads(run("run", good, "--db", "", "-q", "--json", "--cpus", "4", "--strategy", "locked").stdout)
    check(alone["points"][0]["speedup"] is None and alone["points"][0]["efficiency"] is None
          and alone["fits"][0]["usl"] is None and alone["fits"][0]["points"] == 1,
          "no 1-CPU point: speedup null, and no fit with fewer than 3 CPU counts")
    both = json.loads(run("run", good, "--db", "", "-q", "--json", "--cpus", "1,4", "--strategy", "locked").stdout)
    p1, p4 = both["points"]
    check(abs(p4["speedup"] - p4["ops_per_sec"] / p1["ops_per_sec"]) < 1e-9 and p4["speedup"] < 1.5,
          "a saturated lock's speedup over its 1-CPU rate stays near 1: " + str(p4["speedup"]))
    table = run("run", good, "--db", "", "-q", "--cpus", "4", "--strategy", "locked").stdout
    check("no 1-CPU point" in table and "no fit: 1 CPU count" in table, "the table says why it prints no speedup or fit")

    # compare: the LKP table and its JSON.
    cdb = os.path.join(tmp, "compare.db")
    c = run("compare", good, "--base", "locked", "--new", "free", "--cpus", "4", "--reps", "2", "--db", cdb)
    check(c.returncode == 0 and "---------------- ---------------------------\n         %stddev     %change         %stddev\n"
          in c.stdout, "compare prints the LKP header: " + c.stderr[-300:])
    check("vfssim.throughput" in c.stdout and "perf-profile.cpu-cycles." in c.stdout
          and "lock_stat.big.waittime-total" in c.stdout, "compare rows: throughput, profile, lock_stat")
    printed = [l for l in c.stdout.splitlines() if l.strip() and l.split()[-1].startswith(("vfssim.", "perf-profile.", "lock_stat."))]
    con = sqlite3.connect(cdb)
    check(con.execute("select count(*), min(status) from runs").fetchone() == (1, "done"), "compare stores one run")
    check(sorted(r[0] for r in con.execute("select strategy from curve")) == ["free", "locked"]
          and con.execute("select count(*) from points").fetchone()[0] == 4, "both sides' replications are stored")
    stored = con.execute("select metric, base, new, cpus from comparisons order by row").fetchall()
    check([r[0] for r in stored] == [l.split()[-1] for l in printed] and all(r[1:] == ("locked", "free", 4) for r in stored),
          "compare stores its table, row for row")
    con.close()
    check("stored as run 1 in " + cdb in c.stdout, "compare says where it stored the run")
    cj = run("compare", good, "--base", "locked", "--new", "free", "--json", "--db", "")
    check(cj.returncode == 0, "compare --json exits 0")
    cdoc = json.loads(cj.stdout)
    check(cdoc["run_id"] is None, "compare --db '' stores nothing")
    check(cdoc["base"] == "locked" and cdoc["new"] == "free" and cdoc["cpus"] == 4, "compare names both and the CPUs")
    row_keys = {"metric", "base", "base_stddev_pct", "new", "new_stddev_pct", "change_pct", "change_pp"}
    check(all(set(r) == row_keys for r in cdoc["rows"]) and cdoc["rows"][0]["metric"] == "vfssim.throughput",
          "compare rows have the documented keys, throughput first")
    thr = cdoc["rows"][0]
    check(thr["new"] > 3 * thr["base"] and abs(thr["change_pct"] - (thr["new"] - thr["base"]) / thr["base"] * 100) < 1e-6,
          "%change is (new - base) / base")
    check(cdoc["bottleneck"]["base"]["name"] == "big" and cdoc["bottleneck"]["new"] is None
          and "next_bottleneck" in cdoc, "compare reports each side's bottleneck")
    check(run("compare", good, "--base", "locked", "--new", "nonesuch", "--db", "").returncode == 2,
          "compare: unknown strategy exits 2")

    # budgets: validate and compare stop on a point past --max-events, score and store nothing.
    bdb = os.path.join(tmp, "budget.db")
    bv = run("validate", scenario, "--max-events", "1000", "--db", bdb, "-q")
    check(bv.returncode == 1 and "event budget exceeded" in bv.stderr and "raise --max-events" in bv.stderr
          and (not os.path.exists(bdb) or sqlite3.connect(bdb).execute("select count(*) from validations").fetchone()[0] == 0),
          "validate: a point past --max-events fails the run, stores nothing: " + bv.stderr[-200:])
    bc = run("compare", good, "--base", "locked", "--new", "free", "--max-events", "100", "--db", bdb)
    check(bc.returncode == 1 and "event budget exceeded" in bc.stderr and "no table" in bc.stderr
          and sqlite3.connect(bdb).execute("select count(*) from runs").fetchone()[0] == 0,
          "compare: a point past --max-events fails, no table: " + bc.stderr[-200:])
    check(run("validate", scenario, "--max-wall", "-1", "--db", "").returncode == 2, "validate: --max-wall -1 is bad input")
    # the what-if runs of --next-bottleneck obey the budget too (the point itself fits in it)
    pj = run("run", scenario, "--strategy", "baseline", "--cpus", "8", "--json", "--db", "", "-q")
    ev = json.loads(pj.stdout)["points"][0]["events"]
    wi = run("run", scenario, "--strategy", "baseline", "--cpus", "8", "--next-bottleneck", "--max-events", str(ev + 10),
             "--db", "", "-q")
    check(wi.returncode == 1 and "without its bottleneck stopped: event budget exceeded" in wi.stderr,
          "run --next-bottleneck: a what-if run past --max-events fails the command: " + wi.stderr[-200:])


# ---- spread, lock_stat as the kernel prints it, LKP's layout, the bottleneck threshold (issue 16) ----
RW_SCENARIO = """\
scenario: rw-test
""" + TINY_MACHINE + """\
  loop: [reader, writer]
  warmup: 10us
  duration: 1ms
  cpus: [1, 4]
strategies:
  rw:
    locks:
      table_rwsem: {kind: rwsem, scope: global, spin: true}
    ops:
      reader:
        - lock: table_rwsem
          mode: read
          hold: {exp: 1us}
      writer:
        - lock: table_rwsem
          hold: 500ns
"""

with tempfile.TemporaryDirectory() as tmp:
    rw = os.path.join(tmp, "rw.yaml")
    with open(rw, "w") as f:
        f.write(RW_SCENARIO)
    one = json.loads(run("run", rw, "--json", "--db", "", "-q").stdout)["points"]
    check(all(p["ci95"] is None and p["stddev_pct"] is None and p["stddev"] == 0 for p in one),
          "one replication: ci95 and stddev_pct null, stddev 0 (as before)")
    three = json.loads(run("run", rw, "--json", "--db", "", "-q", "--reps", "3").stdout)["points"]
    p4 = [p for p in three if p["cpus"] == 4][0]
    lo, hi = p4["ci95"]
    # t(0.975, 2) = 4.303: the interval is mean -+ 4.303 s / sqrt(3)
    half = 4.302653 * p4["stddev"] / 3 ** 0.5
    check(abs((hi - lo) / 2 - half) <= 1e-6 * max(1.0, half) and abs((lo + hi) / 2 - p4["ops_per_sec"]) < 1e-6 * hi,
          f"--reps 3: ci95 is mean -+ t(0.975, 2) s / sqrt(3): {p4['ci95']}, stddev {p4['stddev']}")
    check(p4["stddev"] > 0 and abs(p4["stddev_pct"] - 100 * p4["stddev"] / p4["ops_per_sec"]) < 1e-9,
          "stddev_pct = 100 stddev / ops_per_sec beside stddev")
    human1 = run("run", rw, "--db", "", "-q", "--cpus", "4").stdout
    row = [l for l in human1.splitlines() if l.strip().startswith("4 ")][0]
    check(row.split()[2] == "-" and row.split()[3] == "-" and "0.00%" not in row,
          "one replication: the table prints - for stddev and the interval: " + row)
    human3 = run("run", rw, "--db", "", "-q", "--cpus", "4", "--reps", "3").stdout
    row3 = [l for l in human3.splitlines() if l.strip().startswith("4 ")][0]
    check(row3.split()[2].endswith("%") and f"{lo:.0f}..{hi:.0f}" in row3, "three replications: stddev % and the 95% CI: " + row3)
    # lock_stat as /proc/lock_stat prints it, with the rwsem's -W and -R rows and its contention points
    ls = human1.split("CPUs: lock_stat\n", 1)[1].splitlines()
    check(ls[0] == "lock_stat version 0.4" and ls[1] == "-" * 221 and ls[3] == "-" * 221, "lock_stat version line and separators")
    header = ls[2]
    check(header.startswith(" " * 30 + "class name ") and header.endswith("holdtime-avg"), "lock_stat header row")
    w = [l for l in ls if l.startswith(" " * 27 + "table_rwsem-W:")]
    r = [l for l in ls if l.startswith(" " * 27 + "table_rwsem-R:")]
    check(len(w) == 1 and len(r) == 1, "an rwsem held both ways has a -W and a -R row, names ending at column 40")
    check(all(len(x) == len(header) for x in w + r), "the -W and -R rows are as wide as the header (14-character columns)")
    cols = [int(x.split(":")[1].split()[1]) for x in w + r]
    pts1 = [p for p in one if p["cpus"] == 4][0]
    rwj = {m["mode"]: m for m in pts1["lock_stat_rw"]}
    lsj = pts1["lock_stat"][0]
    check(set(rwj) == {"W", "R"} and cols == [rwj["W"]["contentions"], rwj["R"]["contentions"]]
          and rwj["W"]["acquisitions"] + rwj["R"]["acquisitions"] == lsj["acquisitions"]
          and rwj["W"]["contentions"] + rwj["R"]["contentions"] == lsj["contentions"],
          "-W and -R rows are the lock_stat_rw JSON rows and sum to the class's row")
    cps = [c for c in pts1["contention_points"] if c["kind"] == "contention"]
    check(0 < len(cps) <= 4 and sum(c["contentions"] for c in cps) <= lsj["contentions"]
          and {c["chain"].split(" <- ")[1] for c in cps} <= {"reader", "writer"},
          "contention points: the reader and writer steps, at most 4, no more than the contentions: " + json.dumps(cps))
    check(any("[<step " in l and l.startswith(" " * 29 + "table_rwsem ") for l in ls) and "." * 221 in ls,
          "contention points printed under the class, then the dotted separator")
    # compare in LKP's layout
    cmp_out = run("compare", rw, "--base", "rw", "--new", "rw", "--cpus", "4", "--reps", "2", "--db", "").stdout
    lines = cmp_out.splitlines()
    i = lines.index("---------------- ---------------------------")
    check(lines[i - 1].startswith("rw ") and lines[i + 1] == "         %stddev     %change         %stddev"
          and lines[i + 2] == "             \\          |                \\", "compare prints LKP's header lines")
    check("\u00b1 0.0%" not in cmp_out and "\u00b1  0%" not in cmp_out, "no zero spread printed")
    cj = json.loads(run("compare", rw, "--base", "rw", "--new", "rw", "--cpus", "4", "--reps", "2", "--db", "", "--json").stdout)
    prof = [x for x in cj["rows"] if x["metric"].startswith("perf-profile.")]
    check(prof and all(x["change_pp"] == x["new"] - x["base"] for x in prof)
          and all(x["change_pp"] is None for x in cj["rows"] if not x["metric"].startswith("perf-profile.")),
          "compare --json: change_pp (percentage points) on the profile rows only")
    check(all(("\u00b1" in l) == False or "%" in l for l in lines), "spread cells are '\u00b1 N%'")
    bn = pts1["bottleneck"]
    check(bn is not None and bn["share"] >= 0.05 and bn["margin"] == bn["share"], "the rwsem is the bottleneck; alone, its margin is its share")
    check(all(p["bottleneck"] is None for p in one if p["cpus"] == 1) or all(p["bottleneck"]["share"] >= 0.05 for p in one),
          "a bottleneck only at 5% of CPU time or more")
    # SQLite: the new curve columns and tables
    sdb = os.path.join(tmp, "s.db")
    run("run", rw, "--db", sdb, "-q", "--reps", "2", "--cpus", "4")
    con = sqlite3.connect(sdb)
    lo2, hi2, pct2, neck, margin = con.execute("select ci95_lo, ci95_hi, stddev_pct, bottleneck, bottleneck_margin from curve").fetchone()
    check(lo2 < hi2 and pct2 >= 0 and neck == "table_rwsem" and margin > 0, "SQLite curve: ci95_lo/hi, stddev_pct, bottleneck, margin")
    check(con.execute("select count(*) from lock_stat_rw").fetchone()[0] == 4
          and con.execute("select count(*) from contention_points").fetchone()[0] > 0, "SQLite: lock_stat_rw and contention_points rows")
    shown = json.loads(run("show", "1", "--db", sdb, "--json").stdout)["points"][0]
    check(shown["ci95"] == [lo2, hi2] and shown["lock_stat_rw"] and shown["contention_points"],
          "show --json reads the interval, -R/-W rows and contention points back")

# ---- cmpxchg loops: lockref relax true/false, the generic cmpxchg step (tests/scenarios/lockref-cmpxchg.yaml) ----
lr = run("run", os.path.join(src, "tests/scenarios/lockref-cmpxchg.yaml"), "--cpus", "1,96", "--json", "--db", "", "-q")
check(lr.returncode == 0, "lockref-cmpxchg runs: " + lr.stderr[-300:])
if lr.returncode == 0:
    lpts = {(p["strategy"], p["cpus"]): p for p in json.loads(lr.stdout)["points"]}
    names = ["no-relax", "relax", "relax-unbounded", "cmpxchg", "cmpxchg-fallback"]
    one = {lpts[(n, 1)]["ops_per_sec"] for n in names}
    check(len(one) == 1, f"lockref-cmpxchg: one CPU, every loop is one cmpxchg: the same rate {sorted(one)}")
    nr, rx = lpts[("no-relax", 96)]["ops_per_sec"], lpts[("relax", 96)]["ops_per_sec"]
    check(nr > 10 * rx, f"lockref at 96 CPUs: relax: false ({nr:.0f}/s) far ahead of relax: true ({rx:.0f}/s)")
    check(lpts[("relax-unbounded", 96)]["ops_per_sec"] == rx,
          "lockref at 96 CPUs: 95 others in the loop take 95 tries, under 100: the limit never bites")
    check(lpts[("cmpxchg", 96)]["ops_per_sec"] == nr, "cmpxchg on a plain line = lockref's fast path on a free lock")
    fb = {l["name"]: l for l in lpts[("cmpxchg-fallback", 96)]["lock_stat"]}
    check(fb["d_lock"]["acquisitions"] > 0 and not any(l["acquisitions"] for l in lpts[("cmpxchg", 96)]["lock_stat"]),
          "cmpxchg with retries: 2 takes its fallback's lock at 96 CPUs; without retries it never does")

# ---- rwsem and mutex by kernel version (tests/scenarios/sleeping-locks.yaml) ----
sl = run("run", os.path.join(src, "tests/scenarios/sleeping-locks.yaml"), "--cpus", "1,4,16", "--json", "--db", "", "-q")
check(sl.returncode == 0, "sleeping-locks runs: " + sl.stderr[-300:])
if sl.returncode == 0:
    spts = {(p["strategy"], p["cpus"]): p for p in json.loads(sl.stdout)["points"]}
    rate = lambda n, c: spts[(n, c)]["ops_per_sec"]
    check(rate("rwsem-v4.19", 1) == rate("rwsem-v5.3", 1) and rate("mutex-v4.9", 1) == rate("mutex-v4.10", 1),
          "sleeping-locks: one CPU, nobody waits: every version runs the same path")
    # At 4 CPUs the readers that meet a writer decide it (5 us asleep or
    # spinning through its 3 us hold); by 16 the writers' spinning on readers
    # and the count line's bouncing narrow the gap.
    check(rate("rwsem-v5.3", 4) > 1.5 * rate("rwsem-v4.19", 4),
          f"rwsem at 4 CPUs: v5.3's spinning readers ({rate('rwsem-v5.3', 4):.0f}/s) ahead of v4.19's sleeping ones"
          f" ({rate('rwsem-v4.19', 4):.0f}/s)")
    check(rate("rwsem-v5.3", 16) >= rate("rwsem-v4.19", 16), "rwsem at 16 CPUs: v5.3 not behind v4.19")
    # The longest wait of one run is a tail: take it over three seeds.
    def wmax(n):
        total = 0.0
        for seed in ("1", "2", "3"):
            o = run("run", os.path.join(src, "tests/scenarios/sleeping-locks.yaml"), "--cpus", "16", "--strategy", n,
                    "--seed", seed, "--json", "--db", "", "-q")
            total += {l["name"]: l for l in json.loads(o.stdout)["points"][0]["lock_stat"]}["m"]["waittime_max_us"]
        return total / 3
    w49, w410 = wmax("mutex-v4.9"), wmax("mutex-v4.10")
    check(w410 < w49, f"mutex at 16 CPUs: v4.10's handoff bounds the longest wait, mean over 3 seeds ({w410} < {w49})")
# ---- task roles: one seqlock writer beside N readers (tests/scenarios/roles-seqlock.yaml) ----
roles_file = os.path.join(src, "tests/scenarios/roles-seqlock.yaml")
ro = run("run", roles_file, "--json", "--db", "", "-q", "--variant", "all")
check(ro.returncode == 0, "roles-seqlock runs: " + ro.stderr[-300:])
if ro.returncode == 0:
    rpts = {(p["variant"], p["cpus"]): p for p in json.loads(ro.stdout)["points"]}
    for (variant, cpus), p in sorted(rpts.items()):
        roles = {r["name"]: r for r in p["roles"]}
        check(sum(r["ops"] for r in p["roles"]) == p["ops"] and sum(r["tasks"] for r in p["roles"]) == cpus,
              f"roles {variant}@{cpus}: the roles' ops ({[r['ops'] for r in p['roles']]}) add up to the point's "
              f"({p['ops']}), their tasks to the CPUs")
        check(abs(sum(r["ops_per_sec"] for r in p["roles"]) - p["ops_per_sec"]) <= 1e-6 * p["ops_per_sec"],
              f"roles {variant}@{cpus}: the roles' ops/s add up to the point's")
    d = {c: {r["name"]: r for r in rpts[("default", c)]["roles"]} for c in (2, 4, 16, 48)}
    check(all(d[c]["writer"]["tasks"] == 1 and d[c]["reader"]["tasks"] == c - 1 for c in d),
          "roles: one writer at every CPU count, the reader role takes the rest")
    # One writer, 500 ns between updates: at most 1/(500ns) = 2M updates/s whatever the readers do.
    check(all(0 < d[c]["writer"]["ops_per_sec"] <= 2e6 for c in d),
          f"roles: the writer's rate stays under its 2M/s bound: {[round(d[c]['writer']['ops_per_sec']) for c in d]}")
    check(d[4]["reader"]["ops_per_sec"] > 2 * d[2]["reader"]["ops_per_sec"],
          f"roles: 3 readers read more than twice as much as 1 ({d[4]['reader']['ops_per_sec']:.3g} vs "
          f"{d[2]['reader']['ops_per_sec']:.3g}/s)")
    # Every write invalidates the readers' copies of the seq and data lines: the more readers, the slower the writer.
    check(d[48]["writer"]["ops_per_sec"] < d[4]["writer"]["ops_per_sec"],
          f"roles: the writer slows down beside 47 readers ({d[48]['writer']['ops_per_sec']:.3g} vs "
          f"{d[4]['writer']['ops_per_sec']:.3g}/s beside 3)")
    seq = {q["name"]: q for q in rpts[("default", 16)]["seqcounts"]}["seq"]
    check(seq["writes"] == d[16]["writer"]["ops"] and seq["reads"] >= d[16]["reader"]["ops"],
          "roles: the seqcount's writes are the writer's iterations, its reads at least the readers'")
    pn = {r["name"]: r for r in rpts[("per-node", 48)]["roles"]}
    check(pn["writer"]["tasks"] == 2 and pn["reader"]["tasks"] == 24 and pn["idle"]["tasks"] == 22,
          f"roles per-node @48 on 2 nodes: 2 writers, 24 readers (0.5), 22 idle: {[(k, v['tasks']) for k, v in pn.items()]}")
    check(pn["idle"]["ops"] > 0 and pn["idle"]["ops_per_sec"] / 22 < 1.01e6,
          "roles: a task of the 1us think role runs at most 1M iterations/s")
    j1 = run("run", roles_file, "--json", "--db", "", "-q", "--variant", "all", "--jobs", "1")
    check(j1.stdout == ro.stdout, "roles: --jobs 1 gives the same bytes")
    with tempfile.TemporaryDirectory() as tmp:
        rdb = os.path.join(tmp, "roles.db")
        st = run("run", roles_file, "--cpus", "4", "--db", rdb, "-q")
        check(st.returncode == 0, "roles run stored: " + st.stderr[-300:])
        rows = sqlite3.connect(rdb).execute("select role, tasks, ops from role_stats order by role").fetchall()
        check([(r[0], r[1]) for r in rows] == [("reader", 3), ("writer", 1)] and all(r[2] > 0 for r in rows),
              f"roles: SQLite role_stats has a row per role: {rows}")
        ex = run("export", "1", "--csv", "--table", "roles", "--db", rdb)
        check(ex.returncode == 0 and ex.stdout.startswith("strategy,variant,cpus,rep,name,tasks,ops,ops_per_sec"),
              "export --table roles: " + (ex.stdout + ex.stderr)[:200])
    bad = run("run", roles_file, "--cpus", "1", "--db", "", "-q")
    check(bad.returncode == 2 and "roles-seqlock.yaml:16:5:" in bad.stderr and "reader" in bad.stderr,
          "roles: --cpus 1 leaves the reader role no CPU: exit 2 at the role's position: " + bad.stderr.strip()[-200:])
    plain = json.loads(run("run", scenario, "--cpus", "1", "--json", "--db", "", "-q").stdout)
    check(all("roles" not in p for p in plain["points"]), "a workload without roles: no roles key in its points")

# ---- qspinlock and CNA on four sockets (tests/scenarios/numa-locks.yaml) ----
nl = run("run", os.path.join(src, "tests/scenarios/numa-locks.yaml"), "--cpus", "1,144", "--json", "--db", "", "-q")
check(nl.returncode == 0, "numa-locks runs: " + nl.stderr[-300:])
if nl.returncode == 0:
    npts = {(p["strategy"], p["cpus"]): p for p in json.loads(nl.stdout)["points"]}
    nrate = lambda n, c: npts[(n, c)]["ops_per_sec"]
    check(nrate("ticket", 1) == nrate("qspinlock", 1) == nrate("cna", 1),
          "numa-locks: one CPU, uncontended: ticket's xadd and qspinlock's cmpxchg fast path cost the same, CNA is qspinlock")
    check(abs(nrate("mcs", 1) / nrate("qspinlock", 1) - 1) < 0.05, "numa-locks: one CPU: MCS within 5% of qspinlock")
    check(nrate("cna", 144) > 1.5 * nrate("qspinlock", 144),
          f"numa-locks at 144 CPUs: CNA ({nrate('cna', 144):.0f}/s) well ahead of qspinlock ({nrate('qspinlock', 144):.0f}/s)")
    check(nrate("ticket", 144) < nrate("qspinlock", 144),
          f"numa-locks at 144 CPUs: ticket's global spinning ({nrate('ticket', 144):.0f}/s) behind qspinlock")
    check(any(e["detail"] == "held" and e["object_kind"] == "line" for e in npts[("cna", 144)]["profile"]),
          "numa-locks: the plain store (write: held) is charged to its line")
    check(npts[("cna", 144)]["lock_stat"][0]["holdtime_avg_us"] < npts[("mcs", 144)]["lock_stat"][0]["holdtime_avg_us"],
          "numa-locks at 144 CPUs: CNA's critical section is shorter than FIFO MCS's (its lines stay on the node)")

# A NUMA-aware lock on a machine of one node is accepted, with a warning naming the lock (issue 14 item 11).
with tempfile.TemporaryDirectory() as tmp:
    text = open(os.path.join(src, "tests/scenarios/numa-locks.yaml")).read().replace(
        "machine: xeon-e7-8895v3-4s",
        "machine:\n  levels:\n    - {name: machine, count: 1, transfer: 100ns}\n    - {name: cpu, count: 4}\n"
        "  local_hit: 1ns\n  local_atomic: 10ns").replace("cpus: [1, 2, 8, 36, 144]", "cpus: [1, 4]")
    one = os.path.join(tmp, "one-node.yaml")
    open(one, "w").write(text)
    w = run("run", one, "--cpus", "1,4", "--db", "", "-q", "--json")
    check(w.returncode == 0 and "warning: lock 'l' of strategy 'cna' is cna, NUMA-aware" in w.stderr
          and w.stderr.count("warning:") == 1 and "one NUMA node" in w.stderr,
          "cna on a one-node machine: runs, one warning naming the lock and its position: " + w.stderr[-300:])
    if w.returncode == 0:
        wp = {(p["strategy"], p["cpus"]): p["ops_per_sec"] for p in json.loads(w.stdout)["points"]}
        check(wp[("cna", 4)] == wp[("qspinlock", 4)], "cna on one node runs as the qspinlock it is built on")
    q = run("run", os.path.join(src, "tests/scenarios/numa-locks.yaml"), "--cpus", "1", "--db", "", "-q")
    check(q.returncode == 0 and "warning" not in q.stderr, "cna on four nodes: no warning")

# ---- per-object scopes: a lock and a counter per file, picked per iteration (tests/scenarios/object-scope.yaml) ----
obj_file = os.path.join(src, "tests/scenarios/object-scope.yaml")
ob = run("run", obj_file, "--json", "--db", "", "-q", "--variant", "all")
check(ob.returncode == 0, "object-scope runs: " + ob.stderr[-300:])
if ob.returncode == 0:
    opts = {(p["strategy"], p["variant"], p["cpus"]): p for p in json.loads(ob.stdout)["points"]}
    f_lock = lambda s, c, v="default": {l["name"]: l for l in opts[(s, v, c)]["lock_stat"]}["f_lock"]  # noqa: E731
    share = lambda s, c, v="default": f_lock(s, c, v)["contentions"] / f_lock(s, c, v)["acquisitions"]  # noqa: E731
    check(all(opts[("one-object", "default", c)]["ops"] == opts[("global", "default", c)]["ops"] and
              f_lock("one-object", c)["contentions"] == f_lock("global", c)["contentions"] for c in (1, 8, 16, 32)),
          "objects: 1 is the global lock: the same iterations and contentions at every CPU count")
    check(f_lock("uniform", 16)["instances"] == 16 and f_lock("uniform", 16, "many-files")["instances"] == 64,
          "scope: object has `objects` instances ($files: 16, and 64 in the variant)")
    for v, n in (("default", 16), ("many-files", 64)):
        for c in (8, 16, 32):
            lk = f_lock("uniform", c, v)
            f = lk["holdtime_total_us"] / (c * 2000.0)  # the share of time one CPU holds a file's lock
            expect = 1 - (1 - f / n) ** (c - 1)  # another CPU holds the file this one picks
            got = share("uniform", c, v)
            check(0.6 * expect <= got <= 1.7 * expect,
                  f"uniform over {n} files @{c}: contended share {got:.3f} near 1-(1-f/N)^(C-1) = {expect:.3f} (f = {f:.3f})")
    check(share("global", 8) > 0.95, f"one file for 8 CPUs: nearly every acquisition waits ({share('global', 8):.3f})")
    check(share("uniform", 16, "many-files") < share("uniform", 16) / 2,
          "uniform: 64 files contend less than half as often as 16 at 16 CPUs")
    # (At 32 CPUs zipf's hottest file saturates: its share stops growing while uniform's still does.)
    check(all(share("zipf", c) > 1.5 * share("uniform", c) for c in (8, 16)) and
          opts[("zipf", "default", 32)]["ops"] < opts[("uniform", "default", 32)]["ops"] / 2,
          "zipf(1.2) over 16 files contends more than uniform, and at 32 CPUs runs less than half as fast: " +
          str([(round(share("zipf", c), 3), round(share("uniform", c), 3)) for c in (8, 16, 32)]))
    check(all(f_lock("task", c)["contentions"] == 0 for c in (1, 8, 16)) and
          opts[("task", "default", 16)]["ops"] > opts[("uniform", "default", 16)]["ops"],
          "pick: task with a file per task never contends, and runs ahead of uniform picks at 16 CPUs")
    rr2 = run("run", obj_file, "--json", "--db", "", "-q", "--variant", "all", "--jobs", "1", "--strategy", "round-robin,uniform,zipf")
    again = {(p["strategy"], p["variant"], p["cpus"]): p for p in json.loads(rr2.stdout)["points"]}
    check(all(again[k] == opts[k] for k in again), "object picks: the same points with --jobs 1 (round_robin, uniform, zipf)")
    s2 = json.loads(run("run", obj_file, "--json", "--db", "", "-q", "--strategy", "uniform", "--seed", "2").stdout)
    s2 = {p["cpus"]: p for p in s2["points"]}
    check(any(s2[c]["lock_stat"] != opts[("uniform", "default", c)]["lock_stat"] for c in (8, 16, 32)),
          "uniform picks come from the seed: seed 2 gives other lock_stat rows")

# ---- walk hooks: permission and revalidate per component (tests/scenarios/walk-hooks.yaml) ----
wh_file = os.path.join(src, "tests/scenarios/walk-hooks.yaml")
# One CPU's cost per op by hand (ns): compute 1000; rcu-walk: a d_seq read 2 per
# component, 100 per component after the first, the last dentry's reference
# (d_lock 10 + d_count 10); ref-walk: dget of the start 10, then per component
# 100 + get 20 + put of the previous 10. permission: fs_lock 10 + hold 40 on sys
# and dir; revalidate: 30 on dir and attr.
hooks_ns = 2 * (10 + 40) + 2 * 30
wh_cost = {"no-hooks": 1000 + 4 * 2 + 3 * 100 + 20}
wh_cost["rcu-run"] = wh_cost["no-hooks"] + hooks_ns
# -ECHILD at sys's permission: reference on sys (20), then ref-walk: per
# component the permission of the one it leaves, 100, get, revalidate, put.
wh_cost["rcu-refuse"] = 1000 + 2 * 2 + 100 + 20 + 2 * ((10 + 40) + 100 + 20 + 30 + 10)
wh_cost["ref"] = 1000 + 10 + (100 + 20 + 10) + 2 * ((10 + 40) + 100 + 20 + 30 + 10)
check(wh_cost["rcu-run"] - wh_cost["no-hooks"] == 160, "walk hooks: their steps sum to 160 ns per op")
wh = {}
for strat, ns in wh_cost.items():
    # A window of exactly 10,000 of its iterations: a cost off by 1.5 ns either way shows.
    r = run("run", wh_file, "--strategy", strat, "--cpus", "1", "--json", "--db", "", "-q",
            "--set", f"workload.duration={ns * 10}us")
    check(r.returncode == 0, f"walk hooks: {strat} runs: " + r.stderr[-300:])
    if r.returncode == 0:
        wh[strat] = json.loads(r.stdout)["points"][0]
        check(wh[strat]["ops"] == 10000, f"walk hooks: {strat} at 1 CPU costs {ns} ns per op "
              f"(10000 ops in {ns * 10} us, got {wh[strat]['ops']})")
if len(wh) == len(wh_cost):
    acq = lambda s, name: {l["name"]: l for l in wh[s]["lock_stat"]}.get(name, {}).get("acquisitions", 0)  # noqa: E731
    # Acquisitions in the window against iterations ended in it: the edges may differ by one.
    near = lambda a, b: abs(a - b) <= 2  # noqa: E731
    check(acq("rcu-run", "sys.d_lock") == 0 and acq("rcu-run", "dir.d_lock") == 0 and
          near(acq("rcu-refuse", "sys.d_lock"), wh["rcu-refuse"]["ops"]) and
          near(acq("rcu-refuse", "dir.d_lock"), wh["rcu-refuse"]["ops"]),
          "walk hooks: rcu: refuse drops to ref-walk at sys (sys's and dir's d_lock every op; never under rcu: run)")
    check(all(near(acq(s, "fs_lock"), 2 * wh[s]["ops"]) for s in ("rcu-run", "rcu-refuse", "ref")),
          "walk hooks: the permission op takes fs_lock once per directory of the filesystem, twice an op")
    under = lambda s, frame: sum(e["share"] for e in wh[s]["profile"] if frame in e["chain"])  # noqa: E731
    check(under("rcu-run", "inode_permission <- link_path_walk") > 0 and
          under("rcu-refuse", "d_revalidate <- link_path_walk") > 0 and
          under("no-hooks", "inode_permission") == 0,
          "walk hooks: the profile shows the ops under inode_permission / d_revalidate <- link_path_walk")
four = run("run", wh_file, "--cpus", "4", "--json", "--db", "", "-q")
if four.returncode == 0:
    f4 = {p["strategy"]: p for p in json.loads(four.stdout)["points"]}
    check(f4["rcu-refuse"]["ops_per_sec"] < f4["rcu-run"]["ops_per_sec"],
          "walk hooks: at 4 CPUs the refusing ops run slower (the shared dentries' d_lock lines bounce)")

# ---- shared_by: fd slots packed eight to a line (tests/scenarios/shared-by.yaml) ----
sb = run("run", os.path.join(src, "tests/scenarios/shared-by.yaml"), "--json", "--db", "", "-q")
check(sb.returncode == 0, "shared-by runs: " + sb.stderr[-300:])
if sb.returncode == 0:
    sbp = {(p["strategy"], p["cpus"]): p for p in json.loads(sb.stdout)["points"]}
    sb_inst = lambda s, c: {l["name"]: l for l in sbp[(s, c)]["lines"]}["fd_slot"]["instances"]  # noqa: E731
    check([sb_inst("packed", c) for c in (1, 8, 16, 32)] == [1, 1, 2, 4] and sb_inst("private", 32) == 32,
          "shared_by: 8 by task index: one line per 8 tasks (1, 1, 2, 4 at 1, 8, 16, 32 CPUs), private: one per task")
    check(all(sbp[(s, 1)]["ops"] == sbp[("private", 1)]["ops"] for s in ("packed", "packed-cpu", "one-line")),
          "at 1 CPU packing costs nothing: every strategy runs the same iterations")
    check(sbp[("packed", 8)]["ops"] == sbp[("one-line", 8)]["ops"] and
          sbp[("packed", 8)]["lines"][0]["bounces"] == sbp[("one-line", 8)]["lines"][0]["bounces"],
          "shared_by: 8 at 8 CPUs (N >= CPUs) is the one shared line: the same iterations and bounces")
    check(sbp[("packed", 8)]["ops"] < sbp[("private", 8)]["ops"] / 2,
          f"false sharing at 8 CPUs: packed slots at less than half the private lines' rate "
          f"({sbp[('packed', 8)]['ops']} against {sbp[('private', 8)]['ops']})")
    check(all(sbp[("one-line", c)]["ops"] < sbp[("packed", c)]["ops"] < sbp[("private", c)]["ops"] for c in (16, 32)),
          "at 16 and 32 CPUs the 2 and 4 packed lines run between one shared line and private lines")
    check(sb_inst("packed-cpu", 8) == 2 and
          sbp[("packed", 8)]["ops"] * 2 < sbp[("packed-cpu", 8)]["ops"] < sbp[("private", 8)]["ops"],
          "scope cpu, shared_by: 8 groups by CPU number: spread's CPUs 0,2,4,6 and 48..54 make two lines, one per "
          "socket, slower than private lines, far ahead of the group across both sockets")

# ---- call_rcu with steps: put_cred's decrement and free in an RCU callback (tests/scenarios/call-rcu-steps.yaml) ----
cr = run("run", os.path.join(src, "tests/scenarios/call-rcu-steps.yaml"), "--json", "--db", "", "-q")
check(cr.returncode == 0, "call-rcu-steps runs: " + cr.stderr[-300:])
if cr.returncode == 0:
    crp = {(p["strategy"], p["cpus"]): p for p in json.loads(cr.stdout)["points"]}
    window_ns = 200e6
    inline1, rcu1 = crp[("inline", 1)], crp[("rcu", 1)]
    cb_ns = window_ns / inline1["ops"] - 1000  # the put_cred steps' time at 1 CPU, measured inline
    check(213 < cb_ns < 215, f"put_cred inline at 1 CPU: atomic 7 + lock 7 + hold 200 ns = {cb_ns:.2f} ns")
    ran = rcu1["rcu"]["callbacks_invoked"]
    used = rcu1["ops"] * 1000 + ran * cb_ns
    check(abs(used - window_ns) < 1300,
          f"1 CPU, callback of steps: the window holds each iteration's 1 us and each callback run's {cb_ns:.0f} ns "
          f"({used:.0f} of {window_ns:.0f} ns)")
    pending = rcu1["rcu"]["callbacks_queued"] - ran
    check(pending * 1e3 < 8e6 and abs(rcu1["ops"] / inline1["ops"] - 1) < 0.01,
          f"the grace period amortised: {pending} callbacks (< 8 ms of iterations) wait at the window's end, so the "
          f"rate is 1/(1 us + {cb_ns:.0f} ns) within 1%: {rcu1['ops']} against {inline1['ops']} inline")
    check(crp[("rcu-cost", 1)]["ops"] == rcu1["ops"],
          "call_rcu: 214ns (the callback's exact cost) runs the same iterations as the callback of steps")
    slab = lambda s, c: {l["name"]: l for l in crp[(s, c)]["lock_stat"]}["cred_slab"]  # noqa: E731
    check(abs(slab("rcu", 1)["acquisitions"] - ran) <= 1 and slab("rcu", 1)["contentions"] == 0,
          "lock_stat counts the callback's acquisitions: one per callback run")
    cb_chain = "put_cred <- put_cred_rcu <- rcu_do_batch <- rcu_process_callbacks"
    held = sum(e["time_us"] for e in rcu1["profile"] if e["chain"] == cb_chain and e["detail"] == "cred_slab")
    check(abs(held - ran * 0.2) < 1, f"the callback's hold is in the profile under {cb_chain}: {held:.0f} us")
    check(slab("rcu", 4)["contentions"] > slab("rcu", 4)["acquisitions"] / 2 and
          any(e["chain"].startswith("queued_spin_lock_slowpath <- put_cred <- put_cred_rcu <- rcu_do_batch")
              for e in crp[("rcu", 4)]["profile"]),
          "at 4 CPUs the callbacks, run in bursts after each grace period, contend for the slab lock (lock_stat, profile)")

# ---- validate --uncertainty: every figure's 80% band and the coverage of the predictions ----
kf = os.path.join(src, "scenarios/seed/kernfs-sysfs-c5.yaml")
vu = run("validate", kf, "--db", "", "--uncertainty", "4", "--json", "-q")
check(vu.returncode in (0, 1), "validate --uncertainty runs: " + vu.stderr[-300:])
if vu.returncode in (0, 1):
    doc = json.loads(vu.stdout)
    cov = doc["summary"]["coverage"]
    figs = doc["figures"]
    check(all(f["band"]["p10"] <= f["band"]["p50"] <= f["band"]["p90"] for f in figs),
          "validate --uncertainty: every figure has an ordered band p10 <= p50 <= p90")
    placed = [f for f in figs if not f["fitted"] and not f.get("restated") and f["inside"] is not None]
    check(cov["scored"] == len(placed) and cov["inside"] == sum(f["inside"] for f in placed),
          f"validate --uncertainty: the coverage counts the predictions inside their band ({cov})")
    check(all(f["inside"] == (f["band"]["p10"] <= f["reported"] <= f["band"]["p90"]) for f in placed
              if f.get("bound", "about") == "about"),
          "validate --uncertainty: inside means p10 <= reported <= p90")
    check(any(f["band"]["p90"] > f["band"]["p10"] for f in figs), "validate --uncertainty: the ranges move some figure")
    j1 = run("validate", kf, "--db", "", "--uncertainty", "4", "--json", "-q", "--jobs", "1")
    strip = lambda t: {k: v for k, v in json.loads(t)["summary"].items() if k != "wall_seconds"}
    check(json.loads(j1.stdout)["figures"] == figs and strip(j1.stdout) == strip(vu.stdout),
          "validate --uncertainty: the same bands with --jobs 1")
bad = run("validate", kf, "--db", "", "--uncertainty", "1")
check(bad.returncode == 2 and "--uncertainty" in bad.stderr, "validate --uncertainty 1 is refused (a band needs 2 samples)")

# ---- on: for every lock kind with one word: an rwsem's owner field on its count's line ----
# v5.x down_read stores the owner (rwsem_set_reader_owned) on the count's
# line. Alone (1 CPU) the store hits the line either way; with 8 readers,
# on: the sem, the store queues on the count's line behind the other
# readers' atomics (apart, it drains from the store buffer to a line of
# its own): the two layouts are different simulations.
ON_RWSEM = """\
scenario: on-rwsem
machine: skylake-sp-2s
workload:
  tasks: thread
  placement: compact
  loop: [fault]
  warmup: 5us
  duration: 200us
  cpus: [1, 8]
strategies:
  owner-on-sem:
    locks:
      mmap_sem: {kind: rwsem, scope: global, wake: 5us}
    lines:
      owner: {on: mmap_sem}
    ops:
      fault:
        - lock: mmap_sem
          mode: read
          body:
            - write: owner
            - compute: 200ns
        - compute: 300ns
  owner-apart:
    extends: owner-on-sem
    lines:
      owner: {scope: global}
"""
with tempfile.TemporaryDirectory() as tmp:
    f = os.path.join(tmp, "on-rwsem.yaml")
    with open(f, "w") as out:
        out.write(ON_RWSEM)
    r = run("run", f, "--json", "--db", "", "-q")
    check(r.returncode == 0, "on: an rwsem runs: " + r.stderr[-300:])
    if r.returncode == 0:
        pts = {(p["strategy"], p["cpus"]): p["ops_per_sec"] for p in json.loads(r.stdout)["points"]}
        on1, apart1 = pts[("owner-on-sem", 1)], pts[("owner-apart", 1)]
        on8, apart8 = pts[("owner-on-sem", 8)], pts[("owner-apart", 8)]
        check(abs(on1 - apart1) <= 0.01 * apart1, f"alone, the owner's line costs the same on: the rwsem or apart ({on1:.0f} vs {apart1:.0f})")
        check(abs(on8 - apart8) > 0.03 * apart8,
              f"with 8 readers the owner's store shares the count's line: a different result ({on8:.0f} vs {apart8:.0f} ops/s)")

print(f"cli: {len(failures)} failed")
sys.exit(1 if failures else 0)

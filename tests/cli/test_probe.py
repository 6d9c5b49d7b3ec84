#!/usr/bin/env python3
"""CLI test: `vfssim probe` measures this machine and writes loadable files.

usage: test_probe.py VFSSIM_BINARY SOURCE_DIR [VALIDATE_BINARY]

Runs the probe in its short mode (--seconds 3, about 3 s on 2 CPUs) and
checks: exit 0, machine.yaml and probe-locks.yaml written, the matrix is
N x N with a 0ns diagonal and positive entries elsewhere, every number of
the preset says whether it was measured, mutual exclusion held at every
lock point, and `validate FILE --db ''` loads the scenario (exit 0 or 1,
never 2). VALIDATE_BINARY (default: VFSSIM_BINARY) runs the validation.
Bad input exits 2 with a message naming the option. Needs 2 usable CPUs.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

import yaml

binary = os.path.abspath(sys.argv[1])
src = os.path.abspath(sys.argv[2])
validator = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else binary
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return cond


def run(*args, exe=None, cwd=None, timeout=300):
    return subprocess.run([exe or binary, *args], capture_output=True, text=True, cwd=cwd, timeout=timeout)


def ns(t):
    """'43.2ns' -> 43.2 (the probe writes every time in ns)."""
    m = re.fullmatch(r"([0-9.]+)ns", str(t))
    return float(m.group(1)) if m else None


cpus = sorted(os.sched_getaffinity(0))
if len(cpus) < 2:
    print("skip: the probe needs 2 usable CPUs, this process has " + str(cpus))
    sys.exit(0)
n = len(cpus)

with tempfile.TemporaryDirectory() as tmp:
    # Bad input: exit 2 before measuring anything, naming what is wrong.
    a_file = os.path.join(tmp, "a-file")
    open(a_file, "w").close()
    out = os.path.join(tmp, "out")
    bad = [
        ([], "--out"),
        (["--out", out, "--seconds", "60"], "--seconds"),
        (["--out", out, "--seconds", "0"], "--seconds"),
        (["--out", out, "--seconds", "abc"], "seconds"),
        (["--out", out, "--cpus", str(cpus[0])], "at least 2"),
        (["--out", out, "--cpus", f"{cpus[0]},{cpus[0]}"], "twice"),
        (["--out", out, "--cpus", "99999"], "not usable"),
        (["--out", out, "--cpus", "zero,one"], "not a CPU id"),
        (["--out", a_file], "not a directory"),
        (["--out", out, "--frobnicate"], "frobnicate"),
        (["--out", out, "extra"], ""),
    ]
    for args, needle in bad:
        r = run("probe", *args)
        check(r.returncode == 2 and needle in r.stderr and r.stderr.startswith("vfssim probe: "),
              f"probe {' '.join(args) or '(no options)'}: exit 2 naming '{needle}': {r.returncode} {r.stderr.strip()[:160]}")
    check(not os.path.exists(out), "bad input writes nothing")
    h = run("probe", "--help")
    check(h.returncode == 0 and "--out" in h.stdout and "--seconds" in h.stdout, "probe --help")
    u = run("--help")
    check("probe" in u.stdout, "vfssim --help lists probe")

    # The short mode.
    t0 = time.monotonic()
    r = run("probe", "--out", out, "--seconds", "3")
    wall = time.monotonic() - t0
    if not check(r.returncode == 0, f"probe --seconds 3 exits 0: {r.returncode} {r.stderr[-400:]}"):
        sys.exit(1)
    print(r.stdout)
    print(f"probe run time: {wall:.1f} s")
    check(wall < 3 * 3 + 30, f"short mode finishes in reasonable time ({wall:.1f} s)")
    pairs = n * (n - 1)
    check(f"probe: transfer matrix {pairs}/{pairs} pairs" in r.stderr, "progress lines on stderr")
    check(f"probe: mcs lock {n}/{n} thread counts" in r.stderr or "probe: mcs lock" in r.stderr,
          "progress reaches the last lock")
    machine_path = os.path.join(out, "machine.yaml")
    locks_path = os.path.join(out, "probe-locks.yaml")
    check(os.path.isfile(machine_path) and os.path.isfile(locks_path), "machine.yaml and probe-locks.yaml written")
    check(not [f for f in os.listdir(out) if f.endswith(".tmp")], "no temporary files left")

    machine_text = open(machine_path).read()
    m = yaml.safe_load(machine_text)
    check(re.fullmatch(r"probed-[A-Za-z0-9_.-]+", m["machine"]) is not None, "machine name probed-HOST: " + m["machine"])
    check(m["levels"][-1]["name"] == "thread", "levels end with the hardware thread")
    total = 1
    for lv in m["levels"]:
        total *= lv["count"]
    check(total == n, f"levels hold the {n} probed CPUs ({total})")
    mat = m["matrix"]
    check(len(mat) == n and all(len(row) == n for row in mat), f"matrix is {n}x{n}")
    vals = [[ns(v) for v in row] for row in mat]
    check(all(vals[i][i] == 0 for i in range(n)), "matrix diagonal is 0ns")
    check(all(vals[i][j] is not None and vals[i][j] > 0 for i in range(n) for j in range(n) if i != j),
          "off-diagonal entries positive: " + str(mat))
    for key in ("local_hit", "local_atomic"):
        check(ns(m[key]) is not None and ns(m[key]) > 0, f"{key} positive: {m[key]}")
    coh = m.get("coherence", {})
    check(coh.get("kind") == "directory" and ns(coh.get("contended_rmw")) and ns(coh["contended_rmw"]) > 0,
          "coherence block: kind directory, contended_rmw measured")
    # Every number is marked measured or not measured.
    for line in machine_text.splitlines():
        s = line.strip()
        if re.match(r"^(-\s*\{name:.*transfer|local_hit|local_atomic|invalidate_per_sharer|base|hop|"
                    r"contended_rmw|reread)\b", s) or (s.startswith("- [") and "ns" in s):
            check("measured" in s or "leading" in s, "comment on: " + s[:60])

    locks_text = open(locks_path).read()
    sc = yaml.safe_load(locks_text)
    check(sc["scenario"].startswith("probe-locks-"), "scenario probe-locks-HOST")
    check(sc["machine"] == "./machine.yaml", "machine: ./machine.yaml")
    wl = sc["workload"]
    check(wl["tasks"] == "thread" and wl["loop"] == ["iteration"], "tasks: thread, loop: [iteration]")
    check(sorted(wl["placement"]) == list(range(n)), "placement lists every probed CPU once")
    check(set(sc["strategies"]) == {"tas", "ticket", "mcs"}, "strategies tas, ticket, mcs")
    for k, st in sc["strategies"].items():
        check(st["locks"]["probe_lock"]["kind"] == k, f"{k}: lock kind {k}")
        think, lock = st["ops"]["iteration"]
        check(ns(think["compute"]) > 0 and ns(lock["body"][1]["compute"]) >= 0, f"{k}: think and CS times")
    figs = {f["curve"]["strategy"]: f for f in sc["expect"]}
    check(set(figs) == {"tas", "ticket", "mcs"}, "one curve figure per lock kind")
    for k, f in figs.items():
        check(f["fitted_at"] == 1 and sorted(f["reported"]) == wl["cpus"] and all(v > 0 for v in f["reported"].values()),
              f"{k}: curve over {wl['cpus']}, fitted at 1: {f['reported']}")
    # Mutual exclusion: "#   tas: 1 threads C = A; 2 threads C = A;"
    exclusion = re.findall(r"^#\s+(tas|ticket|mcs):(.*)$", locks_text, re.M)
    check(len(exclusion) == 3, "mutual exclusion recorded for the three locks")
    for kind, rest in exclusion:
        pts = re.findall(r"(\d+) threads (\d+) = (\d+);", rest)
        check(len(pts) == len(wl["cpus"]) and all(c == a and int(a) > 0 for _, c, a in pts),
              f"{kind}: protected counter = acquisitions at every point")

    # The strict loader and validate: exit 0 (within tolerance) or 1 (a miss), never 2.
    v = run("validate", locks_path, "--db", "", exe=validator, cwd=tmp)
    check(v.returncode in (0, 1), f"validate loads probe-locks.yaml (exit {v.returncode}): {v.stderr[-400:]}")
    check(f"tas-acquisitions@{wl['cpus'][-1]}" in v.stdout, "validate scores the lock curves")

    # --quiet: no progress; --cpus picks the CPUs.
    out2 = os.path.join(tmp, "out2")
    q = run("probe", "--out", out2, "--seconds", "1", "--quiet", "--cpus", f"{cpus[1]},{cpus[0]}")
    check(q.returncode == 0 and "probe: transfer matrix" not in q.stderr, "--quiet: no progress lines")
    if q.returncode == 0:
        sc2 = yaml.safe_load(open(os.path.join(out2, "probe-locks.yaml")))
        m2 = yaml.safe_load(open(os.path.join(out2, "machine.yaml")))
        check(len(m2["matrix"]) == 2 and sc2["workload"]["cpus"] == [1, 2], "--cpus A,B: a 2-CPU machine")
        check(sc2["workload"]["placement"][0] == 1, "thread 0 on the first listed CPU (model CPU 1)")

print(f"\n{len(failures)} failure(s)")
sys.exit(1 if failures else 0)

"""Property test: every scenario under scenarios/ and tests/, mutated, either
loads and then runs to completion or to a clean stop within its budget, or
is refused with exit status 2 and FILE:LINE:COL -- through the CLI and
through Python. And the same for scenarios from the structure-aware
generator (scripts/gen_scenarios.py).

The mutations (issue 15): each key removed, each number replaced by 0, -1,
1e300 and NaN, each string by a non-ASCII one and one with a NUL. All
mutation sites of all files would be tens of thousands of runs; a seeded
sample of PER_FILE per file is run (the same sample every time). Set
VFSSIM_MUTATIONS_PER_FILE to run more (before a release: 200)."""
import json
import math
import os
import pathlib
import random
import subprocess
import sys

import pytest
import yaml

from conftest import BUILD, ROOT

VFSSIM = pathlib.Path(os.environ.get("VFSSIM_BINARY", BUILD / "vfssim"))
PER_FILE = int(os.environ.get("VFSSIM_MUTATIONS_PER_FILE", "4"))
# Each point small: one CPU, few events, one wall second.
BUDGET = ["--cpus", "1", "--max-events", "5000", "--max-wall", "1", "--db", "", "-q"]


def scenario_files():
    files = []
    for base in (ROOT / "scenarios", ROOT / "tests"):
        for p in sorted(base.rglob("*.yaml")):
            # Not scenarios: presets, the library's versions and benchmarks
            # (test_library.py refuses mutations of those), expected outputs.
            if {"machines", "kernel", "benchmarks", "library"} & set(p.parts) or p.name == "expected.txt":
                continue
            files.append(p)
    return files


def sites(node, path=(), seen=None):
    """Every (path, value) of the document, each shared (aliased) node once:
    an alias bomb repeats a node exponentially often."""
    seen = set() if seen is None else seen
    if isinstance(node, (dict, list)):
        if id(node) in seen:
            return []
        seen.add(id(node))
    out = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in items:
        out.append((path + (k,), v))
        out += sites(v, path + (k,), seen)
    return out


def mutations(doc):
    """(description, mutate(doc) -> None) for every mutation of `doc`."""
    out = []
    for path, value in sites(doc):
        if isinstance(path[-1], str):
            out.append((f"drop {path}", ("drop", path, None)))
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)) or (isinstance(value, str) and value[:1].isdigit()):
            for v in (0, -1, 1e300, float("nan")):
                out.append((f"{path} = {v}", ("set", path, v)))
        elif isinstance(value, str):
            for v in ("bäse", "a\0b"):
                out.append((f"{path} = {v!r}", ("set", path, v)))
    return out


def apply(doc, how):
    op, path, value = how
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    if op == "drop":
        del parent[path[-1]]
    else:
        parent[path[-1]] = value


def cases():
    rng = random.Random(15)
    out = []
    for f in scenario_files():
        if f.stat().st_size > 64 << 10:
            continue
        try:
            doc = yaml.safe_load(f.read_text())
        except (yaml.YAMLError, RecursionError):
            continue  # YAML syntax errors and nesting bombs: the loader's own corpus
        if not isinstance(doc, dict):
            continue
        try:
            muts = mutations(doc)
        except RecursionError:
            continue  # an alias that contains itself: the bad-scenario corpus's case, not data to mutate
        for desc, how in rng.sample(muts, min(PER_FILE, len(muts))):
            out.append((f, desc, how))
    return out


CASES = cases()


def mutated_text(f, how):
    doc = yaml.safe_load(f.read_text())
    apply(doc, how)
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def check_cli(path, r):
    assert r.returncode >= 0, f"killed by signal {-r.returncode}: {r.stderr[-1500:]}"
    assert "AddressSanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr[-1500:]
    if r.returncode == 0:
        return "ran"
    first = r.stderr.splitlines()[0] if r.stderr else ""
    if r.returncode == 2:
        # Refused: at a position of the file, or (a command-line value) naming what is wrong.
        assert first.startswith(f"{path}:") or first.startswith("vfssim run:"), first
        if first.startswith(f"{path}:"):
            line, col = first[len(str(path)) + 1:].split(":")[:2]
            assert line.isdigit() and col.isdigit(), first
        return "refused"
    # A clean stop: a budget, or the strategy deadlocked (a result, reported as such).
    assert r.returncode == 1, r.stderr[-1500:]
    assert "budget exceeded" in r.stderr or "deadlock" in r.stderr, r.stderr[-1500:]
    return "stopped"


def test_the_property_test_has_cases():
    assert len(CASES) >= 200, len(CASES)
    print(f"{len(CASES)} mutations of {len(scenario_files())} files")


@pytest.mark.parametrize("index", range(0, len(CASES), 25))
def test_mutated_scenarios_through_the_cli(index, tmp_path):
    outcomes = []
    for f, desc, how in CASES[index:index + 25]:
        path = tmp_path / f.name
        path.write_text(mutated_text(f, how))
        r = subprocess.run([str(VFSSIM), "run", str(path), *BUDGET], capture_output=True, text=True,
                           errors="replace", timeout=120, cwd=f.parent)
        try:
            outcomes.append(check_cli(path, r))
        except AssertionError as e:
            raise AssertionError(f"{f.relative_to(ROOT)} with {desc}: {e}") from None
    assert outcomes


PY_DRIVER = r"""
import json, sys, math
import vfssim
for line in sys.stdin:
    case = json.loads(line)
    print(json.dumps({"start": case["id"]}), flush=True)
    try:
        sc = vfssim.Scenario.from_yaml(case["text"], name=case["name"], base_dir=case["dir"])
    except vfssim.ScenarioError as e:
        str(e).encode("utf-8")
        print(json.dumps({"id": case["id"], "outcome": "refused", "line": e.line}), flush=True)
        continue
    outcome = "loaded"
    try:
        # Python sweeps have no budget: a short window instead (still a valid scenario).
        sc.data["workload"]["warmup"] = "1us"
        sc.data["workload"]["duration"] = "10us"
        sc.validate()
        res = sc.sweep(cpus=[1], progress=False)
        outcome = "ran"
    except vfssim.ScenarioError as e:
        outcome = "refused at plan"
    except ValueError as e:
        outcome = "refused: " + str(e)[:80]
    print(json.dumps({"id": case["id"], "outcome": outcome}), flush=True)
"""


def test_mutated_scenarios_through_python():
    """All cases in one child interpreter (a crash shows as its exit status
    and names the case it was on)."""
    lines = []
    for i, (f, desc, how) in enumerate(CASES):
        lines.append(json.dumps({"id": i, "text": mutated_text(f, how), "name": f.name, "dir": str(f.parent)}))
    env = {**os.environ, "PYTHONPATH": str(BUILD / "python")}
    r = subprocess.run([sys.executable, "-c", PY_DRIVER], input="\n".join(lines) + "\n", capture_output=True,
                       text=True, timeout=1200, env=env)
    records = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    started = [x["start"] for x in records if "start" in x]
    done = {x["id"]: x for x in records if "outcome" in x}
    last = started[-1] if started else None
    assert r.returncode == 0, (f"the interpreter died (exit {r.returncode}) on case {last}: "
                               f"{CASES[last][0].relative_to(ROOT)} with {CASES[last][1]}: {r.stderr[-1500:]}")
    assert len(done) == len(CASES)


def test_generated_scenarios_through_the_cli(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_scenarios.py"), str(tmp_path), "--count", "60",
                    "--seed", "15"], check=True)
    outcomes = {}
    for path in sorted(tmp_path.glob("*.yaml")):
        r = subprocess.run([str(VFSSIM), "run", str(path), *BUDGET], capture_output=True, text=True,
                           errors="replace", timeout=120, cwd=tmp_path)
        try:
            outcome = check_cli(path, r)
        except AssertionError as e:
            raise AssertionError(f"generated {path.name}: {e}\n{path.read_text()}") from None
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    # The generator's valid-ish files are mostly valid: most must run.
    assert outcomes.get("ran", 0) >= 20, outcomes

#!/usr/bin/env python3
"""The code-path library's ops, one by one, on one preset at one CPU.

For every kernel version of the library and every benchmark test of the
benchmark library, `vfssim new BENCHMARK TEST --kernel VERSION` is resolved
(`vfssim library resolve`) into a plain scenario, and every op its strategy
reaches is run alone at 1 CPU: once whole (a loop of `call: OP`) and once per
top-level step (a loop of that step alone), with the ops it calls and the
strategy's locks, lines and objects. Two results per op:

- its single-CPU cost, and its steps' costs: the golden table
  tests/golden/library/ops-PRESET.json (`--update` writes it, `--check` says
  whether a fresh table is byte-identical: a change of a library cost or of
  a step model shows there, op by op, version by version);
- whether the op's cost is the sum of its steps' (each step's cost measured
  alone): the interpreter adds nothing and loses nothing between steps at
  one CPU. Ops with random durations are compared within their sampling
  error; ops that allocate from a pool ("pool": true) are not additive (an
  allocation's cost depends on how long the pool refilled since the last:
  alone, it never reaches the reclaim that the whole op's pace does).

An op first reached by an earlier test of the same version is not run again
(tests in the benchmark library's order); a probe that is the same
simulation as one already run (an op unchanged since an earlier version) is
run once. A version's ops that no benchmark test reaches are listed under
"not_reached".

usage: scripts/library_ops.py [--vfssim BIN] [--machine PRESET] (--update | --check | --print)
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DURATION = "2ms"   # deterministic ops: exact at 1 ps from the latency (every iteration the same)
LONG_DURATION = "50ms"  # ops with random draws (their mean from the rate), and ops longer than DURATION


def _yaml_loader(build):
    """vfssim's YAML 1.2 loader (`on:` is a key, not True), from the Python package in the build."""
    sys.path.insert(0, str(pathlib.Path(build).resolve().parent / "python"))
    from vfssim.scenario import _Yaml12Loader  # noqa: E402

    return _Yaml12Loader


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, **kw)


def benchmark_tests(vfssim):
    lib = json.loads(run([vfssim, "library", "--json"], check=True).stdout)
    versions = [v["version"] for v in lib["versions"]]
    tests = []
    for b in lib["benchmarks"]:
        for t in b["tests"]:
            tests.append((b["benchmark"], t["test"] + ("_" + b["modes"][0] if b["modes"] else "")))
    return versions, {v["version"]: v["ops"] for v in lib["versions"]}, tests


def resolved(vfssim, machine, version, bench, test, tmp, loader):
    """(the resolved scenario of a benchmark test on a version, None) or (None, why it does not load)."""
    import yaml

    path = pathlib.Path(tmp) / f"{version}-{bench}-{test}.yaml"
    made = run([vfssim, "new", bench, test, "--kernel", version, "--machine", machine, "--out", str(path)])
    out = made if made.returncode else run([vfssim, "library", "resolve", str(path)])
    if out.returncode:
        # The first line, the file named from the scenarios folder: the same bytes in any clone.
        why = out.stderr.strip().splitlines()[0] if out.stderr.strip() else "failed"
        return None, re.sub(r"\S*/(scenarios/)", r"\1", why.replace(str(path), f"{bench}/{test}"))
    return yaml.load(out.stdout, Loader=loader), None


def resolved_alone(vfssim, machine, version, op, tmp, loader):
    """The resolved scenario of a loop of the library op alone (an op that takes no bindings), or None."""
    import yaml

    path = pathlib.Path(tmp) / f"{version}-alone-{op}.yaml"
    path.write_text(yaml.safe_dump({
        "scenario": f"{op}-alone", "description": f"op {op} of kernel {version} in a loop", "machine": machine,
        "use": f"kernel/{version}",
        "workload": {"tasks": "thread", "placement": "compact", "loop": [op], "warmup": "20us", "duration": DURATION,
                     "cpus": [1]},
        "strategies": {version: {"description": f"kernel {version}"}}}, sort_keys=False))
    out = run([vfssim, "library", "resolve", str(path)])
    return yaml.load(out.stdout, Loader=loader) if out.returncode == 0 else None


def steps_of(op):
    return op["steps"] if isinstance(op, dict) else op


def calls(node, out):
    """The ops a step list calls, at any depth."""
    if isinstance(node, dict):
        if isinstance(node.get("call"), str):
            out.add(node["call"])
        for v in node.values():
            calls(v, out)
    elif isinstance(node, list):
        for v in node:
            calls(v, out)


def closure(ops, op):
    seen, todo = set(), [op]
    while todo:
        o = todo.pop()
        if o in seen or o not in ops:
            continue
        seen.add(o)
        found = set()
        calls(ops[o], found)
        todo.extend(sorted(found))
    return seen


def probe(doc, strategy, op):
    """One scenario: strategy `whole` loops on `call: op`, strategy `sI` on the op's step I alone."""
    s = doc["strategies"][strategy]
    base = {k: v for k, v in s.items() if k not in ("description", "extends", "ops")}
    ops = {k: s["ops"][k] for k in sorted(closure(s["ops"], op))}
    strategies = {"whole": dict(base, description="the op", ops=dict(ops, vfssim_probe=[{"call": op}]))}
    for i, step in enumerate(steps_of(s["ops"][op])):
        strategies[f"s{i}"] = dict(base, description=f"step {i}", ops=dict(ops, vfssim_probe=[step]))
    sc = {"scenario": "library-op", "description": f"op {op} alone at one CPU", "machine": doc["machine"],
          "workload": {"tasks": "thread", "placement": "compact", "loop": ["vfssim_probe"], "warmup": "20us",
                       "duration": DURATION, "cpus": [1]},
          "strategies": strategies}
    if "params" in doc:
        sc["params"] = doc["params"]
    return sc


def measure(vfssim, sc, tmp):
    """{strategy: (ns per loop iteration, exact)}: exact when every iteration took the same time (the
    latency's p50 is its maximum: the time to 1 ps), else the mean from the rate; a step alone that
    takes no simulated time is (0, True), and an op all of whose steps take none too."""
    import yaml

    def once(scenario, name=None):
        text = yaml.safe_dump(scenario, sort_keys=False)
        path = pathlib.Path(tmp) / ("probe-" + hashlib.sha256(text.encode()).hexdigest()[:16] + ".yaml")
        path.write_text(text)
        r = run([vfssim, "run", str(path), "--db", "", "--json", "-q"])
        if r.returncode:
            return None, r.stderr.strip()
        out = {}
        for p in json.loads(r.stdout)["points"]:
            lat = p["tasks"]
            if lat.get("latency_p50_us") is None:  # no iteration ended: longer than the window, or never ends
                return None, f"strategy {p['strategy']}: no loop iteration finished at one CPU in {scenario['workload']['duration']}"

            exact = lat["latency_p50_us"] == lat["latency_max_us"]
            out[p["strategy"]] = (lat["latency_p50_us"] * 1e3 if exact else 1e9 / p["ops_per_sec"], exact)
        return out, ""

    out, error = once(sc)
    longer = dict(sc, workload=dict(sc["workload"], duration=LONG_DURATION))
    if sc["workload"]["duration"] != LONG_DURATION and (
            (out is not None and not all(e for _, e in out.values())) or "no loop iteration finished" in error):
        return measure(vfssim, longer, tmp)
    if out is not None:
        return out, ""
    # A step alone (or the whole op) may take no simulated time: the others one by one.
    out = {}
    for name in sc["strategies"]:
        one, error = once(dict(sc, strategies={name: sc["strategies"][name]}))
        if one is not None:
            out.update(one)
        elif "takes no simulated time" in error:
            out[name] = (0.0, True)
        else:
            return None, error
    return out, ""


def base_name(op):
    """A specialized op (dput.2: dput with other bindings) is the library's dput."""
    return op.split(".")[0]


def table(vfssim, machine, jobs, tests_of=None):
    """The table; tests_of: {version: [benchmark/test, ...]} to resolve only those (a --check reuses the
    golden's), else every benchmark test on every version."""
    loader = _yaml_loader(vfssim)
    versions, version_ops, tests = benchmark_tests(vfssim)
    pairs = [(v, b, t) for v in versions for b, t in tests if tests_of is None or f"{b}/{t}" in tests_of.get(v, ())]
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        docs = dict(zip(pairs, pool.map(lambda vbt: resolved(vfssim, machine, *vbt, tmp, loader), pairs)))
        # Each version's library ops (not the benchmark's loop ops) in test order, the first test that reaches each.
        plan, probes = {v: {} for v in versions}, {}

        def take(v, doc, test):
            for sname in doc["strategies"]:
                for op in doc["strategies"][sname].get("ops", {}):
                    if op in plan[v] or base_name(op) not in version_ops[v]:
                        continue
                    sc = probe(doc, sname, op)
                    key = json.dumps(sc, sort_keys=True)
                    probes.setdefault(key, sc)
                    plan[v][op] = (test, key)

        for v in versions:
            for b, t in tests:
                if docs.get((v, b, t), (None,))[0] is not None:
                    take(v, docs[(v, b, t)][0], f"{b}/{t}")
        # The ops no test reaches, each in a loop of its own (those that take no bindings).
        alone = [(v, op) for v in versions for op in version_ops[v]
                 if op not in {base_name(o) for o in plan[v]} and (tests_of is None or f"alone/{op}" in tests_of.get(v, ()))]
        for (v, op), doc in zip(alone, pool.map(lambda vo: resolved_alone(vfssim, machine, *vo, tmp, loader), alone)):
            if doc is not None:
                take(v, doc, f"alone/{op}")
        keys = sorted(probes)
        results = dict(zip(keys, pool.map(lambda k: measure(vfssim, probes[k], tmp), keys)))
    out = {"machine": machine, "versions": {}}
    for v in versions:
        ops = {}
        for op in sorted(plan[v]):
            test, key = plan[v][op]
            times, error = results[key]
            if times is None:
                ops[op] = {"test": test, "error": error}
                continue
            steps = [times[f"s{i}"] for i in range(len(times) - 1)]
            ops[op] = {"test": test, "ns": round(times["whole"][0], 3), "exact": all(e for _, e in times.values()),
                       "steps_ns": [round(x, 3) for x, _ in steps]}
            if '"alloc":' in json.dumps(probes[key]["strategies"]["whole"]["ops"]):
                # An allocation from a pool costs what the time since the last one refilled: not additive.
                ops[op]["pool"] = True
        reached = {base_name(o) for o in plan[v]}
        out["versions"][v] = {"ops": ops, "not_reached": sorted(o for o in version_ops[v] if o not in reached),
                              "tests_not_loading": {f"{b}/{t}": why for (w, b, t), (doc, why) in sorted(docs.items())
                                                    if w == v and doc is None}}
    return out


def tests_in(golden):
    """{version: the tests a golden table names}."""
    return {v: sorted({o["test"] for o in d["ops"].values()} | set(d.get("tests_not_loading", {})))
            for v, d in golden["versions"].items()}


def golden_path(machine):
    return ROOT / "tests" / "golden" / "library" / f"ops-{machine}.json"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vfssim", default=str(ROOT / "build" / "vfssim"))
    ap.add_argument("--machine", default="skylake-sp-2s")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--update", action="store_true")
    what.add_argument("--check", action="store_true")
    what.add_argument("--print", action="store_true")
    a = ap.parse_args()
    path = golden_path(a.machine)
    # A check resolves only the tests the golden names: an op that moved to another test shows as not reached.
    t = table(a.vfssim, a.machine, a.jobs, tests_in(json.loads(path.read_text())) if a.check and path.exists() else None)
    text = json.dumps(t, indent=1, sort_keys=True) + "\n"
    if a.print:
        sys.stdout.write(text)
    elif a.update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}")
    else:
        same = path.exists() and path.read_text() == text
        print(f"{path.relative_to(ROOT)}: {'byte-identical' if same else 'DIFFERS (scripts/library_ops.py --update, and say why in the commit)'}")
        sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()

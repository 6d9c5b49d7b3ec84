#!/usr/bin/env python3
"""Golden outputs: the JSON of a few points of every scenario under scenarios/ (machines excepted).

    scripts/golden.py [--vfssim build/vfssim] --check     # compare tests/golden/ byte for byte (the test command)
    scripts/golden.py [--vfssim build/vfssim] --update    # rewrite them

For each scenario, `vfssim run FILE --json --db '' --cpus A,B,C` of its default variant, every
strategy, one replication, seed 1, at the smallest, the middle and the largest CPU count of the
workload's `cpus:` list, is stored as tests/golden/<dir>/<scenario>.json (without the text's
hash: a comment is not behaviour). Any change of the
model, a constant, a preset or a scenario moves these bytes: a commit that rewrites them says
why in its message.
"""
import argparse
import difflib
import json
import pathlib
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = pathlib.Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"


# Not scenarios: machine presets, the code-path library and the benchmarks.
LIBRARY_DIRS = {"machines", "kernel", "benchmarks"}


def scenarios():
    return sorted(p for p in (ROOT / "scenarios").rglob("*.yaml")
                  if not LIBRARY_DIRS & set(p.relative_to(ROOT / "scenarios").parts[:-1]))


def cpus_of(path, vfssim=str(ROOT / "build" / "vfssim")):
    import yaml  # python3-yaml

    data = yaml.safe_load(path.read_text())
    if "cpus" not in data.get("workload", {}):  # a benchmark's workload: the expanded scenario has it
        r = subprocess.run([vfssim, "library", "resolve", str(path)], capture_output=True, text=True, check=True)
        data = yaml.safe_load(r.stdout)
    cpus = sorted(set(int(c) for c in data["workload"]["cpus"]))
    picked = [cpus[0], cpus[len(cpus) // 2], cpus[-1]]
    return sorted(set(picked))


def golden_path(path):
    rel = path.relative_to(ROOT / "scenarios")
    return GOLDEN / rel.parent / (rel.stem + ".json")


def render(vfssim, path):
    cpus = ",".join(str(c) for c in cpus_of(path, vfssim))
    r = subprocess.run([vfssim, "run", str(path.relative_to(ROOT)), "--json", "--db", "", "-q", "--cpus", cpus,
                        "--seed", "1", "--reps", "1", "--jobs", "1"],
                       cwd=ROOT, capture_output=True, text=True)
    if r.returncode not in (0, 1):  # 1: a point deadlocked, which is a result
        raise RuntimeError(f"{path}: vfssim run exited {r.returncode}: {r.stderr[-500:]}")
    doc = json.loads(r.stdout)
    doc.pop("scenario_hash", None)  # the file's text, comments included: behaviour is what is pinned
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vfssim", default=str(ROOT / "build" / "vfssim"))
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--update", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    paths = scenarios()
    with ThreadPoolExecutor(args.jobs) as pool:
        outputs = list(pool.map(lambda p: render(args.vfssim, p), paths))
    failed = 0
    for path, text in zip(paths, outputs):
        g = golden_path(path)
        if args.update:
            g.parent.mkdir(parents=True, exist_ok=True)
            if not g.exists() or g.read_text() != text:
                g.write_text(text)
                print(f"rewrote {g.relative_to(ROOT)}")
            continue
        if not g.exists():
            print(f"MISSING {g.relative_to(ROOT)} (run scripts/golden.py --update)")
            failed += 1
        elif g.read_text() != text:
            failed += 1
            diff = list(difflib.unified_diff(g.read_text().splitlines(), text.splitlines(), "golden", "now", n=1,
                                             lineterm=""))
            print(f"DIFFERS {g.relative_to(ROOT)}: {sum(1 for l in diff if l.startswith('+') and not l.startswith('+++'))} "
                  "lines changed; first:\n  " + "\n  ".join(diff[:12]))
    if args.update:
        known = {golden_path(p) for p in paths}
        for stale in GOLDEN.rglob("*.json"):
            # tests/golden/library/ is the library's op table (scripts/library_ops.py), not a scenario's.
            if stale not in known and stale.parent != GOLDEN / "library":
                stale.unlink()
                print(f"removed {stale.relative_to(ROOT)} (no scenario)")
        return 0
    print(f"golden: {len(paths) - failed} of {len(paths)} scenarios byte-identical")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

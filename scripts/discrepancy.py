#!/usr/bin/env python3
"""The model's error learned from the public corpus (issue 27, docs/uncertainty.md "The model's error").

    scripts/discrepancy.py [--vfssim build/vfssim] --update   # rewrite scenarios/validation/discrepancy.json
    scripts/discrepancy.py [--vfssim build/vfssim] --check    # regenerate and compare (the test command)

Runs `vfssim validate scenarios/validation --json --db ''` and keeps, for every scored prediction
that gives one, its record: scenario, figure, kind class, bound class and log(reported / predicted)
(validate's `discrepancy` per figure; which figures give one is decided there, results/discrepancy.cpp).
`vfssim validate --calibration table` (the default with --uncertainty) and `vfssim compare` read the
table. It records the commit it was learned on and a hash of the corpus files (the scenarios and the
machine presets); --check compares everything but the commit.
"""
import argparse
import hashlib
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "scenarios" / "validation"
TABLE = CORPUS / "discrepancy.json"
SHRINKAGE_K = 2  # results/discrepancy.h kDiscrepancyShrinkage


def corpus_sha256():
    h = hashlib.sha256()
    # The corpus, its machines, and the code-path and benchmark libraries its cases use.
    files = sorted(list(CORPUS.rglob("*.yaml")) +
                   [p for d in ("machines", "kernel", "benchmarks") for p in (ROOT / "scenarios" / d).rglob("*.yaml")])
    for p in files:
        h.update(str(p.relative_to(ROOT)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def commit():
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", ".", ":!" + str(TABLE)],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def table(vfssim):
    r = subprocess.run([vfssim, "validate", str(CORPUS), "--json", "--db", "", "-q"], capture_output=True, text=True)
    if r.returncode not in (0, 1) or not r.stdout.strip():
        sys.exit(f"vfssim validate failed ({r.returncode}): {r.stderr[-2000:]}")
    figures = json.loads(r.stdout)["figures"]
    records, classes = [], {}
    for f in figures:
        d = f["discrepancy"]
        if d["log_error"] is None:
            continue
        records.append({"scenario": f["scenario"], "figure": f["figure"], "kind_class": d["kind_class"],
                        "bound_class": d["bound_class"], "log_error": round(d["log_error"], 9)})
        key = d["kind_class"] + "/" + d["bound_class"]
        classes[key] = classes.get(key, 0) + 1
    records.sort(key=lambda x: (x["scenario"], x["figure"]))
    return {
        "what": "log(reported / predicted) of the scored predictions of scenarios/validation "
                "(scripts/discrepancy.py --update; docs/uncertainty.md)",
        "corpus_commit": commit(),
        "corpus_sha256": corpus_sha256(),
        "shrinkage_k": SHRINKAGE_K,
        "classes": dict(sorted(classes.items())),
        "records": records,
    }


def dump(t):
    return json.dumps(t, indent=1, sort_keys=False) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vfssim", default=str(ROOT / "build" / "vfssim"))
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--update", action="store_true")
    g.add_argument("--check", action="store_true")
    a = ap.parse_args()
    new = table(a.vfssim)
    if a.update:
        TABLE.write_text(dump(new))
        print(f"{TABLE.relative_to(ROOT)}: {len(new['records'])} records, corpus {new['corpus_commit'][:12]}")
        return 0
    if not TABLE.exists():
        print(f"{TABLE.relative_to(ROOT)} missing: run scripts/discrepancy.py --update")
        return 1
    old = json.loads(TABLE.read_text())
    old.pop("corpus_commit", None)
    new.pop("corpus_commit", None)
    if old == new:
        print(f"{TABLE.relative_to(ROOT)} is current ({len(new['records'])} records)")
        return 0
    if old.get("corpus_sha256") != new["corpus_sha256"]:
        print("the corpus files changed since the table was learned")
    o = {(r["scenario"], r["figure"]): r for r in old.get("records", [])}
    n = {(r["scenario"], r["figure"]): r for r in new["records"]}
    for k in sorted(set(o) | set(n)):
        if o.get(k) != n.get(k):
            print(f"  {k[0]} {k[1]}: table {o.get(k)} now {n.get(k)}")
    print(f"{TABLE.relative_to(ROOT)} is out of date: run scripts/discrepancy.py --update")
    return 1


if __name__ == "__main__":
    sys.exit(main())

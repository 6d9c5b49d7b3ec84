#!/usr/bin/env python3
"""The README's validation tables, from `vfssim validate --json` (never typed by hand).

    scripts/validation-table.py [--vfssim build/vfssim] --update   # rewrite README.md between the markers
    scripts/validation-table.py [--vfssim build/vfssim] --check    # exit 1 when README.md is out of date

One table per set (scenarios/seed, scenarios/validation with its hardware/ rung): per scenario,
grouped by the rung of the validation ladder (level), its machine, the predictions (fitted and restated figures excluded), how many are within tolerance and within a
factor 1.5, peaks within a doubling and directions right; then the totals.
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SETS = ["scenarios/seed", "scenarios/validation"]
LEVELS = ["hardware", "locks", "workload"]  # models::kLevels
BEGIN, END = "<!-- validation-tables: begin (scripts/validation-table.py --update) -->", "<!-- validation-tables: end -->"


def machine_of(path):
    import yaml

    m = yaml.safe_load((ROOT / path).read_text())["machine"]
    return m if isinstance(m, str) else "inline"


def frac(n, d):
    return f"{n}/{d}" if d else "-"


def table(vfssim, where):
    r = subprocess.run([vfssim, "validate", where, "--json", "--db", "", "-q"], cwd=ROOT, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise SystemExit(f"vfssim validate {where} exited {r.returncode}: {r.stderr[-600:]}")
    doc = json.loads(r.stdout)
    lines = [f"`vfssim validate {where}`:", "",
             "| scenario | level | machine | predictions | within tolerance | within 1.5x | peaks within 2x | directions right | fitted (missed) | restated |",
             "|---|---|---|---|---|---|---|---|---|---|"]

    def row(name, level, machine, s):
        pct = f" ({100 * s['predictions_within_tolerance'] / s['predictions']:.0f}%)" if s["predictions"] else ""
        return (f"| {name} | {level} | {machine} | {s['predictions']} | "
                f"{frac(s['predictions_within_tolerance'], s['predictions'])}{pct} | "
                f"{frac(s['within_factor_1_5'], s['predictions'])} | {frac(s['peaks_within_doubling'], s['peaks'])} | "
                f"{frac(s['directions_right'], s['directions_total'])} | {s['fitted']} ({s['fit_missed']}) | {s['restated']} |")

    # The ladder's rungs in order, each file under its rung, then the rung's total.
    for level in LEVELS:
        files = [s for s in doc["per_scenario"] if s["level"] == level]
        if not files:
            continue
        for s in files:
            lines.append(row(f"`{s['scenario']}`", level, machine_of(s["path"]), s))
        if len(doc["summary"]["levels"]) > 1:
            lines.append(row(f"*{level}: {len(files)}*", level, "", doc["summary"]["levels"][level]))
    t = doc["summary"]
    lines.append(row(f"**all {t['scenarios']}**", "", "", t))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vfssim", default=str(ROOT / "build" / "vfssim"))
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--update", action="store_true")
    args = ap.parse_args()
    block = BEGIN + "\n" + "\n\n".join(table(args.vfssim, w) for w in SETS) + "\n" + END
    text = README.read_text()
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"README.md has no {BEGIN} ... {END} block")
    new = pattern.sub(lambda _: block, text)
    if args.update:
        README.write_text(new)
        print(block)
        return 0
    if new != text:
        print("README.md's validation tables are out of date: run scripts/validation-table.py --update")
        return 1
    print("README.md's validation tables are current")
    return 0


if __name__ == "__main__":
    sys.exit(main())

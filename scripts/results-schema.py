#!/usr/bin/env python3
"""docs/results-db.md's field list, from `vfssim schema --json` (never typed by hand).

    scripts/results-schema.py [--vfssim build/vfssim] --update   # rewrite docs/results-db.md between the markers
    scripts/results-schema.py [--vfssim build/vfssim] --check    # exit 1 when it is out of date

The schema is declared once, in results/schema.h: every field of a point and of its stats
(lock_stat, lines, seqcounts, pools, profile, rcu) and of a curve point, with its JSON and Python
key, its SQLite column, type, unit and description. The JSON document, the Python dicts and
DataFrames and the SQLite rows are all generated from it; this list is too.
"""
import argparse
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "results-db.md"
BEGIN, END = "<!-- result-schema: begin (scripts/results-schema.py --update) -->", "<!-- result-schema: end -->"


def render(vfssim):
    r = subprocess.run([vfssim, "schema", "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"vfssim schema --json exited {r.returncode}: {r.stderr[-600:]}")
    doc = json.loads(r.stdout, object_pairs_hook=lambda kv: dict(kv))
    out = []
    for key, t in doc.items():
        where = "the point itself (Python point dicts)" if key == "point" else (
            "JSON `points[]` and Python curve dicts" if key == "curve" else f"JSON and Python key `{key}`")
        out += [f"`{key}`: {where}; SQLite table `{t['table']}`, one row per {t['rows']}.", "",
                "| JSON / Python | SQLite column | type | unit | description |", "|---|---|---|---|---|"]
        for f in t["fields"]:
            column = f"`{f['column']}` ({f['sql_type']})" if f["column"] else "-"
            key = f"`{f['key']}`" if f["key"] else "- (SQLite only)"
            note = " (derived: not read back)" if f["derived"] and f["column"] else (" (derived)" if f["derived"] else "")
            out.append(f"| {key} | {column} | {f['type']} | {f['unit']} | {f['description']}{note} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vfssim", default=str(ROOT / "build" / "vfssim"))
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--update", action="store_true")
    args = ap.parse_args()
    text = DOC.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{DOC}: the markers {BEGIN!r} and {END!r} are missing")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = head + BEGIN + "\n" + render(args.vfssim) + END + tail
    if args.update:
        DOC.write_text(new)
        print(f"{DOC.relative_to(ROOT)}: field list rewritten")
        return 0
    if new != text:
        print(f"{DOC.relative_to(ROOT)}: the field list differs from `vfssim schema`; run scripts/results-schema.py --update")
        return 1
    print(f"{DOC.relative_to(ROOT)}: the field list matches `vfssim schema`")
    return 0


if __name__ == "__main__":
    sys.exit(main())

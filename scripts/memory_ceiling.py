#!/usr/bin/env python3
"""The memory ceiling (issue 29): scenarios at the documented limits, each run as one point
under GNU time, with its peak resident memory.

    scripts/memory_ceiling.py [--vfssim build/vfssim] [--out DIR] [--json]

Each input sits at (or just inside) a limit of docs/scenario-format.md "Limits": object
instances (1,200,000 a strategy), steps (100,000), 256 strategies that extend one long op,
ranged parameters, a flood of RCU callbacks, the largest machine (4,096 CPUs), and an
--uncertainty run with many samples. Goal: every run stays under ~2 GB of RSS, or is refused
before it runs with FILE:LINE:COL naming the limit. Prints one row per input: its peak RSS,
wall seconds, exit status and the first line of stderr. Exit status 1 when an input goes over.
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
CEILING_KB = 2 * 1024 * 1024

HEAD = """scenario: {name}
machine: {machine}
workload:
  tasks: thread
  placement: compact
  cpus: [{cpus}]
  loop: [op]
  warmup: 1us
  duration: {duration}
"""


def objects_locks():
    # 16 qspinlocks of 75,000 objects each: 1,200,000 instances, the limit.
    locks = "\n".join(f"      l{i}: {{kind: qspinlock, scope: object, objects: 75000, pick: uniform}}" for i in range(16))
    steps = "\n".join(f"        - lock: l{i}\n          hold: 10ns" for i in range(16))
    return HEAD.format(name="objects-locks", machine="nehalem-ep-2s", cpus=2, duration="100us") + \
        f"strategies:\n  s:\n    locks:\n{locks}\n    ops:\n      op:\n{steps}\n"


def objects_dentries():
    # 8 path-walk dentries of 50,000 objects (a dentry counts 3): 1,200,000.
    dents = "\n".join(f"      d{i}: {{scope: object, objects: 50000, pick: uniform}}" for i in range(8))
    comps = ", ".join(f"d{i}" for i in range(8))
    return HEAD.format(name="objects-dentries", machine="nehalem-ep-2s", cpus=2, duration="100us") + \
        f"strategies:\n  s:\n    dentry_lock: ticket\n    dentries:\n{dents}\n    ops:\n      op:\n        - walk: [{comps}]\n          mode: ref\n          component: 100ns\n          refcount: atomic\n"


def many_steps(n=99_000):
    body = "\n".join("        - compute: 1ns" for _ in range(n))
    return HEAD.format(name="many-steps", machine="nehalem-ep-2s", cpus=1, duration="1ms") + \
        f"strategies:\n  s:\n    ops:\n      op:\n{body}\n"


def extends_chain(steps=20_000, strategies=255):
    body = "\n".join("        - compute: 1ns" for _ in range(steps))
    others = "\n".join(f"  s{i}: {{extends: s0}}" for i in range(1, strategies + 1))
    return HEAD.format(name="extends-many", machine="nehalem-ep-2s", cpus=1, duration="100us") + \
        f"strategies:\n  s0:\n    ops:\n      op:\n{body}\n{others}\n"


def many_ranges(n=20_000):
    params = "\n".join(f"  p{i}: 1ns ± 0.5ns" for i in range(n))
    body = "\n".join(f"        - compute: $p{i}" for i in range(n))
    return HEAD.format(name="many-ranges", machine="nehalem-ep-2s", cpus=1, duration="100us") + \
        f"params:\n{params}\nstrategies:\n  s:\n    ops:\n      op:\n{body}\n"


def rcu_flood():
    return HEAD.format(name="rcu-flood", machine="nehalem-ep-2s", cpus=1, duration="400ms") + \
        "strategies:\n  s:\n    kernel: {hz: 10}\n    ops:\n      op:\n        - compute: 1ns\n" \
        "        - call_rcu: {steps: [{compute: 1ps}]}\n"


def big_machine(cpus=4096):
    machine = f"""machine: huge
description: the largest machine vfssim takes, {cpus} hardware threads
levels:
  - name: socket
    count: 16
    transfer: 50ns
  - name: core
    count: {cpus // 16}
interconnect: {{links: full, base: 120ns, hop: 0ns}}
numa: socket
core: core
local_hit: 1ns
local_atomic: 7ns
"""
    return machine, HEAD.format(name="big-machine", machine="MACHINE", cpus=cpus, duration="20us") + \
        "strategies:\n  s:\n    locks: {l: {kind: qspinlock, scope: global}}\n    ops:\n      op:\n" \
        "        - lock: l\n          hold: 10ns\n        - compute: 1us\n"


def cases(out):
    made = []
    for name, text, extra in [("objects-locks", objects_locks(), []), ("objects-dentries", objects_dentries(), []),
                              ("many-steps", many_steps(), []), ("extends-many", extends_chain(), ["--strategy", "s255"]),
                              ("many-ranges", many_ranges(), []), ("rcu-flood", rcu_flood(), []),
                              ("many-ranges-uncertainty", many_ranges(2_000), ["--uncertainty", "50"])]:
        path = out / f"{name}.yaml"
        path.write_text(text)
        made.append((name, path, extra))
    machine, text = big_machine()
    (out / "huge.yaml").write_text(machine)
    path = out / "big-machine.yaml"
    path.write_text(text.replace("machine: MACHINE", f"machine: {out / 'huge.yaml'}"))
    made.append(("big-machine", path, []))
    return made


def measure(vfssim, path, extra):
    cmd = ["/usr/bin/time", "-v", vfssim, "run", str(path), "--db", "", "-q", "--max-wall", "120", *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", r.stderr).group(1)
    said = next((l for l in r.stderr.splitlines() if l.strip() and not l.startswith("\t")), "")
    return {"rss_kb": rss, "wall": wall, "exit": r.returncode, "said": said[:160]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vfssim", default=str(ROOT / "build" / "vfssim"))
    ap.add_argument("--out", help="where the inputs are written (default: a temporary folder)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    out = pathlib.Path(a.out or tempfile.mkdtemp(prefix="vfssim-memory-"))
    out.mkdir(parents=True, exist_ok=True)
    rows = {}
    for name, path, extra in cases(out):
        rows[name] = measure(a.vfssim, path, extra)
        if not a.json:
            r = rows[name]
            print(f"{name:26} {r['rss_kb'] / 1024:8.0f} MiB  {r['wall']:>8}  exit {r['exit']}  {r['said']}", flush=True)
    if a.json:
        print(json.dumps(rows, indent=2))
    return 1 if any(r["rss_kb"] > CEILING_KB for r in rows.values()) else 0


if __name__ == "__main__":
    sys.exit(main())

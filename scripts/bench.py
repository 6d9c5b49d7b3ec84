#!/usr/bin/env python3
"""Engine speed: runs `vfssim bench --json` and prints the goals' figures.

Simulated acquisitions per wall-clock second at 128 CPUs (goal >= 8 M on
one core), per lock kind the events per acquisition and the wall time per
event at 1024 CPUs over 8 (goals <= 1.5 and <= 2: the cost rule, in events
and in wall time; set-up excluded, see cli/bench.cpp), and the simulated MCS
throughput at 128 CPUs against 1 / (hold + handoff) = 1 / 300 ns (goal
within 1%). Then the engine's speed against the same MCS model written by
hand (bench/handwritten_mcs.cpp), measured in the same run in alternating
pairs: the ratio of simulated acquisitions per wall second, engine over
hand-written (goal >= 1.0), with the two loops' simulated throughputs
(goal: within 1%), and the events per wall second of every kind at 8 and
1024 CPUs (the wall time per event, 1024 over 8, goal <= 2). Last, a
parallel sweep: `vfssim run` of 5 lock kinds x 12 CPU counts on every core
against one worker (goal: <= 0.65 of the single worker's wall time on two
cores), best of three pairs.

usage: scripts/bench.py [VFSSIM_BINARY]
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

binary = sys.argv[1] if len(sys.argv) > 1 else "build/vfssim"
doc = json.loads(subprocess.run([binary, "bench", "--json"], check=True, capture_output=True, text=True).stdout)
rows = {(r["lock"], r["cpus"]): r for r in doc["results"]}
for (lock, cpus), r in sorted(rows.items()):
    print(f"{lock:7} {cpus:5}  {r['acquisitions_per_wall_sec'] / 1e6:7.2f} M acq/wall-s  "
          f"{r['events_per_sec'] / 1e6:7.2f} M events/s  {r['events_per_acquisition']:.3f} events/acq  "
          f"{r['sim_acquisitions_per_sec'] / 1e6:7.3f} M sim acq/s")
mcs = rows[("mcs", 128)]
print(f"mcs @128: {mcs['acquisitions_per_wall_sec'] / 1e6:.2f} M simulated acquisitions per wall second (goal >= 8)")
for lock in sorted({l for l, _ in rows}):
    lo, hi = rows.get((lock, 8)), rows.get((lock, 1024))
    if not lo or not hi:
        continue
    ev = hi["events_per_acquisition"] / lo["events_per_acquisition"]
    wall = lo["events_per_sec"] / hi["events_per_sec"]
    print(f"{lock:7} 1024 CPUs over 8: events per acquisition x{ev:.3f} (goal <= 1.5), "
          f"wall time per event x{wall:.2f} (goal <= 2)")
err = abs(mcs["sim_acquisitions_per_sec"] * 300e-9 - 1)
print(f"mcs @128 simulated throughput vs 1/(hold + handoff): {100 * err:.3f}% off (goal < 1%)")

print()
print("events per wall second, per kind (M events/s):")
print(f"{'lock':10} {'8 CPUs':>9} {'1024 CPUs':>10} {'wall/event 1024 over 8':>24}")
for lock in sorted({l for l, _ in rows}):
    lo, hi = rows.get((lock, 8)), rows.get((lock, 1024))
    if not lo or not hi:
        continue
    print(f"{lock:10} {lo['events_per_sec'] / 1e6:9.2f} {hi['events_per_sec'] / 1e6:10.2f} "
          f"{lo['events_per_sec'] / hi['events_per_sec']:24.2f}")

hw = doc.get("handwritten")
if hw:
    agree = abs(hw["engine_sim_acquisitions_per_sec"] / hw["sim_acquisitions_per_sec"] - 1)
    print()
    print(f"mcs @{hw['cpus']} engine vs hand-written loop (bench/handwritten_mcs.cpp), {hw['pairs']} alternating pairs:")
    print(f"  simulated acquisitions/s: engine {hw['engine_sim_acquisitions_per_sec'] / 1e6:.4f} M, "
          f"hand-written {hw['sim_acquisitions_per_sec'] / 1e6:.4f} M ({100 * agree:.3f}% apart, goal < 1%)")
    print(f"  acquisitions per wall second (medians): engine {hw['engine_acquisitions_per_wall_sec'] / 1e6:.2f} M, "
          f"hand-written {hw['acquisitions_per_wall_sec'] / 1e6:.2f} M")
    print(f"  pairs' ratios: {', '.join(f'{r:.3f}' for r in hw['pair_ratios'])}; "
          f"in thread CPU time {hw['cpu_ratio_to_handwritten']:.3f}")
    print(f"ratio to the hand-written loop: {doc['ratio_to_handwritten']:.3f} (goal >= 1.0)")

# A flat 64-CPU machine, 5 lock kinds in a think-lock-hold loop, 12 CPU counts.
KINDS = ["tas", "ticket", "mcs", "mutex", "rwsem"]
SWEEP = """scenario: bench-parallel-sweep
description: a global lock in a loop, for the parallel sweep's speed
machine:
  machine: flat-64
  levels: [{name: package, count: 1, transfer: 40ns}, {name: cpu, count: 64}]
  interconnect: {base: 80ns, hop: 0ns}
  local_hit: 1ns
  local_atomic: 7ns
  invalidate_per_sharer: 1ns
workload: {tasks: process, placement: compact, loop: [step], warmup: 20us, duration: 110ms,
           cpus: [1, 2, 4, 6, 8, 12, 16, 24, 32, 40, 48, 64]}
params: {think: 300ns}
strategies:
""" + "".join(f"""  {k}:
    description: one {k} lock
    locks: {{l: {{kind: {k}, scope: global{', spin: true' if k == 'rwsem' else ''}}}}}
    ops: {{step: [{{compute: {{exp: $think}}}}, {{lock: l, hold: 40ns}}]}}
""" for k in KINDS)
with tempfile.TemporaryDirectory() as tmp:
    path = pathlib.Path(tmp) / "sweep.yaml"
    path.write_text(SWEEP)
    def wall(jobs):
        t0 = time.perf_counter()
        subprocess.run([binary, "run", str(path), "--db", "", "--jobs", str(jobs), "-q"], check=True, capture_output=True)
        return time.perf_counter() - t0
    pairs = [(wall(1), wall(0)) for _ in range(3)]
single, parallel = min(pairs, key=lambda p: p[1] / p[0])
print()
print(f"parallel sweep, {len(KINDS)} lock kinds x 12 CPU counts on {len(os.sched_getaffinity(0))} cores: "
      f"one worker {single:.2f} s, all cores {parallel:.2f} s ({parallel / single:.2f}x, goal <= 0.65 on two cores)")

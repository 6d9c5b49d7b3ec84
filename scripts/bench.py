#!/usr/bin/env python3
"""Engine speed: runs `vfssim bench --json` and prints the goals' figures.

Simulated acquisitions per wall-clock second at 128 CPUs (goal >= 8 M on
one core), per lock kind the events per acquisition and the wall time per
event at 1024 CPUs over 8 (goals <= 1.5 and <= 2: the cost rule, in events
and in wall time; set-up excluded, see cli/bench.cpp), and the simulated MCS
throughput at 128 CPUs against 1 / (hold + handoff) = 1 / 300 ns (goal
within 1%).

usage: scripts/bench.py [VFSSIM_BINARY]
"""
import json
import subprocess
import sys

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

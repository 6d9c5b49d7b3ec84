"""vfssim.compare: two strategies side by side, as the 0-day robot (LKP) compares two kernels.

    df = vfssim.compare(sc, "v3.11", "v3.12", cpus=120, reps=3)

          base  base_stddev_pct  change_pct        new  new_stddev_pct
    metric
    vfssim.throughput                                   ops/s, the mean over replications
    perf-profile.cpu-cycles.<chain>                     % of CPU time of a profile chain
                                                        (' <- ' written as '.', as LKP does)
    lock_stat.<lock>.waittime-total                     microseconds of lock_stat wait

The same rows and numbers as `vfssim compare --json` (cli/compare.cpp).
"""
import math

from ._util import whole

__all__ = ["compare", "group_bottleneck"]

TOP_PROFILE = 8
TOP_LOCKS = 5
COLUMNS = ["base", "base_stddev_pct", "change_pct", "new", "new_stddev_pct", "change_pp"]


def _mean(v):
    return sum(v) / len(v) if v else 0.0


def _stddev_pct(v):
    """Sample standard deviation over the mean, in percent (LKP's %stddev)."""
    m = _mean(v)
    if len(v) < 2 or m == 0:
        return 0.0
    return math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) / abs(m) * 100


def _chain_shares(points):
    out = []
    for p in points:
        m = {}
        for e in p["profile"]:
            m[e["chain"]] = m.get(e["chain"], 0.0) + e["share"] * 100
        out.append(m)
    return out


def _lock_waits(points):
    out = []
    for p in points:
        m = {}
        for lock in p["lock_stat"]:
            m[lock["name"]] = m.get(lock["name"], 0.0) + lock["waittime_total_us"]
        out.append(m)
    return out


def _top_rows(rows, base, new, top, name):
    def side_mean(reps, key):
        return sum(m.get(key, 0.0) for m in reps) / len(reps) if reps else 0.0

    rank = {}
    for side in (base, new):
        for m in side:
            for key in m:
                rank[key] = max(side_mean(base, key), side_mean(new, key))
    order = sorted(sorted(rank.items()), key=lambda kv: -kv[1])  # ties in name order, as the CLI
    for key, value in order[:top]:
        if value <= 0:
            break
        rows.append((name(key), [m.get(key, 0.0) for m in base], [m.get(key, 0.0) for m in new]))


def profile_metric(chain):
    """'a <- b <- c' -> 'perf-profile.cpu-cycles.a.b.c' (LKP's name of a perf call chain)."""
    return "perf-profile.cpu-cycles." + chain.replace(" <- ", ".")


def group_bottleneck(points):
    """The lock or cache line the replications of a point (PointResults) spend most CPU time
    synchronizing on, summed over them: {"name", "kind" ("lock" | "line"), "share", "margin" (its
    share minus the second's)} or None when nothing synchronizes 5% of the CPU time or more. The engine's rule (cli/review.h), the one `vfssim compare` prints."""
    from . import _vfssim

    return _vfssim.find_bottleneck([p._native for p in points])


def compare(scenario, base, new, cpus=None, reps=3, variant="default", seed=1, jobs=0,
            top_profile=TOP_PROFILE, top_locks=TOP_LOCKS):
    """Runs strategies `base` and `new` of a scenario at one CPU count (`reps` replications each,
    in parallel) and returns the LKP-style comparison as a pandas DataFrame indexed by metric,
    with columns base, base_stddev_pct, change_pct, new, new_stddev_pct, change_pp:

      vfssim.throughput                      ops/s
      perf-profile.cpu-cycles.<chain>        the top `top_profile` profile chains (% of CPU time)
      lock_stat.<lock>.waittime-total        the top `top_locks` locks by total wait (us)

    change_pct is (new - base) / base x 100 (NaN when base is 0); change_pp, for the perf-profile
    rows, is new - base in percentage points of cycles (NaN for the others), as LKP shows them. cpus=None: the variant's largest
    default CPU count. `scenario` is a vfssim.Scenario or a path. df.attrs has scenario, variant,
    cpus, reps, seed, and the bottleneck of each side ({"name", "kind", "share"} or None)."""
    import pandas as pd

    from .scenario import Scenario

    sc = scenario if isinstance(scenario, Scenario) else Scenario.load(scenario)
    reps = whole(reps, "reps", 1)
    if cpus is None:
        info = sc.machine_info(variant)
        cpus = max(info["cpus"]) if info["cpus"] else info["machine_cpus"]
    cpus = whole(cpus, "cpus")
    specs = [(s, variant, cpus, r) for s in (base, new) for r in range(reps)]
    results = sc.run_points(specs, seed=seed, jobs=jobs)
    points = [p.to_dict() for p in results]
    b, n = points[:reps], points[reps:]
    rows = [("vfssim.throughput", [p["ops_per_sec"] for p in b], [p["ops_per_sec"] for p in n])]
    _top_rows(rows, _chain_shares(b), _chain_shares(n), top_profile, profile_metric)
    _top_rows(rows, _lock_waits(b), _lock_waits(n), top_locks, lambda lock: f"lock_stat.{lock}.waittime-total")
    table = []
    for metric, bv, nv in rows:
        bm, nm = _mean(bv), _mean(nv)
        table.append({"metric": metric, "base": bm, "base_stddev_pct": _stddev_pct(bv),
                      "change_pct": (nm - bm) / bm * 100 if bm != 0 else float("nan"),
                      "new": nm, "new_stddev_pct": _stddev_pct(nv),
                      # perf-profile rows: the change in percentage points of cycles, as LKP prints it
                      "change_pp": nm - bm if metric.startswith("perf-profile.") else float("nan")})
    df = pd.DataFrame(table, columns=["metric"] + COLUMNS).set_index("metric")
    df.attrs.update({"scenario": sc.name, "base_strategy": base, "new_strategy": new, "variant": variant,
                     "cpus": cpus, "reps": reps, "seed": seed,
                     "bottleneck": {"base": group_bottleneck(results[:reps]),
                                    "new": group_bottleneck(results[reps:])}})
    return df

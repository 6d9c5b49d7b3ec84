"""Results of runs: one simulated point (PointResult) and a sweep of them (Sweep).

Both are plain data underneath (the dicts the engine returns, see
PointResult.to_dict()), with pandas DataFrames for the tables.
"""
from . import _vfssim
from ._util import point_name, series_name

__all__ = ["PointResult", "Sweep", "columns"]


def columns(table):
    """The columns of a point's table ('lock_stat', 'lines', 'seqcounts', 'pools', 'profile', 'rcu',
    'roles', 'tasks', 'point', 'curve') in the engine's result schema (results/schema.h), in order: the keys of its
    dicts, of the JSON document, and the DataFrame columns here."""
    keys = [f["key"].split("[")[0] for f in _vfssim.result_schema()[table]["fields"] if f["key"]]
    return list(dict.fromkeys(keys))  # a group's elements ("ci95[0]", "ci95[1]") are one list-valued key

# The curve DataFrame (new columns appended: scripts may index the old ones by position); ci95
# ([lo, hi] in the dicts) as two columns.
# band ({p10, p50, p90} with --uncertainty, absent without) as band_p10 / band_p50 / band_p90.
CURVE_COLUMNS = ["strategy", "variant", "cpus", "ops_per_sec", "stddev", "speedup", "efficiency", "events",
                 "us_per_op", "stddev_pct", "ci95_lo", "ci95_hi", "band_p10", "band_p50", "band_p90"]


def _curve_row(c):
    lo, hi = c["ci95"] if c["ci95"] is not None else (None, None)
    band = c.get("band") or {}
    return {**{k: c[k] for k in CURVE_COLUMNS if k in c}, "ci95_lo": lo, "ci95_hi": hi,
            **{"band_" + q: band.get(q) for q in ("p10", "p50", "p90")}}


def _pd():
    import pandas as pd

    return pd


class PointResult:
    """One simulated point: a strategy of a scenario on N CPUs (one replication).

    Attributes (also readable as result["name"], like a dict):
      strategy, variant, cpus, rep, seed    what ran
      ops_per_sec     loop iterations per simulated second, all CPUs together
      us_per_op       microseconds per iteration as one task sees it (cpus / ops_per_sec)
      ops, events     iterations in the window; engine events of the whole run
      window_seconds  simulated measurement window
      stop            why the engine stopped ("time limit", or "deadlock: ...")
      bottleneck      the lock or line with the most CPU time synchronizing on it (waiting,
                      spinning, moving its cache line), when that is 5% of the CPU time or
                      more: {"name", "kind" ("lock"|"line"), "share" of CPU time, "margin"
                      (its share minus the second's)} or None
      rcu             RCU counters (dict)
      tasks           the distribution over the point's tasks (dict): ops_per_sec_min, _median,
                      _max (per-task rates), fairness (max/min, None when a task starved), jain,
                      latency_p50_us, _p99_us, _p999_us, _max_us (per-op latency; None when no
                      iteration completed)
    Tables (pandas DataFrames): lock_stat (the /proc/lock_stat columns, times
    in microseconds, sorted by total wait), profile (perf-style share of CPU
    time per call chain, largest first; object_kind and synchronizing say
    whether an entry is time spent synchronizing on the lock or line in
    `detail`), lines (cache lines: loads, RMWs, bounces, queueing),
    seqcounts, pools (free pages: direct reclaims, kswapd refill); contention() sums the
    synchronizing time per lock or line.
    """

    def __init__(self, data, native=None):
        self._native = native if native is not None else data.pop("native", None)
        self._d = data
        # With Scenario.sweep(uncertainty=N), Sweep.point() sets the curve point's band
        # ({"p10", "p50", "p90"} of ops/s over the samples of the ranges); else None.
        self.band = None

    def to_dict(self):
        """The underlying dict (as the engine returned it)."""
        return self._d

    def __getitem__(self, key):
        return self._d[key]

    def keys(self):
        """The keys of the underlying dict."""
        return self._d.keys()

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._d[name]
        except KeyError:
            raise AttributeError(f"PointResult has no attribute {name!r}") from None

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._d))

    @property
    def us_per_op(self):
        """Microseconds per loop iteration as one task sees it: cpus / ops_per_sec."""
        return self.cpus * 1e6 / self.ops_per_sec if self.ops_per_sec > 0 else float("inf")

    @property
    def lock_stat(self):
        """lock_stat table: one row per lock class, sorted by waittime_total_us (largest first)."""
        df = _pd().DataFrame(self._d["lock_stat"], columns=columns("lock_stat"))
        return df.sort_values("waittime_total_us", ascending=False, kind="stable").reset_index(drop=True)

    @property
    def lock_stat_rw(self):
        """lock_stat's NAME-W / NAME-R rows: read/write lock classes held shared, per mode (W, R)."""
        return _pd().DataFrame(self._d["lock_stat_rw"], columns=columns("lock_stat_rw"))

    @property
    def contention_points(self):
        """lock_stat's contention points per lock class: the code-path step whose acquire waited
        (kind 'contention') and where the holder it found took the lock ('contending'), most first."""
        return _pd().DataFrame(self._d["contention_points"], columns=columns("contention_points"))

    @property
    def profile(self):
        """perf-style profile: share of CPU time (0-1) per call chain ('sym <- caller <- ...'), largest first."""
        return _pd().DataFrame(self._d["profile"], columns=columns("profile"))

    @property
    def lines(self):
        """Cache lines: loads, RMWs, bounces between CPUs and time queued behind other requests."""
        df = _pd().DataFrame(self._d["lines"], columns=columns("lines"))
        return df.sort_values("queue_wait_us", ascending=False, kind="stable").reset_index(drop=True)

    @property
    def seqcounts(self):
        """Seqcounts: read sections, retries, writes."""
        return _pd().DataFrame(self._d["seqcounts"], columns=columns("seqcounts"))

    @property
    def pools(self):
        """Free-page pools: allocations, how many entered direct reclaim (vmstat's allocstall), and the
        pages taken, given back by direct reclaim and refilled by kswapd."""
        return _pd().DataFrame(self._d["pools"], columns=columns("pools"))

    @property
    def roles(self):
        """Task roles (workload: roles:): each role's tasks, loop iterations and ops/s; empty without roles."""
        return _pd().DataFrame(self._d["roles"], columns=columns("roles"))

    def contention(self):
        """Share of CPU time (0-1) spent synchronizing on each lock or cache line — waiting, spinning
        and moving its cache line, not computing while holding it — largest first (a Series indexed
        by name). Its first entry is the point's bottleneck. Unlike lock_stat's wait times it also
        sees a lock whose cost is its bouncing line (a read-mostly rwsem's count word)."""
        import pandas as pd

        sync = [e for e in self._d["profile"] if e.get("synchronizing") and e.get("object_kind") in ("lock", "line")
                and e["detail"]]
        series = pd.Series([e["share"] for e in sync], index=[e["detail"] for e in sync], dtype=float)
        return series.groupby(level=0, sort=False).sum().sort_values(ascending=False, kind="stable")

    def share(self, prefix):
        """Share of CPU time (0-1) of the profile chains that start with the
        whole frames of `prefix` (the `share:` metric of expect: figures), e.g.
        share('mutex_lock'); 'f' does not match a chain starting 'f_last'."""
        return sum(e["share"] for e in self._d["profile"]
                   if e["chain"] == prefix or e["chain"].startswith(prefix + " <- "))

    def __repr__(self):
        b = self._d.get("bottleneck")
        neck = f", bottleneck {b['name']} ({100 * b['share']:.1f}% waiting)" if b else ""
        return (f"<PointResult {point_name(self.strategy, self.variant, self.cpus)}: "
                f"{self.ops_per_sec:,.0f} ops/s{neck}>")


class Sweep:
    """The result of Scenario.sweep(): every (strategy, variant, cpus) point with its replications.

      sweep.curve                 DataFrame: strategy, variant, cpus, ops_per_sec, stddev, speedup,
                                  efficiency, events, us_per_op (one row per curve point)
      sweep.point(s, cpus, variant="default", rep=0)   a PointResult
      sweep.lock_stat(s, cpus, variant="default")      its lock_stat DataFrame
      sweep.profile(s, cpus, variant="default")        its profile DataFrame
      sweep.tasks                 DataFrame: per-task figures (fairness, per-op latency), a row per replication
      sweep.fits()                Amdahl and USL fits per curve (DataFrame)
      sweep.plot(reported=...)    vfssim.plot.curves(sweep, ...)

    speedup is ops_per_sec over the same curve's 1-CPU rate (NaN when the sweep has no 1-CPU
    point; as the CLI prints it), efficiency = speedup / cpus. Details of a
    curve point (lock_stat, profile) are those of replication `rep` (0 by
    default); ops_per_sec and stddev are over all replications.
    """

    def __init__(self, scenario, curve, *, seed, reps, wall_seconds=None):
        self.scenario = scenario
        self.seed = seed
        self.reps = reps
        self.wall_seconds = wall_seconds
        self._curve = curve
        self._index = {(c["strategy"], c["variant"], c["cpus"]): c for c in curve}
        self._natives = {key: [r.pop("native", None) for r in c["reps"]] for key, c in self._index.items()}
        # Speedup and efficiency relative to the same curve's 1-CPU rate (NaN without a 1-CPU point),
        # as the CLI gives them.
        one = {(c["strategy"], c["variant"]): c["ops_per_sec"] for c in curve if c["cpus"] == 1}
        for c in curve:
            base = one.get((c["strategy"], c["variant"]), 0.0)
            c["speedup"] = c["ops_per_sec"] / base if base > 0 else float("nan")
            c["efficiency"] = c["speedup"] / c["cpus"]
            c["us_per_op"] = c["cpus"] * 1e6 / c["ops_per_sec"] if c["ops_per_sec"] > 0 else float("inf")

    @property
    def curve(self):
        """One row per curve point: strategy, variant, cpus, ops_per_sec, stddev, speedup, efficiency,
        events, us_per_op, stddev_pct and ci95_lo / ci95_hi (the Student-t 95% interval of
        ops_per_sec; NaN with one replication)."""
        return _pd().DataFrame([_curve_row(c) for c in self._curve], columns=CURVE_COLUMNS)

    @property
    def strategies(self):
        """Strategies in the sweep, in order."""
        return list(dict.fromkeys(c["strategy"] for c in self._curve))

    @property
    def variants(self):
        """Variants in the sweep, in order."""
        return list(dict.fromkeys(c["variant"] for c in self._curve))

    @property
    def cpus(self):
        """CPU counts in the sweep, sorted."""
        return sorted({c["cpus"] for c in self._curve})

    def _cp(self, strategy, cpus, variant):
        try:
            return self._index[(strategy, variant, int(cpus))]
        except KeyError:
            raise KeyError(f"the sweep has no point {point_name(strategy, variant, cpus)} "
                           f"(strategies {self.strategies}, variants {self.variants}, cpus {self.cpus})") from None

    def point(self, strategy, cpus, variant="default", rep=0):
        """The PointResult of replication `rep` of strategy/variant at `cpus` (its `band`: the curve
        point's, with uncertainty=N)."""
        cp = self._cp(strategy, cpus, variant)
        p = PointResult(cp["reps"][rep], self._natives[(strategy, variant, int(cpus))][rep])
        p.band = cp.get("band")
        return p

    def band(self, strategy, cpus, variant="default"):
        """With uncertainty=N: the point's {"p10", "p50", "p90"} of ops/s over the samples; else None."""
        return self._cp(strategy, cpus, variant).get("band")

    def sensitivity(self, strategy, cpus, variant="default"):
        """With uncertainty=N: [{"constant", "rho"}], |Spearman rho| with the point's rate largest first."""
        return self._cp(strategy, cpus, variant).get("sensitivity")

    def points(self, strategy, cpus, variant="default"):
        """Every replication of a curve point, as PointResults."""
        cp = self._cp(strategy, cpus, variant)
        return [PointResult(r, n) for r, n in zip(cp["reps"], self._natives[(strategy, variant, int(cpus))])]

    def ops_per_sec(self, strategy, cpus, variant="default"):
        """Mean ops/s of a curve point over its replications."""
        return self._cp(strategy, cpus, variant)["ops_per_sec"]

    def bottleneck(self, strategy, cpus, variant="default"):
        """The lock or line a curve point spends most CPU time synchronizing on (waiting, spinning,
        moving its line), over its replications: {"name", "kind", "share"} or None."""
        return self._cp(strategy, cpus, variant)["bottleneck"]

    @property
    def tasks(self):
        """One row per replication of every curve point: strategy, variant, cpus, rep, then the
        point's per-task figures (columns('tasks'): per-task rates min / median / max, fairness,
        Jain's index, per-op latency p50 / p99 / p999 / max in microseconds; NaN: not measured)."""
        rows = [{"strategy": c["strategy"], "variant": c["variant"], "cpus": c["cpus"], "rep": r["rep"], **r["tasks"]}
                for c in self._curve for r in c["reps"]]
        return _pd().DataFrame(rows, columns=["strategy", "variant", "cpus", "rep"] + columns("tasks"))

    def lock_stat(self, strategy, cpus, variant="default", rep=0):
        """lock_stat DataFrame of a point (see PointResult.lock_stat)."""
        return self.point(strategy, cpus, variant, rep).lock_stat

    def profile(self, strategy, cpus, variant="default", rep=0):
        """Profile DataFrame of a point (see PointResult.profile)."""
        return self.point(strategy, cpus, variant, rep).profile

    def fits(self):
        """Amdahl and USL fits of every curve: a DataFrame with strategy, variant, points,
        amdahl_sigma, amdahl_lambda, usl_sigma, usl_kappa, usl_lambda, usl_peak_cpus
        (see vfssim.fit_usl)."""
        from .fits import fit_amdahl, fit_usl

        rows = []
        for (strategy, variant), g in self.curve.groupby(["strategy", "variant"], sort=False):
            a = fit_amdahl(g["cpus"], g["ops_per_sec"])
            u = fit_usl(g["cpus"], g["ops_per_sec"])
            rows.append({"strategy": strategy, "variant": variant, "points": len(g),
                         "amdahl_sigma": a.sigma, "amdahl_lambda": a.lambda_,
                         "usl_sigma": u.sigma, "usl_kappa": u.kappa, "usl_lambda": u.lambda_,
                         "usl_peak_cpus": u.peak_cpus})
        return _pd().DataFrame(rows, columns=["strategy", "variant", "points", "amdahl_sigma", "amdahl_lambda",
                                              "usl_sigma", "usl_kappa", "usl_lambda", "usl_peak_cpus"])

    def plot(self, reported=None, ax=None, **kwargs):
        """vfssim.plot.curves(self, reported=reported, ax=ax, ...); returns the matplotlib Axes."""
        from . import plot

        return plot.curves(self, reported=reported, ax=ax, **kwargs)

    def to_records(self):
        """The raw curve: one dict per curve point with its replications' full results."""
        return self._curve

    def __len__(self):
        return len(self._curve)

    def __repr__(self):
        names = ", ".join(series_name(s, v) for s, v in dict.fromkeys((c["strategy"], c["variant"])
                                                                        for c in self._curve))
        return (f"<Sweep of {getattr(self.scenario, 'name', '?')}: {len(self._curve)} points "
                f"({names}) at cpus {self.cpus}, seed {self.seed}, {self.reps} rep(s)>")

    def _repr_html_(self):
        import html

        return f"<p>{html.escape(repr(self))}</p>" + self.curve.to_html()

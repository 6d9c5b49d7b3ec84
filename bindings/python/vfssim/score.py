"""Expected figures (a scenario's `expect:`) against the model, as `vfssim validate` scores them.

    table = vfssim.score.score(sc)          # or sc.score()
    print(vfssim.score.summary(table))      # what matches and what does not, as Markdown
    vfssim.plot.score(table)                # predicted / reported per figure, tolerance bands

The scoring is vfssim's own (results/validation.h, the engine of `vfssim validate`): one place
evaluates metrics, scores and finds restated figures. A figure is a `value` (a point's
ops_per_sec, us_per_op, speedup or share:CHAIN-PREFIX), a `ratio` new/base, a `change`
(new/base - 1; kept as the ratio 1 + change), a `peak` (the CPU count where a curve is highest,
and the height there) or a `spread` (a statistic of a point's tasks: by default the fastest and
the slowest task, or the median, fairness, Jain's index, a per-op latency quantile); a `curve:`
entry gives one value figure per point (CURVE@CPUS). Values and ratios: error = |predicted -
reported| / |reported|; changes: error = |Δpredicted - Δreported| / max(|Δreported|, 10%);
factor = max(p/r, r/p). A figure the thread gives only as a bound (bound: at_least / at_most)
has error 0 anywhere on its side. A ratio or change that claims a direction (reported more
than 2% away from 1) also scores whether the model moves the same way. Fitted figures set a
constant of the scenario; restated figures read only simulations that a fitted figure (or an
earlier prediction) already reads: both are shown, neither is a prediction.
"""
import json
import math

from . import _vfssim
from ._util import whole

__all__ = ["score", "summary", "format_value"]

NO_DIRECTION = _vfssim.NO_DIRECTION  # a reported ratio this close to 1 claims no direction (results/score.h)

COLUMNS = ["figure", "kind", "metric", "new", "base", "reported", "bound", "predicted", "error", "factor",
           "tolerance", "within", "direction_ok", "fitted", "restated", "restates", "curve", "reported_cpus",
           "predicted_cpus", "reported_slowest", "predicted_slowest", "source", "reported_change",
           "predicted_change", "stat"]


def _nan(v):
    return math.nan if v is None else v


def score(scenario, seed=1, reps=1, jobs=0, progress=False, figures=None):
    """Runs each point the figures need (reps replications, averaged; in parallel) and returns a
    DataFrame, one row per figure: figure, kind, metric, new, base ('strategy[/variant]@cpus'),
    reported, bound, predicted (a change as the ratio 1 + change), error, factor, tolerance,
    within, direction_ok (None when the figure claims no direction), fitted, restated, restates,
    curve, reported_cpus / predicted_cpus (peaks), reported_slowest / predicted_slowest
    (min_max spreads), source, reported_change and predicted_change (changes), stat (spreads: the
    statistic of the point's tasks, min_max, median, fairness, jain or P_latency). figures: only these
    figure ids (or figure dicts with a 'figure' key) of scenario.expect."""
    import pandas as pd
    from ._util import make_progress

    callback, close = make_progress(progress, scenario.name)
    try:
        doc = json.loads(_vfssim.validate(scenario.native, whole(seed, "seed"), whole(reps, "reps"), whole(jobs, "jobs", 0), callback))
    finally:
        close()
    keep = None
    if figures is not None:
        keep = {f["figure"] if isinstance(f, dict) else str(f) for f in figures}
    rows = []
    for f in doc["figures"]:
        if keep is not None and f["figure"] not in keep and (f["curve"] or "") not in keep:
            continue
        change = f["kind"] == "change"
        reported, predicted = _nan(f["reported"]), _nan(f["predicted"])
        rows.append({
            "figure": f["figure"], "kind": f["kind"], "metric": f["metric"], "new": f["new"], "base": f["base"],
            "reported": reported, "bound": f["bound"], "predicted": predicted,
            "error": math.inf if f["error"] is None else f["error"],
            "factor": math.inf if f["factor"] is None else f["factor"], "tolerance": f["tolerance"],
            "within": f["within_tolerance"], "direction_ok": f["direction_ok"], "fitted": f["fitted"],
            "restated": f["restated"], "restates": f["restates"], "curve": f["curve"],
            "reported_cpus": f.get("reported_cpus"), "predicted_cpus": f.get("predicted_cpus"),
            "reported_slowest": f.get("reported_slowest"), "predicted_slowest": f.get("predicted_slowest"),
            "source": f["source"],
            "reported_change": reported - 1 if change else None,
            "predicted_change": predicted - 1 if change else None,
            "stat": f.get("stat"),
        })
    return pd.DataFrame(rows, columns=COLUMNS)


def format_value(kind, metric, v):
    """A figure's value as the thread would write it: '+22.0%', '1.318', '560 us', '40.0%', '79.9k'."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    if kind == "change":
        return f"{100 * (v - 1):+.1f}%"
    if kind == "ratio" or metric == "speedup":
        return f"{v:.3g}"
    if metric.startswith("share:"):
        return f"{100 * v:.1f}%"
    if metric == "us_per_op":
        return f"{v:.4g} us"
    for div, unit in ((1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return f"{v / div:.3g}{unit}"
    return f"{v:.3g}"


def _line(row):
    rep = {"at_least": ">=", "at_most": "<="}.get(row.get("bound"), "") + format_value(row["kind"], row["metric"], row["reported"])
    pred = format_value(row["kind"], row["metric"], row["predicted"])
    if row["kind"] == "peak":
        rep, pred = f"{rep} at {row['reported_cpus']} CPUs", f"{pred} at {row['predicted_cpus']} CPUs"
    elif row["kind"] == "spread" and row.get("stat") == "min_max":
        rep += " .. " + format_value("value", row["metric"], row["reported_slowest"])
        pred += " .. " + format_value("value", row["metric"], row["predicted_slowest"])
    err = "n/a" if not math.isfinite(row["error"]) else f"{100 * row['error']:.0f}%"
    what = f"`{row['new']}`" + (f" vs `{row['base']}`" if row["base"] else "")
    note = ""
    if row["direction_ok"] is False:
        note = " — **direction wrong**" + (" (within tolerance)" if row["within"] else "")
    elif row["direction_ok"] is True and not row["within"]:
        note = " — direction right"
    return (f"- **{row['figure']}** ({what}): reported {rep}, model {pred} "
            f"(error {err}, tolerance {100 * row['tolerance']:.0f}%){note}")


def summary(table):
    """What matches and what does not, as Markdown computed from a score() table: counts, then
    the predictions matched (within tolerance and, for a ratio or change that claims a direction,
    moving the reported way), the misses (outside tolerance or in the wrong direction, as
    `vfssim validate` fails them) and the fitted figures."""
    restated = table[table["restated"] & ~table["fitted"]] if "restated" in table else table.iloc[0:0]
    preds = table[~table["fitted"] & ~table.index.isin(restated.index)]
    fitted = table[table["fitted"]]
    wrong = preds["direction_ok"].map(lambda d: d is False)
    matched = preds[preds["within"] & ~wrong]
    misses = preds[~preds["within"] | wrong]
    dirs = preds[preds["direction_ok"].notna()]
    right = int(dirs["direction_ok"].map(lambda d: d is True).sum())
    out = [f"**{int(preds['within'].sum())} of {len(preds)} predictions within tolerance**"
           + (f"; directions right {right} of {len(dirs)}" if len(dirs) else "")
           + (f"; {len(fitted)} fitted figure(s) shown apart" if len(fitted) else "")
           + (f"; {len(restated)} restated figure(s) (the same simulation as a fitted one) not scored" if len(restated) else "")
           + "."]
    if len(matched):
        out += ["", "Matched (within tolerance, and in the reported direction where one is claimed):"]
        out += [_line(r) for _, r in matched.iterrows()]
    if len(misses):
        out += ["", "Missed (outside tolerance, or the wrong direction):"] + [_line(r) for _, r in misses.iterrows()]
    if len(restated):
        out += ["", "Restated (the same simulation as a fitted or an earlier figure; not scored):"]
        out += [_line(r) + f" — restates {r['restates']}" for _, r in restated.iterrows()]
    if len(fitted):
        out += ["", "Fitted (a constant was set from these; not predictions):"]
        out += [_line(r) + ("" if r["within"] else " — *the fit does not hold here*") for _, r in fitted.iterrows()]
    return "\n".join(out)

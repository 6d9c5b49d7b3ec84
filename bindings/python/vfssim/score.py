"""Expected figures (a scenario's `expect:`) against the model, as `vfssim validate` scores them.

    table = vfssim.score.score(sc)          # or sc.score()
    print(vfssim.score.summary(table))      # what matches and what does not, as Markdown
    vfssim.plot.score(table)                # predicted / reported per figure, tolerance bands

A figure is a `value` (a point's ops_per_sec, us_per_op or share:CHAIN-PREFIX
of the profile), a `ratio` new/base of two points' metric, or a `change`
(new/base - 1, scored as the ratio 1 + change). error = |predicted - reported|
/ |reported|; a figure is within when error <= tolerance. A figure the thread
gives only as a bound (bound: at_least / at_most, e.g. ">40%") has error 0
anywhere on its side of the bound. A ratio or change
that claims a direction (reported more than 2% away from 1) also scores
whether the model moves the same way. Fitted figures set a constant of the
scenario: shown, not predictions.
"""
import math

from . import _vfssim
from ._util import normalize_figure, point_name

__all__ = ["score", "summary", "format_value"]

NO_DIRECTION = _vfssim.NO_DIRECTION  # a reported ratio this close to 1 claims no direction (cli/score.h)


def score(scenario, seed=1, reps=1, jobs=0, progress=False, figures=None):
    """Runs each point the figures need (reps replications, averaged; in parallel) and returns a
    DataFrame, one row per figure: figure, kind, metric, new, base ('strategy[/variant]@cpus'),
    reported, predicted (a change as the ratio 1 + change), error, tolerance, within,
    direction_ok (None when the figure claims no direction), fitted, source, reported_change and
    predicted_change (for changes). figures: a subset of scenario.expect or raw expect: dicts."""
    import pandas as pd

    figs = [normalize_figure(f) for f in (scenario.expect if figures is None else figures)]
    need = []
    for f in figs:
        for ref in (f["new"], f["base"]):
            if ref is not None:
                key = (ref["strategy"], ref["variant"], ref["cpus"])
                if key not in need:
                    need.append(key)
    specs = [(s, v, c, r) for s, v, c in need for r in range(reps)]
    results = scenario.run_points(specs, seed=seed, jobs=jobs, progress=progress)
    groups = {}
    for (s, v, c, _), res in zip(specs, results):
        groups.setdefault((s, v, c), []).append(res)

    def metric(ref, name):
        runs = groups[(ref["strategy"], ref["variant"], ref["cpus"])]
        ops = sum(r.ops_per_sec for r in runs) / len(runs)
        if name == "ops_per_sec":
            return ops
        if name == "us_per_op":
            return 1e6 * ref["cpus"] / ops if ops > 0 else math.inf
        prefix = name[len("share:"):]
        return sum(r.share(prefix) for r in runs) / len(runs)

    rows = []
    for f in figs:
        if f["kind"] == "value":
            predicted = metric(f["new"], f["metric"])
        else:
            base = metric(f["base"], f["metric"])
            predicted = metric(f["new"], f["metric"]) / base if base else math.nan
        reported = f["reported"]
        scored = _vfssim.score_figure(f["kind"], reported, f["tolerance"], f["bound"], predicted)
        error, direction = scored["error"], scored["direction_ok"]
        ref = f["base"]
        rows.append({
            "figure": f["figure"], "kind": f["kind"], "metric": f["metric"],
            "new": point_name(f["new"]["strategy"], f["new"]["variant"], f["new"]["cpus"]),
            "base": point_name(ref["strategy"], ref["variant"], ref["cpus"]) if ref else None,
            "reported": reported, "bound": f["bound"], "predicted": predicted, "error": error, "tolerance": f["tolerance"],
            "within": scored["within"], "direction_ok": direction, "fitted": f["fitted"],
            "source": f["source"],
            "reported_change": reported - 1 if f["kind"] == "change" else None,
            "predicted_change": predicted - 1 if f["kind"] == "change" else None,
        })
    return pd.DataFrame(rows, columns=["figure", "kind", "metric", "new", "base", "reported", "bound", "predicted", "error",
                                       "tolerance", "within", "direction_ok", "fitted", "source",
                                       "reported_change", "predicted_change"])


def format_value(kind, metric, v):
    """A figure's value as the thread would write it: '+22.0%', '1.318', '560 us', '40.0%', '79.9k'."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    if kind == "change":
        return f"{100 * (v - 1):+.1f}%"
    if kind == "ratio":
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
    preds = table[~table["fitted"]]
    fitted = table[table["fitted"]]
    wrong = preds["direction_ok"].map(lambda d: d is False)
    matched = preds[preds["within"] & ~wrong]
    misses = preds[~preds["within"] | wrong]
    dirs = preds[preds["direction_ok"].notna()]
    right = int(dirs["direction_ok"].map(lambda d: d is True).sum())
    out = [f"**{int(preds['within'].sum())} of {len(preds)} predictions within tolerance**"
           + (f"; directions right {right} of {len(dirs)}" if len(dirs) else "")
           + (f"; {len(fitted)} fitted figure(s) shown apart." if len(fitted) else ".")]
    if len(matched):
        out += ["", "Matched (within tolerance, and in the reported direction where one is claimed):"]
        out += [_line(r) for _, r in matched.iterrows()]
    if len(misses):
        out += ["", "Missed (outside tolerance, or the wrong direction):"] + [_line(r) for _, r in misses.iterrows()]
    if len(fitted):
        out += ["", "Fitted (a constant was set from these; not predictions):"]
        out += [_line(r) + ("" if r["within"] else " — *the fit does not hold here*") for _, r in fitted.iterrows()]
    return "\n".join(out)

"""Plots of vfssim results on matplotlib (imported only when a plot is drawn).

    ax = vfssim.plot.curves(sweep, reported=sc.expect)    # scaling curves, reported points overlaid
    ax = vfssim.plot.profile(sweep.point("baseline", 64), top=10)
    ax = vfssim.plot.lock_stat(sweep.point("baseline", 64))
    ax = vfssim.plot.score(sc.score())                    # predicted / reported of every expected figure

Every function draws on `ax` (a new figure when None) and returns the Axes.
"""
import math

from ._util import normalize_figure, series_name

__all__ = ["curves", "profile", "lock_stat", "score"]

_METRICS = {
    "ops_per_sec": "ops/s, all CPUs",
    "us_per_op": "us per op, one task",
    "speedup": "speedup over 1 CPU",
    "efficiency": "efficiency (speedup / CPUs)",
}


def _axes(ax, figsize):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


def _curve_frame(data):
    import pandas as pd

    from .results import Sweep

    if isinstance(data, Sweep):
        df = data.curve
    elif isinstance(data, pd.DataFrame):
        df = data.copy()
    else:  # vfssim.run() points
        df = pd.DataFrame(list(data))
    if "variant" not in df:
        df["variant"] = "default"
    if "us_per_op" not in df:
        df["us_per_op"] = df["cpus"] * 1e6 / df["ops_per_sec"]
    return df


def _reported_points(reported, metric):
    """(strategy, variant, cpus, value in `metric`, figure name) of each value figure that names a
    point's ops_per_sec or us_per_op."""
    out = []
    for fig in reported or []:
        f = normalize_figure(fig)
        if f["kind"] != "value" or f["metric"] not in ("ops_per_sec", "us_per_op"):
            continue
        p = f["new"]
        v = f["reported"]
        if not (isinstance(v, (int, float)) and v > 0 and math.isfinite(v)):
            continue
        ops = v if f["metric"] == "ops_per_sec" else p["cpus"] * 1e6 / v
        if metric == "ops_per_sec":
            value = ops
        elif metric == "us_per_op":
            value = p["cpus"] * 1e6 / ops
        else:
            continue
        out.append((p["strategy"], p["variant"], p["cpus"], value, f["figure"]))
    return out


def _implied_points(reported, metric, df):
    """Ratio and change figures of ops_per_sec whose base point is in `df`: (strategy, variant,
    cpus, value in `metric`, name) of the new point as the reported ratio puts it over the model's
    base point."""
    if metric not in ("ops_per_sec", "us_per_op"):
        return []
    rate = {(r.strategy, r.variant, int(r.cpus)): r.ops_per_sec for r in df.itertuples()}
    out = []
    for fig in reported or []:
        f = normalize_figure(fig)
        if f["kind"] not in ("ratio", "change") or f["metric"] != "ops_per_sec":
            continue
        b, n = f["base"], f["new"]
        base = rate.get((b["strategy"], b["variant"], b["cpus"]))
        if not base or not math.isfinite(f["reported"]) or f["reported"] <= 0:
            continue
        ops = base * f["reported"]
        value = ops if metric == "ops_per_sec" else n["cpus"] * 1e6 / ops
        out.append((n["strategy"], n["variant"], n["cpus"], value, f["figure"]))
    return out


def curves(data, reported=None, ax=None, *, metric="ops_per_sec", scale=None, title=None, errorbars=True,
           annotate=False, implied=True, logy=False, bands=True, figsize=(7, 4.2)):
    """Draws one line per (strategy, variant) curve against CPUs on a log2 x axis.

    data: a Sweep, its .curve DataFrame (or any DataFrame with strategy, cpus, ops_per_sec and
    optionally variant), or the point list of vfssim.run(). metric: ops_per_sec (default),
    us_per_op, speedup or efficiency. reported: expected figures (sc.expect, or raw expect:
    dicts); each `value` figure with metric ops_per_sec or us_per_op (converted) is drawn as a
    star at its point, in its curve's colour, when that curve is plotted. implied: also draw each
    ratio or change figure of ops/s whose base point is plotted as a hollow star where the reported
    ratio puts the new point over the model's base point (the ratio is what the thread reported,
    the anchor is the model's). scale: divide y by this
    (e.g. 1e6 for millions; default: chosen from the data for ops/s). errorbars: draw +-stddev
    when there are replications. annotate: write each reported figure's name beside its star.
    logy: a log y axis (for curves that span decades; points at 0 are not drawn).
    bands: with a sweep of uncertainty=N (columns band_p10/band_p90), shade each curve's 80% band
    (p10-p90 of the rate over the samples, docs/uncertainty.md) in its colour; ops_per_sec and
    us_per_op only (a band of ops/s is a band of us per op, bounds swapped).
    Returns the matplotlib Axes."""
    import matplotlib.ticker as mticker

    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {', '.join(_METRICS)}")
    df = _curve_frame(data)
    ax = _axes(ax, figsize)
    refs = _reported_points(reported, metric)
    ratios = _implied_points(reported, metric, df) if implied else []
    if scale is None:
        top = max([float(df[metric].replace(math.inf, math.nan).max())] + [v for *_, v, _ in refs + ratios] + [0])
        scale = 1e6 if metric == "ops_per_sec" and top >= 2e6 else 1e3 if metric == "ops_per_sec" and top >= 2e3 else 1
    unit = {1e6: ", millions", 1e3: ", thousands"}.get(scale, "" if scale == 1 else f", /{scale:g}")
    colours = {}
    for (strategy, variant), g in df.groupby(["strategy", "variant"], sort=False):
        g = g.sort_values("cpus")
        y = g[metric] / scale
        label = series_name(strategy, variant)
        if errorbars and metric == "ops_per_sec" and "stddev" in g and (g["stddev"] > 0).any():
            line = ax.errorbar(g["cpus"], y, yerr=g["stddev"] / scale, marker="o", capsize=3, label=label)
            colour = line[0].get_color()
        else:
            (line,) = ax.plot(g["cpus"], y, marker="o", label=label)
            colour = line.get_color()
        colours[(strategy, variant)] = colour
        if bands:
            _shade_band(ax, g, metric, scale, colour)
    shown = False
    for strategy, variant, cpus, value, name in refs:
        if (strategy, variant) not in colours:
            continue
        ax.plot([cpus], [value / scale], linestyle="none", marker="*", markersize=14, color=colours[(strategy, variant)],
                markeredgecolor="black", zorder=5)
        shown = True
        if annotate:
            ax.annotate(name, (cpus, value / scale), textcoords="offset points", xytext=(6, 4), fontsize=7)
    if shown:  # legend entries in neutral colours: each star has its curve's colour
        ax.plot([], [], linestyle="none", marker="*", markersize=12, color="white", markeredgecolor="black",
                label="reported (thread)")
    shown = False
    for strategy, variant, cpus, value, name in ratios:
        if (strategy, variant) not in colours:
            continue
        ax.plot([cpus], [value / scale], linestyle="none", marker="*", markersize=14, markerfacecolor="none",
                markeredgecolor=colours[(strategy, variant)], markeredgewidth=1.5, zorder=5)
        shown = True
        if annotate:
            ax.annotate(name, (cpus, value / scale), textcoords="offset points", xytext=(6, -10), fontsize=7)
    if shown:
        ax.plot([], [], linestyle="none", marker="*", markersize=12, markerfacecolor="none", markeredgecolor="black",
                markeredgewidth=1.5, label="reported ratio (over the model's base)")
    cpus = sorted(set(int(c) for c in df["cpus"]))
    ax.set_xscale("log", base=2)
    ax.set_xticks(cpus)
    ax.xaxis.set_major_formatter(mticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_locator(mticker.NullLocator())
    ax.set_xlabel("CPUs")
    ax.set_ylabel(_METRICS[metric] + unit)
    if logy:
        ax.set_yscale("log")
    elif metric in ("ops_per_sec", "speedup", "efficiency"):
        ax.set_ylim(bottom=0)
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def _shade_band(ax, g, metric, scale, colour):
    """The curve's p10-p90 band of ops/s (or us/op, from the same samples), where it has one."""
    if "band_p10" not in g or metric not in ("ops_per_sec", "us_per_op"):
        return
    b = g.dropna(subset=["band_p10", "band_p90"])
    if b.empty:
        return
    lo, hi = b["band_p10"], b["band_p90"]
    if metric == "us_per_op":  # us per op = 1e6 * cpus / ops: the slow end of the rate is the high end
        lo, hi = 1e6 * b["cpus"] / b["band_p90"], 1e6 * b["cpus"] / b["band_p10"]
    ax.fill_between(b["cpus"], lo / scale, hi / scale, color=colour, alpha=0.2, linewidth=0)


def _shorten(text, width):
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def profile(result, top=10, ax=None, *, width=60, title=None, figsize=(7, 3.8)):
    """Horizontal bars of a point's profile: the `top` call chains by share of CPU time (%),
    largest at the top, labelled 'chain [lock or line]'. result: a PointResult, its .profile
    DataFrame, or a point dict of vfssim.run(). Returns the matplotlib Axes."""
    import pandas as pd

    if isinstance(result, pd.DataFrame):
        df = result
        name = None
    else:
        df = pd.DataFrame(result["profile"])
        variant = result["variant"] if "variant" in result.keys() else "default"
        name = f"{series_name(result['strategy'], variant)} @ {result['cpus']} CPUs"
    df = df.sort_values("share", ascending=False).head(top)
    ax = _axes(ax, figsize)
    details = df["detail"] if "detail" in df else [""] * len(df)
    labels = [_shorten(c, width) + (f" [{d}]" if d else "") for c, d in zip(df["chain"], details)]
    ax.barh(range(len(df)), df["share"] * 100, color="tab:blue")
    ax.set_yticks(range(len(df)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("% of CPU time")
    ax.set_title(title or (f"profile: {name}" if name else "profile"), fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    return ax


def lock_stat(result, top=8, ax=None, *, column="waittime_total_us", title=None, figsize=(7, 3.2)):
    """Horizontal bars of a point's lock_stat `column` (default: total wait, us) for the `top`
    locks. result: a PointResult, its .lock_stat DataFrame or a point dict. Returns the Axes."""
    import pandas as pd

    df = result if isinstance(result, pd.DataFrame) else pd.DataFrame(result["lock_stat"])
    df = df.sort_values(column, ascending=False).head(top)
    ax = _axes(ax, figsize)
    ax.barh(range(len(df)), df[column], color="tab:red")
    ax.set_yticks(range(len(df)), list(df["name"]), fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(column.replace("_us", " (us)"))
    ax.set_title(title or "lock_stat", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    return ax


def score(table, ax=None, *, title=None, figsize=None):
    """The scorecard of a score() table (sc.score()): for each figure, predicted / reported on a
    log axis (1 = the thread's number), the tolerance band shaded, the dot green when within
    tolerance, red when not, grey for fitted figures; a cross marks a wrong direction. Each row is
    labelled 'figure: reported -> model'. Returns the matplotlib Axes."""
    from .score import format_value

    rows = list(table.itertuples())
    ax = _axes(ax, figsize or (7.5, 0.32 * len(rows) + 1.2))
    for i, r in enumerate(rows):
        lo, hi = max(1 - r.tolerance, 0.05), 1 + r.tolerance
        ax.plot([lo, hi], [i, i], color="0.85", linewidth=6, solid_capstyle="butt", zorder=1)
        q = r.predicted / r.reported if r.reported and math.isfinite(r.predicted) else math.nan
        if not math.isfinite(q) or q <= 0:
            q = 1e-3  # nothing (or zero) predicted: at the left edge
        colour = "0.5" if r.fitted else ("tab:green" if r.within else "tab:red")
        ax.plot([q], [i], marker="o", color=colour, markersize=7, zorder=3)
        if r.direction_ok is False:
            ax.plot([q], [i], marker="x", color="black", markersize=9, zorder=4)
    ax.axvline(1, color="black", linewidth=0.8)
    ax.set_xscale("log")
    labels = [f"{r.figure}: {format_value(r.kind, r.metric, r.reported)} \u2192 "
              f"{format_value(r.kind, r.metric, r.predicted)}" for r in rows]
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("model / reported (log; band: tolerance)")
    ax.set_title(title or "expected figures: reported \u2192 model", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    return ax

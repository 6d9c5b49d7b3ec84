"""vfssim: a discrete-event simulator of Linux kernel VFS locking, in-process.

The same C++ engine as the `vfssim` command, driven from Python: runs release
the GIL and sweeps use every core.

    import vfssim
    sc = vfssim.Scenario.load(vfssim.scenarios_dir() / "seed/open-close-power5.yaml")
    sc.strategies                                    # strategy names
    sc.set("strategies.baseline.locks.files_lock.scope", "cpu")   # validated by the C++ loader
    sweep = sc.sweep(cpus=[1, 2, 4, 8, 16, 32, 64])  # parallel, deterministic for a seed
    sweep.curve                                      # DataFrame: strategy, variant, cpus, ops_per_sec, ...
    sweep.lock_stat("baseline", 64)                  # lock_stat DataFrame of a point
    sweep.fits()                                     # USL / Amdahl fit of every curve
    vfssim.compare(sc, "baseline", "vfs-scale", cpus=64)   # LKP-style table
    vfssim.plot.curves(sweep, reported=sc.expect)    # matplotlib, reported figures overlaid
    table = sc.score()                               # expected figures: reported vs predicted
    vfssim.score.summary(table)                      # ... as Markdown: what matches, what misses

Classes: Scenario (load, inspect, edit, derive, run), Sweep and PointResult
(results with DataFrames), UslFit / AmdahlFit. Functions: compare, fit_usl,
fit_amdahl, and the file-based run, run_df, run_document (the `vfssim run
--json` document). Errors in a scenario raise ScenarioError (a ValueError)
with .file, .line, .column, .problem, .expected and .key. Submodules:
vfssim.plot draws curves, profiles, lock_stat tables and scorecards;
vfssim.score scores expected figures (score, summary); vfssim.distributed runs sweeps on a
concurrent.futures executor or a Dask cluster (`sweep(..., executor=client)`, and
`python3 -m vfssim run FILE --dask ADDRESS`).

Import it from the build tree with PYTHONPATH=build/python (see README).
"""
import json as _json
import os as _os

from ._vfssim import ScenarioError, __version__
from . import _vfssim
from ._util import names as _names, whole as _whole
from .compare import compare
from .fits import AmdahlFit, UslFit, fit_amdahl, fit_usl
from .results import PointResult, Sweep
from .scenario import Scenario
from . import plot, score

__all__ = ["Scenario", "Sweep", "PointResult", "ScenarioError", "compare", "fit_usl", "fit_amdahl", "UslFit",
           "AmdahlFit", "run", "run_df", "run_document", "sweep", "plot", "score", "lock_kinds", "scenarios_dir",
           "__version__"]


def lock_kinds():
    """The lock kinds a scenario may declare (tas, ticket, mcs, mutex, rwsem, rwlock, brlock)."""
    return list(_vfssim.lock_kinds())


def sweep(scenario, strategies=None, cpus=None, variants=None, reps=1, seed=1, jobs=0, progress=False, executor=None):
    """Scenario.sweep() of a scenario file or a vfssim.Scenario; with executor (a
    concurrent.futures.Executor or a dask.distributed.Client) its points run there, with a
    result byte-identical to a local sweep (vfssim.distributed). Returns a Sweep."""
    if not isinstance(scenario, Scenario):
        scenario = Scenario.load(scenario)
    return scenario.sweep(strategies=strategies, cpus=cpus, variants=variants, reps=reps, seed=seed, jobs=jobs,
                          progress=progress, executor=executor)


def scenarios_dir():
    """The directory of the scenarios that come with vfssim, as a pathlib.Path: seed/,
    validation/ and machines/ ($VFSSIM_SCENARIOS, else the installed copy, else the
    source tree the module was built from; `vfssim validate` uses the same)."""
    import pathlib

    return pathlib.Path(_vfssim.scenarios_dir())


def run_document(path, cpus=(), seed=1, reps=1, strategies=(), jobs=0, variants=()):
    """Runs a scenario sweep; returns the whole `vfssim run --json` document as a dict
    (the same document, number for number, as the CLI prints).

    path: a scenario file or a vfssim.Scenario. cpus: CPU counts (empty: the scenario's list).
    strategies, variants: names (empty: every strategy; the default variant)."""
    args = ([_whole(c, f"cpus[{i}]") for i, c in enumerate(cpus)], _whole(seed, "seed"), _whole(reps, "reps"),
            _names(strategies, "strategies"), _whole(jobs, "jobs", 0), _names(variants, "variants"))
    if isinstance(path, Scenario):
        return _json.loads(_vfssim.document(path.native, *args))
    return _json.loads(_vfssim.run_json(_os.fspath(path), *args))


def run(path, cpus=(), seed=1, reps=1, strategies=(), jobs=0, variants=()):
    """Runs a scenario sweep; returns the curve points as a list of dicts.

    Each point has at least: strategy, variant, cpus, ops_per_sec, stddev, events,
    speedup, efficiency, lock_stat (list of dicts), profile (list of dicts, top 20).
    For objects and DataFrames use vfssim.Scenario.load(path).sweep(...)."""
    return run_document(path, cpus, seed, reps, strategies, jobs, variants)["points"]


def run_df(path, cpus=(), seed=1, reps=1, strategies=(), jobs=0, variants=()):
    """Like run(), as a pandas DataFrame with one row per (strategy, variant, cpus):
    strategy, cpus, ops_per_sec, stddev, speedup, efficiency, events (and variant when
    variants are given)."""
    import pandas as pd

    points = run(path, cpus, seed, reps, strategies, jobs, variants)
    cols = ["strategy", "cpus", "ops_per_sec", "stddev", "speedup", "efficiency", "events"]
    if variants:
        cols.insert(1, "variant")
    return pd.DataFrame([{c: p[c] for c in cols} for p in points], columns=cols)

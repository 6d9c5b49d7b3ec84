"""vfssim: a discrete-event simulator of Linux kernel VFS locking.

    import vfssim
    points = vfssim.run("scenarios/seed/open-close-power5.yaml", cpus=[1, 2, 4])
    df = vfssim.run_df("scenarios/seed/open-close-power5.yaml")

Import it from the build tree with PYTHONPATH=build/python (see README).
"""
import json as _json

from ._vfssim import ScenarioError, __version__, run_json as _run_json

__all__ = ["run", "run_df", "run_document", "ScenarioError", "__version__"]


def run_document(path, cpus=(), seed=1, reps=1, strategies=(), jobs=0):
    """Runs a scenario sweep; returns the whole `vfssim run --json` document as a dict."""
    return _json.loads(_run_json(str(path), list(cpus), int(seed), int(reps), list(strategies), int(jobs)))


def run(path, cpus=(), seed=1, reps=1, strategies=(), jobs=0):
    """Runs a scenario sweep; returns the curve points as a list of dicts.

    Each point has at least: strategy, cpus, ops_per_sec, stddev, events,
    speedup, efficiency, lock_stat (list of dicts), profile (list of dicts).
    """
    return run_document(path, cpus, seed, reps, strategies, jobs)["points"]


def run_df(path, cpus=(), seed=1, reps=1, strategies=(), jobs=0):
    """Like run(), as a pandas DataFrame with one row per (strategy, cpus)."""
    import pandas as pd

    points = run(path, cpus, seed, reps, strategies, jobs)
    cols = ["strategy", "cpus", "ops_per_sec", "stddev", "speedup", "efficiency", "events"]
    return pd.DataFrame([{c: p[c] for c in cols} for p in points], columns=cols)

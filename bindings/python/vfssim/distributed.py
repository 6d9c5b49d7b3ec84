"""Sweeps on an executor: a concurrent.futures.Executor or a dask.distributed.Client.

    from dask.distributed import Client
    client = Client("tcp://scheduler:8786")          # dask-scheduler on one host, dask-worker ADDRESS on the others
    sweep = sc.sweep(cpus=[1, 2, 4, 8], executor=client)   # the same numbers, byte for byte, as sc.sweep(...)

Each point of the sweep (strategy, variant, CPU count, replication) is one
task: the scenario travels pickled as its resolved text (machine presets
inlined, so workers need no files), the result comes back pickled through
the result schema. The points are those of the local sweep, seeded the same
way, and the curve is assembled by the engine from them in the sweep's
order: the result does not depend on which worker ran what, or when.

A task whose worker is lost (the connection or the process dies: Dask's
KilledWorker, CommClosedError, OSError, EOFError) is submitted again, up to
`retries` times; only that point is re-run. Dask itself also re-runs the
tasks of a worker that dies. Errors of the engine (a bad point) are raised.
"""
import time

from . import _vfssim

__all__ = ["run_points", "sweep_curve", "sweep_document", "LOST_WORKER_ERRORS"]


def _lost_worker_errors():
    errors = [OSError, EOFError]  # ConnectionError is an OSError; so is BrokenPipeError
    try:
        from distributed import KilledWorker
        from distributed.comm.core import CommClosedError

        errors += [KilledWorker, CommClosedError]
    except ImportError:
        pass
    return tuple(errors)


LOST_WORKER_ERRORS = _lost_worker_errors()


def _run_point_task(native, point, seed, uncertainty=0):
    """On a worker: one point, one thread (the worker's own threads run several at once). A job of
    an uncertainty sweep (a 7th element, its sample) builds that sample's scenario from the
    scenario's ranges, seed and `uncertainty` as the local sweep does."""
    (result,) = _vfssim.run_points(native, [point], int(seed), 1, uncertainty=int(uncertainty))
    return result["native"]


def run_points(native, points, seed, executor, progress=None, retries=3, uncertainty=0):
    """Runs `points` ([(strategy, variant, cpus, rep, free_locks, private_lines[, sample])], as
    _vfssim.run_points takes them) on `executor`; returns their NativePoints in order.
    progress(done, total, info) is called here as points finish."""
    points = [tuple(p) for p in points]
    futures = [executor.submit(_run_point_task, native, p, seed, uncertainty) for p in points]
    attempts = [0] * len(points)
    results = [None] * len(points)
    pending = set(range(len(points)))
    done = 0
    try:
        while pending:
            ready = [i for i in pending if futures[i].done()]
            if not ready:
                time.sleep(0.005)
                continue
            for i in sorted(ready):
                try:
                    results[i] = futures[i].result()
                except LOST_WORKER_ERRORS:
                    attempts[i] += 1
                    if attempts[i] > retries:
                        raise
                    futures[i] = executor.submit(_run_point_task, native, points[i], seed, uncertainty)
                    continue
                pending.discard(i)
                done += 1
                if progress is not None:
                    r = results[i]
                    progress(done, len(points), {"strategy": r.strategy, "variant": r.variant, "cpus": r.cpus,
                                                 "rep": r.rep, "ops_per_sec": r.ops_per_sec})
    except BaseException:
        for i in pending:  # Ctrl-C or an error: what is not running yet need not run
            futures[i].cancel()
        raise
    return results


def _plan(native, strategies, variants, cpus, reps, seed, uncertainty):
    return _vfssim.sweep_plan(native, list(strategies), list(variants), [int(c) for c in cpus], int(reps), int(seed),
                              uncertainty=int(uncertainty))


def sweep_curve(native, strategies, variants, cpus, reps, seed, executor, progress=None, uncertainty=0):
    """What _vfssim.sweep returns (one dict per curve point), with the points run on `executor`
    (with uncertainty=N, each point's N sample jobs too: a sample x point is one task)."""
    points = _plan(native, strategies, variants, cpus, reps, seed, uncertainty)
    results = run_points(native, points, seed, executor, progress, uncertainty=uncertainty)
    return _vfssim.assemble_sweep(native, list(strategies), list(variants), [int(c) for c in cpus], int(reps),
                                  int(seed), results, uncertainty=int(uncertainty))


def sweep_document(native, strategies, variants, cpus, reps, seed, executor, progress=None, profile_top=None,
                   indent=-1, uncertainty=0, sensitivity=False):
    """The `vfssim run --json` document (text) of a sweep run on `executor` (sensitivity: as
    --uncertainty-report)."""
    points = _plan(native, strategies, variants, cpus, reps, seed, uncertainty)
    results = run_points(native, points, seed, executor, progress, uncertainty=uncertainty)
    return _vfssim.assemble_sweep(native, list(strategies), list(variants), [int(c) for c in cpus], int(reps),
                                  int(seed), results, document=True, profile_top=profile_top, indent=indent,
                                  uncertainty=int(uncertainty), sensitivity=bool(sensitivity))

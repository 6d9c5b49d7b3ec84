"""python3 -m vfssim run FILE --dask ADDRESS: `vfssim run` with the points on a Dask cluster.

    dask-scheduler                         # on one host: prints tcp://HOST:8786
    dask-worker tcp://HOST:8786            # on each of the others (--nthreads: points at once)
    PYTHONPATH=build/python /usr/bin/python3 -m vfssim run scenarios/seed/open-close-power5.yaml \\
        --dask tcp://HOST:8786 --json > out.json

--json prints the document `vfssim run FILE --json` prints, byte for byte (the same
seed gives the same bytes whatever the cluster); without it, the curve table. --processes N
runs the points on N local processes instead (concurrent.futures). Nothing is stored: the
SQLite store and --resume are the `vfssim` command's (docs: README, "Sweeps on a cluster").
"""
import argparse
import concurrent.futures
import json
import sys

from . import Scenario, ScenarioError, __version__
from ._util import make_progress
from .distributed import sweep_document


def _list(text, kind):
    items = [x for x in text.split(",") if x]
    if not items:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of {kind}")
    return items


def _cpus(text):
    try:
        cpus = [int(x) for x in _list(text, "CPU counts")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a list of CPU counts (e.g. 1,2,4)") from None
    return cpus


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m vfssim", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=f"vfssim {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a scenario's sweep on a Dask cluster or local processes")
    run.add_argument("file")
    run.add_argument("--cpus", type=_cpus, default=[])
    run.add_argument("--strategy", type=lambda t: _list(t, "strategies"), default=[])
    run.add_argument("--variant", type=lambda t: _list(t, "variants"), default=[])
    run.add_argument("--seed", type=int, default=1)
    run.add_argument("--reps", type=int, default=1)
    run.add_argument("--uncertainty", type=int, default=0, metavar="N",
                     help="N Latin-hypercube samples of the ranges: a band per point (docs/uncertainty.md)")
    run.add_argument("--uncertainty-report", action="store_true",
                     help="with --uncertainty: each point's constants by Spearman rho")
    where = run.add_mutually_exclusive_group(required=True)
    where.add_argument("--dask", metavar="ADDRESS", help="a running dask-scheduler, e.g. tcp://host:8786")
    where.add_argument("--processes", type=int, metavar="N", help="N local worker processes instead")
    run.add_argument("--json", action="store_true", help="print the `vfssim run --json` document")
    run.add_argument("--json-profile-top", type=int, default=None, metavar="N")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    args = ap.parse_args(argv)
    if args.reps < 1:
        ap.error("--reps must be at least 1")
    if args.uncertainty < 0:
        ap.error("--uncertainty must be at least 0")
    if args.uncertainty_report and not args.uncertainty:
        ap.error("--uncertainty-report needs --uncertainty N")
    if args.processes is not None and args.processes < 1:
        ap.error("--processes must be at least 1")
    try:
        sc = Scenario.load(args.file)
        variants = sc.variants if args.variant == ["all"] else args.variant
        if args.dask:
            from distributed import Client

            executor = Client(args.dask)
        else:
            executor = concurrent.futures.ProcessPoolExecutor(args.processes)
        callback, close = make_progress(not args.quiet and sys.stderr.isatty(), sc.name)
        try:
            with executor:
                text = sweep_document(sc.native, args.strategy, variants, args.cpus, args.reps, args.seed, executor,
                                      callback, args.json_profile_top, indent=2, uncertainty=args.uncertainty,
                                      sensitivity=args.uncertainty_report)
        finally:
            close()
    except ScenarioError as e:
        print(e, file=sys.stderr)
        return 2
    except (ValueError, OSError) as e:
        print(f"python3 -m vfssim run: {e}", file=sys.stderr)
        return 2 if isinstance(e, ValueError) else 1
    except KeyboardInterrupt:
        print("python3 -m vfssim run: interrupted (nothing is stored)", file=sys.stderr)
        return 130
    if args.json:
        print(text)
        return 0
    doc = json.loads(text)
    print(f"scenario {doc['scenario']} on {doc['machine']}, seed {doc['seed']}")
    print(f"{'strategy':<24} {'variant':<12} {'cpus':>5} {'ops/s':>14} {'speedup':>8}")
    for p in doc["points"]:
        speedup = "-" if p["speedup"] is None else f"{p['speedup']:.2f}"
        print(f"{p['strategy']:<24} {p['variant']:<12} {p['cpus']:>5} {p['ops_per_sec']:>14.0f} {speedup:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Sweeps on an executor (issue 17): every result type pickles, and a sweep run on a
concurrent.futures executor or a Dask cluster gives the local sweep's results (the JSON
document byte for byte; the records apart from wall-clock times)."""
import concurrent.futures
import os
import pickle
import subprocess
import sys

import pytest

from conftest import BUILD, ROOT
import vfssim
from vfssim import distributed

SCENARIO = ROOT / "scenarios/seed/open-close-power5.yaml"
ENV = {**os.environ, "PYTHONPATH": str(BUILD / "python")}


def strip_wall(records):
    """The records without wall-clock seconds (the one field that is not deterministic)."""
    out = []
    for c in records:
        c = dict(c)
        c["reps"] = [{k: v for k, v in r.items() if k != "wall_seconds"} for r in c["reps"]]
        out.append(c)
    return out


def test_scenarios_points_and_sweeps_pickle():
    sc = vfssim.Scenario.load(SCENARIO)
    sc.set("strategies.baseline.locks.files_lock.kind", "mcs")  # an edited scenario travels as edited
    again = pickle.loads(pickle.dumps(sc))
    assert again.to_yaml() == sc.to_yaml() and again.native.resolved_hash == sc.native.resolved_hash
    assert again.native.hash == sc.native.hash and again.native.text == sc.native.text
    p = sc.run_point("baseline", 4, seed=3)
    q = pickle.loads(pickle.dumps(p))
    assert {k: v for k, v in q.to_dict().items() if k != "wall_seconds"} == \
        {k: v for k, v in p.to_dict().items() if k != "wall_seconds"}
    assert q.bottleneck == p.bottleneck and q.lock_stat.equals(p.lock_stat)
    # A NativePoint comes back whole enough for the what-ifs that need it.
    native = pickle.loads(pickle.dumps(p._native))
    assert vfssim._vfssim.find_bottleneck([native]) == vfssim._vfssim.find_bottleneck([p._native])
    sw = sc.sweep(cpus=[1, 2], progress=False)
    sw2 = pickle.loads(pickle.dumps(sw))
    assert sw2.curve.equals(sw.curve) and sw2.point("baseline", 2).profile.equals(sw.point("baseline", 2).profile)


def test_a_pickled_scenario_needs_no_preset_files(tmp_path):
    """A worker on another machine has no scenarios/machines: the scenario travels resolved. The
    scenario is loaded from a copy beside a copy of its preset, both deleted before the worker
    (a process where no preset can be found) unpickles and runs it."""
    import shutil

    (tmp_path / "seed").mkdir()
    (tmp_path / "machines").mkdir()
    shutil.copy(SCENARIO, tmp_path / "seed" / SCENARIO.name)
    shutil.copy(ROOT / "scenarios/machines/power5p-64.yaml", tmp_path / "machines")
    blob = pickle.dumps(vfssim.Scenario.load(tmp_path / "seed" / SCENARIO.name).native)
    shutil.rmtree(tmp_path / "seed")
    shutil.rmtree(tmp_path / "machines")
    (tmp_path / "empty").mkdir()
    (tmp_path / "sc.pickle").write_bytes(blob)
    code = ("import pickle, sys, vfssim; assert vfssim._vfssim.find_machine_file('power5p-64', []) == ''; "
            "n = pickle.loads(open(sys.argv[1], 'rb').read()); "
            "print(vfssim._vfssim.run_point(n, 'baseline', 2)['ops_per_sec'])")
    env = {**ENV, "VFSSIM_SCENARIOS": str(tmp_path / "empty"), "VFSSIM_MACHINES": str(tmp_path / "empty")}
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "sc.pickle")], capture_output=True, text=True,
                       cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout) == vfssim.Scenario.load(SCENARIO).run_point("baseline", 2).ops_per_sec


def test_sweep_on_a_process_pool_is_the_local_sweep():
    sc = vfssim.Scenario.load(SCENARIO)
    local = sc.sweep(cpus=[1, 2, 4], reps=2, seed=5, progress=False)
    seen = []
    with concurrent.futures.ProcessPoolExecutor(2) as pool:
        remote = vfssim.sweep(sc, cpus=[1, 2, 4], reps=2, seed=5, executor=pool,
                              progress=lambda done, total, info: seen.append((done, total)))
    assert strip_wall(remote.to_records()) == strip_wall(local.to_records())
    assert remote.curve.equals(local.curve)
    assert sorted(seen) == [(i, 18) for i in range(1, 19)]  # 3 strategies x 3 CPU counts x 2 reps


class FlakyExecutor(concurrent.futures.ThreadPoolExecutor):
    """Loses the worker of the first task submitted for each of some points (ConnectionError)."""

    def __init__(self, lose):
        super().__init__(2)
        self.lose, self.submitted = set(lose), []

    def submit(self, fn, *args):
        point = tuple(args[1][:4])  # strategy, variant, cpus, rep
        self.submitted.append(point)
        if point in self.lose:
            self.lose.discard(point)
            f = concurrent.futures.Future()
            f.set_exception(ConnectionError("worker lost"))
            return f
        return super().submit(fn, *args)


def test_a_lost_worker_loses_only_its_points_which_are_run_again():
    sc = vfssim.Scenario.load(SCENARIO)
    plan = [tuple(p[:4]) for p in vfssim._vfssim.sweep_plan(sc.native, [], [], [1, 2, 4], 1, 1)]
    lost = {plan[1], plan[4]}
    with FlakyExecutor(lost) as ex:
        remote = sc.sweep(cpus=[1, 2, 4], progress=False, executor=ex)
    assert sorted(ex.submitted) == sorted(plan + list(lost))  # every point once, the two lost ones twice
    assert strip_wall(remote.to_records()) == strip_wall(sc.sweep(cpus=[1, 2, 4], progress=False).to_records())


def test_an_engine_error_on_a_worker_is_raised_not_retried():
    sc = vfssim.Scenario.load(SCENARIO)
    with FlakyExecutor([]) as ex:
        with pytest.raises(ValueError, match="no strategy|not defined|unknown strategy"):
            sc.run_points([("no-such", "default", 2)], executor=ex)
    assert len(ex.submitted) == 1


def test_sweep_on_a_dask_cluster_and_the_cli_front_give_the_vfssim_run_document():
    import distributed as dd  # python3-distributed (scripts/install-deps.sh)
    ref = subprocess.run([str(BUILD / "vfssim"), "run", str(SCENARIO), "--cpus", "1,2,4", "--reps", "2", "--json",
                          "--db", ""], capture_output=True, text=True)
    assert ref.returncode == 0, ref.stderr
    sc = vfssim.Scenario.load(SCENARIO)
    with dd.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            dd.Client(cluster) as client:
        sweep = sc.sweep(cpus=[1, 2, 4], reps=2, progress=False, executor=client)
        assert strip_wall(sweep.to_records()) == strip_wall(sc.sweep(cpus=[1, 2, 4], reps=2, progress=False)
                                                           .to_records())
        r = subprocess.run([sys.executable, "-m", "vfssim", "run", str(SCENARIO), "--cpus", "1,2,4", "--reps", "2",
                            "--dask", cluster.scheduler_address, "--json", "-q"], capture_output=True, text=True,
                           env=ENV)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ref.stdout  # byte for byte


def test_the_cli_front_on_local_processes_and_its_errors(tmp_path):
    ref = subprocess.run([str(BUILD / "vfssim"), "run", str(SCENARIO), "--cpus", "1,8", "--strategy", "baseline",
                          "--json", "--db", ""], capture_output=True, text=True)
    r = subprocess.run([sys.executable, "-m", "vfssim", "run", str(SCENARIO), "--cpus", "1,8", "--strategy",
                        "baseline", "--processes", "2", "--json"], capture_output=True, text=True, env=ENV)
    assert r.returncode == 0 and r.stdout == ref.stdout, r.stderr
    table = subprocess.run([sys.executable, "-m", "vfssim", "run", str(SCENARIO), "--cpus", "1,8", "--strategy",
                            "baseline", "--processes", "1"], capture_output=True, text=True, env=ENV)
    assert table.returncode == 0 and "baseline" in table.stdout and "ops/s" in table.stdout, table.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("scenario: x\n")
    r = subprocess.run([sys.executable, "-m", "vfssim", "run", str(bad), "--processes", "1"], capture_output=True,
                       text=True, env=ENV)
    assert r.returncode == 2 and f"{bad}:1:1:" in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "vfssim", "run", str(SCENARIO), "--processes", "1", "--strategy",
                        "nope"], capture_output=True, text=True, env=ENV)
    assert r.returncode == 2 and "nope" in r.stderr, r.stderr

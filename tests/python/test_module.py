"""The Python module runs the engine in-process and agrees with the CLI."""
import json
import subprocess

import pytest

import vfssim
from conftest import BUILD, ROOT

SEED = ROOT / "scenarios/seed/open-close-power5.yaml"


def test_run_returns_points_for_every_strategy_and_cpu_count():
    points = vfssim.run(SEED, cpus=[1, 4], seed=3)
    strategies = vfssim.Scenario.load(SEED).strategies
    assert strategies[:2] == ["baseline", "vfs-scale"]
    assert [(p["strategy"], p["cpus"]) for p in points] == [(s, c) for s in strategies for c in (1, 4)]
    for p in points:
        assert p["ops_per_sec"] > 0 and p["events"] > 0
        assert {"lock_stat", "profile", "stddev"} <= p.keys()


def test_module_and_cli_give_the_same_numbers():
    doc = vfssim.run_document(SEED, cpus=[1, 2], seed=7)
    out = subprocess.run([str(BUILD / "vfssim"), "run", str(SEED), "--cpus", "1,2", "--seed", "7",
                          "--json", "--db", "", "-q"], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == doc


def test_dataframe_shape():
    df = vfssim.run_df(SEED, cpus=[1, 2], strategies=["vfs-scale"])
    assert list(df["cpus"]) == [1, 2]
    assert df["ops_per_sec"].iloc[1] > 1.9 * df["ops_per_sec"].iloc[0]  # private files scale


def test_bad_scenario_raises_with_position(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(SEED.read_text().replace("compute: 2ns", "compute: forty", 1))
    with pytest.raises(vfssim.ScenarioError) as info:
        vfssim.run(bad, cpus=[1])
    err = info.value
    assert err.file == str(bad)
    assert err.line > 0 and err.column > 0
    assert "forty" in err.problem and "unit" in err.expected


def test_missing_file_raises_not_crashes(tmp_path):
    with pytest.raises(vfssim.ScenarioError):
        vfssim.run(tmp_path / "nope.yaml")

"""vfssim.scenarios_dir(): the scenarios that come with vfssim, found without the working directory."""
import os
import subprocess
import sys

import vfssim
from conftest import BUILD, ROOT


def test_scenarios_dir_is_the_source_trees():
    d = vfssim.scenarios_dir()
    assert d.resolve() == (ROOT / "scenarios").resolve()
    assert (d / "seed" / "open-close-power5.yaml").is_file() and (d / "machines" / "power5p-64.yaml").is_file()


def test_scenarios_dir_from_another_directory(tmp_path):
    code = "import vfssim; print(vfssim.scenarios_dir())"
    env = {k: v for k, v in os.environ.items() if k != "VFSSIM_SCENARIOS"}
    env["PYTHONPATH"] = str(BUILD / "python")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert os.path.realpath(out.stdout.strip()) == os.path.realpath(ROOT / "scenarios")


def test_vfssim_scenarios_overrides(tmp_path):
    code = "import vfssim; print(vfssim.scenarios_dir())"
    env = dict(os.environ, PYTHONPATH=str(BUILD / "python"), VFSSIM_SCENARIOS=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(tmp_path)


def test_a_seed_scenario_loads_through_it():
    sc = vfssim.Scenario.load(vfssim.scenarios_dir() / "seed" / "open-close-power5.yaml")
    assert sc.name == "open-close-power5"

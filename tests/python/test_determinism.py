"""Determinism: every scenario of scenarios/ (not the machine presets) gives
byte-identical `vfssim run --json` output with one worker and with two
(per-task rates and per-op latency quantiles included)."""
import subprocess

import pytest
import yaml

from conftest import BUILD, ROOT

VFSSIM = str(BUILD / "vfssim")
# Not scenarios: the machine presets, the code-path library, the benchmarks.
SCENARIOS = sorted(p for p in (ROOT / "scenarios").rglob("*.yaml")
                   if not {"machines", "kernel", "benchmarks"} & set(p.relative_to(ROOT).parts))


def first_cpu_counts(path, n=3):
    workload = yaml.safe_load(path.read_text()).get("workload", {})
    if "cpus" not in workload:  # a benchmark's workload: the expanded scenario has it
        r = subprocess.run([VFSSIM, "library", "resolve", str(path)], capture_output=True, text=True, check=True)
        workload = yaml.safe_load(r.stdout)["workload"]
    return [int(c) for c in workload.get("cpus", [1, 2, 4])[:n]]


def test_there_are_scenarios():
    assert len(SCENARIOS) >= 1


@pytest.mark.parametrize("path", SCENARIOS, ids=[str(p.relative_to(ROOT / "scenarios")) for p in SCENARIOS])
def test_one_worker_and_two_give_the_same_bytes(path):
    cpus = ",".join(map(str, first_cpu_counts(path)))
    out = {}
    for jobs in ("1", "2"):
        r = subprocess.run([VFSSIM, "run", str(path), "--json", "--db", "", "--jobs", jobs, "--cpus", cpus,
                            "--reps", "2", "-q"], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
        out[jobs] = r.stdout
    assert out["1"] == out["2"]
    assert '"points"' in out["1"]
    assert '"latency_p99_us"' in out["1"]  # the per-task figures are part of what must not depend on --jobs

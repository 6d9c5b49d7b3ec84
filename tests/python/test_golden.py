"""Golden outputs: every scenario's few points, byte for byte (scripts/golden.py).

A failure here means the model's numbers moved. If that was the intent, rewrite them with
`scripts/golden.py --update` and say why in the commit message."""
import subprocess
import sys

from conftest import BUILD, ROOT


def test_golden_outputs_are_byte_identical():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "golden.py"), "--check", "--vfssim", str(BUILD / "vfssim")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "byte-identical" in r.stdout


def test_golden_covers_every_scenario():
    scenarios = {p.relative_to(ROOT / "scenarios").with_suffix("") for p in (ROOT / "scenarios").rglob("*.yaml")
                 if p.parent.name not in ("machines", "kernel", "benchmarks")}  # the libraries are not scenarios
    # tests/golden/library/ is the library's op table (scripts/library_ops.py, checked by test_library), not a scenario's.
    golden = {p.relative_to(ROOT / "tests" / "golden").with_suffix("") for p in (ROOT / "tests" / "golden").rglob("*.json")
              if p.parent.name != "library"}
    assert scenarios == golden


def test_readme_validation_tables_are_current():
    """The README's per-case scores come from `vfssim validate` (scripts/validation-table.py), never by hand."""
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "validation-table.py"), "--check", "--vfssim",
                        str(BUILD / "vfssim")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]

"""Uncertainty bands (docs/uncertainty.md): the CLI, the Python sweep and a sweep on two local
processes give the same bands; the SQLite store keeps them; --uncertainty needs ranges."""
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import BUILD, ROOT
import vfssim

SCENARIO = ROOT / "tests/scenarios/uncertain-files-lock.yaml"
VFSSIM = str(BUILD / "vfssim")
ENV = {**os.environ, "PYTHONPATH": str(BUILD / "python")}


def cli(*args, db=""):
    return subprocess.run([VFSSIM, "run", str(SCENARIO), "--db", db, *args], capture_output=True, text=True,
                          check=True).stdout


def test_processes_give_the_cli_document_byte_for_byte():
    args = ["--uncertainty", "6", "--uncertainty-report", "--seed", "4", "--json"]
    local = cli(*args, "--jobs", "2")
    r = subprocess.run([sys.executable, "-m", "vfssim", "run", str(SCENARIO), "--processes", "2", "-q", *args],
                       capture_output=True, text=True, env=ENV, check=True)
    assert r.stdout == local
    doc = json.loads(local)
    ranges = doc["uncertainty"]["ranges"]
    assert doc["uncertainty"]["samples"] == 6 and len(ranges) == 5
    # read_cost is fitted (to open-1cpu): listed with its figure, re-fitted per sample, not in the sensitivities.
    assert [r["name"] for r in ranges if r["fit"]] == ["params.read_cost"]
    for p in doc["points"]:
        b, params, model = p["band"], p["band_parameters"], p["band_model"]
        assert b["p10"] <= b["p50"] <= b["p90"]
        # The 1-CPU rate is what read_cost is re-fitted to: its parameter band is within the re-fit's 1%
        # (and a rate quantum); the total is as wide as the model's error, whatever the parameters.
        if p["cpus"] == 1:
            assert params["p90"] / params["p10"] - 1 <= 0.02, params
        else:
            assert params["p10"] < params["p90"]
        assert b["p90"] / b["p10"] >= max(params["p90"] / params["p10"], 0.9 * model["p90"] / model["p10"])
        assert len(p["sensitivity"]) == 4 and all(-1 <= s["rho"] <= 1 for s in p["sensitivity"])
        assert "params.read_cost" not in [s["constant"] for s in p["sensitivity"]]
    # Without sampling the document has no band (so existing documents stay as they were).
    assert "band" not in json.loads(cli("--json"))["points"][0]


def test_python_sweep_gives_the_cli_bands():
    sc = vfssim.Scenario.load(SCENARIO)
    sw = sc.sweep(uncertainty=6, seed=4, progress=False)
    doc = json.loads(cli("--uncertainty", "6", "--seed", "4", "--json"))
    for p in doc["points"]:
        assert sw.band(p["strategy"], p["cpus"]) == p["band"]
        assert sw.point(p["strategy"], p["cpus"]).band == p["band"]
    df = sw.curve
    assert list(df.columns[-3:]) == ["band_p10", "band_p50", "band_p90"]
    assert df["band_p10"].tolist() == [p["band"]["p10"] for p in doc["points"]]
    assert sc.sweep(progress=False).curve["band_p10"].isna().all()


def test_bands_are_stored_and_shown(tmp_path):
    db = str(tmp_path / "u.db")
    table = cli("--uncertainty", "4", "-q", db=db)
    assert "p10-p90" in table
    shown = subprocess.run([VFSSIM, "show", "1", "--db", db], capture_output=True, text=True, check=True).stdout
    rows = [line for line in table.splitlines() if re.search(r" \d+\.\.\d+$", line)]  # the band column's rows
    assert rows and all(row in shown for row in rows)


def test_uncertainty_needs_ranges_and_a_count(tmp_path):
    # The test scenario with its ranges' estimates written plainly (its machine inline: presets have ranges).
    text = SCENARIO.read_text()
    for ranged, plain in [('{estimate: 100ns, range: [60ns, 170ns], why: "no measurement of this part; the spread of '
                           '2-socket Xeons"}', "100ns"), ("150ns ± 50ns", "150ns"),
                          ('{estimate: 1us, range: [500ns, 2us], why: "the private part of open() varies with the path '
                           'length"}', "1us"),
                          ('{estimate: 80ns, range: [50ns, 120ns], why: "file_move\'s list insert, cache-hot or not"}',
                           "80ns")]:
        assert ranged in text
        text = text.replace(ranged, plain)
    plain = tmp_path / "plain.yaml"
    plain.write_text(text)
    r = subprocess.run([VFSSIM, "run", str(plain), "--db", "", "--uncertainty", "4"], capture_output=True, text=True)
    assert r.returncode == 2 and "has no ranges to sample" in r.stderr
    r = subprocess.run([VFSSIM, "run", str(SCENARIO), "--db", "", "--uncertainty-report"], capture_output=True, text=True)
    assert r.returncode == 2 and "--uncertainty-report needs --uncertainty N" in r.stderr


def test_plot_shades_the_band_of_each_curve(tmp_path):
    svg = tmp_path / "u.svg"
    cli("--uncertainty", "4", "-q", "--plot", str(svg))
    assert svg.read_text().count('class="band"') == 2  # baseline and percpu
    cli("-q", "--plot", str(svg))
    assert 'class="band"' not in svg.read_text()


def test_matplotlib_shades_the_band_of_each_curve():
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.collections import PolyCollection
    sc = vfssim.Scenario.load(SCENARIO)
    sw = sc.sweep(uncertainty=4, seed=2, progress=False)
    ax = vfssim.plot.curves(sw)
    shaded = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(shaded) == 2  # baseline and percpu
    # Each band spans its curve's p10..p90 (ops/s, in the plot's scale) at every CPU count.
    df = sw.curve
    for poly, (_, g) in zip(shaded, df.groupby(["strategy", "variant"], sort=False)):
        ys = poly.get_paths()[0].vertices[:, 1]
        scale = 1e6  # the rates reach millions: the plot's axis is in millions
        assert min(ys) == pytest.approx(g["band_p10"].min() / scale)
        assert max(ys) == pytest.approx(g["band_p90"].max() / scale)
    # us per op: the same samples, bounds swapped; no bands without samples, or when asked not to.
    ax2 = vfssim.plot.curves(sw, metric="us_per_op")
    assert len([c for c in ax2.collections if isinstance(c, PolyCollection)]) == 2
    assert not [c for c in vfssim.plot.curves(sw, bands=False).collections if isinstance(c, PolyCollection)]
    assert not [c for c in vfssim.plot.curves(sc.sweep(progress=False)).collections if isinstance(c, PolyCollection)]


def test_refit_finds_a_fitted_constant_again(tmp_path):
    # read_cost was fitted (1.4 us) to open-1cpu, 2.5 us per op: written 2x off, --refit finds it again
    # (the search's 1% on the figure), and with a range that cannot reach the figure it says so and fails.
    text = SCENARIO.read_text()
    fitted = "read_cost: {estimate: 1400ns, range: [100ns, 3us], fit: open-1cpu}"
    assert fitted in text
    off = tmp_path / "off.yaml"
    off.write_text(text.replace(fitted, "read_cost: {estimate: 2800ns, range: [100ns, 3us], fit: open-1cpu}"))
    r = subprocess.run([VFSSIM, "validate", "--refit", str(off), "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    [f] = json.loads(r.stdout)["refits"]
    assert f["constant"] == "params.read_cost" and f["figure"] == "open-1cpu" and f["converged"] and f["time"]
    assert f["estimate"] == 2800e3 and abs(f["refit"] - 1400e3) < 50e3, f
    assert abs(f["predicted"] / f["reported"] - 1) <= 0.01
    unreachable = tmp_path / "unreachable.yaml"
    unreachable.write_text(text.replace(fitted, "read_cost: {estimate: 2800ns, range: [2500ns, 3us], fit: open-1cpu}"))
    r = subprocess.run([VFSSIM, "validate", "--refit", str(unreachable)], capture_output=True, text=True)
    assert r.returncode == 1 and "NOT REACHED in its range" in r.stdout and "2.5us" in r.stdout

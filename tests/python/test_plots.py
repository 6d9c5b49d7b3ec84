"""`vfssim run --plot` (SVG and PNG, log y axis, CPU ticks, error bars,
reported figures, a panel per variant), the terminal chart, and progress on
stderr only where a terminal shows it (issue 16, items 2 and 9)."""
import json
import math
import re
import sqlite3
import struct
import subprocess
import xml.etree.ElementTree as ET

import pytest

from conftest import BUILD, ROOT

VFSSIM = str(BUILD / "vfssim")
OPEN_CLOSE = str(ROOT / "scenarios/seed/open-close-power5.yaml")
BASE = ROOT / "tests/bad-scenarios/valid/base.yaml"
SVG_NS = "{http://www.w3.org/2000/svg}"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# One figure of each kind that maps to a point, and one (a share) that does not.
EXPECT = """
expect:
  - figure: v-ops
    value: {point: base@2}
    metric: ops_per_sec
    reported: 1.0e6
    tolerance: 25%
    source: 'test: a value in ops/s'
  - figure: v-us
    value: {point: scaled@4}
    metric: us_per_op
    reported: 5
    tolerance: 25%
    source: 'test: a value in us per op'
  - figure: r-ratio
    ratio: {new: scaled@4, base: base@4}
    reported: 2.0
    tolerance: 25%
    source: 'test: a ratio'
  - figure: c-change
    change: {new: base@4, base: base@1}
    reported: -30%
    tolerance: 25%
    source: 'test: a change'
  - figure: p-peak
    peak: {strategy: scaled, cpus: [1, 2, 4]}
    metric: speedup
    reported: {cpus: 4, value: 3}
    tolerance: 25%
    source: 'test: a peak in speedup'
  - figure: s-share
    value: {point: base@4}
    metric: 'share:open'
    reported: 10%
    tolerance: 25%
    source: 'test: a share is no point of a throughput curve'
"""


def vfssim(*args):
    r = subprocess.run([VFSSIM, *map(str, args)], capture_output=True, timeout=300)
    # decoded by hand: text=True would turn the \r of progress into \n
    return subprocess.CompletedProcess(r.args, r.returncode, r.stdout.decode(), r.stderr.decode())


def svg_root(path):
    return ET.parse(path).getroot()


def y_axes(root):
    return [g for g in root.iter(SVG_NS + "g") if g.get("class") == "y-axis"]


def by_class(root, cls):
    return [e for e in root.iter() if e.get("class") == cls]


@pytest.fixture(scope="module")
def open_close(tmp_path_factory):
    """open-close-power5 at its default CPU list, as JSON, with both plots."""
    d = tmp_path_factory.mktemp("oc")
    svg, png = d / "oc.svg", d / "oc.png"
    r = vfssim("run", OPEN_CLOSE, "--db", "", "-q", "--json", "--plot", svg)
    assert r.returncode == 0, r.stderr
    p = vfssim("run", OPEN_CLOSE, "--db", "", "-q", "--plot", png)
    assert p.returncode == 0, p.stderr
    return json.loads(r.stdout), svg, png


def test_png_is_a_png(open_close):
    _, _, png = open_close
    data = png.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 800 and height >= 400
    assert len(data) > 20000  # drawn, not an empty canvas


def test_svg_has_a_log_y_axis_and_a_tick_at_every_cpu_count(open_close):
    doc, svg, _ = open_close
    root = svg_root(svg)
    (axis,) = y_axes(root)
    assert axis.get("data-scale") == "log"  # 280k beside 19.6M: a span of far more than 10x
    majors = [t for t in axis.iter(SVG_NS + "text") if "major" in t.get("class", "")]
    decades = [math.log10(float(t.get("data-value"))) for t in majors]
    assert len(decades) >= 3 and all(abs(d - round(d)) < 1e-9 for d in decades), decades
    ys = [float(t.get("y")) for t in majors]
    gaps = [a - b for a, b in zip(ys, ys[1:])]
    assert max(gaps) - min(gaps) < 0.5, "decades are evenly spaced"
    # every point sits where a log scale puts it: y is linear in log10(ops/s)
    y_of = {round(d): y - 4 for d, y in zip(decades, ys)}  # the label is 4 px below its line
    d0 = min(y_of)
    per_decade = y_of[d0] - y_of[d0 + 1]
    circles = [c for g in root.iter(SVG_NS + "g") if g.get("class") == "curve" for c in g.iter(SVG_NS + "circle")]
    assert len(circles) == len(doc["points"])
    for c in circles:
        want = y_of[d0] - (math.log10(float(c.get("data-ops"))) - d0) * per_decade
        assert abs(float(c.get("cy")) - want) < 0.2
    ticks = sorted(int(t.get("data-cpus")) for t in by_class(root, "x-tick"))
    assert ticks == sorted({p["cpus"] for p in doc["points"]})
    assert all(t.text == t.get("data-cpus") for t in by_class(root, "x-tick"))


def test_open_close_ratios_are_drawn_against_their_base(open_close):
    doc, svg, _ = open_close
    root = svg_root(svg)
    ops = {(p["strategy"], p["cpus"]): p["ops_per_sec"] for p in doc["points"]}
    marks = {m.get("data-figure"): float(m.get("data-ops")) for m in by_class(root, "reported ratio")}
    # every expect: figure of open-close is a ratio whose points are all plotted
    assert set(marks) == {"single-thread-speedup", "baseline-wall-at-2", "baseline-wall-at-64",
                          "vfs-scale-scales-to-64", "remount-bug-10x-slower"}
    assert marks["remount-bug-10x-slower"] == pytest.approx(0.1 * ops[("vfs-scale", 64)], rel=1e-6)
    assert marks["single-thread-speedup"] == pytest.approx(1.2 * ops[("baseline", 1)], rel=1e-6)
    assert len(by_class(root, "reported-base")) == 5


def test_linear_when_asked(tmp_path):
    svg = tmp_path / "lin.svg"
    r = vfssim("run", OPEN_CLOSE, "--db", "", "-q", "--cpus", "1,2", "--plot", svg, "--plot-y", "linear")
    assert r.returncode == 0, r.stderr
    (axis,) = y_axes(svg_root(svg))
    assert axis.get("data-scale") == "linear"
    assert "0" in [t.get("data-value") for t in axis.iter(SVG_NS + "text")]
    assert vfssim("run", OPEN_CLOSE, "--db", "", "-q", "--plot-y", "linear").returncode == 2  # needs --plot
    bad = vfssim("run", OPEN_CLOSE, "--db", "", "-q", "--plot", tmp_path / "x.svg", "--plot-y", "sqrt")
    assert bad.returncode == 2 and "'sqrt' is not a y scale" in bad.stderr


def test_cpu_labels_at_48_96_120_error_bars_and_every_reported_kind(tmp_path):
    scenario = tmp_path / "big.yaml"
    scenario.write_text(BASE.read_text().replace("machine: nehalem-ep-2s", "machine: ivybridge-ex-4s") + EXPECT)
    svg = tmp_path / "big.svg"
    r = vfssim("run", scenario, "--db", "", "-q", "--json", "--reps", "2", "--cpus", "1,2,4,48,64,96,120",
               "--plot", svg)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    root = svg_root(svg)
    labels = {int(t.text) for t in by_class(root, "x-tick")}
    assert {48, 96, 120} <= labels and labels == {1, 2, 4, 48, 64, 96, 120}
    # an error bar per point with a spread, one stddev each side
    bars = by_class(root, "error-bar")
    assert len(bars) == sum(1 for p in doc["points"] if p["stddev"] > 0) > 0
    ops = {(p["strategy"], p["cpus"]): p["ops_per_sec"] for p in doc["points"]}
    marks = {m.get("data-figure"): float(m.get("data-ops"))
             for m in by_class(root, "reported value") + by_class(root, "reported ratio")}
    assert set(marks) == {"v-ops", "v-us", "r-ratio", "c-change", "p-peak"}  # no share
    assert marks["v-ops"] == pytest.approx(1.0e6)
    assert marks["v-us"] == pytest.approx(1e6 * 4 / 5)  # us per op is CPU time per iteration
    assert marks["r-ratio"] == pytest.approx(2.0 * ops[("base", 4)], rel=1e-6)
    assert marks["c-change"] == pytest.approx(0.7 * ops[("base", 1)], rel=1e-6)
    assert marks["p-peak"] == pytest.approx(3 * ops[("scaled", 1)], rel=1e-6)


def test_one_panel_per_variant(tmp_path):
    svg = tmp_path / "v.svg"
    r = vfssim("run", BASE, "--db", "", "-q", "--variant", "all", "--plot", svg)
    assert r.returncode == 0, r.stderr
    root = svg_root(svg)
    titles = [t.text for t in by_class(root, "panel-title")]
    assert titles == ["variant default", "variant slow"]
    assert len(y_axes(root)) == 2
    curves = [g for g in root.iter(SVG_NS + "g") if g.get("class") == "curve"]
    assert sorted((g.get("data-variant"), g.get("data-series")) for g in curves) == [
        ("default", "base"), ("default", "scaled"), ("slow", "base"), ("slow", "scaled")]


@pytest.mark.parametrize("path, message", [
    ("/nonexistent-dir/x.svg", "directory /nonexistent-dir does not exist"),
    ("{tmp}/plot.pdf", "unknown plot format '.pdf'"),
    ("{tmp}", "unknown plot format"),
])
def test_bad_plot_path_fails_before_the_run(tmp_path, path, message):
    db = tmp_path / "runs.db"
    r = vfssim("run", BASE, "--db", db, "--plot", path.format(tmp=tmp_path))
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert r.stdout == ""
    assert not db.exists() or sqlite3.connect(db).execute("select count(*) from runs").fetchone()[0] == 0


def test_unwritable_plot_directory(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    probe = ro / "probe"
    try:
        probe.touch()  # root writes anywhere: nothing to test then
        pytest.skip("running as a user who can write into a read-only directory")
    except PermissionError:
        pass
    r = vfssim("run", BASE, "--db", "", "--plot", ro / "x.svg")
    assert r.returncode == 2 and "not writable" in r.stderr


def test_terminal_chart_is_log_and_hides_no_curve():
    r = vfssim("run", OPEN_CLOSE, "--db", "", "-q", "--cpus", "1,2,4,64")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("ops/s (log scale"))
    grid = [l.split("|", 1)[1] for l in lines[start + 1:] if "|" in l and not l.lstrip().startswith("+")][:18]
    legend = {l.strip()[0]: l.strip()[4:] for l in lines if re.match(r"^ {10}[A-Z] = ", l)}
    assert set(legend.values()) >= {"baseline", "vfs-scale", "vfs-scale-remount-bug"}
    chart = "".join(grid)
    for mark in legend:  # each curve shows at least one of its own marks
        assert mark in chart, f"curve {mark} ({legend[mark]}) is hidden"
    if "*" in chart:
        assert any("* = two or more curves at the same place" in l for l in lines)


def test_progress_only_on_a_terminal_or_when_asked(tmp_path):
    quiet_pipe = vfssim("run", BASE, "--db", "", "--cpus", "1,2")
    assert quiet_pipe.returncode == 0
    assert "\r" not in quiet_pipe.stderr and "\033[K" not in quiet_pipe.stderr
    shown = vfssim("run", BASE, "--db", "", "--cpus", "1,2", "--progress", "always", "--jobs", "1")
    assert shown.returncode == 0
    err = shown.stderr
    assert "\033[K" in err and "\r" in err
    assert re.search(r"@ 1 CPU(?!s)", err) and "@ 2 CPUs" in err and "1 CPUs" not in err
    updates = [u for u in err.split("\r") if u]
    assert all(u.endswith("\033[K") for u in updates), "every update clears what the last one left"
    final = [u for u in updates if u.startswith("[4/4 points done")]
    assert final and "0 running" in final[-1] and "elapsed" in final[-1]
    assert any(re.search(r"\[[123]/4 points done, \d running\] [\d.]+ s elapsed, about [\d.]+ s left", u)
               for u in updates)
    assert updates[-1] == "\033[K", "the line is erased at the end"
    assert "\r" not in vfssim("run", BASE, "--db", "", "--cpus", "1", "--progress", "never").stderr
    assert vfssim("run", BASE, "--db", "", "-q", "--progress", "always").returncode == 2
    bad = vfssim("run", BASE, "--db", "", "--progress", "sometimes")
    assert bad.returncode == 2 and "'sometimes' is not a progress mode" in bad.stderr


def test_validate_progress(tmp_path):
    scenario = tmp_path / "v.yaml"
    scenario.write_text(BASE.read_text() + EXPECT)
    piped = vfssim("validate", scenario, "--db", "")
    assert "\r" not in piped.stderr and "\033[K" not in piped.stderr
    shown = vfssim("validate", scenario, "--db", "", "--progress", "always")
    assert "\033[K" in shown.stderr and re.search(r"bad-base: base/default @ 1 CPU(?!s)", shown.stderr)
    assert re.search(r"\[\d+/\d+ points done, \d running\]", shown.stderr)

"""The model's error (issue 27, docs/uncertainty.md "The model's error"): the table in the repository is
the one the corpus gives now, and validate reports the total band with its parts."""
import json
import subprocess
import sys

from conftest import BUILD, ROOT

VFSSIM = str(BUILD / "vfssim")


def validate(*args):
    r = subprocess.run([VFSSIM, "validate", *args, "--json", "--db", "", "-q"], capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr[-2000:]
    return json.loads(r.stdout)


def test_discrepancy_table_is_current():
    """scenarios/validation/discrepancy.json is what scripts/discrepancy.py learns from the corpus today."""
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "discrepancy.py"), "--check", "--vfssim", VFSSIM],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    t = json.loads((ROOT / "scenarios" / "validation" / "discrepancy.json").read_text())
    assert t["corpus_commit"] and len(t["corpus_sha256"]) == 64 and t["shrinkage_k"] == 2
    assert sum(t["classes"].values()) == len(t["records"]) > 100


def test_leave_one_case_out_fields_and_coverage():
    out = validate(str(ROOT / "scenarios" / "validation" / "hardware"), "--calibration", "loo")
    cal = out["summary"]["calibration"]
    assert cal["mode"] == "loo" and cal["table"] is None and cal["samples"] == 0
    for key in ("scored", "inside50", "inside80", "coverage50", "coverage80", "median_width80"):
        assert key in cal["overall"]
    assert cal["overall"]["scored"] == sum(c["scored"] for c in cal["by_kind"].values())
    scored = [f for f in out["figures"] if not f["fitted"] and not f["restated"]]
    assert scored
    for f in out["figures"]:
        assert set(f["discrepancy"]) == {"kind_class", "bound_class", "log_error"}
        b, m = f["band"], f["band_model"]
        assert b["p10"] <= b["p25"] <= b["p50"] <= b["p75"] <= b["p90"]
        assert f["band_parameters"] is None  # no --uncertainty: the model band alone
        assert m == b
    inside = sum(1 for f in scored if f["inside"])
    assert cal["overall"]["inside80"] == inside


def test_a_case_alone_has_no_error_to_learn_from_others():
    """Leave-one-case-out of one file: every record is its own, so its bands are the prediction itself."""
    out = validate(str(ROOT / "scenarios" / "validation" / "hardware" / "ccbench-opteron.yaml"), "--calibration", "loo")
    for f in out["figures"]:
        assert f["band"]["p10"] == f["band"]["p90"] == f["predicted"]


def test_uncertainty_with_the_table_combines_both():
    out = validate(str(ROOT / "scenarios" / "validation" / "hardware" / "perfbook-nehalem-ep.yaml"), "--uncertainty", "4")
    cal = out["summary"]["calibration"]
    assert cal["mode"] == "table" and cal["table"]["records"] > 100 and cal["samples"] == 4
    assert "fraction_parameters" in out["summary"]["coverage"]
    for f in out["figures"]:
        p, m, b = f["band_parameters"], f["band_model"], f["band"]
        assert p is not None and p["p10"] <= p["p90"]
        # The total is at least as wide as the model's error alone (up to the grid).
        assert b["p90"] / b["p10"] >= 0.999 * m["p90"] / m["p10"]

"""The bad-scenario corpus: every file of tests/bad-scenarios/ is refused
with exit status 2 and `FILE:LINE:COL: problem; expected ...`, without a
crash and without storing anything (tests/bad-scenarios/expected.txt)."""
import os
import pathlib
import sqlite3
import subprocess

import pytest

from conftest import BUILD, ROOT

CORPUS = ROOT / "tests/bad-scenarios"
VFSSIM = pathlib.Path(os.environ.get("VFSSIM_BINARY", BUILD / "vfssim"))


def manifest():
    rows = []
    for line in (CORPUS / "expected.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, pos, fragment = line.split(None, 2)
        line_no, col = (int(x) for x in pos.split(":"))
        rows.append((name, line_no, col, fragment))
    return rows


MANIFEST = manifest()


def run(*args, **kw):
    return subprocess.run([str(VFSSIM), "run", *args], capture_output=True, text=True, errors="replace",
                          timeout=120, **kw)


def test_corpus_is_large_and_fully_listed():
    listed = {row[0] for row in MANIFEST}
    on_disk = {p.name for p in CORPUS.glob("*.yaml")}
    assert len(MANIFEST) >= 30
    assert len(listed) == len(MANIFEST), "a file is listed twice"
    assert on_disk == listed, f"unlisted: {on_disk - listed}, missing: {listed - on_disk}"


def test_the_base_scenario_is_valid(tmp_path):
    r = run(str(CORPUS / "valid/base.yaml"), "--db", str(tmp_path / "ok.db"), "-q", "--json")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("name,line,col,fragment", MANIFEST, ids=[row[0] for row in MANIFEST])
def test_bad_scenario_is_refused_with_its_position(name, line, col, fragment, tmp_path):
    path = CORPUS / name
    r = run(str(path), "--db", "")
    assert r.returncode >= 0, f"killed by signal {-r.returncode}: {r.stderr[-2000:]}"
    assert r.returncode == 2, f"exit {r.returncode}: {r.stderr[-2000:]}"
    first = r.stderr.splitlines()[0] if r.stderr else ""
    assert first.startswith(f"{path}:{line}:{col}: "), first
    assert fragment in first, first
    assert "; expected " in first, first
    assert r.stdout == ""
    assert "AddressSanitizer" not in r.stderr and "runtime error" not in r.stderr

    db = tmp_path / "results.db"
    r = run(str(path), "--db", str(db), "-q")
    assert r.returncode == 2, r.stderr
    if db.exists():
        con = sqlite3.connect(db)
        tables = {t for (t,) in con.execute("select name from sqlite_master where type='table'")}
        runs = con.execute("select count(*) from runs").fetchone()[0] if "runs" in tables else 0
        con.close()
        assert runs == 0, "a bad scenario left a run in the database"

"""One result schema (results/schema.h): the JSON document, the Python dicts and DataFrames and
the SQLite tables carry the same fields under the names `vfssim schema` declares, and the
documented field list is the generated one."""
import json
import sqlite3
import subprocess

import vfssim
from vfssim import _vfssim
from vfssim.results import columns

from conftest import BUILD, ROOT

VFSSIM = str(BUILD / "vfssim")
SCENARIO = ROOT / "tests/bad-scenarios/valid/base.yaml"
STATS = ["lock_stat", "lock_stat_rw", "contention_points", "lines", "seqcounts", "pools", "profile", "rcu", "roles", "tasks"]


def schema():
    out = subprocess.run([VFSSIM, "schema", "--json"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def test_the_cli_and_the_module_describe_the_same_schema():
    assert schema() == _vfssim.result_schema()
    assert list(schema()) == ["point"] + STATS + ["curve"]


def test_the_documented_field_list_is_the_generated_one():
    r = subprocess.run(["/usr/bin/python3", str(ROOT / "scripts/results-schema.py"), "--vfssim", VFSSIM, "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_sqlite_tables_have_every_stored_field_with_its_type(tmp_path):
    db = tmp_path / "r.db"
    subprocess.run([VFSSIM, "run", str(SCENARIO), "--db", str(db), "-q", "--cpus", "1,2"], check=True,
                   capture_output=True)
    con = sqlite3.connect(db)
    for key, t in schema().items():
        have = {row[1]: row[2] for row in con.execute(f"PRAGMA table_info({t['table']})")}
        assert have, t["table"]
        for f in t["fields"]:
            if f["column"] is not None:
                assert have.get(f["column"]) == f["sql_type"], (t["table"], f["column"], have.get(f["column"]))
        if t["table"] not in ("pool_stats", "lock_stat_rw", "role_stats"):  # no free-page pool, read/write lock or roles
            assert con.execute(f"SELECT count(*) FROM {t['table']}").fetchone()[0] > 0, t["table"]


def test_python_dicts_and_json_points_have_exactly_the_schema_keys():
    sc = vfssim.Scenario.load(SCENARIO)
    p = sc.run_point(sc.strategies[0], 2).to_dict()
    doc = json.loads(_vfssim.document(sc.native, cpus=[2], strategies=[sc.strategies[0]]))
    point = doc["points"][0]
    for key in STATS:
        want = columns(key)
        rows_py = p[key] if isinstance(p[key], list) else [p[key]]
        # (JSON has no "roles" key without roles: documents of other workloads are as they were.)
        assert key in point or key == "roles", key
        rows_js = point.get(key, []) if isinstance(point.get(key, []), list) else [point[key]]
        assert rows_py or key in ("pools", "seqcounts", "lock_stat_rw", "contention_points", "roles"), key
        for row in rows_py:
            assert list(row) == want, key
        for row in rows_js:
            assert sorted(row) == sorted(want), key
    assert set(columns("point")) <= set(p)
    assert set(columns("curve")) - {"band"} <= set(point)  # band: only with --uncertainty (test_uncertainty.py)
    # The same numbers: a time is microseconds in both.
    assert p["lock_stat"][0]["waittime_total_us"] == point["lock_stat"][0]["waittime_total_us"]


def test_dataframes_take_their_columns_from_the_schema():
    sc = vfssim.Scenario.load(SCENARIO)
    p = sc.run_point(sc.strategies[0], 2)
    assert list(p.lock_stat.columns) == columns("lock_stat")
    assert list(p.profile.columns) == columns("profile")
    assert list(p.lines.columns) == columns("lines")
    assert "holds" in columns("lock_stat") and "waittime_total_us" in columns("lock_stat")


def test_the_json_profile_is_whole_unless_cut():
    sc = vfssim.Scenario.load(SCENARIO)
    s = sc.strategies[0]
    whole = sc.run_point(s, 4).to_dict()["profile"]
    doc = json.loads(_vfssim.document(sc.native, cpus=[4], strategies=[s]))
    assert len(doc["points"][0]["profile"]) == len(whole) > 2
    cut = json.loads(_vfssim.document(sc.native, cpus=[4], strategies=[s], profile_top=2))
    assert cut["points"][0]["profile"] == doc["points"][0]["profile"][:2]


def test_roles_reach_python_as_the_schema_says():
    sc = vfssim.Scenario.load(ROOT / "tests/scenarios/roles-seqlock.yaml")
    p = sc.run_point(sc.strategies[0], 4)
    roles = p.to_dict()["roles"]
    assert [r["name"] for r in roles] == ["writer", "reader"] and [r["tasks"] for r in roles] == [1, 3]
    assert all(list(r) == columns("roles") for r in roles)
    assert sum(r["ops"] for r in roles) == p.ops
    assert list(p.roles.columns) == columns("roles") and list(p.roles["name"]) == ["writer", "reader"]

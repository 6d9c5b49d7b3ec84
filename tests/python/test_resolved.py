"""The resolved scenario (NativeScenario.resolved_text): the loader's one resolution of machine
presets, `extends`, variants' parameters and CPU lists; it loads back to the same simulations."""
import json

import yaml

import vfssim
from vfssim import _vfssim

from conftest import ROOT

VFS = ROOT / "scenarios/seed/vfs-scale-nehalem.yaml"
POWER5 = ROOT / "scenarios/seed/open-close-power5.yaml"


def test_resolved_scenario_is_self_contained():
    sc = _vfssim.load_scenario_file(str(VFS))
    doc = yaml.safe_load(sc.resolved_text)
    assert isinstance(doc["machine"], dict) and doc["machine"]["machine"] == sc.machine_name
    for name, v in doc["variants"].items():
        assert set(v["params"]) == set(doc["params"]), name  # every parameter spelled out
        if "machine" in v:
            assert isinstance(v["machine"], dict) and v["cpus"]
    assert all("extends" not in s for s in doc["strategies"].values())
    assert doc["workload"]["cpus"] == sc.variant_info()["cpus"]


def test_resolved_scenario_loads_back_to_the_same_results_in_every_variant():
    sc = _vfssim.load_scenario_file(str(VFS))
    back = _vfssim.load_scenario_string(sc.resolved_text, "resolved")
    assert back.resolved_text == sc.resolved_text  # resolving is idempotent
    assert back.variants == sc.variants and back.strategies == sc.strategies
    for v in sc.variants:
        assert back.variant_info(v) == sc.variant_info(v), v
    for s in sc.strategies:
        assert back.strategy_info(s)["locks"].keys() == sc.strategy_info(s)["locks"].keys()
    a = json.loads(_vfssim.document(sc, cpus=[1, 8], variants=sc.variants, jobs=2))
    b = json.loads(_vfssim.document(back, cpus=[1, 8], variants=sc.variants, jobs=2))
    assert a.pop("scenario_hash") != b.pop("scenario_hash")  # another text ...
    assert a == b  # ... the same simulations


def test_python_takes_extends_from_the_loader():
    sc = vfssim.Scenario.load(POWER5)
    resolved = sc.strategy("vfs-scale-remount-bug", resolved=True)
    # read as the loader reads it: YAML 1.2 booleans only (PyYAML's safe_load makes `on:` True)
    from vfssim.scenario import _Yaml12Loader
    assert resolved == yaml.load(sc.native.resolved_text, Loader=_Yaml12Loader)["strategies"]["vfs-scale-remount-bug"]
    assert resolved["lines"]["open1_file.d_count"] == {"on": "open1_file.d_lock"}
    # inherited from vfs-scale, which has it from the library's v2.6.39
    assert resolved["locks"]["vfsmount_lock"] == {"kind": "brlock", "scope": "global"}
    assert resolved["locks"]["eventfd_lock"] == {"kind": "tas", "scope": "task"}
    # An edit of the parent is resolved by the loader at the next build.
    sc.set("strategies.vfs-scale.locks", {"eventfd_lock": {"kind": "mcs", "scope": "task"}})
    assert sc.strategy("vfs-scale-remount-bug", resolved=True)["locks"]["eventfd_lock"]["kind"] == "mcs"

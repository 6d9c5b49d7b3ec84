"""The library language (docs/scenario-format.md, "The code-path library"):
`use:`, `benchmark:`, objects, `patch:`, call bindings and library values,
expanded into the plain scenario a run stores; errors placed in the file
and line they come from. On the test library of tests/library/ (two
versions, two families, one benchmark), so that positions in it are fixed."""
import json
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import BUILD, ROOT

VFSSIM = pathlib.Path(os.environ.get("VFSSIM_BINARY", BUILD / "vfssim"))
FIXTURE = ROOT / "tests/library"


def vfssim(*args, cwd=None):
    return subprocess.run([str(VFSSIM), *map(str, args)], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.fixture
def lib(tmp_path):
    """A copy of the test library; scenarios go in its scenarios/."""
    for d in ("kernel", "benchmarks"):
        shutil.copytree(FIXTURE / d, tmp_path / d)
    (tmp_path / "scenarios").mkdir()
    return tmp_path


HEAD = """scenario: t
machine: skylake-sp-2s
benchmark: wis/open1_processes
use: kernel/t1
strategies:
  base: {}
"""


def write(lib, text, name="s.yaml"):
    p = lib / "scenarios" / name
    p.write_text(text)
    return p


def first_error(r):
    assert r.returncode == 2, r.stdout[-500:] + r.stderr[-2000:]
    return r.stderr.splitlines()[0]


def test_use_benchmark_and_patch_expand_into_a_plain_scenario(lib):
    p = write(lib, HEAD + """  t2:
    extends: base
    use: kernel/t2
  no-file-move:
    extends: base
    patch:
      sys_open:
        - remove: {fn: file_move}
""")
    r = vfssim("library", "resolve", p)
    assert r.returncode == 0, r.stderr
    text = r.stdout
    import yaml

    doc = yaml.safe_load(text)
    assert "use" not in doc and "benchmark" not in doc
    for s in doc["strategies"].values():
        assert not {"use", "patch", "objects"} & set(s)
    assert "with:" not in text and "$" not in text
    # The library's value is one named constant wherever it is used, per family.
    assert "name: kernel.t1.x86.syscall" in text
    assert "name: kernel.t2.x86.syscall" in text  # t2 redefines it
    # The expanded text is a scenario of its own: it loads and runs without the library.
    alone = lib / "alone.yaml"
    alone.write_text(text)
    a = vfssim("run", p, "--db", "", "--json", "-q", "--cpus", "1,2")
    b = vfssim("run", alone, "--db", "", "--json", "-q", "--cpus", "1,2")
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    rates = lambda doc: [(pt["strategy"], pt["cpus"], pt["ops_per_sec"]) for pt in json.loads(doc)["points"]]  # noqa: E731
    assert rates(a.stdout) == rates(b.stdout)
    by = {(s, c): v for s, c, v in rates(a.stdout)}
    # One CPU: base's open+close is the library's steps: 100 + 20 + 2 x 50 (walk) ... ; the patch removes a 40 ns hold.
    assert by[("no-file-move", 1)] > by[("base", 1)]


def test_a_strategy_inherits_the_library_through_extends_and_its_own_use_wins(lib):
    p = write(lib, HEAD + """  t2:
    extends: base
    use: kernel/t2
""")
    r = vfssim("library", "resolve", p)
    assert r.returncode == 0, r.stderr
    import yaml

    doc = yaml.safe_load(r.stdout)
    base, t2 = doc["strategies"]["base"], doc["strategies"]["t2"]
    assert base["locks"]["files_lock"]["scope"] == "global"
    assert t2["locks"]["files_lock"]["scope"] == "cpu"  # t2's change
    assert base["ops"]["path_lookup"][0]["mode"] == "ref"
    assert t2["ops"]["path_lookup"][0]["mode"] == "rcu"  # t2's patch of the op
    # The benchmark's object: a dentry and the class's members, of the object's scope.
    assert base["dentries"]["f1"] == {"scope": "task"}
    assert base["lines"]["f1.i_writecount"] == {"scope": "task"}
    assert base["locks"]["f1.i_lock"] == {"kind": "ticket", "scope": "task"}
    # The call's bindings: the path and the file's members.
    assert base["ops"]["path_lookup"][0]["walk"] == ["root", "tmp", "f1"]
    assert any(s.get("atomic") == "f1.i_writecount" for s in base["ops"]["sys_open"]["steps"])
    assert doc["workload"]["tasks"] == "process" and doc["workload"]["loop"] == ["open1"]


def test_two_bindings_of_one_op_are_two_ops_that_keep_the_kernel_name(lib):
    p = write(lib, """scenario: t
machine: skylake-sp-2s
benchmark: wis/open1_threads
use: kernel/t1
variants:
  stat:
    benchmark: wis/stat3_threads
strategies:
  base:
    ops:
      both:
        - call: sys_stat
          with: {path: [root, tmp, f1], file: f1}
        - call: sys_stat
          with: {path: [root, tmp, f3], file: f3}
""")
    r = vfssim("library", "resolve", p)
    assert r.returncode == 0, r.stderr
    import yaml

    doc = yaml.safe_load(r.stdout)
    ops = doc["strategies"]["base"]["ops"]
    assert doc["variants"]["stat"]["loop"] == ["stat3"]
    walks = sorted(tuple(o["steps"][0]["walk"] if isinstance(o, dict) else o[0]["walk"])
                   for n, o in ops.items() if n.startswith("path_lookup"))
    assert walks == [("root", "tmp", "f1"), ("root", "tmp", "f3")]
    second = [o for n, o in ops.items() if n.startswith("path_lookup.")]
    assert second and second[0]["fn"] == "path_lookup"  # the profile still shows the kernel function


@pytest.mark.parametrize("strategies,where,fragment", [
    ("""  p:
    extends: base
    patch:
      sys_open:
        - remove: {fn: nothere}
""", "s.yaml:11:19", "matches no step with {fn: nothere} in op 'sys_open' of kernel t1 ("),
    ("""  p:
    extends: base
    patch:
      sys_nope:
        - remove: {fn: file_move}
""", "s.yaml:10:7", "patches op 'sys_nope', which kernel t1 ("),
    ("""  p:
    extends: base
    patch:
      sys_close:
        - at: {compute: "$syscall"}
          set: {fn: x}
        - replace: {index: 7}
          with: []
""", "s.yaml:13:28", "index 7 is out of range"),
    ("""  p:
    extends: base
    use: kernel/t9
""", "s.yaml:9:10", "the code-path library has no kernel version 't9'"),
    ("""  p:
    extends: base
    objects:
      f9: {class: socket, scope: task}
""", "s.yaml:10:19", "object 'f9' is of class 'socket', which kernel t1 does not have"),
    ("""  p:
    extends: base
    use: {kernel: t1, values: {nothere: 5ns}}
""", "s.yaml:9:32", "use: sets value 'nothere', which kernel t1 does not have"),
])
def test_mistakes_are_placed_in_the_scenario_and_name_the_library_file(lib, strategies, where, fragment):
    p = write(lib, HEAD + strategies)
    line = first_error(vfssim("run", p, "--db", "", "-q"))
    assert line.startswith(str(lib / "scenarios" / where) + ": "), line
    assert fragment in line, line
    assert "; expected " in line


def test_the_machine_family_decides_the_values_and_a_preset_of_none_is_refused(lib):
    p = write(lib, HEAD.replace("skylake-sp-2s", "power5p-64"))
    r = vfssim("library", "resolve", p)
    assert r.returncode == 0, r.stderr
    import yaml

    base = yaml.safe_load(r.stdout)["strategies"]["base"]
    assert base["locks"]["files_lock"]["kind"] == "tas"
    assert base["ops"]["sys_close"][0]["compute"]["name"] == "kernel.t1.power.syscall"
    p = write(lib, HEAD.replace("skylake-sp-2s", "nehalem-ex-4s"))
    line = first_error(vfssim("run", p, "--db", "", "-q"))
    assert line.startswith(f"{p}:2:10: machine preset 'nehalem-ex-4s' is in no family"), line
    p = write(lib, HEAD.replace("use: kernel/t1", "use: {kernel: t1, family: power}").replace("skylake-sp-2s", "nehalem-ex-4s"))
    assert vfssim("library", "resolve", p).returncode == 0


def test_an_unbound_placeholder_is_placed_in_the_library_op(lib):
    p = write(lib, HEAD.replace("benchmark: wis/open1_processes\n", "").replace(
        "strategies:", "workload: {tasks: process, loop: [sys_stat], warmup: 1us, duration: 20us}\nstrategies:"))
    line = first_error(vfssim("run", p, "--db", "", "-q"))
    assert line.startswith(str(lib / "kernel/t1.yaml") + ":"), line
    assert "op 'sys_stat' of kernel t1" in line and "uses $" in line, line


@pytest.mark.parametrize("edit,where,fragment", [
    (("t2.yaml", "  - commit: 0123456789ab\n", "  - commit: xyz\n"), "t2.yaml:5:13", "commit 'xyz' of kernel t2 is not a commit id"),
    (("t2.yaml", "    title: \"test: files_lock per CPU\"\n", ""), "t2.yaml:5:5", "has no 'title'"),
    (("t1.yaml", "  lookup: 50ns ± 20ns\n", "  lookup: {estimate: 50ns, range: [20ns, 80ns], fit: x}\n"),
     "t1.yaml:9:54", "value 'lookup' of kernel t1 is fitted"),
    (("t2.yaml", "      syscall: {x86: 150ns ± 50ns, power: 300ns ± 100ns, why: \"mitigations\"}\n",
      "      syscall: {x86: 150ns ± 50ns, why: \"mitigations\"}\n"), "t2.yaml:22:7", "gives nothing for family 'power'"),
])
def test_mistakes_in_a_library_file_are_placed_there(lib, edit, where, fragment):
    f, old, new = edit
    path = lib / "kernel" / f
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    p = write(lib, HEAD.replace("use: kernel/t1", "use: kernel/t2"))
    line = first_error(vfssim("run", p, "--db", "", "-q"))
    assert line.startswith(str(lib / "kernel" / where) + ": "), line
    assert fragment in line, line


def test_library_lists_versions_prints_an_op_and_diffs_two_versions(lib):
    r = vfssim("library", "--dir", lib, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [v["version"] for v in doc["versions"]] == ["t1", "t2"]
    assert doc["versions"][1]["changes"] == 3 and "sys_nop" in doc["versions"][1]["ops"]
    r = vfssim("library", "t2", "sys_open", "--dir", lib, "--json")
    assert r.returncode == 0, r.stderr
    ops = json.loads(r.stdout)["ops"]
    assert [o["op"] for o in ops] == ["sys_open", "path_lookup"]
    assert ops[0]["bindings"] == ["file"] and ops[1]["bindings"] == ["path"] and ops[1]["version"] == "t2"
    # The diff lists the changes that touch the op or what it reaches, with their commits.
    r = vfssim("library", "diff", "t1", "t2", "sys_open", "--dir", lib, "--json")
    commits = [c["commit"] for c in json.loads(r.stdout)["changes"]]
    assert commits == ["0123456789ab", "123456789abcdef", "23456789abcd"]
    r = vfssim("library", "diff", "t1", "t2", "sys_stat", "--dir", lib, "--json")
    assert [c["commit"] for c in json.loads(r.stdout)["changes"]] == ["123456789abcdef", "23456789abcd"]
    r = vfssim("library", "diff", "t2", "t1", "sys_stat", "--dir", lib)
    assert r.returncode == 2 and "does not inherit from t2" in r.stderr


def test_the_readme_design_review_runs_as_written(tmp_path):
    """README's "A design review from nothing": its shell block, run as written (build/vfssim
    pointed at this build), writes a scenario, appends the 10-line patch, and compares."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("### A design review from nothing"):]
    block = section[section.index("```sh\n") + len("```sh\n"):section.index("\n```\n")]
    script = block.replace("build/vfssim", str(VFSSIM))
    r = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "base: v6.6    new: per-cpu-fd-lock" in r.stdout and "P(new > base) @ 48 CPUs" in r.stdout
    assert "bottleneck: file_lock" in r.stdout  # close still takes it: the review's finding


# -- every op of the real library, alone at one CPU (scripts/library_ops.py) -----------------

def _library_ops():
    import importlib.util

    spec = importlib.util.spec_from_file_location("library_ops", ROOT / "scripts" / "library_ops.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_each_library_op_costs_the_sum_of_its_steps_at_one_cpu_and_matches_its_golden():
    """Every op of every kernel version that a benchmark test reaches (or that runs alone, taking no
    bindings), run alone at one CPU on skylake-sp-2s: its cost is the sum of its top-level steps' costs,
    each step run alone, to 1 ps a step where every iteration takes the same time (within 1% over 50 ms
    where it draws random durations; not for an op that allocates from a pool, whose allocation costs
    what the refill since the last left it); no op fails, hangs or never ends an iteration; and the table of
    costs is byte-identical to tests/golden/library/ops-skylake-sp-2s.json (a changed library cost or
    step model shows there, op by op: scripts/library_ops.py --update, and the commit says why)."""
    mod = _library_ops()
    path = mod.golden_path("skylake-sp-2s")
    golden = json.loads(path.read_text())
    fresh = mod.table(str(VFSSIM), "skylake-sp-2s", os.cpu_count() or 1, mod.tests_in(golden))
    checked = pools = 0
    for version, d in fresh["versions"].items():
        ops = d["ops"]
        assert len(ops) >= 60, (version, len(ops))
        # A benchmark test loads on every version that has the classes and ops it needs.
        for test, why in d["tests_not_loading"].items():
            assert f"which kernel {version} does not have" in why or \
                f"strategy '{version}' has no such op; expected an op of the strategy or its kernel version" in why, \
                (version, test, why)
        for op, r in ops.items():
            assert "error" not in r, (version, op, r)
            whole, steps = r["ns"], r["steps_ns"]
            assert whole > 0 or not steps or sum(steps) == 0, (version, op, r)
            if r.get("pool"):
                pools += 1  # an allocation costs what the pool's refill left it: not additive
            elif r["exact"]:
                assert abs(sum(steps) - whole) <= 0.001 * len(steps) + 1e-9, (version, op, whole, steps)
            else:
                assert abs(sum(steps) - whole) <= 0.01 * whole, (version, op, whole, steps)
            checked += 1
    assert checked >= 1000 and pools <= 20, (checked, pools)
    assert json.dumps(fresh, indent=1, sort_keys=True) + "\n" == path.read_text(), \
        "the library's single-CPU op costs changed: scripts/library_ops.py --update, and say why in the commit"

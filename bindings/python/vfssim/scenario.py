"""vfssim.Scenario: a scenario as plain, editable data, run by the C++ engine.

    sc = vfssim.Scenario.load("scenarios/seed/open-close-power5.yaml")
    sc.strategies                                   # ['baseline', 'vfs-scale', ...]
    sc.strategy("baseline")["locks"]["files_lock"]  # {'kind': 'tas', 'scope': 'global'} (live dict)
    sc.set("strategies.baseline.locks.files_lock.kind", "mcs")    # validated now
    sc.derive("percpu-files", from_="baseline", changes={"locks.files_lock.scope": "cpu"})
    sweep = sc.sweep(cpus=[1, 8, 64])
    sweep.curve, sweep.lock_stat("baseline", 64), sweep.fits()

The data is the YAML document as a dict (PyYAML). Every build hands YAML
text to the C++ loader, which validates it exactly as `vfssim run` does;
the validated native scenario is kept and reused until the data changes.
"""
import copy
import os
import pathlib
import re
import time

import yaml

from . import _vfssim
from ._util import dotted, key_path_at, make_progress, names, plain, same, scenario_error, whole
from ._vfssim import ScenarioError
from .results import PointResult, Sweep

__all__ = ["Scenario"]

class _Missing:
    def __repr__(self):
        return "<no default: KeyError>"


_MISSING = _Missing()
_STRATEGY_MAPS = ("locks", "lines", "seqcounts", "pools", "dentries", "ops")


def _yaml_error(exc, name, text):
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + 1 if mark is not None else 0
    column = mark.column + 1 if mark is not None else 0
    problem = f"YAML error: {getattr(exc, 'problem', None) or exc}"
    return scenario_error(f"{name}:{line}:{column}: {problem}; expected valid YAML of the scenario format",
                          file=name, line=line, column=column, problem=problem,
                          expected="valid YAML of the scenario format", text=text)


class _Yaml12Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2's booleans (true/false) only. PyYAML follows YAML 1.1, where
    `on`, `off`, `yes`, `no`, `y`, `n` are booleans too: a line's `on: LOCK` key would come back
    as True and be written out as `true:`. The C++ loader (yaml-cpp) keeps them as text."""


_Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Yaml12Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                    list("tTfF"))


def _safe_load(text, name):
    try:
        data = yaml.load(text, Loader=_Yaml12Loader)
    except yaml.YAMLError as e:
        raise _yaml_error(e, name, text) from None
    if not isinstance(data, dict):
        raise scenario_error(f"{name}:1:1: the scenario is not a mapping; expected a mapping with scenario, "
                             "machine, workload, strategies", file=name, line=1, column=1,
                             problem="the scenario is not a mapping",
                             expected="a mapping with scenario, machine, workload, strategies", text=text)
    return data


def _explain_error(err, text, edited, had_text):
    """The loader's error with the dotted key of the element it points at."""
    try:
        key = key_path_at(text, getattr(err, "line", 0), getattr(err, "column", 0))
    except RecursionError:  # a text the loader refused for its nesting
        key = None
    message = str(err)
    if key:
        message += f"\n  at {dotted(key)}"
        if edited:
            message += (" (lines of Scenario.to_yaml(), the scenario as edited)" if had_text
                        else " (lines of Scenario.to_yaml())")
    return scenario_error(message, file=err.file, line=err.line, column=err.column, problem=err.problem,
                          expected=err.expected, key=dotted(key), text=text)


class Scenario:
    """A scenario (machine, workload, parameters, variants, strategies, expected figures) as plain data.

    Create one with Scenario.load(path), Scenario.from_yaml(text) or
    Scenario.from_dict(d); each validates it with the engine's loader and
    raises vfssim.ScenarioError (.file .line .column .problem .expected, and
    .key: the dotted key of the offending element) when it is wrong.

    Inspect and edit:
      sc.data                 the whole document (a dict; edit it freely)
      sc.name, sc.description
      sc.machine              a preset name or an inline machine dict; sc.inline_machine() turns a
                              preset into an editable dict
      sc.workload, sc.params  live dicts (tasks, placement, loop, warmup, duration, cpus; parameters)
      sc.strategies           strategy names; sc.strategy(name) its live dict,
                              sc.strategy(name, resolved=True) a copy with `extends` applied
      sc.variants             variant names ('default' first); sc.variant(name) its live dict
      sc.expect               the expected figures as the loader parsed them (list of dicts)
      sc.get(path), sc.set(path, value), sc.update({path: value, ...}), sc.delete(path)
                              by dotted path ("strategies.baseline.locks.files_lock.kind") or tuple
      sc.derive(name, from_=..., changes={...})   a new strategy that `extends` another
      sc.copy(), sc.to_yaml(), sc.save(path), sc.validate()

    set/update/delete/derive validate at once and undo the change if it is
    rejected. Direct edits of the dicts are validated at the next run (or
    validate()). Runs build the native scenario only when the data changed.

    Run:
      sc.run_point(strategy, cpus, variant="default", seed=1)   -> PointResult
      sc.sweep(strategies=None, cpus=None, variants=None, reps=1, seed=1, jobs=0, progress=True) -> Sweep
      sc.score(...)           every expected figure: reported vs predicted (DataFrame)
      sc.compare(base, new, cpus=None, reps=3)   the LKP-style table (vfssim.compare)
      sc.next_bottleneck(strategy, cpus)         the bottleneck, and the next one once it is gone
    """

    # -- construction -------------------------------------------------------

    def __init__(self, data, *, name="<dict>", base_dir=None):
        """Wraps a scenario dict as it is (prefer load/from_yaml/from_dict, which validate it).

        name: what error messages call the scenario; base_dir: where machine
        presets are looked up first (in base_dir/../machines and base_dir/machines)."""
        if not isinstance(data, dict):
            raise TypeError(f"a scenario is a dict, not {type(data).__name__}")
        self._data = data
        self._name = str(name)
        self._base_dir = str(base_dir) if base_dir is not None else None
        self._text = None  # the YAML text the data came from, while the data is unchanged
        self._text_data = None
        self._native = None  # the last native build and the data it was built from
        self._native_data = None

    def _with_text(self, text, native=None):
        self._text, self._text_data = text, copy.deepcopy(self._data)
        if native is not None:
            self._native, self._native_data = native, copy.deepcopy(self._data)
        return self

    @classmethod
    def load(cls, path):
        """Loads and validates a scenario file (error positions are the file's lines)."""
        path = os.fspath(path)
        native = _vfssim.load_scenario_file(path)
        data = _safe_load(native.text, path)
        return cls(data, name=path, base_dir=os.path.dirname(os.path.abspath(path)))._with_text(native.text, native)

    @classmethod
    def from_yaml(cls, text, name="<string>", base_dir=None):
        """Parses and validates scenario YAML text. `name` stands for the file in error
        messages; machine presets are looked up beside base_dir (if given), in
        $VFSSIM_MACHINES and in the source tree."""
        if not isinstance(text, str):
            raise TypeError(f"scenario text is a str, not {type(text).__name__}")
        # The engine's loader reads the text first: it is the one to refuse
        # what Python's YAML would take and then choke on (an alias that
        # contains itself, nesting too deep, a second document).
        dirs = [] if not base_dir else [os.path.join(base_dir, "..", "machines"), os.path.join(base_dir, "machines")]
        try:
            native = _vfssim.load_scenario_string(text, name, dirs)
        except ScenarioError as e:
            raise _explain_error(e, text, edited=False, had_text=True) from None
        sc = cls(_safe_load(text, name), name=name, base_dir=base_dir)._with_text(text)
        sc._native, sc._native_data = native, copy.deepcopy(sc._data)
        return sc

    @classmethod
    def from_dict(cls, data, name=None, base_dir=None):
        """Validates a scenario given as a dict (deep-copied: later edits of `data` do not
        affect the scenario). Tuples, numpy numbers and paths are converted to plain data."""
        if not isinstance(data, dict):
            raise TypeError(f"a scenario is a dict, not {type(data).__name__}")
        if name is None:
            name = f"<dict {data.get('scenario', '')}>".replace(" >", ">")
        sc = cls(plain(data), name=name, base_dir=base_dir)
        sc.validate()
        return sc

    def copy(self, name=None):
        """An independent deep copy (optionally renamed: its `scenario:` name)."""
        other = Scenario(copy.deepcopy(self._data), name=self._name, base_dir=self._base_dir)
        if self._text is not None:
            other._text, other._text_data = self._text, copy.deepcopy(self._text_data)
        if self._native is not None and same(self._data, self._native_data):
            other._native, other._native_data = self._native, copy.deepcopy(self._native_data)
        if name is not None:
            other.name = name
        return other

    # -- the native scenario --------------------------------------------------

    def _machine_dirs(self):
        if not self._base_dir:
            return []
        return [os.path.join(self._base_dir, "..", "machines"), os.path.join(self._base_dir, "machines")]

    def _edited(self):
        return not (self._text is not None and same(self._data, self._text_data))

    def to_yaml(self):
        """The YAML text the loader gets: the original text while the data is unchanged,
        else the data dumped (block style, keys in their order). Error lines refer to it."""
        if not self._edited():
            return self._text
        return yaml.safe_dump(plain(self._data), sort_keys=False, allow_unicode=True, default_flow_style=False,
                              width=110)

    def save(self, path):
        """Writes to_yaml() to a file."""
        pathlib.Path(path).write_text(self.to_yaml())

    def validate(self):
        """Builds the scenario with the C++ loader if the data changed since the last
        build; raises ScenarioError if it is invalid. Returns self."""
        self.native
        return self

    @property
    def native(self):
        """The validated native scenario (_vfssim.NativeScenario), rebuilt when the data changed."""
        if self._native is not None and same(self._data, self._native_data):
            return self._native
        edited = self._edited()
        text = self.to_yaml()
        name = f"{self._name} (edited)" if edited and self._text is not None else self._name
        try:
            native = _vfssim.load_scenario_string(text, name, self._machine_dirs())
        except ScenarioError as e:
            raise self._explain(e, text, edited) from None
        self._native = native
        self._native_data = copy.deepcopy(self._data)
        return native

    def _explain(self, err, text, edited):
        return _explain_error(err, text, edited, self._text is not None)

    # -- inspection -------------------------------------------------------------

    @property
    def data(self):
        """The whole scenario document as a dict (live: edits change the scenario)."""
        return self._data

    @property
    def name(self):
        """The scenario's name (`scenario:`)."""
        return self._data.get("scenario")

    @name.setter
    def name(self, value):
        self._data["scenario"] = value

    @property
    def description(self):
        """The scenario's description."""
        return self._data.get("description", "")

    @property
    def path(self):
        """The file the scenario came from, or the name given at creation."""
        return self._name

    @property
    def machine(self):
        """The machine: a preset name (str) or an inline machine dict (live). Assign either."""
        return self._data.get("machine")

    @machine.setter
    def machine(self, value):
        self._data["machine"] = plain(value)

    def inline_machine(self):
        """Replaces a machine preset name by the preset's contents (a dict, same form as
        scenarios/machines/*.yaml) and returns that dict to edit; returns the inline
        machine dict as is when there already is one. A scenario on the code-path library
        keeps the preset's family of values: `use:` names it (an inline machine has none)."""
        m = self._data.get("machine")
        if isinstance(m, dict):
            return m
        dirs = self._machine_dirs()
        path = _vfssim.find_machine_file(str(m), dirs)
        if not path:
            raise ValueError(f"machine preset {m!r} not found (looked in {dirs}, $VFSSIM_MACHINES and the "
                             "source tree's scenarios/machines)")
        data = _safe_load(pathlib.Path(path).read_text(), path)
        self._data["machine"] = data
        self._name_library_family(str(m))
        return data

    def _name_library_family(self, preset):
        """A scenario on the code-path library takes its values from the preset's family; once the
        machine is inline (no preset), `use:` names that family (use: {kernel: V, family: F})."""
        use = self._data.get("use")
        if use is None or (isinstance(use, dict) and "family" in use):
            return
        families = pathlib.Path(_vfssim.scenarios_dir()) / "kernel" / "families.yaml"
        if not families.exists():
            return
        table = (_safe_load(families.read_text(), str(families)) or {}).get("families") or {}
        family = next((f for f, e in table.items() if preset in ((e or {}).get("machines") or [])), None)
        if family is None:
            return
        if isinstance(use, str):  # kernel/VERSION
            self._data["use"] = {"kernel": use.split("/", 1)[-1], "family": family}
        else:
            use["family"] = family

    def machine_info(self, variant="default"):
        """The resolved machine and workload of a variant: machine name, machine_cpus, the
        default cpus list, loop, tasks, placement, warmup/duration (us), parameter values."""
        return self.native.variant_info(variant)

    @property
    def workload(self):
        """The workload dict (live): tasks, placement, loop, warmup, duration, cpus."""
        return self._data["workload"]

    @property
    def params(self):
        """The parameters dict (live; created empty when the scenario has none)."""
        if "params" not in self._data:
            self._data["params"] = {}
            if self._text_data is not None and "params" not in self._text_data:
                self._text_data["params"] = {}  # an empty mapping changes nothing
            if self._native_data is not None and "params" not in self._native_data:
                self._native_data["params"] = {}
        return self._data["params"]

    @property
    def strategies(self):
        """Strategy names, in file order."""
        return list(self._data.get("strategies", {}))

    def strategy(self, name, resolved=False):
        """A strategy's dict as written (live, editable), or with resolved=True a copy with
        `extends` applied (its locks, lines, seqcounts, dentries and ops merged over the parent's,
        kernel and dentry_lock inherited)."""
        strategies = self._data.get("strategies", {})
        if name not in strategies:
            raise KeyError(f"scenario {self.name!r} has no strategy {name!r} (it has: {', '.join(strategies)})")
        if not resolved:
            return strategies[name]
        # The C++ loader's resolution (models/scenario/loader.cpp), never a second one here.
        return _safe_load(self.native.resolved_text, self._name)["strategies"][name]

    def locks(self, strategy):
        """The locks of a strategy as the loader resolved them (extends applied, dentries'
        d_locks included): {name: {"kind", "scope"}}."""
        return {k: {"kind": v["kind"], "scope": v["scope"]}
                for k, v in self.native.strategy_info(strategy)["locks"].items()}

    @property
    def variants(self):
        """Variant names: 'default' (the scenario as written) first, then the file's."""
        return ["default"] + list(self._data.get("variants") or {})

    def variant(self, name):
        """A variant's dict (live): description, params, machine, loop, cpus, tasks."""
        if name == "default":
            raise KeyError("the 'default' variant is the scenario as written: edit sc.params and sc.workload")
        variants = self._data.get("variants") or {}
        if name not in variants:
            raise KeyError(f"scenario {self.name!r} has no variant {name!r} (it has: {', '.join(self.variants)})")
        return variants[name]

    @property
    def expect(self):
        """The expected figures as the loader parsed them: a list of dicts with figure, kind
        ('value' | 'ratio' | 'change'), metric, new/base ({strategy, variant, cpus}; base None for
        a value), reported (a change as the ratio 1 + change), tolerance, fitted, source, line."""
        return self.native.expectations()

    # -- editing by path --------------------------------------------------------

    @staticmethod
    def _walk(root, path, create):
        """Resolves `path` in `root` to (container, key). A dotted string is split on '.',
        joining parts back where a key itself contains dots ('v3.11')."""
        if isinstance(path, (tuple, list)):
            parts = list(path)
            node = root
            for i, p in enumerate(parts[:-1]):
                node = Scenario._child(node, p, create, parts[i + 1])
            return node, Scenario._key(node, parts[-1])
        parts = str(path).split(".")
        node = root
        i = 0
        while True:
            if isinstance(node, list):
                key, j = Scenario._key(node, parts[i]), i + 1
            else:
                if not isinstance(node, dict):
                    raise KeyError(f"{path!r}: {'.'.join(parts[:i])!r} is a {type(node).__name__}, not a mapping")
                j = next((j for j in range(len(parts), i, -1) if ".".join(parts[i:j]) in node), None)
                if j is None:  # a new key: the rest, unless it continues into new mappings
                    j = i + 1 if create == "nested" else len(parts)
                key = ".".join(parts[i:j])
            if j == len(parts):
                return node, key
            node = Scenario._child(node, key, create, parts[j])
            i = j

    @staticmethod
    def _key(node, p):
        if isinstance(node, list):
            try:
                return int(p)
            except (TypeError, ValueError):
                raise KeyError(f"{p!r} is not an index of a list") from None
        return p

    @staticmethod
    def _child(node, key, create, next_part):
        key = Scenario._key(node, key)
        try:
            return node[key]
        except (KeyError, IndexError):
            if not create or isinstance(node, list):
                raise KeyError(f"no {key!r} here") from None
            node[key] = {}
            return node[key]

    def get(self, path, default=_MISSING):
        """The value at a dotted path ('strategies.baseline.locks.files_lock.kind', list
        indices as numbers: 'workload.cpus.0') or a tuple of keys."""
        try:
            node, key = self._walk(self._data, path, create=False)
            return node[key]
        except (KeyError, IndexError, TypeError):
            if default is not _MISSING:
                return default
            raise KeyError(f"scenario {self.name!r} has nothing at {path!r}") from None

    def set(self, path, value, validate=True):
        """Sets the value at a path (missing mappings on the way are created) and, unless
        validate=False, validates the scenario at once: a rejected change is undone and
        raises ScenarioError."""
        self.update({path: value}, validate=validate)

    def update(self, changes, validate=True):
        """Applies {path: value, ...} together, then validates once (undoing all of them
        if the result is rejected)."""
        undo = []
        try:
            for path, value in changes.items():
                self._copy_inherited_entry(path, undo)
                node, key = self._walk(self._data, path, create="nested")
                old = node[key] if (isinstance(node, list) or key in node) else _MISSING
                undo.append((node, key, old))
                node[key] = plain(value)
            if validate:
                self.validate()
        except BaseException:
            for node, key, old in reversed(undo):
                if old is _MISSING:
                    del node[key]
                else:
                    node[key] = old
            raise

    def _copy_inherited_entry(self, path, undo):
        """A path inside an entry of a strategy's locks, lines, seqcounts, pools, dentries or ops
        that the file does not write (it comes from the library's `use:` or from `extends`)
        first copies that entry from the resolved strategy, as derive() does and as the CLI's
        --set does: setting one field keeps the entry's others. Each addition goes on `undo`."""
        strategies = self._data.get("strategies")
        if not isinstance(strategies, dict):
            return
        tuple_path = isinstance(path, (tuple, list))
        head = list(path)[:3] if tuple_path else self._split_in(self._data, path)
        if len(head) < 3 or head[0] != "strategies" or head[2] not in _STRATEGY_MAPS:
            return
        name, section = head[1], head[2]
        own = strategies.get(name)
        if not isinstance(own, dict) or (section in own and not isinstance(own[section], dict)):
            return
        try:
            resolved = (self.strategy(name, resolved=True) or {}).get(section) or {}
        except Exception:  # a scenario that does not load yet: nothing resolved to copy from
            return
        if tuple_path:
            inside = list(path)[3:]
        else:
            rest = str(path).split(".")[len(".".join(head[:3]).split(".")):]
            inside = self._split_in(resolved, ".".join(rest))
        if len(inside) < 2:
            return
        entry = inside[0]
        if entry in own.get(section, {}) or entry not in resolved:
            return
        if section not in own:
            undo.append((own, section, _MISSING))
            own[section] = {}
        undo.append((own[section], entry, _MISSING))
        own[section][entry] = copy.deepcopy(resolved[entry])

    def delete(self, path, validate=True):
        """Removes the key (or list item) at a path; validated like set()."""
        node, key = self._walk(self._data, path, create=False)
        old = node[key]
        del node[key]
        if validate:
            try:
                self.validate()
            except BaseException:
                if isinstance(node, list):
                    node.insert(key, old)
                else:
                    node[key] = old
                raise

    def derive(self, name, from_, changes=None, description=None):
        """Adds strategy `name` that `extends` strategy `from_`, with `changes` applied, and
        validates the scenario (undone if rejected). Returns the new strategy's dict.

        changes: {path: value} with paths inside the strategy, e.g.
          {"locks.files_lock.kind": "mcs"}               copies from_'s files_lock entry, sets kind
          {"locks.files_lock": {"kind": "mcs", "scope": "cpu"}}   replaces the entry
          {"ops.open": [...]}                            replaces an op
          {"ops.open.1.hold": "20ns"}                    copies from_'s op, changes one step
          {"kernel.hz": 250}
        As `extends` replaces whole entries, a path that goes inside an entry of locks, lines,
        seqcounts, dentries or ops first copies that entry from the resolved parent."""
        strategies = self._data.setdefault("strategies", {})
        if name in strategies:
            raise ValueError(f"scenario {self.name!r} already has a strategy {name!r}")
        parent = self.strategy(from_, resolved=True)
        new = {"extends": from_}
        if description is not None:
            new["description"] = description
        for path, value in (changes or {}).items():
            parts = self._split_in(parent, path)
            if len(parts) > 2 and parts[0] in _STRATEGY_MAPS:
                section, entry = parts[0], parts[1]
                if entry not in new.get(section, {}):
                    if entry not in parent.get(section, {}):
                        raise KeyError(f"strategy {from_!r} has no {section[:-1]} {entry!r} to change")
                    new.setdefault(section, {})[entry] = copy.deepcopy(parent[section][entry])
            node = new
            for p in parts[:-1]:
                node = node[p] if isinstance(node, list) else node.setdefault(p, {})
            node[parts[-1]] = plain(value)
        strategies[name] = new
        try:
            self.validate()
        except BaseException:
            del strategies[name]
            raise
        return new

    @staticmethod
    def _split_in(root, path):
        """Splits a path as _walk would resolve it in `root` (keys with dots kept whole)."""
        if isinstance(path, (tuple, list)):
            return list(path)
        parts = str(path).split(".")
        out, node, i = [], root, 0
        while i < len(parts):
            if isinstance(node, list):
                key, j = int(parts[i]), i + 1
            else:
                cand = node if isinstance(node, dict) else {}
                j = next((j for j in range(len(parts), i, -1) if ".".join(parts[i:j]) in cand), i + 1)
                key = ".".join(parts[i:j])
            out.append(key)
            try:
                node = node[key]
            except (KeyError, IndexError, TypeError):
                node = {}
            i = j
        return out

    # -- running ------------------------------------------------------------------

    def run_point(self, strategy, cpus, variant="default", seed=1, *, rep=0, free_locks=(), private_lines=()):
        """Simulates one point (the same numbers as that point of sweep(seed=seed)) and returns a
        PointResult. free_locks: locks made free (no cost, no exclusion); private_lines: cache lines
        made private per task: the what-ifs of a design review."""
        d = _vfssim.run_point(self.native, strategy, whole(cpus, "cpus"), variant, whole(seed, "seed"), whole(rep, "rep"),
                              names(free_locks, "free_locks"), names(private_lines, "private_lines"))
        return PointResult(d)

    def _variants_arg(self, variants):
        if variants is None:
            return []
        if isinstance(variants, str):
            return self.variants if variants == "all" else [variants]
        return list(variants)

    def sweep(self, strategies=None, cpus=None, variants=None, reps=1, seed=1, jobs=0, progress=True, executor=None,
              uncertainty=0):
        """Runs every strategy x variant x CPU count x replication, in parallel on `jobs` workers
        (0: all cores) with the GIL released, and returns a Sweep.

        strategies: names (or one name); None: all. cpus: CPU counts; None: each variant's list.
        variants: names, 'all', or None (the default variant). reps: replications per point
        (seeds derived from `seed`; the same seed gives the same numbers whatever `jobs`).
        progress: True shows a tqdm bar for long sweeps; a callable is called as
        progress(done, total, info) once per finished point (info: strategy, variant, cpus,
        rep, ops_per_sec); an exception it raises (or Ctrl-C) stops the sweep and is raised.
        executor: a concurrent.futures.Executor or a dask.distributed.Client to run the points on
        (one task per point; `jobs` is then unused); the result is byte-identical to a local sweep
        (vfssim.distributed).
        uncertainty: N samples of the scenario's ranges (Latin hypercube, seeded by `seed`; as
        `vfssim run --uncertainty N`): every curve point gets a band {p10, p50, p90} and the
        ranges' Spearman rho with its rate (Sweep.band, Sweep.sensitivity)."""
        if isinstance(strategies, str):
            strategies = [strategies]
        seed, reps, jobs, uncertainty = (whole(seed, "seed"), whole(reps, "reps"), whole(jobs, "jobs", 0),
                                         whole(uncertainty, "uncertainty"))
        args = (names(strategies or [], "strategies"), self._variants_arg(variants),
                [whole(c, f"cpus[{i}]") for i, c in enumerate(cpus or [])], reps, seed)
        callback, close = make_progress(progress, self.name)
        t0 = time.perf_counter()
        try:
            if executor is not None:
                from .distributed import sweep_curve

                curve = sweep_curve(self.native, *args, executor, callback, uncertainty=uncertainty)
            else:
                curve = _vfssim.sweep(self.native, *args, jobs, callback, uncertainty=uncertainty)
        finally:
            close()
        return Sweep(self, curve, seed=seed, reps=reps, wall_seconds=time.perf_counter() - t0)

    def run_points(self, points, seed=1, jobs=0, progress=False, executor=None):
        """Runs independent points in parallel: `points` is a list of (strategy, variant, cpus)
        or (strategy, variant, cpus, rep) tuples or 'strategy[/variant]@cpus' strings; returns
        PointResults in the same order (replication rep of a sweep seeded `seed`). executor: as in
        sweep()."""
        from ._util import parse_point

        specs = []
        for i, p in enumerate(points):
            if isinstance(p, str):
                s, v, c = parse_point(p)
                p = (s, v, c)
            s, v, c, r = (tuple(p) + (0,))[:4]
            for field, name in (("strategy", s), ("variant", v)):
                if not isinstance(name, str):
                    raise TypeError(f"the {field} of point {i} must be a name (str), not {type(name).__name__} {name!r}")
            specs.append((s, v, whole(c, f"the cpus of point {i}"), whole(r, f"the rep of point {i}"), [], []))
        seed, jobs = whole(seed, "seed"), whole(jobs, "jobs", 0)
        callback, close = make_progress(progress, self.name)
        try:
            if executor is not None:
                from .distributed import run_points

                natives = run_points(self.native, specs, seed, executor, callback)
                return [PointResult(n.to_dict()) for n in natives]
            out = _vfssim.run_points(self.native, specs, seed, jobs, callback)
        finally:
            close()
        return [PointResult(d) for d in out]

    def score(self, seed=1, reps=1, jobs=0, progress=False, figures=None):
        """Scores the expected figures (expect:) against the model, as `vfssim validate` does:
        vfssim.score.score(self, ...). Returns a DataFrame, one row per figure: figure, kind,
        metric, new, base, reported, bound, predicted, error, tolerance, within, direction_ok, fitted,
        source (see vfssim.score.score)."""
        from .score import score

        return score(self, seed=seed, reps=reps, jobs=jobs, progress=progress, figures=figures)

    def compare(self, base, new, cpus=None, reps=3, variant="default", seed=1, jobs=0):
        """vfssim.compare(self, base, new, ...): the LKP-style comparison table."""
        from .compare import compare

        return compare(self, base, new, cpus=cpus, reps=reps, variant=variant, seed=seed, jobs=jobs)

    def next_bottleneck(self, strategy, cpus, variant="default", seed=1, reps=1, jobs=0):
        """Where a point spends most time synchronizing and where it would next: runs the point
        (reps replications), takes its bottleneck (the lock or cache line with the most CPU time
        spent waiting, spinning or moving its line), runs it again with that lock made free (no
        cost, no exclusion) or that line private, and reports the bottleneck of that run — the
        engine's `vfssim run --next-bottleneck`. Returns a dict: strategy, variant, cpus,
        ops_per_sec, bottleneck, ops_per_sec_without, next_bottleneck (bottlenecks as
        {"name", "kind", "share"} or None)."""
        reps = whole(reps, "reps", 1)
        first = self.run_points([(strategy, variant, cpus, r) for r in range(reps)], seed=seed, jobs=jobs)
        (what_if,) = _vfssim.next_bottlenecks(self.native, [[p._native for p in first]], int(jobs))
        return {"strategy": strategy, "variant": variant, "cpus": cpus,
                "ops_per_sec": sum(p.ops_per_sec for p in first) / reps, **what_if}

    # -- display ------------------------------------------------------------------

    def __repr__(self):
        m = self.machine if isinstance(self.machine, str) else (self.machine or {}).get("machine", "inline")
        return (f"<Scenario {self.name!r} on {m}: strategies {self.strategies}, variants {self.variants}"
                f"{', edited' if self._text is not None and self._edited() else ''}>")

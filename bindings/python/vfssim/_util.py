"""Helpers shared by the vfssim modules (not public API)."""
import math
import numbers
import pathlib
import re

import yaml

from ._vfssim import ScenarioError

_POINT = re.compile(r"^\s*([^/@\s]+)(?:/([^@\s]+))?@(\d+)\s*$")


def parse_point(text):
    """'strategy[/variant]@cpus' -> (strategy, variant, cpus)."""
    m = _POINT.match(str(text))
    if not m:
        raise ValueError(f"point {text!r} is not STRATEGY[/VARIANT]@CPUS")
    return m.group(1), m.group(2) or "default", int(m.group(3))


def point_name(strategy, variant, cpus):
    """(strategy, variant, cpus) -> 'strategy[/variant]@cpus'."""
    return f"{strategy}{'' if variant == 'default' else '/' + variant}@{cpus}"


def series_name(strategy, variant):
    """One curve's label: 'strategy' or 'strategy/variant'."""
    return strategy if variant == "default" else f"{strategy}/{variant}"


def whole(value, field, lo=None):
    """`value` as an int, for the argument `field`: a whole number (an int, or a float with no
    fraction); a bool, a fraction or a string is refused, naming the field, rather than cut to
    an int (1.5 CPUs would run 1)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{field} must be a whole number, not {type(value).__name__} {value!r}")
    if isinstance(value, numbers.Integral):
        v = int(value)
    elif math.isfinite(value) and float(value).is_integer():
        v = int(value)
    else:
        raise ValueError(f"{field} must be a whole number, not {value!r}")
    if lo is not None and v < lo:
        raise ValueError(f"{field} must be at least {lo}, not {v}")
    return v


def names(value, field):
    """`value` as a list of names (str), for the argument `field`: one string would be read as
    its characters, so it is refused, naming the field, as is an element that is not a str."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{field} must be a list of names, not the string {value!r}")
    try:
        out = list(value)
    except TypeError:
        raise TypeError(f"{field} must be a list of names, not {type(value).__name__} {value!r}") from None
    for i, v in enumerate(out):
        if not isinstance(v, str):
            raise TypeError(f"{field}[{i}] must be a name (str), not {type(v).__name__} {v!r}")
    return out


def _number(text):
    """'-48.8%' -> -0.488, '1.2' -> 1.2, 25 -> 25.0."""
    if isinstance(text, numbers.Real):
        return float(text)
    s = str(text).strip()
    if s.endswith("%"):
        return float(s[:-1]) / 100
    return float(s)


def normalize_figure(fig):
    """An expected figure as vfssim.Scenario.expect gives it, from either that
    form or the raw `expect:` entry of a scenario file (dict)."""
    if "kind" in fig and isinstance(fig.get("new"), dict):
        return {"bound": "about", **fig}
    out = {"figure": fig.get("figure", ""), "metric": fig.get("metric", "ops_per_sec"),
           "fitted": bool(fig.get("fitted", False)), "source": fig.get("source", "")}
    for kind in ("value", "ratio", "change"):
        if kind in fig:
            out["kind"] = kind
            spec = fig[kind]
            s, v, c = parse_point(spec["point"] if kind == "value" else spec["new"])
            out["new"] = {"strategy": s, "variant": v, "cpus": c}
            if kind == "value":
                out["base"] = None
            else:
                s, v, c = parse_point(spec["base"])
                out["base"] = {"strategy": s, "variant": v, "cpus": c}
            break
    else:
        raise ValueError(f"figure {fig.get('figure')!r} has no value, ratio or change")
    reported = _number(fig.get("reported", math.nan))
    out["reported"] = 1 + reported if out["kind"] == "change" else reported
    out["tolerance"] = _number(fig.get("tolerance", 0.25))
    out["bound"] = fig.get("bound", "about")
    return out


def plain(value):
    """Deep copy of `value` as YAML-safe plain data: dicts, lists, str, int,
    float, bool, None (tuples become lists, numpy scalars Python numbers,
    paths strings)."""
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, (int, float, bool)) else k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (str, bool)) or value is None:
        return value
    if isinstance(value, pathlib.PurePath):
        return str(value)
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        return value.item()
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(f"{type(value).__name__} value {value!r} cannot go in a scenario "
                    "(use dicts, lists, strings, numbers, booleans)")


def same(a, b):
    """Deep equality that also compares types (True != 1, 1 != 1.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def key_path_at(text, line, column):
    """The path of keys (and list indices) of the YAML node at a 1-based
    line and column of `text`, e.g. ('strategies', 'baseline', 'locks',
    'files_lock', 'kind'); None when the text is not YAML."""
    if not line:
        return None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    target = (line - 1, max(column - 1, 0))

    def inside(n):
        start = (n.start_mark.line, n.start_mark.column)
        end = (n.end_mark.line, n.end_mark.column)
        return start <= target < end or start == target

    path = []
    while node is not None:
        if (node.start_mark.line, node.start_mark.column) == target and path:
            return tuple(path)  # the mark is the collection itself, not its first key
        nxt = None
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if inside(k):
                    return tuple(path + [k.value])
                if inside(v):
                    path.append(k.value)
                    nxt = v
                    break
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                if inside(v):
                    path.append(i)
                    nxt = v
                    break
        node = nxt
    return tuple(path)


def dotted(path):
    """('strategies', 'v3.11', 'locks') -> 'strategies."v3.11".locks'."""
    if path is None:
        return None
    parts = []
    for p in path:
        s = str(p)
        parts.append(f'"{s}"' if "." in s else s)
    return ".".join(parts)


def scenario_error(message, *, file="", line=0, column=0, problem="", expected="", key=None, text=None):
    """A vfssim.ScenarioError with its attributes set."""
    err = ScenarioError(message)
    err.file, err.line, err.column = file, line, column
    err.problem, err.expected = problem, expected
    err.key, err.text = key, text
    return err


def make_progress(progress, desc):
    """(callback, close) for the native progress argument: True shows a tqdm
    bar on stderr (when tqdm is installed, after 0.5 s), a callable is
    called as progress(done, total, info), False/None shows nothing."""
    if progress is None or progress is False:
        return None, lambda: None
    if callable(progress):
        return progress, lambda: None
    if progress is not True:
        raise TypeError("progress must be True, False, None or a callable(done, total, info)")
    try:
        from tqdm import tqdm
    except ImportError:  # progress is a nicety
        return None, lambda: None
    bar = None

    def callback(done, total, info):
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, desc=desc, unit="pt", delay=0.5, leave=False)
        bar.set_postfix_str(point_name(info["strategy"], info["variant"], info["cpus"]), refresh=False)
        bar.update(done - bar.n)

    def close():
        if bar is not None:
            bar.close()

    return callback, close

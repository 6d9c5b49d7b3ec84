#!/usr/bin/env python3
"""Structure-aware scenario generator: random valid-ish scenarios for the fuzzers and the property tests.

    scripts/gen_scenarios.py OUT_DIR [--count N] [--seed S] [--break P]

Writes N scenario files (gen-0000.yaml, ...) built from the scenario format's own registries: the
lock kinds and the step kinds with their keys are read from docs/scenario-format.md, whose tables
unit tests check against the C++ registries (models/kernel/lock_kinds.cpp, models/scenario/steps.cpp),
so a new kind or key reaches the generator without editing it. Most files are valid; with
probability P (default 0.3) one element of a file is broken (a name, a number, a key, a type), so that
the loader's refusals are exercised next to the engine. Deterministic for a seed.

scripts/test.sh writes a batch into the fuzzers' corpus (both libFuzzer targets start from it);
tests/python/test_mutations.py runs a batch through the CLI.
"""
import argparse
import pathlib
import random
import re

import yaml  # python3-yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
PRESETS = sorted(p.stem for p in (ROOT / "scenarios" / "machines").glob("*.yaml"))


def registries():
    """(lock kinds, {step kind: its keys}) from the docs' registry-checked tables."""
    doc = (ROOT / "docs" / "scenario-format.md").read_text()
    para = doc[doc.index("Lock kinds (one row each"):]
    para = para[:para.index("`mode: read`")]
    kinds = re.findall(r"`([a-z_]+)`", para)
    steps_section = doc[doc.index("\n## Steps"):doc.index("\n## Expected figures")]
    steps = {}
    for row in re.findall(r"\n\| `([a-z_]+):[^\n]*", steps_section):
        steps.setdefault(row, [])
    for line in steps_section.splitlines():
        m = re.match(r"\| `([a-z_]+):", line)
        if m:
            steps[m.group(1)] = re.findall(r"`([a-z_]+):", line.split("|")[1])[1:]
    return [k for k in kinds if k != "models"], steps


def behaviours():
    """{kind: [behaviour names]} from the docs' behaviour table (checked against lock_behaviours())."""
    doc = (ROOT / "docs" / "scenario-format.md").read_text()
    table = doc[doc.index("| kind | behaviour |"):]
    table = table[:table.index("\n\n")]
    out = {}
    for kind, name in re.findall(r"\n\| ([a-z]+) \| (v[0-9.]+) \|", table):
        out.setdefault(kind, []).append(name)
    return out


LOCK_KINDS, STEP_KINDS = registries()
BEHAVIOURS = behaviours()
SPINLOCKS = [k for k in ("tas", "ticket", "mcs", "qspinlock", "cna") if k in LOCK_KINDS]
READ_WRITE = [k for k in ("rwsem", "rwlock", "brlock") if k in LOCK_KINDS]
SCOPES = ["global", "node", "cpu", "process", "task", "object"]  # object: with objects and pick (Gen.scoped)
PICKS = ["task", "uniform", "round_robin", "zipf(1.1)", "zipf(0.5)"]


def time(rng):
    unit = rng.choice(["ps", "ns", "ns", "ns", "us"])
    value = rng.choice([0, 1, 5, 20, 50, 100, 250, 1000])
    if unit == "us":
        value = rng.choice([0, 1, 2])
    if rng.random() < 0.15:
        return {"exp": f"{max(value, 1)}{unit}"}
    if value and rng.random() < 0.08:  # a range (issue 29: ranges), shorthand or mapping
        if rng.random() < 0.5:
            return f"{value}{unit} ± {value // 2}{unit}"
        return {"estimate": f"{value}{unit}", "range": [f"{value // 2}{unit}", f"{value * 2}{unit}"], "why": "generated"}
    if rng.random() < 0.1:
        return {"uniform": [f"{value}{unit}", f"{value * 2 + 1}{unit}"]}
    return f"{value}{unit}"


class Gen:
    def __init__(self, rng):
        self.rng = rng

    def scoped(self):
        """{scope: S}, with objects and pick under scope: object."""
        d = {"scope": self.rng.choice(SCOPES)}
        if d["scope"] == "object":
            d["objects"] = self.rng.choice([1, 3, 16, "$files"])
            d["pick"] = self.rng.choice(PICKS)
        return d

    def lock_decl(self, kind):
        d = {"kind": kind, **self.scoped()}
        if kind in ("mutex", "rwsem"):
            d["spin"] = self.rng.choice([True, False])
            if not d["spin"] or self.rng.random() < 0.5:
                d["wake"] = f"{self.rng.choice([1, 3, 5])}us"
            if self.rng.random() < 0.4:  # by kernel version: always with a wake-up latency
                d["behaviour"] = self.rng.choice(BEHAVIOURS[kind])
                d.setdefault("wake", f"{self.rng.choice([1, 3, 5])}us")
                if self.rng.random() < 0.3:
                    d["handoff"] = self.rng.choice([True, False])
                if kind == "rwsem" and self.rng.random() < 0.3:
                    d["wake_readers"] = self.rng.choice(["leading", "all"])
                if kind == "rwsem" and d["spin"] and self.rng.random() < 0.2:
                    d["reader_spin" if self.rng.random() < 0.5 else "reader_steal"] = False
        if kind == "rwlock" and self.rng.random() < 0.5:
            d["fair"] = self.rng.choice([True, False])
        if kind == "cna" and self.rng.random() < 0.5:
            d["threshold"] = f"{self.rng.choice([10, 100, 1000])}us"
        return d

    def strategy(self, n_ops):
        rng = self.rng
        locks = {f"l{i}": self.lock_decl(rng.choice(LOCK_KINDS)) for i in range(rng.randint(1, 3))}
        spin = {f"s{i}": self.lock_decl(rng.choice(SPINLOCKS)) for i in range(rng.randint(1, 2))}
        locks.update(spin)
        lines = {f"c{i}": self.scoped() for i in range(rng.randint(1, 2))}
        lines["pc"] = {"scope": "cpu"}
        lines["shared"] = {"scope": "global"}
        if rng.random() < 0.3:  # an array's elements packed to a line: N tasks (or CPUs) share one
            lines["packed"] = {"scope": rng.choice(["task", "cpu"]), "shared_by": rng.choice([1, 2, 8])}
        s = {"kernel": {"hz": rng.choice([100, 250, 1000])}, "locks": locks, "lines": lines,
             "seqcounts": {"q": self.scoped()}}
        dentries, pools = [], []
        if rng.random() < 0.4:  # a path to walk: each dentry brings its d_lock, d_count and d_seq
            dentries = [f"d{i}" for i in range(rng.randint(1, 4))]
            s["dentries"] = {d: self.scoped() for d in dentries}
            s["dentry_lock"] = rng.choice(SPINLOCKS)
        if rng.random() < 0.3:  # a zone's free pages between two watermarks
            pools = ["fp"]
            low = rng.choice([0, 8, 64])
            s["pools"] = {"fp": {"scope": rng.choice(["global", "node"]), "low": low, "high": low + rng.choice([1, 64]),
                                 "refill": rng.choice(["$refill", 0, 1000, 2000000])}}
        self.names = {"locks": list(locks), "spin": list(spin), "lines": [k for k in lines if k != "pc"],
                      "rw": [k for k, d in locks.items() if d["kind"] in READ_WRITE],
                      "callback_spin": [k for k, d in spin.items() if d["scope"] != "object"],  # softirq may spin
                      "dentries": dentries, "pools": pools}
        ops = [f"op{i}" for i in range(n_ops)]
        s["ops"] = {op: self.steps(depth=0, callable_ops=ops[i + 1:], in_rcu=False) for i, op in enumerate(ops)}
        return s

    def steps(self, depth, callable_ops, in_rcu):
        return [self.step(depth, callable_ops, in_rcu) for _ in range(self.rng.randint(1, 4))]

    def step(self, depth, callable_ops, in_rcu):
        rng, n = self.rng, self.names
        kinds = [k for k in STEP_KINDS if (k != "walk" or n["dentries"]) and (k != "alloc" or n["pools"])]
        if depth >= 3:
            kinds = [k for k in kinds if k in ("compute", "atomic", "read", "sleep")]
        if in_rcu:
            kinds = [k for k in kinds if k != "synchronize_rcu"]
        k = rng.choice(kinds)
        st = self.step_of(k, depth, callable_ops, in_rcu)
        if rng.random() < 0.1:  # a switch parameter turns it on or off
            st["if"] = rng.choice(["sw", "!sw"])
        return st

    def step_of(self, k, depth, callable_ops, in_rcu):
        rng, n = self.rng, self.names
        body = lambda: self.steps(depth + 1, callable_ops, in_rcu)  # noqa: E731
        if k == "compute":
            return {"compute": "$think" if rng.random() < 0.2 else time(rng)}
        if k == "walk":
            st = {"walk": [rng.choice(n["dentries"]) for _ in range(rng.randint(1, 4))],
                  "mode": rng.choice(["rcu", "ref"]), "component": time(rng)}
            if rng.random() < 0.5:
                st["refcount"] = rng.choice(["atomic", "lockref"])
            if st["mode"] == "rcu" and rng.random() < 0.4:
                st["refuse_rcu"] = [rng.choice(st["walk"])]
                st["on_refuse"] = rng.choice(["unlazy", "restart"])
                if rng.random() < 0.5:
                    st["refuse_if"] = "sw"
            if rng.random() < 0.3:
                st["keep_last"] = rng.choice([True, False])
            if rng.random() < 0.3:
                st["locked_put"] = rng.choice([True, False])
            for hook in ("permission", "revalidate"):  # what the op does per component (issue 29: hooks)
                if rng.random() < 0.2:
                    st[hook] = {"steps": [rng.choice([{"compute": time(rng)}, {"atomic": rng.choice(n["lines"])},
                                                      {"lock": rng.choice(n["spin"]), "hold": time(rng)}])],
                                "rcu": rng.choice(["run", "refuse"])}
            return st
        if k == "alloc":
            pages = rng.choice([1, 4, 32])
            return {"alloc": "fp", "pages": pages, "reclaimed": pages * rng.choice([1, 4, 8]),
                    "reclaim": [{"lock": rng.choice(n["spin"]), "hold": time(rng)}]}
        if k == "sleep":
            return {"sleep": f"{rng.choice([1, 10, 100])}ns"}
        if k == "lock":
            st = {"lock": rng.choice(n["locks"])}
            if st["lock"] in n["rw"] and rng.random() < 0.5:
                st["mode"] = "read"
            if rng.random() < 0.7:
                st["hold"] = time(rng)
            else:
                st["body"] = body()
            return st
        if k in ("atomic", "read"):
            return {k: rng.choice(n["lines"])}
        if k == "sum":
            return {"sum": "pc"}
        if k == "call":
            return {"call": rng.choice(callable_ops)} if callable_ops else {"compute": "10ns"}
        if k == "repeat":
            return {"repeat": rng.choice([1, 2, 3, 10]), "body": body()}
        if k == "branch":
            st = {"branch": rng.choice([0, 0.1, 0.5, 1]), "then": body()}
            if rng.random() < 0.5:
                st["else"] = body()
            return st
        if k == "percpu_add":
            return {"percpu_add": "shared", "batch": rng.choice([1, 4, 32]), "counter_lock": rng.choice(n["spin"])}
        if k == "lockref":
            return {"lockref": rng.choice(n["spin"]), "hold": time(rng)}
        if k == "dec_and_lock":
            return {"dec_and_lock": rng.choice(n["lines"]), "spinlock": rng.choice(n["spin"]),
                    "last": rng.choice([0, 0.5, 1]), "hold": time(rng)}
        if k == "seq_read":
            st = {"seq_read": "q", "body": body()}
            if rng.random() < 0.5:
                st.update(retries=rng.choice([0, 1, 3]), fallback=rng.choice(n["spin"]))
            return st
        if k == "seq_write":
            lock = rng.choice(n["spin"])  # writers serialised by a lock, as the kernel requires
            return {"lock": lock, "body": [{"seq_write": "q", "body": [{"compute": time(rng)}]}]}
        if k == "rcu_read":
            return {"rcu_read": self.steps(depth + 1, [], True)}
        if k == "synchronize_rcu":
            return {"synchronize_rcu": "normal"}
        if k == "call_rcu":
            if rng.random() < 0.5:
                return {"call_rcu": time(rng)}
            steps = [{"atomic": "shared"}]  # a callback of steps: no sleeping, no per-object declarations
            if n["callback_spin"]:
                steps.append({"lock": rng.choice(n["callback_spin"]), "hold": time(rng)})
            return {"call_rcu": {"steps": steps}}
        return {"compute": "1ns"}  # a kind this generator does not know yet

    def scenario(self, i):
        rng = self.rng
        n_ops = rng.randint(1, 4)
        machine = rng.choice(PRESETS[:4]) if rng.random() < 0.7 else {
            "levels": [{"name": "socket", "count": rng.choice([1, 2]), "transfer": "100ns"},
                       {"name": "core", "count": rng.choice([2, 4]), "transfer": "20ns"},
                       {"name": "thread", "count": rng.choice([1, 2])}],
            "core": "core", "interconnect": {"base": "100ns", "hop": "20ns"},
            "local_hit": "1ns", "local_atomic": "5ns"}
        doc = {"scenario": f"gen-{i}", "machine": machine,
               "workload": {"tasks": rng.choice(["process", "thread"]),
                            "placement": rng.choice(["compact", "spread", "smt-last"]),
                            "loop": ["op0"], "warmup": "1us", "duration": "20us", "cpus": [1, 2, 4]},
               "strategies": {"a": self.strategy(n_ops)}}
        doc["params"] = {"think": rng.choice(["0ns", "20ns", "150ns", "1us"]),
                         "sw": rng.choice([True, False]), "refill": rng.choice([0, 5000, 2000000]),
                         "files": rng.choice([1, 8, 64])}
        if rng.random() < 0.2:  # task roles, each with its own loop
            wl = doc["workload"]
            del wl["loop"]
            ops = list(doc["strategies"]["a"]["ops"])
            wl["roles"] = {"rest": {"loop": [rng.choice(ops)]}}  # one role: any CPU count
            if rng.random() < 0.4:  # and a sized one before it: 2 CPUs at least (a run at 1 is refused at the role)
                wl["cpus"] = [2, 4]
                size = rng.choice([{"count": 1}, {"fraction": 0.5}, {"per_node": 1}])
                wl["roles"] = {"r0": {**size, "loop": [rng.choice(ops)]}, **wl["roles"]}
        if rng.random() < 0.5:
            # l0 replaced by a lock of another kind, of its class where a step reads it (mode: read)
            kinds = READ_WRITE if doc["strategies"]["a"]["locks"]["l0"]["kind"] in READ_WRITE else LOCK_KINDS
            doc["strategies"]["b"] = {"extends": "a", "locks": {"l0": self.lock_decl(rng.choice(kinds))}}
        if rng.random() < 0.4:  # variants: other parameters, another machine (a preset or inline), CPUs
            doc["variants"] = {}
            for j in range(rng.randint(1, 2)):
                v = {"description": f"variant {j}"}
                if rng.random() < 0.6:
                    v["params"] = {"sw": rng.choice([True, False]), "think": rng.choice(["5ns", "300ns"])}
                if rng.random() < 0.4:
                    v["machine"] = rng.choice(PRESETS[:4]) if rng.random() < 0.5 else machine if isinstance(
                        machine, dict) else {"levels": [{"name": "core", "count": 4, "transfer": "30ns"}],
                                             "core": "core", "interconnect": {"base": "40ns", "hop": "10ns"},
                                             "local_hit": "1ns", "local_atomic": "5ns"}
                if rng.random() < 0.3:
                    v["cpus"] = [2] if "roles" in doc["workload"] else [1, 2]  # roles: a CPU for each
                doc["variants"][f"v{j}"] = v
        if rng.random() < 0.4:
            doc["expect"] = self.expect(list(doc["strategies"]), list(doc.get("variants", {})))
            fitted = [f["figure"] for f in doc["expect"] if f.get("fitted") and f.get("reported") is not None
                      and not isinstance(f["reported"], dict)]
            if fitted:  # a constant fitted to it (issue 29: fits): searched, not drawn
                doc["params"]["think"] = {"estimate": "150ns", "range": ["20ns", "1us"], "fit": fitted[0]}
        return doc

    def expect(self, strategies, variants):
        """Figures of every kind on points of this scenario, as `vfssim validate` reads them."""
        rng = self.rng
        pt = lambda: rng.choice(strategies) + (f"/{rng.choice(variants)}" if variants and rng.random() < 0.3 else "") \
            + f"@{rng.choice([1, 2, 4])}"  # noqa: E731
        figures = []
        for j in range(rng.randint(1, 3)):
            kind = rng.choice(["value", "ratio", "change", "curve", "peak"])
            f = {"figure": f"f{j}", "tolerance": rng.choice(["10%", "25%", "50%"]), "source": "generated"}
            if kind == "value":
                f.update(value={"point": pt()}, metric=rng.choice(["ops_per_sec", "us_per_op", "share:_raw_spin_lock"]),
                         reported=rng.choice([1e6, 3.5, 0.4]))
                if rng.random() < 0.2:
                    f["bound"] = rng.choice(["at_least", "at_most"])
            elif kind in ("ratio", "change"):
                f[kind] = {"new": pt(), "base": pt()}
                f["reported"] = rng.choice([1.2, 0.5, 2.0]) if kind == "ratio" else rng.choice(["-48%", "20%"])
            elif kind == "curve":
                f.update(curve={"strategy": rng.choice(strategies)}, metric="ops_per_sec",
                         reported={1: 2e6, 2: 3e6, 4: 1e6})
                if rng.random() < 0.3:
                    f["fitted_at"] = 1
            else:
                f.update(peak={"strategy": rng.choice(strategies), "cpus": [1, 2, 4]},
                         metric=rng.choice(["speedup", "ops_per_sec"]), reported={"cpus": 2})
            if rng.random() < 0.1 and kind != "curve":
                f["fitted"] = True
            figures.append(f)
        return figures


def break_one(doc, rng):
    """One random element of `doc` replaced by something the format does not allow."""
    paths = []

    def walk(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                paths.append(path + [k])
                walk(v, path + [k])
        elif isinstance(node, list):
            for j, v in enumerate(node):
                paths.append(path + [j])
                walk(v, path + [j])

    walk(doc, [])
    path = rng.choice(paths)
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    last = path[-1]
    choice = rng.choice(["drop", "zero", "negative", "huge", "nan", "text", "nul", "list", "unknown-key"])
    if choice == "drop" and isinstance(parent, dict):
        del parent[last]
    elif choice == "unknown-key" and isinstance(parent, dict):
        parent["no_such_key"] = 1
    else:
        parent[last] = {"zero": 0, "negative": -1, "huge": 1e300, "nan": float("nan"), "text": "bäse",
                        "nul": "a\0b", "list": [[1]]}.get(choice, "x")
    return doc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--break", dest="break_p", type=float, default=0.3)
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    for i in range(args.count):
        doc = Gen(rng).scenario(i)
        if rng.random() < args.break_p:
            doc = break_one(doc, rng)
        (out / f"gen-{i:04d}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))


if __name__ == "__main__":
    main()

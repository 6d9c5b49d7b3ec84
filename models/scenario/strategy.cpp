// strategies: locks (kinds from the lock-kind registry), lines, seqcounts,
// pools, dentries, the kernel's HZ, and the ops' steps; `extends`; and the
// check that every name a strategy uses is declared.
#include <algorithm>
#include <functional>
#include <set>
#include <type_traits>

#include "models/hardware/topology.h"
#include "models/kernel/free_lock.h"
#include "models/kernel/lock_kinds.h"
#include "models/scenario/sections.h"
#include "models/scenario/steps.h"

namespace vfssim::models::parse {

namespace {

// A mapping of NAME: {scope: S, ...} declarations (lines, seqcounts, pools);
// `extra` reads the keys beyond scope that `allowed` lets through.
template <class Decl, class Extra>
void parse_scoped(const Reader& r, const YAML::Node& n, const std::string& kind, const std::string& strategy,
                  std::map<std::string, Decl>& out, std::initializer_list<const char*> allowed, Extra extra) {
  r.expect_map(n, kind + "s of strategy '" + strategy + "'");
  for (const auto& kv : n) {
    Decl d;
    d.name = r.name(kv.first, kind + " name");
    d.mark = r.mark(kv.first);
    const std::string what = kind + " '" + d.name + "'";
    r.expect_map(kv.second, what);
    r.only_keys(kv.second, what, allowed);
    if constexpr (std::is_same_v<Decl, LineDecl>) {
      if (const auto on = kv.second["on"]) {  // a line on a lock's word has the lock's scope
        d.on = r.name(on, "lock of " + what);
        for (const char* k : {"scope", "shared_by"})
          if (kv.second[k])
            r.fail(kv.second[k], what + " is on lock '" + d.on + "': its scope is the lock's",
                   std::string("either ") + k + ": or on: LOCK, not both");
        out[d.name] = d;
        continue;
      }
    }
    d.scope = parse_scope(r, r.require(kv.second, "scope", what));
    if constexpr (requires { d.objects; }) d.objects = parse_objects(r, kv.second, d.scope, what);
    extra(d, kv.second, what);
    out[d.name] = d;
  }
}
template <class Decl>
void parse_scoped(const Reader& r, const YAML::Node& n, const std::string& kind, const std::string& strategy,
                  std::map<std::string, Decl>& out) {
  parse_scoped(r, n, kind, strategy, out, {"scope", "objects", "pick"}, [](Decl&, const YAML::Node&, const std::string&) {});
}

// lines: `shared_by: N`, N tasks (scope task, by task index) or N CPUs
// (scope cpu, by CPU number) to one instance: false sharing of an array's
// elements. Elsewhere it would mean nothing: global, node and process
// (in thread mode) are shared already, a process's data is its own
// allocation, and scope object picks its instance per iteration.
auto parse_shared_by(const Reader& r) {
  return [&r](LineDecl& d, const YAML::Node& m, const std::string& what) {
    const auto v = m["shared_by"];
    if (!v) return;
    if (d.scope != Scope::kTask && d.scope != Scope::kCpu)
      r.fail(v, "'shared_by' on " + what + ", whose scope is " + to_string(d.scope) +
                    (d.scope == Scope::kObject ? " (its instance is picked per iteration)" : ""),
             "'shared_by: N' with scope task (N consecutive tasks share a line) or cpu (N consecutive CPUs), or no "
             "'shared_by'");
    d.shared_by = static_cast<int>(r.integer(v, "shared_by of " + what, 1, Topology::kMaxCpus));
  };
}

// pools: NAME: {scope: S, low: PAGES, high: PAGES, refill: PAGES_PER_S}
void parse_pools(const Reader& r, const YAML::Node& n, const std::string& strategy, std::map<std::string, PoolDecl>& out) {
  parse_scoped(r, n, "pool", strategy, out, {"scope", "low", "high", "refill"},
               [&](PoolDecl& d, const YAML::Node& m, const std::string& what) {
                 if (d.scope == Scope::kObject)
                   r.fail(m["scope"], what + " has scope object", "global, node, cpu, process or task: a pool is a zone's");
                 d.low = parse_number_ref(r, r.require(m, "low", what + " (low watermark, pages)"), "low watermark of " + what);
                 d.high = parse_number_ref(r, r.require(m, "high", what + " (high watermark, pages)"),
                                           "high watermark of " + what);
                 d.refill = parse_number_ref(r, r.require(m, "refill", what + " (kswapd's pages per second)"),
                                             "refill rate of " + what);
                 if (d.low.param.empty() && d.high.param.empty() && d.high.value < d.low.value)
                   r.fail(m["high"], "the high watermark of " + what + " is below its low watermark", "low <= high");
               });
}

// dentries: NAME: {scope: S}, each a d_lock of kind dentry_lock (a spinlock
// kind), a d_count line and a d_seq seqcount of that scope.
void parse_dentries(const Reader& r, const YAML::Node& n, const std::string& name, Strategy& s) {
  if (const auto dentries = n["dentries"]) {
    r.expect_map(dentries, "dentries of strategy '" + name + "'");
    const auto kind = r.require(n, "dentry_lock", "strategy '" + name + "' (it declares dentries)");
    const std::string k = r.scalar(kind, "dentry_lock");
    const LockKind* row = find_lock_kind(k);
    if (!row || !row->spinlock) r.fail(kind, "dentry_lock '" + k + "' is not a spinlock kind", lock_kind_names(true));
    for (const auto& kv : dentries) {
      const std::string d = r.name(kv.first, "dentry name");
      const std::string what = "dentry '" + d + "'";
      r.expect_map(kv.second, what);
      r.only_keys(kv.second, what, {"scope", "objects", "pick"});
      const Scope scope = parse_scope(r, r.require(kv.second, "scope", what));
      const ObjectSet objects = parse_objects(r, kv.second, scope, what);  // one draw: d_lock, d_count, d_seq of one dentry
      s.dentries[d] = scope;
      LockDecl l;
      l.name = d + ".d_lock";
      l.kind = k;
      l.scope = scope;
      l.objects = objects;
      l.mark = r.mark(kv.first);
      s.locks[l.name] = l;
      s.lines[d + ".d_count"] = LineDecl{d + ".d_count", scope, "", r.mark(kv.first), objects};
      s.seqcounts[d + ".d_seq"] = SeqDecl{d + ".d_seq", scope, r.mark(kv.first), objects};
    }
  } else if (n["dentry_lock"]) {
    r.fail(n["dentry_lock"], "dentry_lock without dentries", "a 'dentries:' mapping");
  }
}

// behaviour: NAME and the switches (mutex, rwsem): the version's rules,
// then each switch given; any of them selects the model by version.
void parse_behaviour(const Reader& r, const YAML::Node& m, LockDecl& d) {
  const char* switches[] = {"handoff", "reader_spin", "reader_steal", "wake_readers"};
  d.versioned = static_cast<bool>(m["behaviour"]);
  for (const char* k : switches) d.versioned = d.versioned || static_cast<bool>(m[k]);
  if (!d.versioned) return;
  const LockBehaviour* b = nullptr;
  if (m["behaviour"]) {
    d.behaviour = r.scalar(m["behaviour"], "behaviour");
    b = find_lock_behaviour(d.kind, d.behaviour);
    if (!b)
      r.fail(m["behaviour"], "unknown " + d.kind + " behaviour '" + d.behaviour + "'",
             "one of: " + lock_behaviour_names(d.kind));
  } else {
    for (const auto& row : lock_behaviours())
      if (!b && d.kind == row.kind) b = &row;  // switches alone: over the oldest version's rules
  }
  d.handoff = m["handoff"] ? r.boolean(m["handoff"], "handoff") : b->handoff;
  d.reader_spin = m["reader_spin"] ? r.boolean(m["reader_spin"], "reader_spin") : b->reader_spin;
  d.reader_steal = m["reader_steal"] ? r.boolean(m["reader_steal"], "reader_steal") : b->reader_steal;
  d.wake_all_readers = b->wake_all_readers;
  d.spin_on_readers = b->spin_on_readers;
  d.adaptive = b->adaptive;
  d.handoff_spin = b->handoff_spin;
  if (m["wake_readers"]) {
    const std::string w = r.scalar(m["wake_readers"], "wake_readers");
    if (w != "leading" && w != "all") r.fail(m["wake_readers"], "unknown wake_readers '" + w + "'", "leading or all");
    d.wake_all_readers = w == "all";
  }
}

// locks: NAME: {kind, scope, ...}: the kind's row in the lock-kind registry
// says which of spin, wake, fair and threshold apply.
void parse_locks(const Reader& r, const YAML::Node& locks, const std::string& name, std::map<std::string, LockDecl>& out) {
  r.expect_map(locks, "locks of strategy '" + name + "'");
  for (const auto& kv : locks) {
    LockDecl d;
    d.name = r.name(kv.first, "lock name");
    d.mark = r.mark(kv.first);
    const std::string what = "lock '" + d.name + "'";
    r.expect_map(kv.second, what);
    std::vector<const char*> allowed{"kind", "scope", "objects", "pick"};
    for (const auto& key : lock_keys()) allowed.push_back(key.name);
    r.only_keys(kv.second, what, allowed);
    const auto kind = r.require(kv.second, "kind", what);
    d.kind = r.scalar(kind, "kind");
    const LockKind* row = find_lock_kind(d.kind);
    if (!row || d.kind == FreeLock::kKind) r.fail(kind, "unknown lock kind '" + d.kind + "'", "one of: " + lock_kind_names());
    d.scope = parse_scope(r, r.require(kv.second, "scope", what));
    d.objects = parse_objects(r, kv.second, d.scope, what);
    for (const auto& key : lock_keys()) {
      const std::string k = key.name;
      if (const auto v = kv.second[key.name]; v && !row->takes(k))
        r.fail(v, "'" + k + "' does not apply to a " + d.kind + " lock", "'" + k + "' only on " + lock_kinds_taking(k) + " locks");
    }
    const YAML::Node& m = kv.second;
    parse_behaviour(r, m, d);
    // rwsem readers sleep; a versioned rwsem's writers spin (every version has RWSEM_SPIN_ON_OWNER).
    d.spin = m["spin"] ? r.boolean(m["spin"], "spin") : !row->sleeps || row->default_spin || d.versioned;
    if (m["reader_spin"] && d.reader_spin && !d.spin)
      r.fail(m["reader_spin"], "'reader_spin: true' contradicts 'spin: false' of " + what,
             "readers spin on a writer only where writers may: drop one of them");
    // By version, a waiter sleeps when its owner does. Without `wake:` the
    // machine's wake_latency applies (check_wake, once the machine is known).
    if (m["wake"]) d.wake_latency = r.duration(m["wake"], "wake latency", true);
    else d.needs_wake = row->sleeps && (!d.spin || d.versioned);
    if (const auto shape = m["wake_shape"]) {
      const std::string v = r.scalar(shape, "wake_shape");
      if (v == "fixed") d.wake_shape = WakeShape::kFixed;
      else if (v != "erlang2") r.fail(shape, "unknown wake_shape '" + v + "'", "erlang2 or fixed");
    }
    if (m["fair"]) d.reader_preference = !r.boolean(m["fair"], "fair");
    if (m["threshold"]) d.threshold = r.duration(m["threshold"], "threshold", true);
    out[d.name] = d;
  }
}

}  // namespace

Strategy parse_strategy(const Reader& r, const std::string& name, const YAML::Node& n) {
  Strategy s;
  s.name = name;
  s.mark = r.mark(n);
  r.expect_map(n, "strategy '" + name + "'");
  r.only_keys(n, "strategy '" + name + "'",
              {"description", "extends", "kernel", "locks", "lines", "seqcounts", "pools", "dentries", "dentry_lock", "ops"});
  parse_dentries(r, n, name, s);
  if (const auto kernel = n["kernel"]) {
    r.expect_map(kernel, "kernel of strategy '" + name + "'");
    r.only_keys(kernel, "kernel of strategy '" + name + "'", {"hz"});
    s.hz = static_cast<int>(r.integer(r.require(kernel, "hz", "kernel"), "hz", 10, 100000));
  }
  if (const auto seqs = n["seqcounts"]) parse_scoped(r, seqs, "seqcount", name, s.seqcounts);
  if (n["description"]) s.description = r.scalar(n["description"], "description");
  if (n["extends"]) {
    s.extends = r.name(n["extends"], "extends");
    s.extends_mark = r.mark(n["extends"]);
  }
  if (const auto locks = n["locks"]) parse_locks(r, locks, name, s.locks);
  if (const auto lines = n["lines"])
    parse_scoped(r, lines, "line", name, s.lines, {"scope", "on", "objects", "pick", "shared_by"}, parse_shared_by(r));
  if (const auto pools = n["pools"]) parse_pools(r, pools, name, s.pools);
  if (const auto ops = n["ops"]) {
    r.expect_map(ops, "ops of strategy '" + name + "'");
    for (const auto& kv : ops) {
      OpDef op;
      op.name = r.name(kv.first, "op name");
      op.mark = r.mark(kv.first);
      YAML::Node steps = kv.second;
      if (steps.IsMap()) {  // {steps: [...], fn: FRAME, description: TEXT}
        const std::string what = "op '" + op.name + "'";
        r.only_keys(steps, what, {"steps", "fn", "description"});
        if (steps["fn"]) op.fn = r.name(steps["fn"], "fn of " + what);
        if (steps["description"]) op.description = r.scalar(steps["description"], "description of " + what);
        steps.reset(r.require(steps, "steps", what));  // rebinds (operator= would write into the op)
      }
      op.steps = parse_steps(r, steps, "op '" + op.name + "'");
      s.ops[op.name] = std::move(op);
    }
  }
  return s;
}

namespace {

// Steps in a list, bodies, branches and walk hooks included.
std::size_t count_steps(const std::vector<Step>& steps) {
  std::size_t n = steps.size();
  for (const Step& st : steps)
    n += count_steps(st.body) + count_steps(st.else_body) + count_steps(st.walk.permission.steps) +
         count_steps(st.walk.revalidate.steps);
  return n;
}

}  // namespace

void resolve_extends(std::vector<Strategy>& strategies) {
  std::size_t resolved_steps = 0;  // the strategies' own, then each inherited op as it is copied
  for (const Strategy& s : strategies)
    for (const auto& [k, op] : s.ops) resolved_steps += count_steps(op.steps);
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < strategies.size(); ++i) index[strategies[i].name] = i;
  std::vector<int> state(strategies.size(), 0);  // 0 new, 1 resolving, 2 done
  for (std::size_t first = 0; first < strategies.size(); ++first) {
    // The chain first -> its parent -> ... up to a resolved strategy (or
    // none), then merged from the top down. A loop, not recursion: a chain
    // may be long, though not longer than kMaxExtends.
    std::vector<std::size_t> chain;
    for (std::size_t i = first; state[i] != 2;) {
      Strategy& s = strategies[i];
      if (state[i] == 1) {
        // At an `extends` of the cycle: one a --set gave, if any (the setting made the cycle), else the first's.
        const Strategy* at = &s;
        for (auto c = std::find(chain.begin(), chain.end(), i); c != chain.end(); ++c)
          if (strategies[*c].extends_mark.file != strategies[*c].mark.file) at = &strategies[*c];
        throw ScenarioError(at->extends_mark, "strategy '" + at->name + "' extends itself through a cycle", "an acyclic 'extends' chain");
      }
      state[i] = 1;
      chain.push_back(i);
      if (chain.size() > kMaxExtends)
        throw ScenarioError(strategies[first].mark, "strategy '" + strategies[first].name + "' extends a chain of more than " +
                                                        std::to_string(kMaxExtends) + " strategies",
                            "a shorter 'extends' chain");
      if (s.extends.empty()) break;
      auto it = index.find(s.extends);
      if (it == index.end())
        throw ScenarioError(s.extends_mark, "strategy '" + s.name + "' extends '" + s.extends + "', which is not defined",
                            "the name of another strategy of this file");
      i = it->second;
    }
    for (auto c = chain.rbegin(); c != chain.rend(); ++c) {
      Strategy& s = strategies[*c];
      if (!s.extends.empty()) {
        const Strategy& p = strategies[index.at(s.extends)];
        for (const auto& [k, v] : p.locks) s.locks.emplace(k, v);
        for (const auto& [k, v] : p.lines) s.lines.emplace(k, v);
        for (const auto& [k, v] : p.seqcounts) s.seqcounts.emplace(k, v);
        for (const auto& [k, v] : p.pools) s.pools.emplace(k, v);
        for (const auto& [k, v] : p.dentries) s.dentries.emplace(k, v);
        if (s.hz == 0) s.hz = p.hz;
        for (const auto& [k, v] : p.ops) {
          if (s.ops.count(k)) continue;
          resolved_steps += count_steps(v.steps);
          if (resolved_steps > kMaxResolvedSteps)
            throw ScenarioError(s.extends_mark,
                                "strategy '" + s.name + "' extends '" + s.extends + "': the strategies' ops add up to more than " +
                                    std::to_string(kMaxResolvedSteps) + " steps once extends copies the inherited ones",
                                "fewer strategies extending a long op, or a shorter op");
          s.ops.emplace(k, v);
        }
      }
      state[*c] = 2;
    }
  }
}

namespace {

// synchronize_rcu() inside an RCU read section never returns: the grace
// period waits for the reader, the reader for the grace period (lockdep's
// "Illegal synchronize_rcu() in RCU read-side critical section"). Checked
// through op calls; `section` is the rcu_read step the steps run in.
void check_rcu_deadlock(const Strategy& s, const std::vector<Step>& steps, const Step* section,
                        const std::string& via, std::set<std::string>& checked_inside) {
  for (const auto& st : steps) {
    if (st.kind == StepKind::kSynchronizeRcu && section)
      throw ScenarioError(st.mark, "synchronize_rcu inside the RCU read section begun at line " +
                                       std::to_string(section->mark.line) + ", column " +
                                       std::to_string(section->mark.column) + via +
                                       ": the grace period waits for this reader, which waits for the grace period",
                          "synchronize_rcu outside rcu_read (call_rcu may be used inside)");
    const Step* inner = st.kind == StepKind::kRcuRead ? (section ? section : &st) : section;
    if (st.kind == StepKind::kCall && inner && checked_inside.insert(st.target).second)
      check_rcu_deadlock(s, s.ops.at(st.target).steps, inner, via + " (through op '" + st.target + "')", checked_inside);
    if (st.has_body) check_rcu_deadlock(s, st.body, inner, via, checked_inside);
    check_rcu_deadlock(s, st.else_body, inner, via, checked_inside);
    for (const auto& hook : walk_hook_instances(st)) check_rcu_deadlock(s, hook, inner, via, checked_inside);
  }
}

void check_rcu_deadlock(const Strategy& s) {
  std::set<std::string> checked_inside;  // ops already checked as called inside a read section
  for (const auto& [name, op] : s.ops) check_rcu_deadlock(s, op.steps, nullptr, "", checked_inside);
}

// Which CPUs share one instance of a scope: 0 one CPU (one task runs per
// CPU), 1 a NUMA node, 2 every CPU. A process is every CPU when the tasks
// are threads of one process, one CPU when each task is a process.
int sharing(Scope scope, TaskKind tasks) {
  switch (scope) {
    case Scope::kGlobal: return 2;
    case Scope::kNode: return 1;
    case Scope::kProcess: return tasks == TaskKind::kThread ? 2 : 0;
    case Scope::kCpu:
    case Scope::kTask: return 0;
    case Scope::kObject: return 2;  // any task may pick any object (see check_seq_writers)
  }
  return 2;
}

// Seqcount writers must be serialised (write_seqcount_begin's rule, which
// lockdep asserts for seqcount_LOCKNAME_t): two CPUs inside one instance's
// write section at once break it, and the run would stop with that
// invariant. So a seq_write on an instance shared by several CPUs needs,
// around it, a lock held exclusively that every one of those CPUs shares.
// `held`: the widest sharing of such a lock held here (-1: none). Checked
// through op calls, each op once per `held`. `unlocked: true` says the
// writers are serialised otherwise (an order); the engine still checks.
void check_seq_writers(const Strategy& s, const std::vector<Step>& steps, int held, TaskKind tasks,
                       const std::string& via, std::set<std::pair<std::string, int>>& checked) {
  for (const auto& st : steps) {
    int inner = held;
    if (st.kind == StepKind::kLock && st.mode == LockMode::kExclusive)
      if (auto l = s.locks.find(st.target); l != s.locks.end()) inner = std::max(held, sharing(l->second.scope, tasks));
    if (st.kind == StepKind::kSeqWrite && !st.unlocked)
      if (auto q = s.seqcounts.find(st.target); q != s.seqcounts.end()) {
        const int need = sharing(q->second.scope, tasks);
        if (need > 0 && held < need)
          throw ScenarioError(
              st.mark,
              "seq_write on seqcount '" + st.target + "' (scope " + to_string(q->second.scope) + ", tasks " +
                  (tasks == TaskKind::kThread ? "thread" : "process") + ")" + via + " is not serialised: " +
                  (held < 0 ? "no lock is held around it in write mode"
                            : "the locks held around it are not shared by every CPU that writes that seqcount") +
                  ", so two writers can be inside at once",
              "the write section inside a lock held in write mode whose scope covers the seqcount's (write_seqcount_begin "
              "requires its writers serialised), or 'unlocked: true' if an order the model holds no lock for "
              "serialises them (the run still stops if two overlap)");
      }
    if (st.kind == StepKind::kCall && checked.insert({st.target, held}).second)
      if (auto op = s.ops.find(st.target); op != s.ops.end())
        check_seq_writers(s, op->second.steps, held, tasks, via + " (through op '" + st.target + "')", checked);
    check_seq_writers(s, st.body, inner, tasks, via, checked);
    check_seq_writers(s, st.else_body, held, tasks, via, checked);
    for (const auto& hook : walk_hook_instances(st)) check_seq_writers(s, hook, held, tasks, via, checked);
  }
}

}  // namespace

void check_seq_writers(const Strategy& s, const Workload& w) {
  // From the loop's ops only: an op called only under a lock is checked
  // with that lock held.
  std::set<std::pair<std::string, int>> checked;
  for (const auto& loop : w.loops())
    for (const auto& name : loop)
      if (auto op = s.ops.find(name); op != s.ops.end() && checked.insert({name, -1}).second)
        check_seq_writers(s, op->second.steps, -1, w.tasks, "", checked);
}

void check_references(const Strategy& s, const std::vector<std::string>& loop, const SourceMark& loop_mark,
                      const Params& params, const std::string& loop_name) {
  const StepRefs refs{s, params};
  for (const auto& [name, line] : s.lines)
    if (!line.on.empty()) {
      auto it = s.locks.find(line.on);
      if (it == s.locks.end())
        throw ScenarioError(line.mark, "line '" + name + "' is on lock '" + line.on + "', which strategy '" + s.name +
                                           "' does not declare", "a lock declared under 'locks:'");
      const std::string& kind = it->second.kind;
      if (!find_lock_kind(kind)->has_word_line())
        throw ScenarioError(line.mark, "line '" + name + "' is on lock '" + line.on + "' of kind " + kind +
                                           ", which has no one word to share (per-CPU locks)",
                            "a lock of one word (" + lock_kinds_with_word_line() + "): data shares its line");
    }
  for (const auto& [name, op] : s.ops) check_step_refs(refs, op.steps);
  for (const auto& [name, pool] : s.pools)
    for (const NumberRef* v : {&pool.low, &pool.high, &pool.refill})
      if (!v->param.empty()) refs.need_param(v->param, ParamValue::Type::kNumber, pool.mark);
  // `objects: $param` of every scope: object declaration.
  const auto objects_param = [&](const auto& decls) {
    for (const auto& [name, d] : decls)
      if (!d.objects.objects.param.empty()) refs.need_param(d.objects.objects.param, ParamValue::Type::kNumber, d.mark);
  };
  objects_param(s.locks);
  objects_param(s.lines);
  objects_param(s.seqcounts);
  for (const auto& l : loop)
    if (!s.ops.count(l))
      throw ScenarioError(loop_mark, loop_name + " runs op '" + l + "', which strategy '" + s.name + "' does not define",
                          "an op defined under 'ops:' of every strategy");
  // Cycle and depth check, depth-first over calls: `height` is the longest
  // call chain below an op (the compiler inlines calls recursively).
  std::map<std::string, int> state, height;
  std::function<int(const std::string&, const SourceMark&, int)> visit = [&](const std::string& op, const SourceMark& at,
                                                                               int level) -> int {
    int& st = state[op];
    if (st == 1)
      throw ScenarioError(at, "op '" + op + "' of strategy '" + s.name + "' calls itself through a cycle",
                          "op calls that never lead back to the caller");
    if (st != 2) {
      if (level > kMaxCallDepth)
        throw ScenarioError(at, "op calls of strategy '" + s.name + "' nested more than " + std::to_string(kMaxCallDepth) +
                                    " deep (at op '" + op + "')", "shallower op calls");
      st = 1;
      int h = 0;
      std::function<void(const std::vector<Step>&)> calls = [&](const std::vector<Step>& steps) {
        for (const auto& stp : steps) {
          if (stp.kind == StepKind::kCall) h = std::max(h, visit(stp.target, stp.mark, level + 1));
          if (stp.has_body) calls(stp.body);
          calls(stp.else_body);
          for (const auto& hook : walk_hook_instances(stp)) calls(hook);
        }
      };
      calls(s.ops.at(op).steps);
      state[op] = 2;
      height[op] = h + 1;
    }
    if (level + height[op] - 1 > kMaxCallDepth)
      throw ScenarioError(at, "op calls of strategy '" + s.name + "' nested more than " + std::to_string(kMaxCallDepth) +
                                  " deep (through op '" + op + "')", "shallower op calls");
    return height[op];
  };
  for (const auto& [name, op] : s.ops) visit(name, op.mark, 1);
  check_rcu_deadlock(s);
}


void check_relax(const Strategy& s, const TopologySpec& machine) {
  if (machine.pause > Duration{0}) return;
  const auto walk = [&](const auto& self, const std::vector<Step>& steps) -> void {
    for (const Step& st : steps) {
      if (st.relax || (st.kind == StepKind::kWalk && st.walk.lockref && st.walk.lockref_relax))
        throw ScenarioError(st.mark, "strategy '" + s.name + "' has a cmpxchg loop with relax: true on machine '" +
                                         machine.name + "', which gives no 'pause'",
                            "the machine's 'pause: TIME' (what one cpu_relax() costs), or relax: false");
      self(self, st.body);
      self(self, st.else_body);
      for (const auto& hook : walk_hook_instances(st)) self(self, hook);
    }
  };
  for (const auto& [name, op] : s.ops) walk(walk, op.steps);
}

void check_wake(const Strategy& s, const TopologySpec& machine) {
  if (machine.wake_latency > Duration{0}) return;
  for (const auto& [name, lock] : s.locks)
    if (lock.needs_wake)
      throw ScenarioError(lock.mark, "lock '" + name + "' of strategy '" + s.name + "' has sleeping waiters but no wake-up latency, and machine '" +
                                         machine.name + "' gives none",
                          "'wake: TIME' on the lock, or the machine's 'wake_latency: TIME' (the scheduler's wake-to-run latency)");
}

void warn_numa_aware(const Strategy& s, const TopologySpec& machine, std::vector<std::string>& warnings) {
  if (Topology(machine).num_nodes() > 1) return;
  for (const auto& [name, lock] : s.locks) {
    const LockKind* k = find_lock_kind(lock.kind);
    if (!k || !k->numa_aware) continue;
    const std::string w = lock.mark.file + ":" + std::to_string(lock.mark.line) + ":" + std::to_string(lock.mark.column) +
                          ": warning: lock '" + name + "' of strategy '" + s.name + "' is " + lock.kind +
                          ", NUMA-aware, on machine '" + machine.name +
                          "' of one NUMA node: every waiter is local, so it runs as the lock it is built on";
    if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  }
}

}  // namespace vfssim::models::parse

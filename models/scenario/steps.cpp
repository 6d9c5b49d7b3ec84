#include "models/scenario/steps.h"

#include <algorithm>
#include <set>

#include "models/kernel/cmpxchg_loop.h"
#include "models/kernel/lock_kinds.h"

namespace vfssim::models::parse {

namespace {

// A list of steps under `key` (a body, `then`, `else`, `reclaim`).
std::vector<Step> body_of(const Reader& r, const YAML::Node& n, const char* key, bool required, const std::string& what) {
  if (!n[key]) {
    if (required) r.fail(n, "the " + what + " has no '" + key + "'", "'" + std::string(key) + ": [steps]'");
    return {};
  }
  return parse_steps(r, n[key], "the " + std::string(key) + " of the " + what);
}

void parse_compute(const Reader& r, const YAML::Node& n, Step& s, const std::string& what) {
  s.time = r.time_dist(n["compute"], "compute time of the " + what, false);
}

void parse_sleep(const Reader& r, const YAML::Node& n, Step& s, const std::string& what) {
  s.time = r.time_dist(n["sleep"], "sleep time of the " + what, true);
}

void parse_lock(const Reader& r, const YAML::Node& n, Step& s, const std::string& what) {
  s.target = r.name(n["lock"], "lock name of the " + what);
  if (n["mode"]) {
    const std::string m = r.scalar(n["mode"], "mode");
    if (m == "write" || m == "exclusive") s.mode = LockMode::kExclusive;
    else if (m == "read" || m == "shared") s.mode = LockMode::kShared;
    else r.fail(n["mode"], "unknown lock mode '" + m + "'", "read or write");
  }
  if (n["hold"] && n["body"]) r.fail(n, "the " + what + " has both 'hold' and 'body'", "either a hold time or a body of steps");
  if (n["hold"]) {
    s.time = r.time_dist(n["hold"], "hold time of the " + what, false);
  } else if (n["body"]) {
    s.has_body = true;
    s.body = body_of(r, n, "body", true, what);
  } else {
    r.fail(n, "the " + what + " says neither how long the lock is held nor what runs under it",
           "'hold: TIME' or 'body: [steps]'");
  }
}

void check_lock(const StepRefs& refs, const Step& st) {
  const LockDecl& d = refs.strategy.locks.at(st.target);
  if (st.mode == LockMode::kShared && !find_lock_kind(d.kind)->read_write)
    throw ScenarioError(st.mark, "mode: read on lock '" + st.target + "' of kind " + d.kind + ", which has no read mode",
                        "mode: read only on a reader/writer kind (rwsem, rwlock, brlock)");
}

// relax: and retries: of a cmpxchg loop (models/kernel/cmpxchg_loop.h).
// `retries: 0` (no limit) only where there is no fallback to give up to.
void parse_cmpxchg_loop(const Reader& r, const YAML::Node& n, Step& s, int default_retries, int min_retries) {
  if (n["relax"]) s.relax = r.boolean(n["relax"], "relax");
  s.retries = default_retries;
  if (n["retries"]) s.retries = static_cast<int>(r.integer(n["retries"], "retries", min_retries, 1000000));
}

// lib/lockref.c: 100 tries since 893a7d32e8e0 (v5.2; `retries: 0`, no
// limit, before); no cpu_relax() since f5fe24ef17b5 (v6.2): the defaults
// are today's kernel.
// The slow path (the spinlock) holds it `hold: TIME` or runs `body:` under
// it (lockref_get_not_zero's slow path tests the count under d_lock).
void parse_lockref(const Reader& r, const YAML::Node& n, Step& s, const std::string& what) {
  s.target = r.name(n["lockref"], "lock name of the " + what);
  if (n["hold"] && n["body"]) r.fail(n, "the " + what + " has both 'hold' and 'body'", "either a slow-path hold time or a body of steps");
  if (n["body"]) {
    s.has_body = true;
    s.body = body_of(r, n, "body", true, what);
  } else {
    s.time = r.time_dist(r.require(n, "hold", "the " + what + " (its slow path under the spinlock)"),
                         "slow-path hold time of the " + what, false);
  }
  parse_cmpxchg_loop(r, n, s, kLockrefRetries, 0);
}

// A plain cmpxchg loop (atomic_inc_unless_negative, try_cmpxchg loops)
// retries until it succeeds; one that gives up after `retries` runs its
// `fallback` steps (the caller's slow path), so the two come together.
void parse_cmpxchg(const Reader& r, const YAML::Node& n, Step& s, const std::string& what) {
  s.target = r.name(n["cmpxchg"], "line name of the " + what);
  parse_cmpxchg_loop(r, n, s, 0, 1);
  if (static_cast<bool>(n["retries"]) != static_cast<bool>(n["fallback"]))
    r.fail(n, "the " + what + " gives only one of 'retries' and 'fallback'",
           "both (give up after N tries and run the fallback steps) or neither (retry until it succeeds)");
  if (n["fallback"]) {
    s.has_body = true;
    s.body = body_of(r, n, "fallback", true, what);
  }
}

void check_lockref(const StepRefs& refs, const Step& st) { refs.need_lock(st.target, st.mark, true); }

// atomic, read, sum: a line and nothing else.
template <const char* Key>
void parse_line_step(const Reader& r, const YAML::Node& n, Step& s, const std::string& what) {
  s.target = r.name(n[Key], "line name of the " + what);
}
constexpr char kAtomicKey[] = "atomic";
constexpr char kReadKey[] = "read";
constexpr char kWriteKey[] = "write";
constexpr char kSumKey[] = "sum";

void check_sum(const StepRefs& refs, const Step& st) {
  if (refs.strategy.lines.at(st.target).scope != Scope::kCpu)
    throw ScenarioError(st.mark, "sum over line '" + st.target + "', which is not per-CPU", "a line with 'scope: cpu'");
  if (refs.strategy.lines.at(st.target).shared_by != 1)  // the sum's cost is one line per CPU
    throw ScenarioError(st.mark, "sum over line '" + st.target + "', whose per-CPU copies share lines (shared_by)",
                        "a per-CPU line without 'shared_by'");
}

void parse_percpu_add(const Reader& r, const YAML::Node& n, Step& s, const std::string& what) {
  s.target = r.name(n["percpu_add"], "line name of the " + what);
  s.count = static_cast<int>(r.integer(r.require(n, "batch", "the " + what), "batch", 1, 1 << 30));
  s.lock = r.name(r.require(n, "counter_lock", "the " + what), "counter lock of the " + what);
}

void check_percpu_add(const StepRefs& refs, const Step& st) {
  if (refs.strategy.lines.at(st.target).scope == Scope::kCpu)
    throw ScenarioError(st.mark, "percpu_add names the per-CPU line '" + st.target + "'",
                        "the shared counter's line (its per-CPU parts are implicit)");
  refs.need_lock(st.lock, st.mark, false);
}

void parse_call(const Reader& r, const YAML::Node& n, Step& s, const std::string& what) {
  s.target = r.name(n["call"], "op name of the " + what);
}

void parse_repeat(const Reader& r, const YAML::Node& n, Step& s, const std::string& what) {
  if (Reader::is_param(n["repeat"])) s.count_param = r.param_name(n["repeat"], "repeat count");
  else s.count = static_cast<int>(r.integer(n["repeat"], "repeat count", 1, 100000));
  s.has_body = true;
  s.body = body_of(r, n, "body", true, what);
}

void parse_branch(const Reader& r, const YAML::Node& n, Step& s, const std::string& what) {
  s.probability = parse_probability(r, n["branch"], "branch probability", s.probability_param);
  s.has_body = true;
  s.body = body_of(r, n, "then", true, what);
  s.else_body = body_of(r, n, "else", false, what);
}

void parse_seq_read(const Reader& r, const YAML::Node& n, Step& s, const std::string& what) {
  s.target = r.name(n["seq_read"], "seqcount name of the " + what);
  s.has_body = true;
  s.body = body_of(r, n, "body", true, what);
  s.count = -1;
  if (n["retries"] || n["fallback"]) {
    if (!n["retries"] || !n["fallback"])
      r.fail(n, "the " + what + " gives only one of 'retries' and 'fallback'",
             "both (read_seqbegin_or_lock: retry N times, then take the lock) or neither");
    s.count = static_cast<int>(r.integer(n["retries"], "retries", 0, 1000000));
    s.lock = r.name(n["fallback"], "fallback lock of the " + what);
  }
}

void check_seq(const StepRefs& refs, const Step& st) {
  if (!st.lock.empty()) refs.need_lock(st.lock, st.mark, false);
}

void parse_seq_write(const Reader& r, const YAML::Node& n, Step& s, const std::string& what) {
  s.target = r.name(n["seq_write"], "seqcount name of the " + what);
  if (n["unlocked"]) s.unlocked = r.boolean(n["unlocked"], "unlocked");
  s.has_body = true;
  s.body = body_of(r, n, "body", true, what);
}

void parse_rcu_read(const Reader& r, const YAML::Node& n, Step& s, const std::string& what) {
  s.has_body = true;
  s.body = parse_steps(r, n["rcu_read"], "the read section of the " + what);
}

void parse_synchronize_rcu(const Reader& r, const YAML::Node& n, Step&, const std::string&) {
  const std::string v = r.scalar(n["synchronize_rcu"], "synchronize_rcu");
  if (v != "normal") r.fail(n["synchronize_rcu"], "unknown grace-period kind '" + v + "'", "normal");
}

void check_grace_period(const StepRefs& refs, const Step& st) {
  if (refs.strategy.hz == 0)
    throw ScenarioError(st.mark, "strategy '" + refs.strategy.name + "' waits for RCU grace periods but gives no tick rate",
                        "'kernel: {hz: N}' in the strategy (or the one it extends)");
}

// `call_rcu: TIME`, a callback of that cost, or `call_rcu: {steps: [...],
// fn: NAME}`, a callback that runs those steps (the time forms' mappings
// have `exp` or `uniform`, a range `estimate`).
void parse_call_rcu(const Reader& r, const YAML::Node& n, Step& s, const std::string& what) {
  const YAML::Node v = n["call_rcu"];
  if (!v.IsMap() || r.site(v) || (!v["steps"] && (v["exp"] || v["uniform"]))) {
    s.time = r.time_dist(v, "callback cost of the " + what, false);
    return;
  }
  const std::string cb = "the callback of the " + what;
  r.only_keys(v, cb, {"steps", "fn"});
  const YAML::Node steps = r.require(v, "steps", cb);
  if (!steps.IsSequence() || steps.size() == 0)
    r.fail(steps, "the steps of " + cb + " are not a non-empty list", "a list of steps such as [ {atomic: cred_usage} ]");
  if (v["fn"]) s.target = r.name(v["fn"], "fn of " + cb);
  s.has_body = true;
  s.body = parse_steps(r, steps, cb);
}

// Why a step would sleep, or "": "sleeps", "waits for a grace period",
// "takes mutex 'm', which may sleep". Neither an RCU callback (softirq) nor
// an op run in rcu-walk (MAY_NOT_BLOCK) may.
std::string sleeping_lock(const Strategy& s, const std::string& name) {
  const auto l = s.locks.find(name);  // undeclared: check_step_refs reports it
  if (l == s.locks.end() || !find_lock_kind(l->second.kind)->sleeps) return "";
  return "takes " + l->second.kind + " '" + name + "', which may sleep";
}
std::string blocking(const Strategy& s, const Step& st) {
  if (st.kind == StepKind::kSleep) return "sleeps";
  if (st.kind == StepKind::kSynchronizeRcu) return "waits for a grace period";
  if (st.kind == StepKind::kLock) return sleeping_lock(s, st.target);
  // The lock a step takes besides its own target: percpu_add's counter_lock,
  // dec_and_lock's lock, seq_read's fallback (issue 29 item 8).
  return st.lock.empty() ? "" : sleeping_lock(s, st.lock);
}

// A callback runs in softirq context (rcu_do_batch from RCU_SOFTIRQ): it
// may spin (spinlocks, rwlocks, cmpxchg loops), touch lines and compute,
// never sleep. Steps the executor does not run there (read sections,
// seqcounts, allocations, path walks, a nested call_rcu) and per-object
// declarations (the callback runs in a later iteration than the one that
// picked the object) are refused too. Through op calls, each op once.
void check_callback_steps(const StepRefs& refs, const std::vector<Step>& steps, const Step& call,
                          const std::string& via, std::vector<std::string>& seen) {
  const Strategy& s = refs.strategy;
  const std::string callback = "the RCU callback queued at line " + std::to_string(call.mark.line) + ", column " +
                               std::to_string(call.mark.column) + via;
  const std::string allowed = "in a callback: compute, spinning locks (" + lock_kind_names(true) +
                              ", rwlock, brlock), atomic, read, write, sum, cmpxchg, lockref, dec_and_lock, percpu_add, "
                              "branch, repeat, call";
  auto refuse = [&](const Step& st, const std::string& what, const std::string& why) {
    throw ScenarioError(st.mark, what + " inside " + callback + ": " + why, allowed);
  };
  auto sleeps = [&](const Step& st, const std::string& b) {
    if (!b.empty()) throw ScenarioError(st.mark, callback + " " + b + ": a callback runs in softirq and cannot sleep", allowed);
  };
  auto no_object = [&](const Step& st, const std::string& kind, const auto& decls, const std::string& name) {
    if (auto it = decls.find(name); it != decls.end() && it->second.scope == Scope::kObject)
      refuse(st, kind + " '" + name + "' of scope object", "the callback runs after the iteration that picked its object");
  };
  for (const Step& st : steps) {
    sleeps(st, blocking(s, st));
    switch (st.kind) {
      case StepKind::kCallRcu:
      case StepKind::kRcuRead:
      case StepKind::kSeqRead:
      case StepKind::kSeqWrite:
      case StepKind::kAlloc:
      case StepKind::kWalk:
        refuse(st, "a " + std::string(step_kind(st.kind).name) + " step", "not modelled in a callback");
        break;
      case StepKind::kLock:
      case StepKind::kLockref: no_object(st, "lock", s.locks, st.target); break;
      case StepKind::kDecAndLock:
      case StepKind::kPercpuAdd:  // its lock's sleeping: blocking() above
        no_object(st, "line", s.lines, st.target);
        no_object(st, "lock", s.locks, st.lock);
        break;
      case StepKind::kAtomic:
      case StepKind::kRead:
      case StepKind::kWrite:
      case StepKind::kSumPerCpu:
      case StepKind::kCmpxchg: no_object(st, "line", s.lines, st.target); break;
      case StepKind::kCall:
        if (auto op = s.ops.find(st.target);
            op != s.ops.end() && std::find(seen.begin(), seen.end(), st.target) == seen.end()) {
          seen.push_back(st.target);
          check_callback_steps(refs, op->second.steps, call, via + " (through op '" + st.target + "')", seen);
        }
        break;
      case StepKind::kCompute:
      case StepKind::kSleep:
      case StepKind::kSynchronizeRcu:
      case StepKind::kRepeat:
      case StepKind::kBranch: break;
    }
    check_callback_steps(refs, st.body, call, via, seen);
    check_callback_steps(refs, st.else_body, call, via, seen);
  }
}

void check_call_rcu(const StepRefs& refs, const Step& st) {
  check_grace_period(refs, st);
  std::vector<std::string> seen;
  check_callback_steps(refs, st.body, st, "", seen);
}

// atomic_dec_and_lock(count, lock): the decrement is an atomic; only the
// 1 -> 0 transition (probability `last`) takes the lock.
void parse_dec_and_lock(const Reader& r, const YAML::Node& n, Step& s, const std::string& what) {
  s.target = r.name(n["dec_and_lock"], "line name of the " + what);
  s.lock = r.name(r.require(n, "spinlock", "the " + what), "spinlock of the " + what);
  s.probability = parse_probability(r, r.require(n, "last", "the " + what), "last", s.probability_param);
  s.time = r.time_dist(r.require(n, "hold", "the " + what), "hold time of the " + what, false);
}

void check_dec_and_lock(const StepRefs& refs, const Step& st) { refs.need_lock(st.lock, st.mark, true); }

// __alloc_pages: `pages` from the pool; below its low watermark the task
// runs `reclaim` (direct reclaim), which gives back `reclaimed`.
void parse_alloc(const Reader& r, const YAML::Node& n, Step& s, const std::string& what) {
  s.target = r.name(n["alloc"], "pool name of the " + what);
  s.count = static_cast<int>(r.integer(r.require(n, "pages", "the " + what), "pages", 1, 1 << 20));
  s.has_body = true;
  s.body = body_of(r, n, "reclaim", true, what);
  const auto freed = r.require(n, "reclaimed", "the " + what + " (pages its direct reclaim gives back)");
  s.reclaimed = static_cast<int>(r.integer(freed, "reclaimed", 1, 1 << 20));
  if (s.reclaimed < s.count)
    r.fail(freed, "direct reclaim gives back " + std::to_string(s.reclaimed) + " pages but the allocation takes " +
                      std::to_string(s.count), "reclaimed >= pages (the reclaiming task frees at least what it needs)");
}

// Every step of a list, bodies and branches included (a hook's steps are
// counted again for each component they are copied to).
std::size_t count_steps(const std::vector<Step>& steps) {
  std::size_t n = 0;
  for (const auto& st : steps) n += 1 + count_steps(st.body) + count_steps(st.else_body);
  return n;
}

// `permission:` / `revalidate:` of a walk (WalkHook in scenario.h).
void parse_walk_hook(const Reader& r, const YAML::Node& n, const char* key, Step& s, const std::string& what) {
  const YAML::Node hn = n[key];
  if (!hn) return;
  const bool permission = std::string(key) == "permission";
  WalkHook& h = permission ? s.walk.permission : s.walk.revalidate;
  const std::string hw = "the " + std::string(key) + " hook of the " + what;
  r.expect_map(hn, hw);
  r.only_keys(hn, hw, {"steps", "rcu", "at"});  // not "on": a YAML 1.1 boolean (PyYAML)
  h.present = true;
  h.mark = r.mark(hn);
  const YAML::Node steps = r.require(hn, "steps", hw);
  h.steps = parse_steps(r, steps, "the steps of " + hw);
  if (h.steps.empty()) r.fail(steps, "the steps of " + hw + " are empty", "at least one step the op runs per component");
  const YAML::Node rcu = r.require(hn, "rcu", hw + " (what the op does in rcu-walk)");
  const std::string v = r.scalar(rcu, "rcu of " + hw);
  if (v == "refuse") h.refuse_rcu = true;
  else if (v != "run")
    r.fail(rcu, "unknown rcu '" + v + "' of " + hw,
           "run (its steps run in rcu-walk too) or refuse (it returns -ECHILD there: the walk drops to ref-walk and "
           "runs it again)");
  const std::vector<std::string>& path = s.walk.path;
  if (const auto list = hn["at"]) {
    if (!list.IsSequence() || list.size() == 0) r.fail(list, "'at' of " + hw + " is not a non-empty list", "a list of dentries of the path");
    for (const auto& c : list) {
      const std::string d = r.name(c, "dentry of 'at' of " + hw);
      const auto at = std::find(path.begin(), path.end(), d);
      if (at == path.end()) r.fail(c, "'at' of " + hw + " names '" + d + "', which is not on the walk's path", "a dentry of the path");
      if (permission && at + 1 == path.end())
        r.fail(c, "'at' of " + hw + " names the last component '" + d + "', whose permission the walk does not check",
               "a directory the walk goes through (the last component's permission is may_open's: a step after the walk)");
      if (!permission && at == path.begin())
        r.fail(c, "'at' of " + hw + " names the starting point '" + d + "', which the walk does not look up",
               "a component after the first (lookup_fast revalidates what it finds)");
      if (std::find(h.at.begin(), h.at.end(), d) != h.at.end())
        r.fail(c, "'at' of " + hw + " names '" + d + "' twice", "each component once");
      h.at.push_back(d);
    }
  }
  std::size_t runs = 0;
  for (std::size_t i = 0; i < path.size(); ++i) runs += hook_runs_on(s.walk, h, i) ? 1 : 0;
  if (runs == 0)
    r.fail(hn, hw + " runs on no component of a one-component path",
           permission ? "a path that goes through a directory" : "a path that looks up a component");
  // Each further component copies the steps: aliases must not multiply them for free.
  for (std::size_t k = count_steps(h.steps) * (runs - 1); k > 0; --k) r.count_step(hn);
}

void parse_walk(const Reader& r, const YAML::Node& n, Step& s, const std::string& what) {
  const YAML::Node path = n["walk"];
  if (!path.IsSequence() || path.size() == 0)
    r.fail(path, "the path of the " + what + " is not a non-empty list", "a list of dentry names, such as [root, tmp, file]");
  for (const auto& c : path) {
    r.count_step(c);  // each component becomes steps: aliases must not multiply them for free
    s.walk.path.push_back(r.name(c, "dentry of the " + what));
  }
  const std::string mode = r.scalar(r.require(n, "mode", "the " + what), "walk mode");
  if (mode == "rcu") s.walk.rcu = true;
  else if (mode == "ref") s.walk.rcu = false;
  else r.fail(n["mode"], "unknown walk mode '" + mode + "'", "rcu or ref");
  s.walk.component = r.time_dist(r.require(n, "component", "the " + what), "per-component time of the " + what, false);
  if (const auto rc = n["refcount"]) {
    const std::string v = r.scalar(rc, "refcount");
    if (v == "lockref") s.walk.lockref = true;
    else if (v != "atomic") r.fail(rc, "unknown refcount '" + v + "'", "atomic (d_count under d_lock) or lockref (3.12+)");
  }
  // The lockrefs' CMPXCHG_LOOP, as a `lockref:` step's (cmpxchg_loop.h).
  for (const char* k : {"relax", "retries"})
    if (n[k] && !s.walk.lockref)
      r.fail(n[k], std::string("'") + k + "' of the " + what + ", whose refcount is not lockref",
             "refcount: lockref (3.12+) with it: the lockref's cmpxchg loop");
  if (n["relax"]) s.walk.lockref_relax = r.boolean(n["relax"], "relax");
  if (n["retries"]) s.walk.lockref_retries = static_cast<int>(r.integer(n["retries"], "retries", 0, 1000000));
  if (n["keep_last"]) s.walk.keep_last = r.boolean(n["keep_last"], "keep_last");
  if (n["locked_put"]) s.walk.locked_put = r.boolean(n["locked_put"], "locked_put");
  if (n["count_reads"]) s.walk.count_reads = r.boolean(n["count_reads"], "count_reads");
  if (const auto refuse = n["refuse_rcu"]) {
    if (!refuse.IsSequence()) r.fail(refuse, "refuse_rcu is not a list", "a list of dentry names of the path");
    for (const auto& c : refuse) {
      const std::string d = r.name(c, "refused dentry");
      if (std::find(s.walk.path.begin(), s.walk.path.end(), d) == s.walk.path.end())
        r.fail(c, "refuse_rcu names '" + d + "', which is not on the walk's path", "a dentry of the path");
      s.walk.refuse.push_back(d);
    }
  }
  if (n["refuse_if"]) s.walk.refuse_if = r.name(n["refuse_if"], "refuse_if");
  if (const auto on = n["on_refuse"]) {
    const std::string v = r.scalar(on, "on_refuse");
    if (v == "restart") s.walk.restart = true;
    else if (v != "unlazy") r.fail(on, "unknown on_refuse '" + v + "'", "unlazy (drop to ref-walk in place) or restart");
  }
  parse_walk_hook(r, n, "permission", s, what);
  parse_walk_hook(r, n, "revalidate", s, what);
}

// An op that runs in rcu-walk is called with MAY_NOT_BLOCK / LOOKUP_RCU:
// it must not sleep (a sleeping lock, a sleep, a grace period), which is
// why kernfs refuses. Checked through op calls.
void check_nonblocking(const StepRefs& refs, const std::vector<Step>& steps, const WalkHook& h, const char* hook,
                       const std::string& via, std::set<std::string>& seen) {
  const Strategy& s = refs.strategy;
  for (const auto& st : steps) {
    if (const std::string blocks = blocking(s, st); !blocks.empty())
      throw ScenarioError(st.mark, std::string("the ") + hook + " hook of the walk at line " + std::to_string(h.mark.line) +
                                       " runs in rcu-walk (rcu: run) but " + blocks + via,
                          "rcu: refuse (the op returns -ECHILD under MAY_NOT_BLOCK / LOOKUP_RCU and runs again in "
                          "ref-walk), or steps that do not block");
    if (st.kind == StepKind::kCall && seen.insert(st.target).second)
      if (auto op = s.ops.find(st.target); op != s.ops.end())
        check_nonblocking(refs, op->second.steps, h, hook, via + " (through op '" + st.target + "')", seen);
    check_nonblocking(refs, st.body, h, hook, via, seen);
    check_nonblocking(refs, st.else_body, h, hook, via, seen);
  }
}

void check_walk(const StepRefs& refs, const Step& st) {
  if (st.walk.lockref)  // lockref on each d_lock: a dentry's lock may be redeclared (extends), so check it here
    for (const auto& d : st.walk.path) refs.need_lock(d + ".d_lock", st.mark, true);
  if (!st.walk.refuse_if.empty()) refs.need_param(st.walk.refuse_if, ParamValue::Type::kBool, st.mark);
  if (!st.walk.component.param.empty()) refs.need_param(st.walk.component.param, ParamValue::Type::kTime, st.mark);
  // The hooks' steps as they run, per component ('.NAME' resolved): each name declared.
  for (const auto& steps : walk_hook_instances(st)) check_step_refs(refs, steps);
  const std::pair<const WalkHook*, const char*> hooks[] = {{&st.walk.permission, "permission"},
                                                           {&st.walk.revalidate, "revalidate"}};
  for (const auto& [hook, name] : hooks)
    for (std::size_t i = 0; i < st.walk.path.size(); ++i)
      if (!hook->refuse_rcu && hook_runs_on(st.walk, *hook, i)) {
        std::set<std::string> seen;
        check_nonblocking(refs, hook_steps_at(*hook, st.walk.path[i]), *hook, name, "", seen);
      }
}

}  // namespace

// In the order a step with two kind keys is reported ("has both 'lock' and
// 'atomic'") and the kinds are listed in errors.
const std::vector<StepKindRow>& step_kinds() {
  using T = StepTarget;
  static const std::vector<StepKindRow> rows = {
      {"compute", StepKind::kCompute, {}, true, T::kNone, "compute (local)", parse_compute},
      {"lock", StepKind::kLock, {"hold", "body", "mode"}, true, T::kLock, "acquire, hold or body, release", parse_lock,
       check_lock},
      {"atomic", StepKind::kAtomic, {}, true, T::kLine, "atomic (RMW on the line)", parse_line_step<kAtomicKey>},
      {"read", StepKind::kRead, {}, true, T::kLine, "load", parse_line_step<kReadKey>},
      {"write", StepKind::kWrite, {}, true, T::kLine, "store", parse_line_step<kWriteKey>},
      {"call", StepKind::kCall, {}, false, T::kOp, "the op's instructions, inlined", parse_call},
      {"repeat", StepKind::kRepeat, {"body"}, false, T::kNone, "the body, unrolled", parse_repeat},
      {"branch", StepKind::kBranch, {"then", "else"}, false, T::kNone, "branch (local), then, jump, else", parse_branch},
      {"sleep", StepKind::kSleep, {}, true, T::kNone, "sleep (local, idle)", parse_sleep},
      {"percpu_add", StepKind::kPercpuAdd, {"batch", "counter_lock"}, true, T::kLine,
       "percpu count (local); every batch-th: acquire, atomic, release", parse_percpu_add, check_percpu_add},
      {"lockref", StepKind::kLockref, {"hold", "body", "relax", "retries"}, true, T::kLock,
       "lockref fast path (cmpxchg loop), else acquire, hold or body, release", parse_lockref, check_lockref},
      {"cmpxchg", StepKind::kCmpxchg, {"relax", "retries", "fallback"}, true, T::kLine,
       "cmpxchg loop on the line; retries exhausted: the fallback", parse_cmpxchg},
      {"seq_read", StepKind::kSeqRead, {"body", "retries", "fallback"}, true, T::kSeqcount,
       "seq begin, body, seq retry (fallback: acquire, body, release)", parse_seq_read, check_seq},
      {"seq_write", StepKind::kSeqWrite, {"body", "unlocked"}, true, T::kSeqcount, "seq write begin, body, seq write end",
       parse_seq_write, check_seq},
      {"rcu_read", StepKind::kRcuRead, {}, true, T::kNone, "rcu read lock, body, rcu read unlock", parse_rcu_read},
      {"synchronize_rcu", StepKind::kSynchronizeRcu, {}, true, T::kNone, "synchronize rcu (sleeps)",
       parse_synchronize_rcu, check_grace_period},
      {"call_rcu", StepKind::kCallRcu, {}, true, T::kNone,
       "call rcu (callback in softirq: its cost, or its steps after the grace period)", parse_call_rcu, check_call_rcu},
      {"sum", StepKind::kSumPerCpu, {}, true, T::kLine, "sum per-CPU copies", parse_line_step<kSumKey>, check_sum},
      {"walk", StepKind::kWalk,
       {"mode", "component", "refcount", "relax", "retries", "refuse_rcu", "refuse_if", "on_refuse", "keep_last",
        "locked_put", "count_reads", "permission", "revalidate"},
       true, T::kDentries,
       "per component: seqcount reads or d_lock and d_count steps; the permission and revalidate hooks' steps",
       parse_walk, check_walk},
      {"dec_and_lock", StepKind::kDecAndLock, {"spinlock", "last", "hold"}, true, T::kLine,
       "atomic; last reference: acquire, hold, release", parse_dec_and_lock, check_dec_and_lock},
      {"alloc", StepKind::kAlloc, {"pages", "reclaim", "reclaimed"}, true, T::kPool,
       "pool alloc; below low: reclaim body, pool reclaimed", parse_alloc},
  };
  return rows;
}

}  // namespace vfssim::models::parse

namespace vfssim::models {

bool hook_runs_on(const WalkSpec& w, const WalkHook& h, std::size_t component) {
  if (!h.present || component >= w.path.size()) return false;
  // may_lookup checks the directory it leaves; lookup_fast revalidates what it finds.
  if (&h == &w.permission ? component + 1 == w.path.size() : component == 0) return false;
  return h.at.empty() || std::find(h.at.begin(), h.at.end(), w.path[component]) != h.at.end();
}

namespace {
void resolve_relative(std::vector<Step>& steps, const std::string& component) {
  for (auto& st : steps) {
    for (std::string* name : {&st.target, &st.lock})
      if (!name->empty() && (*name)[0] == '.') *name = component + *name;
    resolve_relative(st.body, component);
    resolve_relative(st.else_body, component);
  }
}
}  // namespace

std::vector<Step> hook_steps_at(const WalkHook& h, const std::string& component) {
  std::vector<Step> steps = h.steps;
  resolve_relative(steps, component);
  return steps;
}

std::vector<std::vector<Step>> walk_hook_instances(const Step& walk) {
  std::vector<std::vector<Step>> out;
  if (walk.kind != StepKind::kWalk) return out;
  const WalkSpec& w = walk.walk;
  for (std::size_t i = 0; i < w.path.size(); ++i)
    for (const WalkHook* h : {&w.revalidate, &w.permission})  // lookup_fast finds it, then may_lookup leaves it
      if (hook_runs_on(w, *h, i)) out.push_back(hook_steps_at(*h, w.path[i]));
  return out;
}

}  // namespace vfssim::models

namespace vfssim::models::parse {

const StepKindRow& step_kind(StepKind kind) {
  for (const auto& row : step_kinds())
    if (row.kind == kind) return row;
  throw std::logic_error("step kind without a registry row");
}

Step parse_step(const Reader& r, const YAML::Node& n, const std::string& where) {
  if (!n.IsMap())
    r.fail(n, "a step of " + where + " is not a mapping",
           "a step such as '- compute: 100ns' or '- lock: name' with 'hold:'");
  r.count_step(n);
  const StepKindRow* row = nullptr;
  for (const auto& k : step_kinds()) {
    if (!n[k.name]) continue;
    if (row) r.fail(n, "a step of " + where + " has both '" + row->name + "' and '" + k.name + "'", "one step kind per list item");
    row = &k;
  }
  if (!row) {
    std::string list;
    for (const auto& k : step_kinds()) list += (list.empty() ? "" : ", ") + std::string(k.name);
    r.fail(n, "a step of " + where + " names no step kind", "one of: " + list);
  }
  Step s;
  s.mark = r.mark(n);
  s.kind = row->kind;
  const std::string what = std::string(row->name) + " step of " + where;
  if (n["fn"]) s.fn = r.name(n["fn"], "fn of the " + what);
  if (const auto cond = n["if"]) {
    std::string c = r.scalar(cond, "condition of the " + what);
    if (!c.empty() && c[0] == '!') {
      s.when_negated = true;
      c = c.substr(1);
    }
    if (c.empty()) r.fail(cond, "the condition of the " + what + " is empty", "a switch parameter, or !switch");
    s.when = c;
  }
  std::vector<const char*> allowed{row->name};
  allowed.insert(allowed.end(), row->keys.begin(), row->keys.end());
  if (row->fn) allowed.push_back("fn");
  allowed.push_back("if");
  r.only_keys(n, "a " + what, allowed);
  row->parse(r, n, s, what);
  return s;
}

std::vector<Step> parse_steps(const Reader& r, const YAML::Node& n, const std::string& where) {
  if (!n.IsSequence()) r.fail(n, where + " is not a list of steps", "a list such as [ {compute: 100ns} ]");
  const Reader::Nesting nesting(r, n);
  std::vector<Step> out;
  for (const auto& item : n) out.push_back(parse_step(r, item, where));
  return out;
}

void StepRefs::need_param(const std::string& name, ParamValue::Type type, const SourceMark& mark) const {
  auto it = params.find(name);
  if (it == params.end())
    throw ScenarioError(mark, "parameter '" + name + "' is not declared", "a parameter declared under 'params:'");
  if (it->second.type != type)
    throw ScenarioError(mark, "parameter '" + name + "' is a " + to_string(it->second.type) + " used as a " +
                                  to_string(type), std::string("a ") + to_string(type) + " parameter");
}

// `spin_only`: a lockref's count shares the word of a spinlock.
void StepRefs::need_lock(const std::string& name, const SourceMark& mark, bool spin_only) const {
  auto it = strategy.locks.find(name);
  if (it == strategy.locks.end())
    throw ScenarioError(mark, "strategy '" + strategy.name + "' uses lock '" + name + "', which it does not declare",
                        "a lock declared under 'locks:'");
  const std::string& kind = it->second.kind;
  if (spin_only && !find_lock_kind(kind)->spinlock)
    throw ScenarioError(mark, "lockref on lock '" + name + "' of kind " + kind,
                        "a spinlock (" + lock_kind_names(true) + "): a lockref shares the spinlock's word");
}

namespace {

void need_target(const StepRefs& refs, const Step& st, StepTarget target) {
  const Strategy& s = refs.strategy;
  auto missing = [&](const std::string& uses, const std::string& expected) {
    throw ScenarioError(st.mark, "strategy '" + s.name + "' " + uses + " '" + st.target + "', which it does not " +
                                     (target == StepTarget::kOp ? "define" : "declare"), expected);
  };
  switch (target) {
    case StepTarget::kNone: return;
    case StepTarget::kLock:
      if (!s.locks.count(st.target)) missing("uses lock", "a lock declared under 'locks:'");
      return;
    case StepTarget::kLine:
      if (!s.lines.count(st.target)) missing("uses line", "a line declared under 'lines:'");
      return;
    case StepTarget::kSeqcount:
      if (!s.seqcounts.count(st.target)) missing("uses seqcount", "a seqcount declared under 'seqcounts:'");
      return;
    case StepTarget::kPool:
      if (!s.pools.count(st.target)) missing("allocates from pool", "a pool declared under 'pools:'");
      return;
    case StepTarget::kOp:
      if (!s.ops.count(st.target)) missing("calls op", "an op defined under 'ops:'");
      return;
    case StepTarget::kDentries:
      for (const auto& d : st.walk.path)
        if (!s.dentries.count(d))
          throw ScenarioError(st.mark, "the walk goes through dentry '" + d + "', which strategy '" + s.name +
                                           "' does not declare", "a dentry declared under 'dentries:'");
      return;
  }
}

}  // namespace

void check_step_refs(const StepRefs& refs, const std::vector<Step>& steps) {
  for (const auto& st : steps) {
    if (!st.when.empty()) refs.need_param(st.when, ParamValue::Type::kBool, st.mark);
    if (!st.time.param.empty()) refs.need_param(st.time.param, ParamValue::Type::kTime, st.mark);
    if (!st.probability_param.empty()) refs.need_param(st.probability_param, ParamValue::Type::kNumber, st.mark);
    if (!st.count_param.empty()) refs.need_param(st.count_param, ParamValue::Type::kNumber, st.mark);
    const StepKindRow& row = step_kind(st.kind);
    need_target(refs, st, row.target);
    if (row.check) row.check(refs, st);
    if (st.has_body) check_step_refs(refs, st.body);
    check_step_refs(refs, st.else_body);
  }
}

}  // namespace vfssim::models::parse

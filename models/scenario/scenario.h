// The Scenario value: a machine, a workload and locking strategies, parsed
// and validated from a scenario file (docs/scenario-format.md).
//
// Everything here is plain data with the source position of each element,
// so that later stages (the program compiler, the runner) can still point
// at the line of the file that caused a problem. Strategies are stored
// resolved: `extends` has been applied.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/hardware/topology.h"
#include "models/kernel/lock.h"
#include "models/kernel/wake_latency.h"
#include "sim/time.h"

namespace vfssim::models {

struct SourceMark {
  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based
};

// A bad scenario: what() is "FILE:LINE:COL: what is wrong; what was expected".
// `text` with invalid UTF-8 and control characters written as \xNN.
std::string printable(const std::string& text);

class ScenarioError : public std::runtime_error {
 public:
  ScenarioError(SourceMark mark, const std::string& problem, const std::string& expected);
  const SourceMark& mark() const { return mark_; }
  const std::string& problem() const { return problem_; }
  const std::string& expected() const { return expected_; }

 private:
  SourceMark mark_;
  std::string problem_, expected_;
};

// Which instance of a lock or line a CPU touches.
enum class Scope {
  kGlobal,   // one for the whole machine
  kNode,     // one per NUMA node
  kCpu,      // one per CPU (per-CPU data, lglock/brlock parts)
  kProcess,  // one per process: shared by the threads of one process (files_struct)
  kTask,     // one per task: private (a file of its own)
  kObject,   // one per object of a set (ObjectSet): which one, picked per loop iteration
};
const char* to_string(Scope s);

// A time drawn per use: fixed, exponential or uniform.
struct TimeDist {
  enum class Kind : std::uint8_t { kFixed, kExponential, kUniform };
  Kind kind = Kind::kFixed;
  Duration a{0};  // fixed value, exponential mean, or uniform low
  Duration b{0};  // uniform high
  std::string param;  // "$name": `a` comes from a workload parameter (fixed or exp mean)
  Duration mean() const { return kind == Kind::kUniform ? (a + b) / 2 : a; }

  static TimeDist fixed(Duration v) { return make(Kind::kFixed, v, Duration{0}); }
  static TimeDist exponential(Duration mean) { return make(Kind::kExponential, mean, Duration{0}); }
  static TimeDist uniform(Duration lo, Duration hi) { return make(Kind::kUniform, lo, hi); }

 private:
  static TimeDist make(Kind k, Duration a, Duration b) {
    TimeDist t;
    t.kind = k;
    t.a = a;
    t.b = b;
    return t;
  }
};

// The range a number was read with, its bounds in the number's unit
// (picoseconds for a time): what the number feeds checks both ends at load
// time, before a sample of --uncertainty draws a value between them.
struct Span {
  bool ranged = false;
  double lo = 0, hi = 0;
};

// A workload parameter: a switch, a number (a probability, a count) or a time.
struct ParamValue {
  enum class Type { kBool, kNumber, kTime };
  Type type = Type::kNumber;
  bool flag = false;
  double number = 0;
  Duration time{0};
  Span span;  // when the parameter has a range
};
using Params = std::map<std::string, ParamValue>;
const char* to_string(ParamValue::Type t);

// An estimated constant: a time or number of the file written with a range,
// `{estimate: 90ns, range: [60ns, 170ns], why: "..."}` or `90ns ± 30ns`
// (docs/scenario-format.md, "Ranges"). Without sampling the estimate is
// used; `vfssim run --uncertainty N` draws values in [lo, hi]
// (docs/uncertainty.md).
struct Range {
  std::string name;  // its YAML path (params.read_cost, machine.levels.socket.transfer), or its `name:`
  bool time = false;   // a time: the values are picoseconds
  double estimate = 0, lo = 0, hi = 0;
  std::string why;
  SourceMark mark;
  // A fitted constant (`fit: FIGURE`): [lo, hi] is where it may be searched,
  // not a distribution. It is not drawn; under --uncertainty each sample
  // re-fits it to FIGURE, a `fitted: true` figure of the file
  // (models/experiment/refit.h), so the one-point fit moves with the
  // sampled constants as it would have had they been measured.
  std::string fit;
};
// Values drawn for ranges, by name (picoseconds for a time); a range the
// sample does not name keeps its estimate.
using RangeSample = std::map<std::string, double>;
// A number given in the file or as "$name" of a number parameter.
struct NumberRef {
  double value = 0;
  std::string param;
  Span span;  // when the number has a range (where it was read, not what it is)
  bool operator==(const NumberRef& o) const { return value == o.value && param == o.param; }
};

// `scope: object`: `objects` instances (files, inodes, kernfs nodes), and
// which one a task's loop iteration i uses (`pick`):
//   task         the task's own, task mod N (fixed);
//   uniform      floor(u N), u drawn per iteration from the task's pick stream;
//   zipf(s)      P(k) proportional to 1/(k+1)^s, k = 0..N-1, by inverse CDF of the same u;
//   round_robin  (task + i) mod N.
// One draw per task and iteration serves every declaration: two with the
// same objects and pick use the same object (a file's dentry and its inode).
struct ObjectSet {
  enum class Pick : std::uint8_t { kTask, kUniform, kZipf, kRoundRobin };
  NumberRef objects;  // resolved to `value` when the program is compiled
  Pick pick = Pick::kTask;
  double zipf_s = 0;  // zipf(s): s > 0
  bool operator==(const ObjectSet&) const = default;
};
std::string to_string(const ObjectSet& o);  // "uniform", "zipf(1.2)", ...

struct LockDecl {
  std::string name;
  std::string kind;  // tas, ticket, mcs, mutex, rwsem, rwlock, brlock
  Scope scope = Scope::kGlobal;
  bool spin = true;             // mutex, rwsem: waiters spin (else sleep)
  Duration wake_latency{0};     // mutex, rwsem: scheduler wake-up when waiters sleep (0: the machine's)
  bool needs_wake = false;      // waiters may sleep and no `wake:` was given: the machine must give one
  WakeShape wake_shape = WakeShape::kErlang2;  // its distribution (wake_shape:)
  Duration threshold{1000000000};  // cna: the secondary queue's head waits at most this (1 ms)
  bool reader_preference = false;  // rwlock: the pre-qrwlock unfair rwlock_t
  // mutex, rwsem by kernel version (`behaviour:` and the switches, which
  // override the behaviour's; lock_kinds.h's lock_behaviours()). Without
  // any of them the version-less model runs, as before.
  bool versioned = false;
  std::string behaviour;           // "" when only switches were given
  bool handoff = false;            // mutex, rwsem: the handoff bit
  bool reader_spin = false;        // rwsem: readers spin on a running writer
  bool reader_steal = false;       // rwsem: readers take a writer-free lock past the queue
  bool wake_all_readers = false;   // rwsem: a wake-up grants up to 256 readers from the whole queue
  bool spin_on_readers = false;    // rwsem: writers spin on a reader owner (the behaviour's; no switch)
  bool adaptive = false;           // rwsem: adaptive disabling of reader spinning (the behaviour's)
  bool handoff_spin = false;       // rwsem: the HANDOFF writer spins on the owner (the behaviour's)
  ObjectSet objects;               // scope: object
  SourceMark mark;
};

// The lock kinds a scenario may declare.
const std::vector<std::string>& lock_kinds();

struct LineDecl {
  std::string name;
  Scope scope = Scope::kGlobal;
  // `on: LOCK`: the line is the word's line of that spinlock (d_count beside
  // d_lock, next_fd beside file_lock): its scope is the lock's, and its
  // stores pay for the lock's spinners (models/hardware/cache_line.h).
  std::string on;
  SourceMark mark;
  ObjectSet objects;  // scope: object
  // `shared_by: N` on scope task or cpu: N consecutive tasks (task index),
  // or CPUs (CPU number), share one instance: fields of an array packed N
  // to a cache line (eight 8-byte fds per line of the fd array). 1: none.
  int shared_by = 1;
};

struct SeqDecl {
  std::string name;
  Scope scope = Scope::kGlobal;
  SourceMark mark;
  ObjectSet objects;  // scope: object
};


// Free pages between watermarks, refilled by kswapd (models/kernel/free_pages.h).
struct PoolDecl {
  std::string name;
  Scope scope = Scope::kNode;
  NumberRef low, high;  // pages: the watermarks
  NumberRef refill;     // pages per second kswapd returns while below `high`
  SourceMark mark;
};

enum class StepKind {
  kCompute,         // compute: TIME                      CPU time, nothing shared
  kLock,            // lock: L, hold: TIME | body: [...]  (mode: read|write)
  kAtomic,          // atomic: LINE                       RMW on a cache line
  kRead,            // read: LINE                         load of a cache line
  kWrite,           // write: LINE                        plain store to a cache line
  kCall,            // call: OP
  kRepeat,          // repeat: N, body: [...]
  kBranch,          // branch: P, then: [...], else: [...]
  kSleep,           // sleep: TIME                        blocked, not CPU time
  kPercpuAdd,       // percpu_add: LINE, batch: N, counter_lock: L  (percpu_counter)
  kLockref,         // lockref: L, hold: TIME (relax, retries)   CMPXCHG_LOOP, or the spinlock
  kSeqRead,         // seq_read: S, body: [...] (retries: N, fallback: L)
  kSeqWrite,        // seq_write: S, body: [...]
  kRcuRead,         // rcu_read: [...]
  kSynchronizeRcu,  // synchronize_rcu: normal
  kCallRcu,         // call_rcu: TIME | {steps: [...], fn} callback cost or steps, run after a GP
  kSumPerCpu,       // sum: LINE                          read every CPU's copy
  kWalk,            // walk: [dentries], mode: rcu|ref     path lookup (expanded at compile time)
  kDecAndLock,      // dec_and_lock: LINE, spinlock: L, last: P, hold: TIME   atomic_dec_and_lock
  kAlloc,           // alloc: POOL, pages: N, reclaim: [...], reclaimed: M   page allocation, direct reclaim below low
  kCmpxchg,         // cmpxchg: LINE (relax, retries, fallback: [...])   compare-and-swap retry loop
};

struct Step;

// A filesystem's per-component op run inside a path walk (fs/namei.c):
// `permission:` is inode_permission -> ->permission, which may_lookup runs
// on every directory the walk goes through (not the last component: that is
// may_open's, after the walk); `revalidate:` is ->d_revalidate, which
// lookup_fast runs on every dentry it finds (not the starting point). In
// rcu-walk the op is called with MAY_NOT_BLOCK / LOOKUP_RCU: `rcu: run`
// runs its steps there too; `rcu: refuse` returns -ECHILD, the walk drops
// to ref-walk (try_to_unlazy, or the walk's on_refuse: restart) and the op
// runs again, blocking allowed (kernfs in 5.12 and 5.15).
struct WalkHook {
  bool present = false;
  std::vector<Step> steps;       // per component; a target '.NAME' is that component's COMPONENT.NAME
  bool refuse_rcu = false;       // rcu: refuse
  std::vector<std::string> at;   // `at:`, the components whose op this is; empty: every one it can run on
  SourceMark mark;
};

// A path walk (fs/namei.c), expanded into steps when the program is compiled.
struct WalkSpec {
  std::vector<std::string> path;     // dentries, from the starting point to the last component
  bool rcu = true;                   // rcu-walk first (2.6.38+), else ref-walk
  TimeDist component;                // per-component work: hash, d_hash lookup, exec permission
  bool lockref = false;              // d_count shares d_lock's word (3.12+): get/put by lockref
  bool lockref_relax = false;        // ... its CMPXCHG_LOOP's cpu_relax() (3.12 to 6.1; `relax:`)
  int lockref_retries = 100;         // ... and its most tries (100 since 5.2; 0: no limit; `retries:`)
  std::vector<std::string> refuse;   // components whose permission check refuses RCU mode (-ECHILD)
  std::string refuse_if;             // ... only when this switch parameter is on
  bool restart = false;              // on refusal: restart the whole walk in ref-walk (the 2010
                                     // LOOKUP_FIRST failure) instead of dropping to ref-walk in place
  bool keep_last = true;             // the last dentry keeps its reference (the caller puts it later)
  bool locked_put = false;           // a put takes d_lock (vfs-scale's ref-walk: d_count under d_lock)
  bool count_reads = false;          // dget/dput read d_count before their atomic (2.6.32: BUG_ON, might_sleep)
  WalkHook permission;               // ->permission of each directory walked through (may_lookup)
  WalkHook revalidate;               // ->d_revalidate of each dentry looked up (lookup_fast)
};

struct Step {
  StepKind kind = StepKind::kCompute;
  std::string target;    // lock, line, seqcount or op name; call_rcu with steps: the callback's fn ("" none)
  TimeDist time;         // compute/sleep time, lock hold, callback cost
  LockMode mode = LockMode::kExclusive;
  bool has_body = false;
  std::vector<Step> body;       // under the lock / repeated / then / read section / direct reclaim / RCU callback
  std::vector<Step> else_body;  // branch
  int count = 1;                // repeat count; percpu batch; seq retries (-1: unbounded); alloc pages
  int reclaimed = 0;            // alloc: pages its direct reclaim gives back
  double probability = 0;       // branch
  std::string lock;             // percpu_add's counter lock; seq_read's fallback lock
  std::string fn;               // kernel function this step stands for (profile)
  std::string when;             // "if: PARAM": the step exists only when the switch is on
  bool when_negated = false;    // "if: '!PARAM'"
  bool unlocked = false;        // seq_write: writers serialised by an order the model holds no lock for
  bool relax = false;           // lockref, cmpxchg: cpu_relax() after a failed cmpxchg (models/kernel/cmpxchg_loop.h)
  int retries = 0;              // lockref, cmpxchg: the most tries, then the spinlock / fallback; 0: no limit
  std::string probability_param;  // "branch: $name"
  std::string count_param;        // "repeat: $name"
  WalkSpec walk;
  SourceMark mark;
};

// A walk's hooks as they run: for each component a hook runs on (path
// order, permission before revalidate at the same component), its steps
// with '.NAME' targets resolved to COMPONENT.NAME. The checks that follow
// step lists (references, op calls, RCU, seqcount writers) read them here.
bool hook_runs_on(const WalkSpec& w, const WalkHook& h, std::size_t component);
std::vector<Step> hook_steps_at(const WalkHook& h, const std::string& component);
std::vector<std::vector<Step>> walk_hook_instances(const Step& walk);

struct OpDef {
  std::string name;
  std::vector<Step> steps;
  SourceMark mark;
  // `{fn: NAME, steps: [...]}`: the kernel function the profile shows for
  // the op's frame (an op specialized for a call's bindings, sys_open.2,
  // is still the kernel's do_sys_open); "" is the op's name.
  std::string fn = {};
  std::string description = {};
};

struct Strategy {
  std::string name;
  std::string description;
  std::string extends;
  SourceMark extends_mark;  // where `extends` names it: in the file, or in a --set
  std::map<std::string, LockDecl> locks;
  std::map<std::string, LineDecl> lines;
  std::map<std::string, SeqDecl> seqcounts;
  std::map<std::string, PoolDecl> pools;
  std::map<std::string, Scope> dentries;  // each implies NAME.d_lock, NAME.d_count, NAME.d_seq
  std::map<std::string, OpDef> ops;
  int hz = 0;  // kernel: {hz: N}; needed by RCU grace periods
  SourceMark mark;
};

enum class TaskKind { kProcess, kThread };

// A group of tasks with a loop of its own (`workload: roles:`): the writer
// and the readers of a microbenchmark, a reclaim thread beside workers.
// How many tasks: exactly one of `count`, `fraction` (of the point's CPUs,
// rounded down, at least 1) or `per_node` (per NUMA node the point's CPUs
// span); none: the CPUs the other roles leave (one role at most).
struct Role {
  std::string name;
  std::vector<std::string> loop;
  int count = 0;         // > 0: that many tasks
  double fraction = 0;   // in (0, 1]: that share of the CPUs
  int per_node = 0;      // > 0: that many on each NUMA node in use
  bool rest() const { return count == 0 && fraction == 0 && per_node == 0; }
  SourceMark mark;       // of the role's name
  SourceMark loop_mark;
};

struct Workload {
  TaskKind tasks = TaskKind::kProcess;  // processes: a files_struct each; threads: one shared
  Placement placement = Placement::kSpread;
  std::vector<int> cpu_list;            // explicit placement: task i runs on cpu_list[i]
  std::vector<std::string> loop;        // ops of one iteration; ops/s counts iterations (empty with roles)
  std::vector<Role> roles;              // file order; empty: every task runs `loop`
  Duration warmup{0};
  Duration duration{0};
  std::vector<int> cpus;                // default sweep
  SourceMark loop_mark;
  SourceMark placement_mark;            // of an explicit CPU list

  // Every loop the tasks run: each role's, in order, or `loop` alone.
  std::vector<std::vector<std::string>> loops() const;
  std::vector<SourceMark> loop_marks() const;
};

// The role of each of the `cpus.size()` tasks of a point (task i on
// cpus[i], the placement's order). Roles take CPUs in declaration order
// from the placement's order; a per_node role takes, on each NUMA node the
// CPUs span, that node's first free CPUs. Without roles: all 0. Throws
// ScenarioError at the role when the counts do not fit the CPUs.
std::vector<int> assign_roles(const Workload& w, const Topology& topo, const std::vector<int>& cpus);

// A named workload variant: parameter values and, optionally, another
// machine, task kind, loop or CPU list.
struct Variant {
  std::string name;
  std::string description;
  Params params;  // complete: defaults with the variant's overrides applied
  std::string machine_name;
  TopologySpec machine;
  Workload workload;
  SourceMark mark;
};

// A reported figure the scenario must predict (`expect:`).
//
// Kinds: "value" (a point's metric), "ratio" (new/base), "change" (new/base
// - 1, kept as the ratio 1 + change in `reported`), "peak" (the CPU count
// of a curve's highest point, and the height there), "spread" (the fastest
// and the slowest task of a point). A `curve:` entry of the file becomes
// one "value" figure per point, named CURVE@CPUS, with `curve` set.
struct Expectation {
  std::string id;
  std::string kind;
  // ops_per_sec | us_per_op | speedup (ops/s over the same strategy and
  // variant at 1 CPU) | share:<profile chain prefix>
  std::string metric = "ops_per_sec";
  struct PointRef {
    std::string strategy, variant = "default";
    int cpus = 1;
  } new_point, base_point;     // peak: new_point.cpus is the reported peak's CPU count
  std::vector<int> peak_cpus;  // peak: the curve's CPU counts searched for the highest point
  double reported = 0;       // value, ratio, 1 + change, peak height (NaN: only the CPU count given),
                             // spread: the fastest task's metric
  double reported_high = 0;  // spread with stat min_max: the slowest task's metric
  // spread: which statistic of the point's tasks (models::TaskStats) the
  // figure reports: min_max (the fastest and the slowest task, a pair),
  // median (the median task's metric), fairness (max/min per-task ops/s),
  // jain (Jain's index), p50_latency | p99_latency | p999_latency |
  // max_latency (per-op latency, microseconds). Every one but min_max is
  // one number, scored as a value (and may take a bound).
  std::string stat = "min_max";
  // spread: the tasks of this role of the point's workload only ("": every
  // task), e.g. the readers and the writers of an rwsem benchmark apart.
  std::string role;
  double tolerance = 0;      // relative error allowed (0.25 = 25%); a change: see results/score.h
  // What the thread gave: a value ("about", "550-570 us"), or only a bound
  // (">40% of the time"): "at_least" / "at_most" count as met anywhere on
  // their side and score the shortfall past the bound as the error.
  std::string bound = "about";
  bool fitted = false;     // used to set a constant: shown, not scored
  std::string curve;       // the `curve:` entry this value figure came from ("" otherwise)
  std::string source;      // seed file and quoted line
  SourceMark mark;
};

// The rungs of the validation ladder (DESIGN.md "The validation ladder"):
// a figure is predicted from the rungs below its own. `hardware`: the
// machine's own microbenchmarks, the only rung machine constants may be
// fitted on; `locks`: lock benchmarks on those machines; `workload`: VFS
// and kernel workloads on those locks. A file that says nothing is a
// workload (the top rung: no machine constant may be fitted in it).
inline constexpr const char* kLevels[] = {"hardware", "locks", "workload"};

struct Scenario {
  std::string name;
  std::string description;
  std::string source;
  std::string level = "workload";  // one of kLevels (`level:`)
  std::string machine_name;
  TopologySpec machine;
  Workload workload;
  std::vector<Strategy> strategies;  // file order, `extends` applied
  Params params;                     // defaults
  std::vector<Variant> variants;     // "default" first, then the file's, in order
  std::vector<Expectation> expect;
  std::vector<Range> ranges;         // every range of the file and its machine files, by name
  // What the loader accepts but a reader should hear of, each
  // "FILE:LINE:COL: warning: ..." (a NUMA-aware lock on a one-node machine);
  // run and validate print them on stderr.
  std::vector<std::string> warnings;
  std::string path;                  // file it came from ("<string>" otherwise)
  std::string text;                  // the file's text, stored with results
  std::string hash;                  // fnv1a64 of `text`, hex
  // The scenario with machine presets inlined, `extends` applied, every
  // variant's parameters and CPU list spelled out (YAML; loads back to the
  // same simulations), and its fnv1a64: what a run's results depend on.
  std::string resolved_text;
  std::string resolved_hash;

  const Strategy& strategy(const std::string& name) const;
  bool has_strategy(const std::string& name) const;
  const Variant& variant(const std::string& name) const;
  // The CPUs of `n` tasks under a workload's placement.
  static std::vector<int> place_tasks(const Topology& topo, const Workload& w, int n);
  bool has_variant(const std::string& name) const;
};

// A what-if edit of the document, applied before it is checked
// (`vfssim run --set KEY=VALUE`). KEY is a dotted path: a bare NAME is the
// parameter `params.NAME` (and every variant's value of it), STRATEGY.PATH
// is `strategies.STRATEGY.PATH` (an entry a strategy inherits through
// `extends` is copied into it first), and a path may start at a top-level
// key (`workload.duration`). VALUE is YAML. The loader checks the result
// as it checks the file; a message about the edited part names the setting
// as its file: "--set 'KEY=VALUE':1:COL: ..." (COL within KEY=VALUE).
struct Setting {
  std::string assignment;        // KEY=VALUE
  std::string origin = "--set";  // how messages name it
};

// Loads and validates a scenario file. Machine presets named by the file
// are looked up in `machine_dirs` (then beside the file, in ../machines).
// `settings` edit it first, in order (the resolved text has them applied).
Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& machine_dirs = {},
                            const std::vector<Setting>& settings = {});
// The same from text; `name` stands for the file in messages.
Scenario load_scenario_string(const std::string& text, const std::string& name,
                              const std::vector<std::string>& machine_dirs = {},
                              const std::vector<Setting>& settings = {});
// `base` with its ranges set to `sample`'s values (loaded again from its
// resolved text, in which every range carries its name): the sampled
// scenario's resolved text holds the values, so it travels as any other.
Scenario sample_scenario(const Scenario& base, const RangeSample& sample);
// The directory of the scenarios that come with vfssim (seed/, validation/,
// machines/): $VFSSIM_SCENARIOS, else the installed copy beside the
// executable (BINDIR/../share/vfssim/scenarios), else the source tree it
// was built from, else the configured install directory.
std::string scenarios_dir();

// Loads a machine preset file (scenarios/machines/*.yaml).
TopologySpec load_machine_file(const std::string& path);
// Finds a preset by name in the given directories and the built-in one.
std::string find_machine_file(const std::string& name, const std::vector<std::string>& dirs);

// Parses "120ns", "2.5us", "4ms", "300ps", "1s".
Duration parse_duration(const std::string& text, const SourceMark& mark);

}  // namespace vfssim::models

// A strategy's code path compiled to a flat instruction list.
//
// Op calls are inlined at compile time (the scenario loader has rejected
// cycles), lock steps become acquire / hold / release, repeats are
// unrolled, and the workload loop becomes the whole program followed by an
// end-of-iteration marker. Every instruction keeps its static call chain
// (a frame) so that the profile can print perf-style chains
// ("_raw_spin_lock <- grab_super_passive <- super_cache_count") without a
// run-time stack.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/kernel/lock.h"
#include "models/scenario/scenario.h"

namespace vfssim::models {

enum class InstrKind : std::uint8_t {
  kCompute,        // local: advance the CPU's clock by `time`
  kAcquire,        // lock `slot` in `mode`
  kRelease,
  kAtomic,         // RMW on line `slot`
  kLoad,           // load of line `slot`
  kStore,          // plain store to line `slot` (the CPU goes on after local_hit)
  kSumPerCpu,      // load every CPU's copy of per-CPU line `slot`
  kBranch,         // local: with probability `p` fall through, else go to `jump`
  kJump,           // local: go to `jump`
  kSleep,          // local: blocked for `time` (idle, not CPU time)
  kPercpuCount,    // local: per-CPU counter `aux` += 1; below `count` go to `jump`, else reset and fall through
  kLockrefFast,    // lock `slot` free: cmpxchg loop on its word (`count` retries, `aux` relax), then `jump`;
                   //   held or the tries exhausted: fall through to the spinlock
  kSeqBegin,       // read_seqbegin on seqcount `slot`
  kSeqRetry,       // read_seqretry: retry -> `jump` (begin), or after `count` retries -> `jump2`; ok -> `aux`
  kSeqWriteBegin,
  kSeqWriteEnd,
  kRcuReadLock,    // free, but at the global clock: grace periods look at it
  kRcuReadUnlock,  // reports a deferred quiescent state
  kSynchronizeRcu,
  kCallRcu,        // callback costing `time`, run after a grace period; `aux` 1: the callback is the
                   //   code at `jump2`, up to its kCallbackEnd, and the task goes on at `jump`
  kCallbackEnd,    // the end of a callback's code: back to the end of iteration that ran it
  kPoolAlloc,      // `count` pages from pool `slot`: fast path -> `jump`; below low: fall into direct reclaim
  kPoolReclaimed,  // direct reclaim done: `aux` pages back to pool `slot`, then the allocation's `count` taken
  kCmpxchg,        // cmpxchg loop on line `slot` (`count` retries, `aux` relax): ok -> `jump`; exhausted: fall through
  kEndIteration,
};

struct Instr {
  InstrKind kind;
  LockMode mode = LockMode::kExclusive;
  std::uint32_t slot = 0;    // lock, line or seqcount slot
  std::uint32_t frame = 0;   // index into Program::frames
  std::uint32_t symbol = 0;  // index into Program::symbols: what perf would show
  std::uint32_t jump = 0, jump2 = 0, aux = 0;
  std::int32_t count = 0;
  double p = 0;
  TimeDist time;
};

struct Frame {
  int parent = -1;   // -1 for the loop itself
  std::string name;  // op (kernel function) name
};

struct Program {
  std::vector<Instr> code;
  std::vector<Frame> frames;
  std::vector<std::string> symbols;
  std::vector<LockDecl> locks;  // slot -> declaration
  std::vector<LineDecl> lines;  // slot -> declaration
  std::vector<SeqDecl> seqcounts;  // slot -> declaration
  std::vector<PoolDecl> pools;     // slot -> declaration, parameters resolved into `value`
  std::uint32_t percpu_counters = 0;  // per-task counters used by kPercpuCount
  bool uses_rcu_gp = false;           // synchronize_rcu or call_rcu appear
  bool uses_sum = false;
  int hz = 0;
  std::vector<std::string> detail;  // per instruction: the lock or line it touches, or ""
  // Per instruction: the symbol of an acquisition that found the lock free
  // (qspinlock's _raw_spin_lock), or kNoSymbol (the instruction's own).
  static constexpr std::uint32_t kNoSymbol = 0xffffffffu;
  std::vector<std::uint32_t> fast_symbol;
  std::vector<std::uint32_t> entries;  // the first instruction of each role's loop ({0} without roles)

  // "sym <- f2 <- f1" for instruction `pc`.
  std::string chain(std::size_t pc) const;
};

// The probability that one iteration of the loop ends without advancing
// the clock: every step it passes is local and of zero time (compute 0ns,
// branches, jumps, RCU read markers, call_rcu, a pool's bookkeeping, a lock
// made free by a what-if, named in `free_locks`). It follows the control
// flow: a branch of probability 0 never reaches its body, so a loop whose
// only timed step sits there is 1 (it would spin at one instant forever),
// and `branch: 0.001` around the only compute step is 0.999. Where a step
// has two successors the model does not weigh (a pool's fast or slow
// path), the larger is taken. `role`: of that role's loop (Program::entries).
double zero_time_probability(const Program& program, const std::vector<std::string>& free_locks = {},
                             std::size_t role = 0);

// Compiles `strategy` running `loop`. Throws ScenarioError when the program
// would exceed `max_instructions` (a repeat unrolled too far).
// Workload parameters resolve here: `if:` conditions drop steps, `$name`
// times, probabilities and counts take the variant's values.
Program compile_program(const Strategy& strategy, const std::vector<std::string>& loop, const Params& params = {},
                        std::size_t max_instructions = 1 << 20);
// The same for every loop of the workload: each role's, one after the other.
Program compile_program(const Strategy& strategy, const Workload& workload, const Params& params = {},
                        std::size_t max_instructions = 1 << 20);

}  // namespace vfssim::models

// A compare-and-swap retry loop on one cache line: lib/lockref.c's
// CMPXCHG_LOOP (the `lockref:` step's fast path) and the generic
// `cmpxchg:` step.
//
// The kernel's loop, as of v6.2 (lib/lockref.c):
//
//   int retry = 100;                            // 893a7d32e8e0 (v5.2, Glauber)
//   old = READ_ONCE(lockref->lock_count);
//   while (arch_spin_value_unlocked(old.lock)) {
//       new = old; CODE;                        // count++, count--
//       if (try_cmpxchg64_relaxed(&lockref->lock_count, &old, new))
//           SUCCESS;                            // a failure reloads `old`
//       if (!--retry) break;
//       cpu_relax();                            // bc08b449ee14 (v3.12) until
//   }                                           //   f5fe24ef17b5 (v6.2) removed it
//   spin_lock(&lockref->lock); ...              // the slow path
//
// So 3.12 to 5.1: cpu_relax() and no limit; 5.2 to 6.1: cpu_relax() and
// 100 tries; 6.2 on: 100 tries, no cpu_relax(). `relax:` and `retries:`
// say which; R tries means R cmpxchgs and R - 1 cpu_relax()es.
//
// Retries are not simulated one by one (the cost rule of DESIGN.md): one
// operation is one call here whatever the contention (O(log n) for the
// line's heap of CPUs in a loop). The quantities,
// for an operation of CPU i starting at `now`:
//
//   L      the word's line. It serialises requests (each starts when the
//          one before has finished) and knows which CPUs are inside a
//          cmpxchg loop on it, until the completion computed for them.
//   k      the other CPUs inside a loop on L at `now`.
//   start  when L starts serving i's first cmpxchg: max(now, L's busy end).
//   g1     when that cmpxchg completes: L.rmw(i, now); c = g1 - start is
//          what one grant of L to i costs (transfer, contended floors).
//   P      cpu_relax(): the machine's `pause:` (x86 PAUSE latency).
//   T      the tries of the operation (cmpxchgs issued).
//
// An operation's states, (try, outcome):
//
//   (1, ok)    k == 0 or start == now: nobody else's update can have been
//              granted between i's READ_ONCE (at now, folded into the
//              cmpxchg: the load and the cmpxchg are one request of L) and
//              its cmpxchg. Done at g1, T = 1: one cmpxchg exactly, the
//              cost of the `lockref:` step before this model.
//   (1, fail)  k >= 1 and start > now: a request of another CPU in the loop
//              was served first, and it changed the word. Then:
//     relax: false -> (2, ok). On x86 a failed cmpxchg is a locked RMW: it
//              took L exclusive and returned the current word
//              (f5fe24ef17b5: "even a failing cmpxchg grants exclusive
//              access to the cacheline"). The retry follows after CODE, a
//              few instructions, far less than a transfer, so no queued
//              request can take L first: a local atomic, done at
//              L.rmw(i, g1) = g1 + local_atomic. T = 2.
//     relax: true -> (T, ok), or (R, fail) -> the spinlock when T > R.
//              i pauses P, and its retry joins L's queue behind the
//              requests the k others made meanwhile: L serves the
//              contenders in turn. A grant succeeds iff no success came
//              since its requester last saw the word (its previous grant).
//              Going round, after each success the others' next grants are
//              all stale: each fails once and sees the new word, and only
//              then can one of them succeed. So per success the line serves
//              about k failed tries, and in turn each contender's
//              operation takes T = k tries (T = 2 when k == 1: the one other
//              CPU cannot fail i twice in a row without an operation of its
//              own in between), T = max(2, k), with no randomness.
//              Each retry costs i a pause and a grant, P + c; L serves one
//              more grant, c (L is free for others during the pauses, and
//              their failed grants are charged to their own operations:
//              summed over operations, L's busy time is every grant once).
//              Done at g1 + (T - 1)(P + c), L busy (T - 1) c longer. If
//              T > R, the R-th try fails: i leaves the loop at
//              g1 + (R - 1)(P + c), after R - 1 more grants of L, and takes
//              the spinlock (R tries, R - 1 pauses).
//
// The loop sees the spinlock only at `now` (the `held()` test before this
// call): the kernel's loop also leaves when a failed cmpxchg shows the lock
// taken, which here the next operation sees. tests/unit/test_cmpxchg_loop.cpp
// checks T against a simulation of the loop, grant by grant, on a line that
// serves N contenders in turn (an independent queueing model: loads and
// cmpxchgs as separate requests, the word's version compared at each grant).
#pragma once

#include "models/hardware/cache_line.h"
#include "models/hardware/topology.h"
#include "sim/time.h"

namespace vfssim::models {

// lib/lockref.c's `int retry = 100` (893a7d32e8e0).
constexpr int kLockrefRetries = 100;

struct CmpxchgLoop {
  bool relax = false;   // cpu_relax() after a failed cmpxchg
  int retries = 0;      // the most tries (cmpxchgs) before the fallback; 0: no limit
  Duration pause{0};    // what one cpu_relax() costs (the machine's `pause:`)
};

struct CmpxchgOutcome {
  Time done;             // when the loop ends (success, or the last failed try)
  int tries = 1;         // cmpxchgs issued
  bool gave_up = false;  // `retries` tries failed: the caller takes its fallback
};

// T of the header for a relaxed loop whose first try failed, k >= 1.
int cmpxchg_relax_tries(int k);

// One operation of `cpu` at `now` on `line`.
CmpxchgOutcome run_cmpxchg_loop(CacheLine& line, const Topology& topo, int cpu, Time now, const CmpxchgLoop& loop);

}  // namespace vfssim::models

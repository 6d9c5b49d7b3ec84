#include "models/kernel/cmpxchg_loop.h"

#include <stdexcept>

namespace vfssim::models {

int cmpxchg_relax_tries(int k) {
  if (k < 1) throw std::invalid_argument("cmpxchg_relax_tries: a failed first try needs another CPU in the loop");
  return k < 2 ? 2 : k;
}

CmpxchgOutcome run_cmpxchg_loop(CacheLine& line, const Topology& topo, int cpu, Time now, const CmpxchgLoop& loop) {
  const int k = line.in_loop(now);
  const Time start = now < line.busy_until() ? line.busy_until() : now;
  const Time g1 = line.rmw(topo, cpu, now);
  CmpxchgOutcome out{g1, 1, false};
  if (k > 0 && start > now) {  // (1, fail)
    // A retry that comes back within the machine's retention window finds
    // the line still here (cache_line.h): a cpu_relax() that short (PAUSE
    // before Skylake, ~10 cycles) retries as a loop without one does.
    const Coherence& coh = topo.coherence();
    const bool relaxed = loop.relax && !(coh.retention_ops > 1 && loop.pause <= coh.retention_window);
    const int tries = relaxed ? cmpxchg_relax_tries(k) : 2;
    const bool gave_up = loop.retries > 0 && tries > loop.retries;
    out.tries = gave_up ? loop.retries : tries;
    out.gave_up = gave_up;
    const std::int64_t retries = out.tries - 1;
    if (!relaxed) {
      if (retries > 0) out.done = line.rmw(topo, cpu, g1 + (loop.relax ? loop.pause : Duration{0}));  // (2, ok): the line stayed here
    } else {
      const Duration c = g1 - start;
      out.done = g1 + (loop.pause + c) * retries;
      line.occupy(cpu, retries, c);
    }
  }
  line.enter_loop(out.done);
  return out;
}

}  // namespace vfssim::models

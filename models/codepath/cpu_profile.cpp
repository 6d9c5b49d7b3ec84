#include "models/codepath/cpu_profile.h"

#include <algorithm>
#include <map>

namespace vfssim::models {

namespace {

// What an instruction synchronizes on, for the bottleneck analysis.
const char* object_kind_of(InstrKind k) {
  switch (k) {
    case InstrKind::kAcquire:
    case InstrKind::kRelease:
    case InstrKind::kLockrefFast: return "lock";
    case InstrKind::kAtomic:
    case InstrKind::kCmpxchg:
    case InstrKind::kLoad:
    case InstrKind::kStore:
    case InstrKind::kSumPerCpu:
    case InstrKind::kPercpuCount: return "line";
    case InstrKind::kSeqBegin:
    case InstrKind::kSeqRetry:
    case InstrKind::kSeqWriteBegin:
    case InstrKind::kSeqWriteEnd: return "seqcount";
    default: return nullptr;
  }
}

}  // namespace

std::vector<ProfileEntry> CpuTimeProfile::entries(const Program& program) const {
  std::map<std::pair<std::string, std::string>, ProfileEntry> by_chain;
  const auto add = [&](std::size_t pc, std::int64_t t, bool fast) {
    const std::string& own = program.symbols[program.code[pc].symbol];
    std::string chain = program.chain(pc);
    std::string sym = own;
    if (fast) {  // the same chain under the fast path's symbol
      sym = program.symbols[program.fast_symbol[pc]];
      chain = sym + chain.substr(own.size());
    }
    auto& e = by_chain[{chain, program.detail[pc]}];
    e.symbol = sym;
    e.chain = chain;
    e.detail = program.detail[pc];
    e.time += Duration{t};
    if (const char* kind = object_kind_of(program.code[pc].kind)) {
      e.object_kind = kind;
      e.synchronizing = true;
    }
  };
  for (std::size_t pc = 0; pc < program.code.size(); ++pc) {
    const bool has_fast = pc < program.fast_symbol.size() && program.fast_symbol[pc] != Program::kNoSymbol;
    if (time_ps_[pc] + (has_fast ? 0 : fast_ps_[pc]) != 0) add(pc, time_ps_[pc] + (has_fast ? 0 : fast_ps_[pc]), false);
    if (has_fast && fast_ps_[pc] != 0) add(pc, fast_ps_[pc], true);
  }
  if (time_ps_.back() > 0) {
    ProfileEntry cb;
    cb.symbol = "rcu_do_batch";
    cb.chain = "rcu_do_batch <- rcu_process_callbacks";
    cb.time = Duration{time_ps_.back()};
    by_chain[{cb.chain, ""}] = cb;
  }
  std::vector<ProfileEntry> out;
  for (auto& [k, v] : by_chain) out.push_back(v);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.time > b.time; });
  return out;
}

}  // namespace vfssim::models

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
  for (std::size_t pc = 0; pc < program.code.size(); ++pc) {
    if (time_ps_[pc] == 0) continue;
    const std::string chain = program.chain(pc);
    auto& e = by_chain[{chain, program.detail[pc]}];
    e.symbol = program.symbols[program.code[pc].symbol];
    e.chain = chain;
    e.detail = program.detail[pc];
    e.time += Duration{time_ps_[pc]};
    if (const char* kind = object_kind_of(program.code[pc].kind)) {
      e.object_kind = kind;
      e.synchronizing = true;
    }
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

#include "models/codepath/program.h"

#include <map>

namespace vfssim::models {

std::string Program::chain(std::size_t pc) const {
  const Instr& in = code.at(pc);
  std::string s = symbols.at(in.symbol);
  for (int f = static_cast<int>(in.frame); f >= 0; f = frames[f].parent) {
    if (frames[f].name == s && f == static_cast<int>(in.frame)) continue;  // self time: no repeat
    if (frames[f].parent < 0 && frames[f].name == "loop") break;
    s += " <- " + frames[f].name;
  }
  return s;
}

namespace {

Instr make_instr(InstrKind kind, LockMode mode = LockMode::kExclusive, std::uint32_t slot = 0) {
  Instr in{};
  in.kind = kind;
  in.mode = mode;
  in.slot = slot;
  return in;
}

class Compiler {
 public:
  Compiler(const Strategy& s, std::size_t max) : s_(s), max_(max) {}

  Program run(const std::vector<std::string>& loop) {
    p_.frames.push_back({-1, "loop"});
    for (const auto& op : loop) call(op, 0, s_.ops.at(op).mark);
    emit(make_instr(InstrKind::kEndIteration), 0, symbol("loop"), "", {});
    return std::move(p_);
  }

 private:
  std::uint32_t symbol(const std::string& name) {
    auto [it, inserted] = symbol_ids_.try_emplace(name, static_cast<std::uint32_t>(p_.symbols.size()));
    if (inserted) p_.symbols.push_back(name);
    return it->second;
  }

  std::uint32_t lock_slot(const std::string& name) {
    auto [it, inserted] = lock_ids_.try_emplace(name, static_cast<std::uint32_t>(p_.locks.size()));
    if (inserted) p_.locks.push_back(s_.locks.at(name));
    return it->second;
  }

  std::uint32_t line_slot(const std::string& name) {
    auto [it, inserted] = line_ids_.try_emplace(name, static_cast<std::uint32_t>(p_.lines.size()));
    if (inserted) p_.lines.push_back(s_.lines.at(name));
    return it->second;
  }

  void emit(Instr in, std::uint32_t frame, std::uint32_t sym, const std::string& detail, const SourceMark& mark) {
    if (p_.code.size() >= max_)
      throw ScenarioError(mark, "the code path of strategy '" + s_.name + "' grows past " + std::to_string(max_) +
                                    " instructions once calls and repeats are expanded",
                          "smaller repeat counts");
    in.frame = frame;
    in.symbol = sym;
    p_.code.push_back(in);
    p_.detail.push_back(detail);
  }

  void call(const std::string& op, std::uint32_t parent, const SourceMark&) {
    p_.frames.push_back({static_cast<int>(parent), op});
    const auto frame = static_cast<std::uint32_t>(p_.frames.size() - 1);
    steps(s_.ops.at(op).steps, frame);
  }

  void steps(const std::vector<Step>& list, std::uint32_t frame) {
    const std::string self = p_.frames[frame].name;  // a copy: frames grow below
    for (const auto& st : list) {
      switch (st.kind) {
        case StepKind::kCompute: {
          Instr in = make_instr(InstrKind::kCompute);
          in.time = st.time;
          emit(in, frame, symbol(st.fn.empty() ? self : st.fn), "", st.mark);
          break;
        }
        case StepKind::kLock: {
          // A lock step taken inside `fn` shows as a frame of its own.
          std::uint32_t f = frame;
          if (!st.fn.empty()) {
            p_.frames.push_back({static_cast<int>(frame), st.fn});
            f = static_cast<std::uint32_t>(p_.frames.size() - 1);
          }
          const auto slot = lock_slot(st.target);
          Instr acq = make_instr(InstrKind::kAcquire, st.mode, slot);
          emit(acq, f, symbol(wait_symbol(p_.locks[slot].kind)), st.target, st.mark);
          if (st.has_body) {
            steps(st.body, f);
          } else {
            Instr hold = make_instr(InstrKind::kCompute);
            hold.time = st.time;
            emit(hold, f, symbol(p_.frames[f].name), st.target, st.mark);
          }
          emit(make_instr(InstrKind::kRelease, st.mode, slot), f, symbol("_raw_spin_unlock"), st.target, st.mark);
          break;
        }
        case StepKind::kAtomic:
        case StepKind::kRead: {
          const auto slot = line_slot(st.target);
          Instr in = make_instr(st.kind == StepKind::kAtomic ? InstrKind::kAtomic : InstrKind::kLoad, LockMode::kExclusive, slot);
          emit(in, frame, symbol(st.fn.empty() ? self : st.fn), st.target, st.mark);
          break;
        }
        case StepKind::kCall:
          call(st.target, frame, st.mark);
          break;
        case StepKind::kRepeat:
          for (int i = 0; i < st.count; ++i) steps(st.body, frame);
          break;
      }
    }
  }

  static const char* wait_symbol(const std::string& kind) {
    (void)kind;  // every modelled lock kind is a spinlock so far
    return "_raw_spin_lock";
  }

  const Strategy& s_;
  std::size_t max_;
  Program p_;
  std::map<std::string, std::uint32_t> symbol_ids_, lock_ids_, line_ids_;
};

}  // namespace

Program compile_program(const Strategy& strategy, const std::vector<std::string>& loop, std::size_t max_instructions) {
  return Compiler(strategy, max_instructions).run(loop);
}

}  // namespace vfssim::models

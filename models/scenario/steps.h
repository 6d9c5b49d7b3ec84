// The registry of step kinds: one row per kind of step a code path may
// have (`compute:`, `lock:`, `seq_read:`, ...), holding its name, the keys
// it accepts beside its own, its parser, the declaration its target must
// name, its own reference checks, and the instructions it compiles to
// (program.cpp). parse_step, check_references and the docs test read this
// table; no other code compares step names.
// Internal to models/scenario/: the public API is scenario.h.
#pragma once

#include <string>
#include <vector>

#include "models/scenario/reader.h"

namespace vfssim::models::parse {

// What a step's `target` must name in its strategy.
enum class StepTarget { kNone, kLock, kLine, kSeqcount, kPool, kOp, kDentries };

// The declarations a step's names are checked against.
struct StepRefs {
  const Strategy& strategy;
  // A lock the strategy declares (`spin_only`: of a spinlock kind).
  void need_lock(const std::string& name, const SourceMark& mark, bool spin_only) const;
  void need_param(const std::string& name, ParamValue::Type type, const SourceMark& mark) const;
  const Params& params;
};

struct StepKindRow {
  const char* name;
  StepKind kind;
  std::vector<const char*> keys;  // beyond the step's own key, `if` and (when `fn`) `fn`
  bool fn;                        // may name the kernel function it stands for
  StepTarget target;
  const char* compiles_to;        // the instructions it becomes (docs)
  // Reads the row's keys of `n` into `s` (kind, mark, fn and if already set).
  void (*parse)(const Reader& r, const YAML::Node& n, Step& s, const std::string& what);
  // Checks beyond the target's declaration, or nullptr.
  void (*check)(const StepRefs& refs, const Step& s) = nullptr;
};

const std::vector<StepKindRow>& step_kinds();
const StepKindRow& step_kind(StepKind kind);

Step parse_step(const Reader& r, const YAML::Node& n, const std::string& where);
std::vector<Step> parse_steps(const Reader& r, const YAML::Node& n, const std::string& where);
// Every name the steps use must be declared, their parameters of the right type.
void check_step_refs(const StepRefs& refs, const std::vector<Step>& steps);

}  // namespace vfssim::models::parse

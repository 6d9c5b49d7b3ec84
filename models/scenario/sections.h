// The scenario file's sections, each parsed in its own file:
//   machine.cpp   machine: (inline, a preset, or a machine file)
//   workload.cpp  workload: and variants: (a variant is a workload override,
//                 read by the same parsers)
//   strategy.cpp  strategies: (locks, lines, seqcounts, pools, dentries,
//                 ops), extends, and the reference checks
//   steps.cpp     the steps of ops, from the step-kind registry
//   expect.cpp    expect: (reported figures)
// loader.cpp puts them together. Internal to models/scenario/.
#pragma once

#include <string>
#include <vector>

#include "models/scenario/reader.h"

namespace vfssim::models::parse {

// Bounds that keep the recursive parts (inlining op calls, extends) on a
// safe stack and a load's work proportional to its file.
constexpr std::size_t kMaxExtends = 64;     // strategies in one extends chain
constexpr int kMaxCallDepth = 128;          // nested op calls
constexpr std::size_t kMaxStrategies = 256;
constexpr std::size_t kMaxVariants = 256;
// Steps of all strategies once `extends` has copied the inherited ops (each
// strategy keeps its own copy, ~2.4 kB a step with the resolved YAML): 256
// strategies extending one 20,000-step op would take ~12 GB before a point.
constexpr std::size_t kMaxResolvedSteps = 400000;

TopologySpec parse_machine(const Reader& r, const YAML::Node& n, const std::string& name_hint);
// `machine: NAME` (a preset), `machine: PATH.yaml` (relative to `file`) or
// an inline mapping (named `fallback_name` unless it names itself).
TopologySpec load_machine_ref(const Reader& r, const YAML::Node& n, const std::string& file,
                              const std::vector<std::string>& machine_dirs, const std::string& fallback_name);
// The machine a `machine:` node names, as an inline mapping with its name.
YAML::Node inline_machine(const Reader& r, const YAML::Node& n, const std::string& file,
                          const std::vector<std::string>& machine_dirs, const TopologySpec& spec);

// resolved.cpp: a strategy's node with `extends` applied as resolve_extends
// applies it to the parsed strategies: the parent's entries of each map,
// replaced by the child's of the same name; the child's other keys (kernel,
// dentry_lock) over the parent's; the parent's description dropped. The
// chain must be valid (every parent declared, no cycle).
YAML::Node resolved_strategy_node(const YAML::Node& strategies, const std::string& name);
// expand.cpp: the scenario's use of the code-path and benchmark libraries
// (use, benchmark, objects, patch, call bindings, library values), expanded
// in the document `root` of the scenario file `file` before settings apply.
void expand_library(Reader& r, YAML::Node& root, const std::string& file);
// settings.cpp: applies the what-if settings to the document, in order.
void apply_settings(Reader& r, YAML::Node& root, const std::vector<Setting>& settings);
// resolved.cpp: the scenario as the loader resolved it, as YAML.
std::string resolved_document(const Reader& r, const YAML::Node& root, const Scenario& sc, const std::string& file,
                              const std::vector<std::string>& machine_dirs);

Workload parse_workload(const Reader& r, const YAML::Node& wl, const TopologySpec& machine);
// The variants: the default (the scenario as written) first.
std::vector<Variant> parse_variants(const Reader& r, const YAML::Node& root, const Scenario& sc,
                                    const std::vector<std::string>& machine_dirs);

Strategy parse_strategy(const Reader& r, const std::string& name, const YAML::Node& n);
// Applies `extends`: a child starts from its parent's declarations and ops
// and replaces entries of the same name. The only place `extends` is resolved.
void resolve_extends(std::vector<Strategy>& strategies);
// Every seq_write serialised by a lock its writers share, for a workload's
// kind of tasks and loop (a variant may change them).
void check_seq_writers(const Strategy& s, const Workload& w);
// A cmpxchg loop with `relax: true` needs the machine's `pause:`.
void check_relax(const Strategy& s, const TopologySpec& machine);
// A lock whose waiters sleep needs `wake:` or the machine's wake_latency.
void check_wake(const Strategy& s, const TopologySpec& machine);
// A NUMA-aware lock kind (CNA) on a machine of one node: accepted, and a
// warning in `warnings` (once per lock and machine).
void warn_numa_aware(const Strategy& s, const TopologySpec& machine, std::vector<std::string>& warnings);
// Every name a strategy uses must exist, and op calls must not recurse.
// `loop_name`: how messages name the loop ("the workload loop", "the loop of role 'writer'").
void check_references(const Strategy& s, const std::vector<std::string>& loop, const SourceMark& loop_mark,
                      const Params& params, const std::string& loop_name = "the workload loop");

std::vector<Expectation> parse_expect(const Reader& r, const YAML::Node& n, const Scenario& sc);

}  // namespace vfssim::models::parse

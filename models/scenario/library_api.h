// What the code-path and benchmark libraries hold, for `vfssim library`
// and `vfssim new BENCHMARK TEST`: the versions with their changes (each a
// kernel commit), the ops of a version as their files write them, the
// values (costs, lock kinds) per machine family, a diff of two versions
// for one op, the benchmarks and their tests. A bad library file throws
// ScenarioError at its FILE:LINE:COL, as a scenario that uses it would.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/scenario/scenario.h"

namespace vfssim::models {

struct LibraryChangeInfo {
  std::string version, commit, title, summary;
  SourceMark mark;
  std::vector<std::string> touched;  // "ops.open", "locks.files_lock", "values.getname", ...
};

struct LibraryOpInfo {
  std::string name, version, description;  // version: the one whose file wrote it last
  std::string text;                        // its steps, as YAML
  SourceMark mark;
  std::vector<std::string> calls;          // ops it calls, in order, each once
  std::vector<std::string> values;         // library values it names ($NAME), each once
  std::vector<std::string> bindings;       // $NAME placeholders its callers bind (path, file, ...)
};

struct LibraryValueInfo {
  std::string name, version, why;
  SourceMark mark;
  std::map<std::string, std::string> by_family;  // family -> value as written ("100ns ± 50ns", "ticket")
};

struct LibraryVersionInfo {
  std::string name, inherits, description, source, file;
  std::vector<LibraryChangeInfo> changes;  // its own (not its ancestors')
  std::vector<LibraryOpInfo> ops;
  std::vector<LibraryValueInfo> values;
  std::vector<std::string> classes, objects, locks, lines, seqcounts;
};

struct BenchmarkTestInfo {
  std::string name, description, source;
  std::vector<std::string> loop;
};

struct BenchmarkInfo {
  std::string name, description, source, file;
  std::vector<std::string> modes;
  std::vector<BenchmarkTestInfo> tests;
};

class LibraryCatalog {
 public:
  // `dirs`: looked up first (each holding kernel/ and benchmarks/), then
  // the scenarios that come with vfssim.
  explicit LibraryCatalog(std::vector<std::string> dirs = {});
  ~LibraryCatalog();
  LibraryCatalog(const LibraryCatalog&) = delete;
  LibraryCatalog& operator=(const LibraryCatalog&) = delete;

  std::vector<std::string> versions();  // oldest first (kernel/families.yaml)
  std::map<std::string, std::vector<std::string>> families();  // family -> machine presets
  LibraryVersionInfo version(const std::string& name);
  // The op and every op it calls, depth first, each once.
  std::vector<LibraryOpInfo> op_closure(const std::string& version, const std::string& op);
  // The changes after `from` up to `to` (an ancestor of it) that touch `op`,
  // an op it calls or a value or declaration those use ("" op: every change).
  std::vector<LibraryChangeInfo> diff(const std::string& from, const std::string& to, const std::string& op);
  std::vector<BenchmarkInfo> benchmarks();
  // A runnable scenario of benchmark test `spec` (NAME/TEST_MODE) on kernel
  // `version` and machine preset `machine`, named `name` (`vfssim new`).
  std::string new_scenario(const std::string& spec, const std::string& version, const std::string& machine,
                           const std::string& name);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vfssim::models

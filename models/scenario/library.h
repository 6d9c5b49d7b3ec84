// The code-path library (scenarios/kernel/) and the benchmark library
// (scenarios/benchmarks/), as the loader reads them: a kernel version is
// its base version's declarations, object classes, values and ops with the
// changes of every version up to it applied in order, each change citing
// its kernel commit; a benchmark is a workload and the ops of its tests,
// built on the library's syscalls. Both stay YAML nodes of their files, so
// that a scenario's expanded text (expand.cpp) places every error in the
// file and line it came from. docs/library.md describes the files.
// Internal to models/scenario/: the public API is library_api.h.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "models/scenario/reader.h"

namespace vfssim::models::parse {

// A node that is absent (false in a test): a default YAML::Node is a null
// that tests true.
inline YAML::Node absent() { return YAML::Node(YAML::NodeType::Undefined); }

// A YAML::Node that assignment rebinds. YAML::Node's own operator= writes
// through: the node it held takes the other's content, wherever else that
// node is (a library file's op, shared by every strategy that imports it).
// Every node the expansion stores or reassigns is one of these.
struct NodeRef : YAML::Node {
  NodeRef() : YAML::Node(YAML::NodeType::Undefined) {}
  NodeRef(const YAML::Node& n) : YAML::Node(n) {}  // NOLINT: a node is a NodeRef
  NodeRef(const NodeRef& n) = default;
  NodeRef& operator=(const NodeRef& n) {
    reset(n);
    return *this;
  }
  NodeRef& operator=(const YAML::Node& n) {
    reset(n);
    return *this;
  }
};

// The sections of a version that hold named entries, in the order a
// strategy's own sections are merged.
inline constexpr const char* kLibrarySections[] = {"values", "classes", "objects", "locks", "lines", "seqcounts", "pools", "ops"};

// A named entry of a section, as the versions up to one left it.
struct LibraryEntry {
  NodeRef key, value;  // nodes of the file that set it (or of a patch made from them)
  std::string version;    // the version whose file set it last
  std::string file;
};

// One change of a version: a kernel commit and what it does to the
// version before.
struct LibraryChange {
  std::string version, file, commit, title, summary;
  SourceMark mark;
  NodeRef node;  // the change as its file writes it (a backport applies it again)
  // What it touches: "ops.open", "locks.files_lock", "values.getname", ...
  std::set<std::string> touched;
};

struct LibraryVersion {
  std::string name, file, description, source, inherits;
  NodeRef root;
  std::map<std::string, std::map<std::string, LibraryEntry>> sections;  // section -> name -> entry
  std::vector<LibraryChange> changes;  // every change from the base version up to this one, in order
  // The kernel's `kernel:` block (hz) and dentry_lock, as the newest file that gives them says.
  NodeRef kernel, dentry_lock;
};

// A test of a benchmark, in one of its modes.
struct BenchmarkTest {
  std::string benchmark, test, mode, file;
  NodeRef root;       // the benchmark file
  NodeRef node;       // tests.TEST
  NodeRef mode_node;  // modes.MODE (or absent)
};

class Library {
 public:
  // Files are looked up in `dirs`, then $VFSSIM_SCENARIOS's and the
  // installed scenarios' kernel/ and benchmarks/.
  Library(Reader& r, std::vector<std::string> dirs) : r_(r), dirs_(std::move(dirs)) {}

  // kernel/VERSION, resolved along its `inherits:` chain. `at`: the node
  // that names it (errors are placed there).
  const LibraryVersion& version(const std::string& name, const YAML::Node& at);
  // kernel/VERSION with the changes of later versions that cite `commits`
  // (a list node of commit ids) applied on top, in order: a backport.
  const LibraryVersion& backported(const std::string& name, const YAML::Node& commits, const YAML::Node& at);
  // NAME/TEST or NAME/TEST_MODE (a mode the benchmark has).
  BenchmarkTest benchmark(const std::string& spec, const YAML::Node& at);
  // The family (x86, power) of a machine preset, from kernel/families.yaml;
  // "" when it lists none.
  std::string family_of(const std::string& machine, const YAML::Node& at);
  std::vector<std::string> families(const YAML::Node& at);

  // Every version and benchmark file there is (names, sorted by the order
  // of families.yaml's `versions:` list).
  std::vector<std::string> version_names(const YAML::Node& at);
  std::vector<std::string> benchmark_names();
  std::string find(const std::string& sub, const std::string& name) const;
  YAML::Node families_node() const { return families_; }

 private:
  YAML::Node load(const std::string& path);
  void apply_change(LibraryVersion& v, const YAML::Node& change, const std::string& file, const std::string& version,
                    LibraryChange& record);

  Reader& r_;
  std::vector<std::string> dirs_;
  std::map<std::string, NodeRef> files_;  // parsed, by path
  std::map<std::string, LibraryVersion> versions_;
  std::set<std::string> resolving_;
  NodeRef families_;
};

// The library's patch language, shared by version files and scenarios:
// `edits` (a list of {replace|remove|before|after|at|append|prepend})
// applied to the op `steps` (a sequence node), giving a new sequence that
// shares the untouched steps. `op_at` says where the op comes from, for
// messages ("op 'open' of kernel v6.6 (scenarios/kernel/v6.1.yaml:88:3)").
YAML::Node patch_steps(Reader& r, const YAML::Node& steps, const YAML::Node& edits, const std::string& op,
                       const std::string& op_at);

// The same for an op as a file writes it: a list of steps, or
// {steps, fn, description} (the steps patched, the rest kept).
YAML::Node patch_op(Reader& r, const YAML::Node& op_value, const YAML::Node& edits, const std::string& op,
                    const std::string& op_at);

// The directories a scenario's library files are looked up in: beside it.
std::vector<std::string> library_dirs(const std::string& scenario_file);

}  // namespace vfssim::models::parse

// A NodeRef put into a node (force_insert, push_back) is that very node.
template <>
struct YAML::convert<vfssim::models::parse::NodeRef> {
  static Node encode(const vfssim::models::parse::NodeRef& rhs) { return rhs; }
  static bool decode(const Node& n, vfssim::models::parse::NodeRef& out) {
    out.reset(n);
    return true;
  }
};

// Scenario loading: the seed scenario parses; bad input is reported with
// file, line, column and what was expected.
#include <doctest/doctest.h>

#include "models/experiment/experiment.h"
#include "models/scenario/scenario.h"
#include "models/kernel/lock_kinds.h"
#include "models/scenario/steps.h"

#include <fstream>
#include <sstream>

using namespace vfssim;
using namespace vfssim::models;

namespace {

const std::string kSeed = std::string(VFSSIM_SOURCE_DIR) + "/scenarios/seed/open-close-power5.yaml";

const char* kMinimal = R"(scenario: tiny
machine:
  levels:
    - {name: socket, count: 1, transfer: 20ns}
    - {name: core, count: 4}
  local_hit: 1ns
  local_atomic: 10ns
workload:
  tasks: thread
  loop: [op]
  warmup: 1us
  duration: 10us
strategies:
  base:
    locks:
      l: {kind: mcs, scope: global}
    ops:
      op:
        - compute: 100ns
        - lock: l
          hold: 50ns
)";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  return s.replace(pos, from.size(), to);
}

void expect_error(const std::string& text, int line, int column, const std::string& fragment) {
  try {
    load_scenario_string(text, "bad.yaml");
    FAIL("no error for: " << fragment);
  } catch (const ScenarioError& e) {
    const std::string message = e.what();
    CAPTURE(message);
    CHECK(e.mark().file == "bad.yaml");
    CHECK(e.mark().line == line);
    CHECK(e.mark().column == column);
    CHECK(std::string(e.what()).find(fragment) != std::string::npos);
    CHECK(std::string(e.what()).find("expected") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("the seed scenario loads with its strategies resolved") {
  const Scenario sc = load_scenario_file(kSeed);
  CHECK(sc.name == "open-close-power5");
  CHECK(sc.machine_name == "power5p-64");
  REQUIRE(sc.strategies.size() == 3);
  const auto& vfs = sc.strategy("vfs-scale");
  CHECK(vfs.locks.at("files_lglock").scope == Scope::kCpu);   // the library's v2.6.39
  CHECK(vfs.locks.at("file_lock").scope == Scope::kProcess);  // the library's files_struct lock
  CHECK(!vfs.locks.count("dcache_lock"));                     // gone in 2.6.39; baseline (2.6.32) has it
  CHECK(sc.strategy("baseline").locks.count("dcache_lock"));
  CHECK(sc.workload.cpus == std::vector<int>{1, 2, 4, 8, 16, 32, 64});
}

TEST_CASE("times parse exactly with their unit") {
  const SourceMark m{"x", 1, 1};
  CHECK(parse_duration("120ns", m) == sim::nanoseconds(120));
  CHECK(parse_duration("2.5us", m) == sim::nanoseconds(2500));
  CHECK(parse_duration("4ms", m) == sim::microseconds(4000));
  CHECK(parse_duration("300ps", m) == sim::picoseconds(300));
  CHECK(parse_duration("0.001ns", m) == sim::picoseconds(1));
  CHECK_THROWS_AS(parse_duration("120", m), ScenarioError);
  CHECK_THROWS_AS(parse_duration("12 parsecs", m), ScenarioError);
  CHECK_THROWS_AS(parse_duration("0.0001ns", m), ScenarioError);
}

TEST_CASE("the minimal scenario runs") {
  const Scenario sc = load_scenario_string(kMinimal, "tiny.yaml");
  const auto r = run_point(sc, PointSpec{"base", 2, 0, 1});
  CHECK(r.ops > 0);
}

TEST_CASE("bad scenarios name file, line and column") {
  expect_error(replace(kMinimal, "hold: 50ns", "hold: 50"), 21, 17, "has no unit");
  expect_error(replace(kMinimal, "hold: 50ns", "hold: 50ns\n          spin: yes"), 22, 11, "unknown key 'spin'");
  expect_error(replace(kMinimal, "kind: mcs", "kind: mutexx"), 16, 17, "unknown lock kind 'mutexx'");
  expect_error(replace(kMinimal, "- lock: l", "- lock: m"), 20, 11, "does not declare");
  expect_error(replace(kMinimal, "tasks: thread", "tasks: fibre"), 9, 10, "unknown task kind");
  expect_error(replace(kMinimal, "duration: 10us", "duration: 0us"), 12, 13, "greater than zero");
  expect_error(replace(kMinimal, "loop: [op]", "loop: [op, nope]"), 10, 9, "does not define");
  expect_error(replace(kMinimal, "        - compute: 100ns", "        - call: op"), 19, 11, "cycle");
  expect_error("scenario: x\nmachine: nosuch\nworkload: {}\nstrategies: {}\n", 2, 10, "unknown machine preset");
  expect_error("scenario: [unclosed\n", 2, 1, "YAML syntax error");
  expect_error("", 1, 1, "empty");
}

TEST_CASE("an explicit placement puts task i on the i-th listed CPU") {
  const Scenario sc = load_scenario_string(replace(kMinimal, "  tasks: thread\n", "  tasks: thread\n  placement: [3, 1]\n"),
                                           "explicit.yaml");
  const Topology topo(sc.machine);
  CHECK(Scenario::place_tasks(topo, sc.workload, 2) == std::vector<int>{3, 1});
  CHECK(Scenario::place_tasks(topo, sc.workload, 1) == std::vector<int>{3});
  CHECK_THROWS_AS(Scenario::place_tasks(topo, sc.workload, 3), std::invalid_argument);
  CHECK(run_point(sc, PointSpec{"base", 2, 0, 1}).ops > 0);
  expect_error(replace(kMinimal, "  tasks: thread\n", "  tasks: thread\n  placement: [1, 1]\n"), 10, 18, "twice");
  expect_error(replace(kMinimal, "  tasks: thread\n", "  tasks: thread\n  placement: [9]\n"), 10, 15, "out of range");
  expect_error(replace(kMinimal, "  tasks: thread\n", "  tasks: thread\n  placement: [3, 1]\n  cpus: [1, 4]\n"), 11, 9,
               "the placement lists 2");
}

// docs/scenario-format.md, whose tables the registries must match.
std::string scenario_format_doc() {
  std::ifstream in(std::string(VFSSIM_SOURCE_DIR) + "/docs/scenario-format.md");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_CASE("docs/scenario-format.md lists exactly the registry's lock kinds") {
  const std::string doc = scenario_format_doc();
  const auto at = doc.find("Lock kinds (one row each");
  REQUIRE(at != std::string::npos);
  const std::string para = doc.substr(at, doc.find("`mode: read`", at) - at);
  std::string listed;
  for (std::size_t i = para.find('`'); i != std::string::npos; i = para.find('`', para.find('`', i + 1) + 1)) {
    const std::size_t j = para.find('`', i + 1);
    listed += (listed.empty() ? "" : ", ") + para.substr(i + 1, j - i - 1);
  }
  CHECK(listed == "models/kernel/lock_kinds.cpp, " + vfssim::models::lock_kind_names());
}

TEST_CASE("docs/scenario-format.md's step table is the step-kind registry, key for key") {
  const std::string doc = scenario_format_doc();
  const auto from = doc.find("\n## Steps");
  REQUIRE(from != std::string::npos);
  const std::string section = doc.substr(from, doc.find("\n## Expected figures", from) - from);
  std::vector<std::string> rows;  // "| `NAME: ..." rows of the table, in order
  for (std::size_t i = section.find("\n| `"); i != std::string::npos; i = section.find("\n| `", i + 1)) {
    const std::size_t name = i + 4;
    rows.push_back(section.substr(name, section.find_first_of(":`", name) - name));
  }
  std::vector<std::string> registry;
  for (const auto& row : vfssim::models::parse::step_kinds()) {
    registry.push_back(row.name);
    for (const char* key : row.keys) {
      INFO("step ", row.name, " key ", key);
      const std::string k(key);
      CHECK((section.find("`" + k) != std::string::npos || section.find(" " + k + ":") != std::string::npos));
    }
  }
  std::sort(rows.begin(), rows.end());
  std::sort(registry.begin(), registry.end());
  CHECK(rows == registry);
}

TEST_CASE("docs/scenario-format.md's lock-key table is the registry's lock_keys(), with the kinds taking each") {
  const std::string doc = scenario_format_doc();
  const auto at = doc.find("| key | value (default) | kinds | meaning |");
  REQUIRE(at != std::string::npos);
  std::vector<std::string> rows;
  for (std::size_t i = doc.find("\n| `", at); i != std::string::npos && i < doc.find("\n\n", at);
       i = doc.find("\n| `", i + 1))
    rows.push_back(doc.substr(i + 1, doc.find('\n', i + 1) - i - 1));
  const auto& keys = vfssim::models::lock_keys();
  REQUIRE(rows.size() == keys.size());
  for (std::size_t k = 0; k < keys.size(); ++k) {
    std::string kinds = vfssim::models::lock_kinds_taking(keys[k].name);
    for (auto p = kinds.find(" and "); p != std::string::npos; p = kinds.find(" and ")) kinds.replace(p, 5, ", ");
    std::string value = keys[k].value;
    for (auto p = value.find('|'); p != std::string::npos; p = value.find('|', p + 2)) value.replace(p, 1, "\\|");
    CHECK(rows[k] == "| `" + std::string(keys[k].name) + "` | " + value + " | " + kinds + " | " + keys[k].description + " |");
  }
}

TEST_CASE("docs/scenario-format.md's behaviour table is the registry's lock_behaviours()") {
  const std::string doc = scenario_format_doc();
  const auto at =
      doc.find("| kind | behaviour | handoff | reader_spin | reader_steal | wake_readers | spin_on_readers | adaptive | "
               "handoff_spin | rules |");
  REQUIRE(at != std::string::npos);
  std::vector<std::string> rows;
  const auto end = doc.find("\n\n", at);
  for (std::size_t i = doc.find("\n| ", at + 1); i != std::string::npos && i < end; i = doc.find("\n| ", i + 1))
    rows.push_back(doc.substr(i + 1, doc.find('\n', i + 1) - i - 1));
  const auto& table = vfssim::models::lock_behaviours();
  REQUIRE(rows.size() == table.size());
  auto b = [](bool v) { return std::string(v ? "true" : "false"); };
  for (std::size_t k = 0; k < table.size(); ++k) {
    const auto& t = table[k];
    CHECK(rows[k] == "| " + std::string(t.kind) + " | " + t.name + " | " + b(t.handoff) + " | " + b(t.reader_spin) +
                         " | " + b(t.reader_steal) + " | " + (t.wake_all_readers ? "all" : "leading") + " | " +
                         b(t.spin_on_readers) + " | " + b(t.adaptive) + " | " + b(t.handoff_spin) + " | " + t.rules + " |");
  }
}

// What-if settings (`vfssim run --set KEY=VALUE`): edits of the scenario
// document made before the loader reads it, so that a bad value gets the
// message it would get in the file, placed in the setting instead
// (Reader::add_origin). The resolved text is written from the edited
// document: a run stores, and --resume matches, the scenario it ran.
#include <algorithm>
#include <iterator>
#include <set>

#include "models/scenario/sections.h"

namespace vfssim::models::parse {

namespace {

const char* const kTopLevel[] = {"scenario", "description", "source", "machine", "workload",
                                 "params",   "variants",    "strategies", "expect"};

std::string keys_of(const YAML::Node& map) {
  std::string list;
  for (const auto& kv : map)
    if (kv.first.IsScalar()) list += (list.empty() ? "" : ", ") + kv.first.Scalar();
  return list.empty() ? "none" : list;
}

// A lookup of a missing key gives an invalid node: asking it IsMap() throws.
bool is_map(const YAML::Node& n) { return n.IsDefined() && n.IsMap(); }

bool has_key(const YAML::Node& map, const std::string& key) {
  if (!is_map(map)) return false;
  for (const auto& kv : map)
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return true;
  return false;
}

// The key of `map` made of the most components of `comps` from `i` (keys
// may hold dots: a dentry's lock is NAME.d_lock); how many it took, 0 if
// none matches.
std::size_t match(const YAML::Node& map, const std::vector<std::string>& comps, std::size_t i, std::string& key) {
  for (std::size_t j = comps.size(); j > i; --j) {
    std::string k = comps[i];
    for (std::size_t t = i + 1; t < j; ++t) k += "." + comps[t];
    if (has_key(map, k)) {
      key = k;
      return j - i;
    }
  }
  return 0;
}

// The strategy with `extends` applied, or a null node when its chain is
// not one to follow (an undeclared parent, a cycle: the loader reports it).
YAML::Node resolved_or_null(const YAML::Node& strategies, const std::string& strategy) {
  std::set<std::string> seen;
  for (std::string name = strategy;;) {
    if (!seen.insert(name).second || !has_key(strategies, name) || !is_map(strategies[name])) return {};
    const YAML::Node e = strategies[name]["extends"];
    if (!e) break;
    if (!e.IsScalar()) return {};
    name = e.Scalar();
  }
  try {
    return resolved_strategy_node(strategies, strategy);
  } catch (const YAML::Exception&) {  // a malformed entry the loader will point at
    return {};
  }
}

class Apply {
 public:
  Apply(Reader& r, const Setting& s) : r_(r), label_(s.origin + " '" + s.assignment + "'"), s_(s) {}

  void operator()(YAML::Node& root) {
    const std::string& a = s_.assignment;
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      fail(1, "'" + a + "' is not KEY=VALUE", "KEY=VALUE such as nr_files=4 or baseline.locks.files_lock.kind=mcs");
    const std::string key = a.substr(0, eq);
    std::vector<std::string> comps;
    std::vector<int> cols;  // 1-based column of each component
    for (std::size_t start = 0;;) {
      const auto dot = key.find('.', start);
      const std::size_t end = dot == std::string::npos ? key.size() : dot;
      comps.push_back(key.substr(start, end - start));
      cols.push_back(static_cast<int>(start) + 1);
      if (comps.back().empty())
        fail(cols.back(), "key '" + key + "' has an empty component", "dotted names such as baseline.locks.files_lock.kind");
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    value_col_ = static_cast<int>(eq) + 2;
    try {
      value_ = YAML::Load(a.substr(eq + 1));
    } catch (const YAML::Exception& e) {
      fail(value_col_ + std::max(e.mark.column, 0), "YAML error in the value: " + e.msg,
           "a YAML value such as 4, 120ns, mcs or {kind: mcs, scope: cpu}");
    }
    if (!root.IsMap()) return;  // the loader says what the document is
    const YAML::Node& croot = root;

    // A parameter: the default and every variant's value of it.
    const YAML::Node params = croot["params"];
    if (has_key(params, key)) {
      YAML::Node p = root["params"];
      put(p, key, 1);
      if (is_map(croot["variants"]))
        for (auto v : root["variants"])
          if (is_map(v.second) && has_key(v.second["params"], key)) {
            YAML::Node vp = v.second["params"];
            put(vp, key, 1);
          }
      return;
    }
    const bool top = std::find(std::begin(kTopLevel), std::end(kTopLevel), comps[0]) != std::end(kTopLevel);
    if (comps.size() == 1 && !top)
      fail(1, "no parameter '" + key + "'",
           is_map(params) && params.size() > 0
               ? "a parameter of the scenario (" + keys_of(params) + "), STRATEGY.PATH or SECTION.PATH"
               : "STRATEGY.PATH or SECTION.PATH (the scenario declares no parameters)");

    std::vector<std::string> path = comps;
    std::vector<int> pcols = cols;
    if (!top) {
      std::string strategy;
      const YAML::Node strategies = croot["strategies"];
      if (!is_map(strategies) || !match(strategies, comps, 0, strategy)) {
        std::string sections;
        for (const char* k : kTopLevel) sections += (sections.empty() ? "" : ", ") + std::string(k);
        fail(1, "no parameter, strategy or section '" + comps[0] + "'",
             "a parameter (" + (is_map(params) ? keys_of(params) : std::string("none")) + "), a strategy (" +
                 (is_map(strategies) ? keys_of(strategies) : std::string("none")) + ") or a section (" + sections + ")");
      }
      path.insert(path.begin(), "strategies");
      pcols.insert(pcols.begin(), 1);
    }
    walk(root, path, pcols);
  }

 private:
  [[noreturn]] void fail(int column, const std::string& problem, const std::string& expected) const {
    throw ScenarioError({label_, 1, column}, problem, expected);
  }

  // map[key] = the value; the value (and a key it adds) marked as the setting's.
  void put(YAML::Node& map, const std::string& key, int key_col) {
    const bool existed = has_key(map, key);
    map[key] = value_;
    r_.add_origin(map[key], label_, value_col_);
    if (!existed)
      for (const auto& kv : map)
        if (kv.first.IsScalar() && kv.first.Scalar() == key) r_.add_origin(kv.first, label_, key_col);
  }

  // Follows `path` from the root through mappings. Under strategies.S an
  // entry S inherits through `extends` (absent from its own mapping) is
  // first copied in from the resolved strategy, so that the edit changes
  // S alone. A missing last key is added: the loader checks it is allowed.
  void walk(YAML::Node& root, const std::vector<std::string>& path, const std::vector<int>& cols) {
    YAML::Node node;
    node.reset(root);
    YAML::Node alt;  // S resolved, at the same place as `node`, once under strategies.S
    std::string where;
    for (std::size_t i = 0, depth = 0; i < path.size(); ++depth) {
      if (!node.IsMap())
        fail(cols[i], "'" + where + "' is not a mapping", "a path through mappings to the value to set");
      std::string key;
      std::size_t used = match(node, path, i, key);
      if (!used && is_map(alt) && (used = match(alt, path, i, key)) > 0) node[key] = YAML::Clone(alt[key]);
      if (!used) {
        if (i + 1 == path.size()) return put(node, path[i], cols[i]);
        fail(cols[i], "no '" + path[i] + "' in " + (where.empty() ? "the scenario" : "'" + where + "'"),
             "one of: " + keys_of(node));
      }
      if (i + used == path.size()) return put(node, key, cols[i]);
      if (depth == 1 && path[0] == "strategies") {
        alt.reset(resolved_or_null(node, key));
      } else if (has_key(alt, key)) {
        YAML::Node next = alt[key];
        alt.reset(next);
      } else {
        alt.reset(YAML::Node());
      }
      YAML::Node next = node[key];
      node.reset(next);
      where += (where.empty() ? "" : ".") + key;
      i += used;
    }
  }

  Reader& r_;
  std::string label_;
  const Setting& s_;
  YAML::Node value_;
  int value_col_ = 1;
};

}  // namespace

void apply_settings(Reader& r, YAML::Node& root, const std::vector<Setting>& settings) {
  for (const auto& s : settings) Apply(r, s)(root);
}

}  // namespace vfssim::models::parse

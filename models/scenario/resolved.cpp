// The resolved scenario: the document with everything the loader resolves
// written out (machine presets and files inlined, extends applied, each
// variant's parameters and CPU list), as ZSim writes back its resolved
// config. It loads back to the same simulations; runs store it, and
// `vfssim show RUN --resolved` prints it.
#include <algorithm>
#include <iterator>

#include "models/scenario/sections.h"

namespace vfssim::models::parse {

namespace {

const char* const kStrategyMaps[] = {"locks", "lines", "seqcounts", "pools", "dentries", "ops"};

}  // namespace

YAML::Node resolved_strategy_node(const YAML::Node& strategies, const std::string& name) {
  const YAML::Node child = strategies[name];
  if (!child["extends"]) return YAML::Clone(child);
  const YAML::Node parent = resolved_strategy_node(strategies, child["extends"].Scalar());
  YAML::Node out = YAML::Clone(parent);
  out.remove("description");
  for (const auto& kv : child) {
    const std::string key = kv.first.Scalar();
    if (key == "extends") continue;
    const bool is_map = std::find_if(std::begin(kStrategyMaps), std::end(kStrategyMaps),
                                     [&](const char* m) { return key == m; }) != std::end(kStrategyMaps);
    if (is_map && kv.second.IsMap() && out[key] && out[key].IsMap()) {
      YAML::Node merged = out[key];
      for (const auto& e : kv.second) merged[e.first.Scalar()] = YAML::Clone(e.second);
    } else {
      out[key] = YAML::Clone(kv.second);
    }
  }
  // The parent's dentries keep the parent's d_lock kind when the child
  // declares dentries of its own with another kind.
  if (child["dentry_lock"] && parent["dentry_lock"] && parent["dentries"] &&
      child["dentry_lock"].Scalar() != parent["dentry_lock"].Scalar()) {
    for (const auto& d : parent["dentries"]) {
      const std::string dn = d.first.Scalar();
      if (child["dentries"] && child["dentries"][dn]) continue;
      if (out["locks"] && out["locks"][dn + ".d_lock"]) continue;
      YAML::Node lock;
      lock["kind"] = parent["dentry_lock"].Scalar();
      lock["scope"] = d.second["scope"].Scalar();
      out["locks"][dn + ".d_lock"] = lock;
    }
  }
  return out;
}

namespace {

YAML::Node flow_list(const std::vector<int>& v) {
  YAML::Node n(YAML::NodeType::Sequence);
  for (int x : v) n.push_back(x);
  n.SetStyle(YAML::EmitterStyle::Flow);
  return n;
}

// The scenario with everything resolved that the loader resolves: machine
// presets and files inlined (named as before), `extends` applied, each
// variant's complete parameters and CPU list, the default CPU list. It
// loads back to the same Scenario (and the same results); comments are gone.
}  // namespace

std::string resolved_document(const Reader& r, const YAML::Node& root, const Scenario& sc, const std::string& file,
                              const std::vector<std::string>& machine_dirs) {
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    if (key == "machine") {
      out[key] = inline_machine(r, kv.second, file, machine_dirs, sc.machine);
    } else if (key == "workload") {
      YAML::Node w = YAML::Clone(kv.second);
      if (!w["cpus"]) w["cpus"] = flow_list(sc.workload.cpus);
      out[key] = w;
    } else if (key == "variants") {
      YAML::Node vs(YAML::NodeType::Map);
      for (const auto& v : kv.second) {
        const Variant& var = sc.variant(v.first.Scalar());
        YAML::Node n = YAML::Clone(v.second);
        if (root["params"]) {
          YAML::Node params = YAML::Clone(root["params"]);
          if (v.second["params"])
            for (const auto& pv : v.second["params"]) params[pv.first.Scalar()] = YAML::Clone(pv.second);
          n["params"] = params;
        }
        if (v.second["machine"]) {
          n["machine"] = inline_machine(r, v.second["machine"], file, machine_dirs, var.machine);
          n["cpus"] = flow_list(var.workload.cpus);
        }
        vs[v.first.Scalar()] = n;
      }
      out[key] = vs;
    } else if (key == "strategies") {
      YAML::Node ss(YAML::NodeType::Map);
      for (const auto& st : kv.second) ss[st.first.Scalar()] = resolved_strategy_node(kv.second, st.first.Scalar());
      out[key] = ss;
    } else {
      out[key] = YAML::Clone(kv.second);
    }
  }
  YAML::Emitter e;
  e.SetIndent(2);
  e << out;
  return std::string(e.c_str()) + "\n";
}


}  // namespace vfssim::models::parse

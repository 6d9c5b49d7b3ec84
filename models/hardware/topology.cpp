#include "models/hardware/topology.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <limits>
#include <stdexcept>

namespace vfssim::models {

const char* to_string(Placement p) {
  switch (p) {
    case Placement::kCompact: return "compact";
    case Placement::kSpread: return "spread";
    case Placement::kSmtLast: return "smt-last";
  }
  return "?";
}

namespace {

using InterconnectGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property,
                          boost::property<boost::edge_weight_t, std::int64_t>>;

// Shortest interconnect distance (in ps) between every pair of outermost
// elements: cross_base + hop per link.
std::vector<std::vector<std::int64_t>> outer_distances(const TopologySpec& spec, int outer) {
  std::vector<std::vector<std::int64_t>> d(outer, std::vector<std::int64_t>(outer, 0));
  if (outer <= 1) return d;
  InterconnectGraph g(outer);
  if (spec.links.empty()) {
    for (int a = 0; a < outer; ++a)
      for (int b = a + 1; b < outer; ++b) boost::add_edge(a, b, spec.hop.count(), g);
  } else {
    for (const auto& l : spec.links) {
      if (l.a < 0 || l.b < 0 || l.a >= outer || l.b >= outer || l.a == l.b)
        throw std::invalid_argument("interconnect link names an element that does not exist");
      boost::add_edge(l.a, l.b, spec.hop.count(), g);
    }
  }
  for (int a = 0; a < outer; ++a) {
    std::vector<std::int64_t> dist(outer);
    boost::dijkstra_shortest_paths(
        g, static_cast<InterconnectGraph::vertex_descriptor>(a),
        boost::distance_map(boost::make_iterator_property_map(dist.begin(), boost::get(boost::vertex_index, g)))
            .distance_inf(std::numeric_limits<std::int64_t>::max()));
    for (int b = 0; b < outer; ++b) {
      if (b == a) continue;
      if (dist[b] == std::numeric_limits<std::int64_t>::max())
        throw std::invalid_argument("interconnect is not connected: element " + std::to_string(a) +
                                    " cannot reach element " + std::to_string(b));
      d[a][b] = spec.cross_base.count() + dist[b];
    }
  }
  return d;
}

}  // namespace

Topology::Topology(TopologySpec spec) : spec_(std::move(spec)) {
  if (spec_.levels.empty()) throw std::invalid_argument("a topology needs at least one level");
  long long total = 1;
  for (const auto& l : spec_.levels) {
    if (l.count < 1) throw std::invalid_argument("level '" + l.name + "' has count < 1");
    total *= l.count;
    if (total > kMaxCpus)
      throw std::invalid_argument("the machine has more than " + std::to_string(kMaxCpus) +
                                  " hardware threads, the most vfssim supports (its CPU x CPU cost matrix)");
    per_level_total_.push_back(static_cast<int>(total));
  }
  num_cpus_ = static_cast<int>(total);
  for (int t : per_level_total_) cpus_per_element_.push_back(num_cpus_ / t);
  element_.reserve(cpus_per_element_.size() * static_cast<std::size_t>(num_cpus_));
  for (int per : cpus_per_element_)
    for (int c = 0; c < num_cpus_; ++c) element_.push_back(c / per);
  inner_levels_ = static_cast<int>(spec_.levels.size()) - 1;
  for (const auto& l : spec_.levels) level_cost_.push_back(l.transfer);
  const int last = static_cast<int>(spec_.levels.size()) - 1;
  if (spec_.numa_level < 0 || spec_.numa_level > last) throw std::invalid_argument("numa level out of range");
  if (spec_.core_level < 0 || spec_.core_level > last) throw std::invalid_argument("core level out of range");
  for (int i = 0; i + 1 < last; ++i)
    if (spec_.levels[i].transfer < spec_.levels[i + 1].transfer)
      throw std::invalid_argument("transfer cost at level '" + spec_.levels[i].name +
                                  "' is lower than at the inner level '" + spec_.levels[i + 1].name + "'");

  const int n = num_cpus_;
  if (!spec_.measured_matrix.empty()) {
    if (spec_.measured_matrix.size() != static_cast<std::size_t>(n) * n)
      throw std::invalid_argument("measured matrix is not cpus x cpus");
    measured_.resize(n, n);
    has_measured_ = true;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        measured_(a, b) = a == b ? spec_.local_hit.count() : spec_.measured_matrix[a * n + b].count();
    return;
  }
  // The levels' tree inside an outermost element, the interconnect between
  // them: transfer() computes a pair's cost from these in O(levels), no
  // CPU x CPU matrix (8 MiB at 1024 CPUs: a cache miss per lookup).
  const int outer = per_level_total_[0];
  for (const auto& row : outer_distances(spec_, outer)) cross_.insert(cross_.end(), row.begin(), row.end());
}

Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic> Topology::cost_matrix_ps() const {
  if (!spec_.measured_matrix.empty()) return measured_;
  Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic> m(num_cpus_, num_cpus_);
  for (int a = 0; a < num_cpus_; ++a)
    for (int b = 0; b < num_cpus_; ++b) m(a, b) = level_transfer(a, b).count();
  return m;
}

int Topology::num_elements(int level) const { return per_level_total_.at(level); }

double Topology::compute_slowdown(int busy) const {
  const int threads = num_cpus_ / num_cores();
  if (busy <= 1 || threads <= 1 || spec_.smt_throughput <= 0) return 1.0;
  const double core = 1.0 + (spec_.smt_throughput - 1.0) * (busy - 1) / (threads - 1);
  return busy / core;
}

std::vector<int> Topology::place(int n, Placement p) const {
  if (n < 1 || n > num_cpus_)
    throw std::invalid_argument("cannot place " + std::to_string(n) + " tasks on " + name() + " (" +
                                std::to_string(num_cpus_) + " CPUs)");
  std::vector<int> order;
  order.reserve(num_cpus_);
  const int per_core = num_cpus_ / num_cores();
  switch (p) {
    case Placement::kCompact:
      for (int c = 0; c < num_cpus_; ++c) order.push_back(c);
      break;
    case Placement::kSmtLast:
      for (int t = 0; t < per_core; ++t)
        for (int core = 0; core < num_cores(); ++core) order.push_back(core * per_core + t);
      break;
    case Placement::kSpread: {
      // Round-robin over NUMA nodes; inside a node, cores before siblings.
      const int nodes = num_nodes();
      const int per_node = num_cpus_ / nodes;
      const int cores_per_node = per_node / per_core;
      for (int t = 0; t < per_core; ++t)
        for (int c = 0; c < cores_per_node; ++c)
          for (int node = 0; node < nodes; ++node)
            order.push_back(node * per_node + c * per_core + t);
      break;
    }
  }
  order.resize(n);
  return order;
}

const char* to_string(CoherenceKind k) {
  switch (k) {
    case CoherenceKind::kPairwise: return "pairwise";
    case CoherenceKind::kDirectory: return "directory";
    case CoherenceKind::kBroadcast: return "broadcast";
  }
  return "?";
}

}  // namespace vfssim::models

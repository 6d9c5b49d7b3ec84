#include "models/codepath/object_picks.h"

#include <algorithm>
#include <cmath>

namespace vfssim::models {

template <class Decl>
void ObjectPicks::add(Table table, const std::vector<Decl>& decls) {
  for (std::size_t s = 0; s < decls.size(); ++s) {
    if (decls[s].scope != Scope::kObject) continue;
    const ObjectSet& o = decls[s].objects;
    std::size_t p = 0;
    while (p < pickers_.size() && !(pickers_[p].set == o)) ++p;
    if (p == pickers_.size()) {
      Picker pk{o, static_cast<int>(o.objects.value), {}};
      if (o.pick == ObjectSet::Pick::kZipf) {
        double sum = 0;
        for (int k = 0; k < pk.n; ++k) pk.cdf.push_back(sum += std::pow(k + 1.0, -o.zipf_s));
        for (double& c : pk.cdf) c /= sum;
      }
      random_ = random_ || o.pick == ObjectSet::Pick::kUniform || o.pick == ObjectSet::Pick::kZipf;
      pickers_.push_back(std::move(pk));
    }
    slots_.push_back({table, static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(p)});
  }
}

ObjectPicks::ObjectPicks(const Program& program) {
  add(Table::kLock, program.locks);
  add(Table::kLine, program.lines);
  add(Table::kSeq, program.seqcounts);
  for (std::size_t s = 0; s < program.lines.size(); ++s) {
    const auto& d = program.lines[s];
    if (d.on.empty()) continue;
    std::uint32_t ls = 0;
    while (program.locks[ls].name != d.on) ++ls;
    if (program.locks[ls].scope == Scope::kObject) on_locks_.push_back({static_cast<std::uint32_t>(s), ls});
  }
  picked_.assign(pickers_.size(), 0);
}

void ObjectPicks::pick(std::size_t t, std::uint64_t iteration, sim::RngStream& rng) {
  const double u = random_ ? rng.uniform() : 0.0;
  for (std::size_t p = 0; p < pickers_.size(); ++p) {
    const Picker& pk = pickers_[p];
    const auto n = static_cast<std::uint64_t>(pk.n);
    switch (pk.set.pick) {
      case ObjectSet::Pick::kTask: picked_[p] = static_cast<int>(t % n); break;
      case ObjectSet::Pick::kRoundRobin: picked_[p] = static_cast<int>((t + iteration) % n); break;
      case ObjectSet::Pick::kUniform: picked_[p] = std::min(pk.n - 1, static_cast<int>(u * pk.n)); break;
      case ObjectSet::Pick::kZipf:
        picked_[p] = std::min(pk.n - 1, static_cast<int>(std::upper_bound(pk.cdf.begin(), pk.cdf.end(), u) - pk.cdf.begin()));
        break;
    }
  }
}

}  // namespace vfssim::models

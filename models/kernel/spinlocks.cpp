#include "models/kernel/spinlocks.h"

namespace vfssim::models {

void LockStats::merge(const LockStats& o) {
  con_bounces += o.con_bounces;
  if (o.contentions) {
    if (contentions == 0 || o.wait_min < wait_min) wait_min = o.wait_min;
    if (o.wait_max > wait_max) wait_max = o.wait_max;
  }
  contentions += o.contentions;
  wait_total += o.wait_total;
  acq_bounces += o.acq_bounces;
  acquisitions += o.acquisitions;
  if (o.holds) {
    if (holds == 0 || o.hold_min < hold_min) hold_min = o.hold_min;
    if (o.hold_max > hold_max) hold_max = o.hold_max;
  }
  holds += o.holds;
  hold_total += o.hold_total;
}

// Free lock (holder -1, no waiters): the caller's atomic on the lock word
// takes the line from its last owner; the lock is its from that instant.
// Held lock: the caller joins the queue and waits for a release.
bool FifoSpinlock::acquire(int cpu, Time now, LockMode, Time& granted_at) {
  if (holder_ < 0) {
    granted_at = take_free(line_, *topo_, cpu, now);
    holder_ = cpu;
    hold_start_ = granted_at;
    return true;
  }
  waiters_.push({cpu, now});
  if (count_spinners_) groups_.add(cpu);
  return false;
}

SpinnerGroups::SpinnerGroups(const Topology& topo) : topo_(&topo) {}

void SpinnerGroups::allocate() {
  const auto& levels = topo_->spec().levels;
  levels_ = static_cast<int>(levels.size());
  for (int l = 0; l < levels_; ++l) {
    waiting_.emplace_back(static_cast<std::size_t>(topo_->num_elements(l)), 0);
    // The innermost level (hardware threads) has no children to count.
    busy_children_.emplace_back(l + 1 < levels_ ? static_cast<std::size_t>(topo_->num_elements(l)) : 0, 0);
  }
}

void SpinnerGroups::update(int cpu, int delta) {
  if (waiting_.empty()) allocate();
  for (int l = 0; l < levels_; ++l) {
    int& w = waiting_[static_cast<std::size_t>(l)][static_cast<std::size_t>(topo_->element_of(cpu, l))];
    const bool was_busy = w > 0;
    w += delta;
    if (l > 0 && was_busy != (w > 0))
      busy_children_[static_cast<std::size_t>(l - 1)][static_cast<std::size_t>(topo_->element_of(cpu, l - 1))] += delta;
  }
}

// A spinner's group: the outermost level at which it and `next` sit in
// different elements, and its element there; one fetch per group. Inside
// an element every child is the same transfer away (the level's cost), so
// a level costs (children with spinners, not counting next's own) x that
// transfer; the outermost level goes through the interconnect, element by
// element. A measured matrix has no such regularity: visit each child.
Duration SpinnerGroups::fetches_to(int next) const {
  if (waiting_.empty()) return Duration{0};  // nobody has waited yet
  const auto& spec = topo_->spec();
  const bool measured = !spec.measured_matrix.empty();
  Duration sum{0};
  for (int l = 0; l < levels_; ++l) {
    const auto lv = static_cast<std::size_t>(l);
    const int own = topo_->element_of(next, l);
    const int children = spec.levels[lv].count;  // per element of the level above
    const int first = l == 0 ? 0 : topo_->element_of(next, l - 1) * children;
    const int count = l == 0 ? topo_->num_elements(0) : children;
    if (l > 0 && !measured) {
      const int busy = busy_children_[lv - 1][static_cast<std::size_t>(topo_->element_of(next, l - 1))] -
                       (waiting_[lv][static_cast<std::size_t>(own)] > 0 ? 1 : 0);
      sum += spec.levels[lv - 1].transfer * busy;
      continue;
    }
    const int cpus_per_element = topo_->num_cpus() / topo_->num_elements(l);
    for (int e = first; e < first + count; ++e)
      if (e != own && waiting_[lv][static_cast<std::size_t>(e)] > 0) sum += topo_->transfer(e * cpus_per_element, next);
  }
  return sum;
}

// No waiter: the lock is free, the releaser keeps the line.
// Waiters: the head gets the lock after the model's handoff cost; the line
// moves to it.
Time FifoSpinlock::release(int cpu, Time now, LockMode, std::vector<Grant>& woken) {
  stats_.record_hold(now - hold_start_);
  if (waiters_.empty()) {
    holder_ = -1;
    return now;
  }
  const auto next = waiters_.take(pick_next(waiters_.size()));
  if (count_spinners_) groups_.remove(next.cpu);
  const Time at = now + handoff_cost(cpu, next.cpu);
  line_.move_to(next.cpu, at);
  holder_ = next.cpu;
  hold_start_ = at;
  stats_.record_handoff(cpu, next.cpu, at - next.since);
  woken.push_back({next.cpu, at});
  return now;
}

}  // namespace vfssim::models

#include "models/kernel/spinlocks.h"

#include <algorithm>

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
template <class Kind>
std::optional<Time> FifoSpinlock<Kind>::acquire(int cpu, Time now, LockMode) {
  if (holder_ < 0) {
    const Time granted_at = take_free(line_, *topo_, cpu, now);
    holder_ = cpu;
    hold_start_ = granted_at;
    return granted_at;
  }
  // Ticket's xadd, MCS's xchg of the tail: the newcomer's RMW on the word's
  // line, which the others may spin on (with a coherence model; the
  // pairwise model of the oracle tests charges nothing here). qspinlock's
  // newcomer first fails the fast path's cmpxchg, then sets pending or
  // xchg's the tail: its second RMW follows its first.
  if (coherent_ && joins_with_rmw()) {
    const Time tried = pending_bit_ ? line_.rmw(*topo_, cpu, now) : now;
    line_.rmw(*topo_, cpu, tried);
  }
  if (pending_bit_ && !has_waiters()) front_pending_ = true;  // (0,0,1) -> (0,1,1)
  waiters_.push({cpu, now});
  if (count_spinners_) groups_.add(cpu);
  update_spinners();
  return std::nullopt;
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
// The machine's coherence changes what a group is (topology.h):
//   pairwise:  as above (one fetch per group at the level's transfer)
//   directory: one fetch per other socket; inside next's socket a group's
//              re-read is an LLC hit at the home, `reread` (or the level's
//              transfer where that is less: SMT siblings share an L1)
//   broadcast: no group: every spinner's re-read is its own probe, at its
//              own transfer
Duration SpinnerGroups::fetches_to(int next) const {
  if (waiting_.empty()) return Duration{0};  // nobody has waited yet
  const auto& spec = topo_->spec();
  const CoherenceKind kind = spec.coherence.kind;
  const bool measured = !spec.measured_matrix.empty();
  Duration sum{0};
  for (int l = 0; l < levels_; ++l) {
    const auto lv = static_cast<std::size_t>(l);
    const int own = topo_->element_of(next, l);
    const int children = spec.levels[lv].count;  // per element of the level above
    const int first = l == 0 ? 0 : topo_->element_of(next, l - 1) * children;
    const int count = l == 0 ? topo_->num_elements(0) : children;
    if (l > 0 && !measured) {
      const int parent = topo_->element_of(next, l - 1);
      const int own_waiting = waiting_[lv][static_cast<std::size_t>(own)];
      if (kind == CoherenceKind::kBroadcast) {  // every spinner of the parent outside next's element
        sum += spec.levels[lv - 1].transfer * (waiting_[lv - 1][static_cast<std::size_t>(parent)] - own_waiting);
        continue;
      }
      const int busy = busy_children_[lv - 1][static_cast<std::size_t>(parent)] - (own_waiting > 0 ? 1 : 0);
      sum += spec.coherence.reread_of(spec.levels[lv - 1].transfer, true) * busy;
      continue;
    }
    const int cpus_per_element = topo_->num_cpus() / topo_->num_elements(l);
    for (int e = first; e < first + count; ++e) {
      const int w = waiting_[lv][static_cast<std::size_t>(e)];
      if (e == own || w == 0) continue;
      const Duration each = spec.coherence.reread_of(topo_->transfer(e * cpus_per_element, next), l > 0);
      sum += each * (kind == CoherenceKind::kBroadcast ? w : 1);
    }
  }
  return sum;
}

void SpinlockState::tell_spinners() {
  if (spinners_read_line_) {
    line_.set_spinners(static_cast<int>(waiters_.size()), holder_ >= 0 ? groups_.fetches_to(holder_) : Duration{0});
    return;
  }
  if (!coherent_ || !pending_bit_ || holder_ < 0) return;
  tell_word_spinners(holder_, front_pending_ ? 2 : 1);
}

// Each spinner's re-read of the word after a store by `from`: a transfer,
// or on a directory machine, inside the storer's socket, an LLC re-read
// (as SpinnerGroups counts a ticket lock's spinners).
void SpinlockState::tell_word_spinners(int from, std::size_t count) {
  const std::size_t n = std::min(count, waiters_.size());
  Duration burst{0};
  for (std::size_t i = 0; i < n; ++i) {
    const int c = waiters_.at(i).cpu;
    burst += topo_->coherence().reread_of(topo_->transfer(from, c), topo_->same_socket(from, c));
  }
  line_.set_spinners(static_cast<int>(n), burst);
}

// No waiter: the lock is free, the releaser keeps the line.
// Waiters: the head gets the lock after the model's handoff cost; the line
// moves to it.
template <class Kind>
Released FifoSpinlock<Kind>::release(int cpu, Time now, LockMode) {
  stats_.record_hold(now - hold_start_);
  if (!has_waiters()) {
    holder_ = -1;
    return {coherent_ && releases_with_rmw() ? line_.rmw(*topo_, cpu, now) : now};
  }
  // With spinners reading the line, the unlock is a store to it: it waits
  // for re-reads still in flight and invalidates every spinning copy; the
  // handoff runs from its completion (the releaser itself goes on: the
  // store retires from its store buffer).
  if (pending_bit_ && coherent_) return release_pending_bit(cpu, now);
  const Time released = tracks_spinners_ ? line_.store_visible(*topo_, cpu, now) : now;
  const std::size_t pick = picks_ ? kind().pick_next_at(cpu, now) : 0;
  const auto next = fifo_ ? waiters_.take(pick) : waiters_.take_unordered(pick);
  if (count_spinners_) groups_.remove(next.cpu);
  const Time at = kind().handoff_at(cpu, next.cpu, released);
  line_.move_to(next.cpu, at);
  holder_ = next.cpu;
  hold_start_ = at;
  update_spinners();
  stats_.record_handoff(cpu, next.cpu, at - next.since);
  return {now, {next.cpu, at}};
}

// qspinlock's unlock with a coherence model: the word's spinners are the
// pending waiter and the queue head, and the next holder's re-read is its
// handoff (handoff_at requests it, and the take, from the line itself),
// not one more spinner behind the store:
//   the unlock store        is followed by the re-reads of the spinners
//                           that stay (the head, when the pending waiter
//                           takes the lock);
//   the next holder's take  by the re-read of the head that stays, or of
//                           the new head its MCS handoff wakes.
// The pending waiter always goes first (its bit blocks the head); CNA
// picks among the queue only.
template <class Kind>
Released FifoSpinlock<Kind>::release_pending_bit(int cpu, Time now) {
  took_pending_ = front_pending_;
  const std::size_t pick = picks_ && !took_pending_ ? kind().pick_next_at(cpu, now) : 0;
  const auto next = fifo_ ? waiters_.take(pick) : waiters_.take_unordered(pick);
  front_pending_ = false;  // whoever is at the front now queued behind others
  tell_word_spinners(cpu, took_pending_ ? 1 : 0);
  const Time released = line_.store_visible(*topo_, cpu, now);
  tell_word_spinners(next.cpu, 1);
  const Time at = kind().handoff_at(cpu, next.cpu, released);
  holder_ = next.cpu;
  hold_start_ = at;
  update_spinners();
  stats_.record_handoff(cpu, next.cpu, at - next.since);
  return {now, {next.cpu, at}};
}

std::size_t CnaSpinlock::pick_next_at(int releaser, Time now) {
  if (!secondary_.empty() && now - secondary_.at(0).since > threshold_) {  // fairness: the secondary goes first
    splice_secondary();
    return 0;
  }
  const int node = topo_->node_of(releaser);
  std::size_t i = 0;
  while (i < waiters_.size() && topo_->node_of(waiters_.at(i).cpu) != node) ++i;
  if (i < waiters_.size()) {
    for (std::size_t k = 0; k < i; ++k) secondary_.push(waiters_.pop());  // the remote ones ahead of T
    ++local_;
    return 0;
  }
  splice_secondary();
  return 0;
}

template class FifoSpinlock<TicketSpinlock>;
template class FifoSpinlock<TasSpinlock>;
template class FifoSpinlock<QSpinlock>;
template class FifoSpinlock<CnaSpinlock>;
template class FifoSpinlock<McsSpinlock>;

}  // namespace vfssim::models

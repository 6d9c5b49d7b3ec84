#include "models/kernel/rwlock.h"

namespace vfssim::models {

namespace {

template <class Q>
void compact(Q& queue, std::size_t& head) {
  if (head > 64 && head * 2 > queue.size()) {
    queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(head));
    head = 0;
  }
}

}  // namespace

// ---- RwLock ----------------------------------------------------------------

std::optional<Time> RwLock::acquire(int cpu, Time now, LockMode mode) {
  if (read_start_.size() <= static_cast<std::size_t>(cpu)) read_start_.resize(cpu + 1);
  const bool queued = head_ < queue_.size();
  if (mode == LockMode::kShared) {
    if (writer_ < 0 && (!queued || reader_pref_)) {
      const Time granted_at = take_free(line_, *topo_, cpu, now, mode);
      ++readers_;
      read_start_[cpu] = granted_at;
      return granted_at;
    }
  } else if (writer_ < 0 && readers_ == 0 && !queued) {
    const Time granted_at = take_free(line_, *topo_, cpu, now, mode);
    writer_ = cpu;
    write_start_ = granted_at;
    return granted_at;
  }
  queue_.push_back({cpu, mode, now});
  return std::nullopt;
}

Released RwLock::release(int cpu, Time now, LockMode mode) {
  Handover woken(*this);
  Time done = now;
  if (mode == LockMode::kShared) {
    record(mode, [&](LockStats& s) { s.record_hold(now - read_start_[cpu]); });
    --readers_;
    done = line_.rmw(*topo_, cpu, now);  // up_read: atomic on the shared count
    if (readers_ == 0) grant_waiters(cpu, done, woken);
  } else {
    record(mode, [&](LockStats& s) { s.record_hold(now - write_start_); });
    writer_ = -1;
    grant_waiters(cpu, now, woken);
  }
  return woken.released(done);
}

// The lock just became free of `releaser`'s hold: admit the head writer, or
// every reader queued before the next writer.
void RwLock::grant_waiters(int releaser, Time now, Handover& woken) {
  if (writer_ >= 0 || head_ >= queue_.size()) return;
  const bool slept = sleeping_;
  if (queue_[head_].mode == LockMode::kExclusive) {
    if (readers_ > 0) return;
    const Waiter w = queue_[head_++];
    const Time at = now + handoff(releaser, w.cpu);
    line_.move_to(w.cpu, at);
    writer_ = w.cpu;
    write_start_ = at;
    record(w.mode, [&](LockStats& s) { s.record_handoff(releaser, w.cpu, at - w.since); });
    woken.push_back({w.cpu, at, false, slept});
  } else {
    while (head_ < queue_.size() && queue_[head_].mode == LockMode::kShared) {
      const Waiter w = queue_[head_++];
      // Each woken reader still does its atomic on the count word.
      const Time at = line_.rmw(*topo_, w.cpu, now + handoff(releaser, w.cpu));
      ++readers_;
      read_start_[w.cpu] = at;
      record(w.mode, [&](LockStats& s) { s.record_handoff(releaser, w.cpu, at - w.since); });
      woken.push_back({w.cpu, at, false, slept});
    }
  }
  compact(queue_, head_);
}

// ---- BrLock ----------------------------------------------------------------

BrLock::BrLock(LockContext ctx) : topo_(ctx.topo) {
  const int n = topo_->num_cpus();
  own_.assign(static_cast<std::size_t>(n), 0);
  for (int c = 0; c < n; ++c) take_own(c);  // each CPU's lock starts in its cache
  read_start_.resize(n);
}

Duration BrLock::take_all(int cpu) {
  auto one = [&](int owner) { return owner == cpu ? topo_->local_atomic() : topo_->transfer(owner, cpu) + topo_->local_atomic(); };
  Duration cost{0};
  for (int c : owned_) {
    cost += one(c);
    own_[static_cast<std::size_t>(c)] = 0;
  }
  const auto rest = static_cast<std::int64_t>(own_.size() - owned_.size());
  if (rest > 0) cost += one(last_writer_) * rest;
  owned_.clear();
  last_writer_ = cpu;
  return cost;
}

std::optional<Time> BrLock::acquire(int cpu, Time now, LockMode mode) {
  const bool queued = head_ < queue_.size();
  if (mode == LockMode::kShared) {
    if (writer_ < 0 && !queued) {
      const int owner = owner_of(cpu);
      const Duration cost = owner == cpu ? topo_->local_atomic() : topo_->transfer(owner, cpu) + topo_->local_atomic();
      record(mode, [&](LockStats& s) {
        if (owner != cpu) ++s.acq_bounces;
        ++s.acquisitions;
      });
      take_own(cpu);
      const Time granted_at = now + cost;
      ++readers_;
      read_start_[cpu] = granted_at;
      return granted_at;
    }
  } else if (writer_ < 0 && readers_ == 0 && !queued) {
    const Time granted_at = now + take_all(cpu);
    writer_ = cpu;
    write_start_ = granted_at;
    record(mode, [](LockStats& s) {
      ++s.acquisitions;
      ++s.acq_bounces;
    });
    return granted_at;
  }
  queue_.push_back({cpu, mode, now});
  return std::nullopt;
}

Released BrLock::release(int cpu, Time now, LockMode mode) {
  Handover woken(*this);
  if (mode == LockMode::kShared) {
    record(mode, [&](LockStats& s) { s.record_hold(now - read_start_[cpu]); });
    --readers_;
    if (readers_ == 0) grant_waiters(cpu, now, woken);
    return woken.released(now);
  }
  record(mode, [&](LockStats& s) { s.record_hold(now - write_start_); });
  writer_ = -1;
  // Unlocking every CPU's lock: a store per line the writer now owns.
  const Time done = now + topo_->local_hit() * static_cast<std::int64_t>(own_.size());
  grant_waiters(cpu, done, woken);
  return woken.released(done);
}

void BrLock::grant_waiters(int releaser, Time now, Handover& woken) {
  if (writer_ >= 0 || head_ >= queue_.size()) return;
  if (queue_[head_].mode == LockMode::kExclusive) {
    if (readers_ > 0) return;
    const Waiter w = queue_[head_++];
    const Time at = now + take_all(w.cpu);
    writer_ = w.cpu;
    write_start_ = at;
    record(w.mode, [&](LockStats& s) {
      ++s.acquisitions;
      s.record_wait(at - w.since);
      ++s.con_bounces;
    });
    woken.push_back({w.cpu, at});
  } else {
    while (head_ < queue_.size() && queue_[head_].mode == LockMode::kShared) {
      const Waiter w = queue_[head_++];
      const Time at = now + topo_->transfer(owner_of(w.cpu), w.cpu) + topo_->local_atomic();
      take_own(w.cpu);
      ++readers_;
      read_start_[w.cpu] = at;
      record(w.mode, [&](LockStats& s) {
        ++s.acquisitions;
        s.record_wait(at - w.since);
        if (releaser != w.cpu) ++s.con_bounces;
      });
      woken.push_back({w.cpu, at});
    }
  }
  compact(queue_, head_);
}

}  // namespace vfssim::models

#include "models/kernel/rwsem.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace vfssim::models {

// W(o),x,c,x -> W(o),x,-c,+c: a spinner that saw its writer owner go to
// sleep stops at that instant and sleeps on the queue.
void Rwsem::stop_spinners() { models::stop_spinners(sleeps_, spinners_, queue_); }

// Spinners that can no longer take the lock (it went to readers, or the
// handoff bit keeps it for the queue's head) give up and sleep.
void Rwsem::spinners_to_queue(Time at) {
  for (Waiter s : spinners_) {
    s.joined = at;
    join_wait_list(queue_, s);
  }
  spinners_.clear();
}

// The lock went to readers at `now`: every reader spinner sees a reader
// owner and no writer and takes it too (in OSQ order); the writer spinners
// see reader owners, stop spinning and sleep.
void Rwsem::readers_take(int releaser, Time now, Handover& woken) {
  std::vector<Waiter> writers;
  for (const Waiter& w : spinners_) {
    if (w.mode == LockMode::kExclusive) {
      writers.push_back(w);
      continue;
    }
    const Time at = line_.rmw(*topo_, w.cpu, now + topo_->transfer(releaser, w.cpu));
    ++readers_;
    read_start_[static_cast<std::size_t>(w.cpu)] = at;
    record(w.mode, [&](LockStats& s) { s.record_handoff(releaser, w.cpu, at - w.since); });
    woken.push_back({w.cpu, at});
  }
  spinners_.swap(writers);
  spinners_to_queue(now);
}

// The caller takes the lock without waiting: an atomic on the count word.
Time Rwsem::take(int cpu, Time now, LockMode mode) {
  const Time at = take_free(line_, *topo_, cpu, now, mode);
  if (mode == LockMode::kShared) {
    ++readers_;
    read_start_[static_cast<std::size_t>(cpu)] = at;
  } else {
    writer_ = cpu;
    write_start_ = at;
  }
  return at;
}

std::optional<Time> Rwsem::acquire(int cpu, Time now, LockMode mode) {
  if (read_start_.size() <= static_cast<std::size_t>(cpu)) read_start_.resize(static_cast<std::size_t>(cpu) + 1);
  const auto me = std::find_if(queue_.begin(), queue_.end(), [cpu](const Waiter& w) { return w.cpu == cpu; });
  if (me != queue_.end()) {
    // A woken writer retries (rwsem_try_write_lock). With the handoff bit
    // set only the head may take the lock.
    if (!me->woken || me->mode != LockMode::kExclusive)
      throw std::logic_error("rwsem: cpu " + std::to_string(cpu) + " asked again while it waits unwoken");
    const bool head = me == queue_.begin();
    if (writer_ < 0 && readers_ == 0 && (!handoff_ || head)) {
      // -,x,x,Q -> W(w),0,x,Q-w
      const int prev = line_.owner();
      const Time granted_at = line_.rmw(*topo_, cpu, now);
      record(mode, [&](LockStats& s) {
        s.record_uncontended(prev, cpu);
        s.record_wait(granted_at - me->since);
      });
      queue_.erase(me);
      if (head) handoff_ = false;
      writer_ = cpu;
      write_start_ = granted_at;
      return granted_at;
    }
    // Stolen while it woke: back to sleep; W|R,0,x,Q -> ..,1,.. once the
    // head has waited RWSEM_WAIT_TIMEOUT.
    me->woken = false;
    if (rules_.handoff && head && now - me->since >= rules_.handoff_timeout) handoff_ = true;
    return std::nullopt;
  }
  const bool running_writer = writer_ >= 0 && sleeps_.running_at(now);
  const bool reader_spin = rules_.reader_spin && rules_.writer_spin;
  if (mode == LockMode::kShared) {
    // Past queued waiters: a free lock (reader_steal), a reader-owned one
    // (a spinning reader's rwsem_try_read_lock_unqueued, v5.3 to v5.10).
    const bool steal = readers_ == 0 ? rules_.reader_steal : reader_spin;
    if (writer_ < 0 && !handoff_ && (queue_.empty() || steal)) {
      return take(cpu, now, mode);
    }
    if (reader_spin && running_writer && !handoff_) {
      spinners_.push_back({cpu, mode, now, now});
      return std::nullopt;
    }
  } else {
    if (writer_ < 0 && readers_ == 0 && !handoff_) {
      return take(cpu, now, mode);  // a running writer steals a free lock
    }
    if (rules_.writer_spin && running_writer && !handoff_) {
      spinners_.push_back({cpu, mode, now, now});
      return std::nullopt;
    }
  }
  join_wait_list(queue_, Waiter{cpu, mode, now, now});
  return std::nullopt;
}

Released Rwsem::release(int cpu, Time now, LockMode mode) {
  Handover woken(*this);
  const Time done = line_.rmw(*topo_, cpu, now);  // up_read / up_write: an atomic on the count
  if (mode == LockMode::kShared) {
    record(mode, [&](LockStats& s) { s.record_hold(now - read_start_[static_cast<std::size_t>(cpu)]); });
    if (--readers_ == 0) grant(cpu, done, woken);
  } else {
    record(mode, [&](LockStats& s) { s.record_hold(now - write_start_); });
    writer_ = -1;
    stop_spinners();
    sleeps_.clear();
    grant(cpu, done, woken);
  }
  return woken.released(done);
}

void Rwsem::grant(int releaser, Time now, Handover& woken) {
  if (!handoff_ && !spinners_.empty()) {
    // W -> -, spinners: the head spinner sees the owner field clear.
    if (spinners_.front().mode == LockMode::kExclusive) {
      const Waiter w = spinners_.front();
      spinners_.erase(spinners_.begin());
      const Time at = line_.rmw(*topo_, w.cpu, now + topo_->transfer(releaser, w.cpu));
      writer_ = w.cpu;
      write_start_ = at;
      record(w.mode, [&](LockStats& s) { s.record_handoff(releaser, w.cpu, at - w.since); });
      woken.push_back({w.cpu, at});
    } else {
      readers_take(releaser, now, woken);
    }
  }
  wake_queue(releaser, now, woken);
}

// rwsem_mark_wake at `now`: the lock is free or was just taken by a spinner.
void Rwsem::wake_queue(int releaser, Time now, Handover& woken) {
  if (queue_.empty()) return;
  Waiter& head = queue_.front();
  if (head.mode == LockMode::kExclusive) {
    if (!head.woken) {
      head.woken = true;  // wake-and-retry
      woken.push_back({head.cpu, now + wake_.draw(), /*retry=*/true, /*slept=*/true});
    }
    return;
  }
  if (writer_ >= 0) {
    // A spinning writer got there first: the readers stay queued, and the
    // head, if it has waited long enough, sets the handoff bit.
    if (rules_.handoff && now - head.since >= rules_.handoff_timeout) handoff_ = true;
    return;
  }
  // Grant the readers: the ones before the first writer, or (wake_readers:
  // all) up to MAX_READERS_WAKEUP from the whole queue.
  std::vector<Waiter> rest;
  int granted = 0;
  bool blocked = false;
  for (const Waiter& w : queue_) {
    if (w.mode == LockMode::kExclusive && !rules_.wake_all_readers) blocked = true;
    if (w.mode == LockMode::kExclusive || blocked || granted == RwsemRules::kMaxReadersWakeup) {
      rest.push_back(w);
      continue;
    }
    const Time at = line_.rmw(*topo_, w.cpu, now + wake_.draw());
    ++readers_;
    ++granted;
    read_start_[static_cast<std::size_t>(w.cpu)] = at;
    record(w.mode, [&](LockStats& s) { s.record_handoff(releaser, w.cpu, at - w.since); });
    woken.push_back({w.cpu, at, false, /*slept=*/true});
  }
  queue_.swap(rest);
  handoff_ = false;  // the head got it
  readers_take(releaser, now, woken);
}

}  // namespace vfssim::models

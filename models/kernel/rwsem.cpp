#include "models/kernel/rwsem.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace vfssim::models {

// The deadlines that passed by `now`, in order: a writer spinning on a
// reader owner gives up at its deadline, sets the NONSPINNABLE bits
// (rwsem_set_nonspinnable: the owner is still a reader) and sleeps; every
// spinner behind it then finds the bits set and sleeps too.
void Rwsem::advance(Time now) {
  for (;;) {
    Time first = kNever;
    for (const Waiter& s : osq_) first = std::min(first, s.give_up);
    if (first > now) return;
    if (owner_ == Owner::kReader) nonspin_rd_ = nonspin_wr_ = true;
    for (Waiter& s : osq_) s.saw_nonspin = true;
    spinners_to_queue(first);
  }
}

// rwsem_can_spin_on_owner for a writer at `now`.
bool Rwsem::writer_may_spin(Time now) const {
  if (!rules_.writer_spin || handoff_) return false;
  switch (owner_) {
    case Owner::kWriter: return sleeps_.running_at(now);
    case Owner::kReader: return rules_.spin_on_readers && !nonspin_wr_;
    case Owner::kNone: return true;
  }
  return false;
}

void Rwsem::to_queue(Waiter w, Time at) {
  w.joined = at;
  w.slept = at;
  w.give_up = kNever;
  join_wait_list(queue_, w);
}

void Rwsem::spinners_to_queue(Time at) {
  for (const Waiter& s : osq_) to_queue(s, at);
  osq_.clear();
}

// The word went to readers at `at`: writer spinners spin on them until
// their threshold (spin_on_readers), or stop and sleep.
void Rwsem::readers_own(Time at) {
  owner_ = Owner::kReader;
  if (!rules_.adaptive) nonspin_wr_ = nonspin_rd_;  // one bit: a reader owner keeps it whole
  else nonspin_wr_ = false;                         // __rwsem_set_reader_owned keeps RD only
  std::vector<Waiter> still;
  for (Waiter& s : osq_) {
    if (s.mode == LockMode::kExclusive && rules_.spin_on_readers && !nonspin_wr_) {
      if (s.give_up == kNever) s.give_up = at + RwsemRules::rspin_threshold(readers_);
      still.push_back(s);
    } else if (s.mode == LockMode::kShared) {
      still.push_back(s);  // spinning_readers_take settles them
    } else {
      to_queue(s, at);
    }
  }
  osq_.swap(still);
}

// down_write's cmpxchg and rwsem_set_owner's store (the line is the
// caller's by then: a local store).
Time Rwsem::take_write(int cpu, Time now) { return writer_owns(cpu, line_.rmw(*topo_, cpu, now)); }

// The writer whose cmpxchg took the word at `taken` stores itself as the
// owner (the bits go with the old value); it holds the word from then.
Time Rwsem::writer_owns(int cpu, Time taken) {
  writer_ = cpu;
  owner_ = Owner::kWriter;
  nonspin_rd_ = nonspin_wr_ = false;
  write_start_ = line_.store(*topo_, cpu, taken);
  return write_start_;
}

// down_read's fetch_add and rwsem_set_reader_owned's store.
Time Rwsem::take_read(int cpu, Time now) {
  const Time at = line_.store(*topo_, cpu, line_.rmw(*topo_, cpu, now));
  ++readers_;
  read_start_[static_cast<std::size_t>(cpu)] = at;
  if (owner_ != Owner::kReader) readers_own(at);
  return at;
}

// The slow path's queueing: wait_lock and the count's WAITERS update, two
// RMWs on the line; the waiter is asleep from then on.
Time Rwsem::queue_up(int cpu, Time now, LockMode mode, bool saw_nonspin) {
  const Time at = line_.rmw(*topo_, cpu, line_.rmw(*topo_, cpu, now));
  Waiter w{cpu, mode, now, at, at};
  w.saw_nonspin = saw_nonspin;
  to_queue(w, at);
  return at;
}

std::optional<Time> Rwsem::acquire(int cpu, Time now, LockMode mode) {
  if (read_start_.size() <= static_cast<std::size_t>(cpu)) read_start_.resize(static_cast<std::size_t>(cpu) + 1);
  advance(now);
  if (reserved_.cpu == cpu) {  // its retry: the word it won is its own
    const Time granted_at = std::max(now, reserved_.at);
    record(mode, [&](LockStats& s) {
      s.record_uncontended(-1, cpu);
      s.record_wait(granted_at - reserved_.since);
    });
    reserved_.cpu = -1;
    return granted_at;
  }
  const auto me = std::find_if(queue_.begin(), queue_.end(), [cpu](const Waiter& w) { return w.cpu == cpu; });
  if (me != queue_.end()) {
    // A woken writer retries (rwsem_try_write_lock under wait_lock). Only
    // the head may take a word that carries HANDOFF.
    if (!me->woken || me->mode != LockMode::kExclusive)
      throw std::logic_error("rwsem: cpu " + std::to_string(cpu) + " asked again while it waits unwoken");
    const bool head = me == queue_.begin();
    if (writer_ < 0 && readers_ == 0 && (!handoff_ || head)) {
      const Waiter w = *me;
      queue_.erase(me);
      if (head) handoff_ = false;
      const Time granted_at = take_write(cpu, line_.rmw(*topo_, cpu, now));  // wait_lock, then the cmpxchg
      if (rules_.adaptive && w.saw_nonspin) nonspin_rd_ = true;  // rwsem_disable_reader_optspin
      record(mode, [&](LockStats& s) {
        s.record_uncontended(-1, cpu);
        s.record_wait(granted_at - w.since);
      });
      return granted_at;
    }
    // Taken meanwhile (it read the count): back to sleep until the next
    // release wakes it. The head that waited RWSEM_WAIT_TIMEOUT sets
    // HANDOFF (v5.3's spinners then stop; v6.1's HANDOFF writer spins on a
    // running writer owner).
    me->woken = false;
    me->slept = line_.load(*topo_, cpu, now);
    if (rules_.handoff && head && now - me->since >= rules_.handoff_timeout) {
      handoff_ = true;
      if (!rules_.handoff_spin) spinners_to_queue(now);
      me->spinning = rules_.handoff_spin && writer_ >= 0 && sleeps_.running_at(now);
    if (me->spinning) me->slept = now;  // it spins from now: a sleep of the owner after it stops it
    }
    return std::nullopt;
  }

  const bool writer_running = writer_ >= 0 && sleeps_.running_at(now);
  if (mode == LockMode::kShared) {
    if (writer_ < 0 && !handoff_ && queue_.empty()) {  // fast path: nothing in RWSEM_READ_FAILED_MASK
      const Time granted_at = take_read(cpu, now);
      record(mode, [&](LockStats& s) { s.record_uncontended(line_.owner(), cpu); });
      return granted_at;
    }
    const Time failed = line_.rmw(*topo_, cpu, now);  // the fast path's fetch_add, undone in the slow path
    if (rules_.reader_steal && writer_ < 0 && !handoff_ && !(owner_ == Owner::kReader && readers_ > 0)) {
      // rwsem_down_read_slowpath: optimistic lock stealing of a word no
      // writer or reader holds, then the queued readers at the head.
      const Time granted_at = take_read(cpu, failed);
      record(mode, [&](LockStats& s) { s.record_uncontended(-1, cpu); });
      return granted_at;
    }
    if (rules_.reader_spin && rules_.writer_spin && !nonspin_rd_ && !handoff_) {
      if (writer_ < 0) {
        // rwsem_optimistic_spin: a reader-owned or free word is taken at once.
        const Time granted_at = take_read(cpu, failed);
        record(mode, [&](LockStats& s) { s.record_uncontended(-1, cpu); });
        return granted_at;
      }
      if (writer_running) {
        line_.rmw(*topo_, cpu, failed);  // osq_lock: xchg of the OSQ tail
        osq_.push_back({cpu, mode, now, now, now});
        return std::nullopt;
      }
    }
    queue_up(cpu, failed, mode, false);
    return std::nullopt;
  }

  if (writer_ < 0 && readers_ == 0 && !handoff_) {
    // A running writer takes a free word, ahead of a queued waiter (the
    // fast path, or with WAITERS set the slow path's trylock).
    const int prev = line_.owner();
    const Time granted_at = take_write(cpu, queue_.empty() ? now : line_.rmw(*topo_, cpu, now));
    record(mode, [&](LockStats& s) { s.record_uncontended(prev, cpu); });
    return granted_at;
  }
  const Time failed = line_.rmw(*topo_, cpu, now);  // the fast path's failed cmpxchg
  if (writer_may_spin(now)) {
    line_.rmw(*topo_, cpu, failed);  // osq_lock
    Waiter s{cpu, mode, now, now, now};
    if (owner_ == Owner::kReader) s.give_up = now + RwsemRules::rspin_threshold(readers_);
    osq_.push_back(s);
    return std::nullopt;
  }
  queue_up(cpu, failed, mode, nonspin_wr_ || nonspin_rd_);
  return std::nullopt;
}

Released Rwsem::release(int cpu, Time now, LockMode mode) {
  Handover woken(*this);
  advance(now);
  if (mode == LockMode::kShared) {
    const Time done = line_.rmw(*topo_, cpu, now);  // up_read's fetch_add
    record(mode, [&](LockStats& s) { s.record_hold(now - read_start_[static_cast<std::size_t>(cpu)]); });
    if (--readers_ > 0 || (queue_.empty() && osq_.empty())) return woken.released(done);
    if (!queue_.empty()) {  // up_read with WAITERS: clear_wr_nonspinnable (v5.3) / clear_nonspinnable
      nonspin_wr_ = false;
      if (!rules_.adaptive) nonspin_rd_ = false;
    }
    const Time finished = freed(cpu, done, woken);
    return woken.released(finished);
  }
  record(mode, [&](LockStats& s) { s.record_hold(now - write_start_); });
  // rwsem_clear_owner's store, then the count's fetch_add.
  const Time done = line_.rmw(*topo_, cpu, line_.store(*topo_, cpu, now));
  writer_ = -1;
  owner_ = Owner::kNone;
  // Spinners that saw this holder go to sleep stopped then and sleep.
  std::vector<Waiter> stopped;
  stop_spinners(sleeps_, osq_, stopped);
  for (const Waiter& s : stopped) to_queue(s, s.joined);
  for (Waiter& w : queue_)
    if (w.spinning && sleeps_.spin_stops(w.slept)) w.spinning = false;
  sleeps_.clear();
  const Time finished = freed(cpu, done, woken);
  return woken.released(finished);
}

Time Rwsem::freed(int releaser, Time t, Handover& woken) {
  // Who races for the word: the OSQ head (unless HANDOFF keeps it out) and
  // the HANDOFF writer spinning outside the OSQ notice the change within
  // their PAUSE, re-read the word and try their cmpxchg; the releaser
  // (rwsem_wake -> rwsem_mark_wake) takes wait_lock, reads the first
  // waiter (on that task's stack: a line from its CPU) and, for readers,
  // adds READER_BIAS; a head writer it wakes (or woke before, not yet run)
  // runs after its wake-up latency, reads the count, takes wait_lock and
  // tries rwsem_try_write_lock. Spinners are added first: their re-read
  // was asked for when the release invalidated their copy.
  using Op = WordRace::Op;
  WordRace race;
  int spinner = -1, handoff_spinner = -1, waker = -1, retrier = -1;
  Waiter* head = queue_.empty() ? nullptr : &queue_.front();
  const bool head_reader = head && head->mode == LockMode::kShared;
  if (!osq_.empty() && !handoff_)
    spinner = race.add(osq_.front().cpu, t, {WordRace::delay(pause_phase()), Op::kLoad, Op::kRmw});
  if (head && head->spinning && handoff_)  // rwsem_spin_on_owner saw OWNER_NULL: wait_lock, then the cmpxchg
    handoff_spinner = race.add(head->cpu, t, {WordRace::delay(pause_phase()), Op::kLoad, Op::kRmw, Op::kRmw});
  bool wakes_now = false;
  if (head) {
    const Duration read_waiter = topo_->transfer(releaser, head->cpu);
    waker = head_reader ? race.add(releaser, t, {Op::kRmw, WordRace::delay(read_waiter), Op::kRmw})
                        : race.add(releaser, t, {Op::kRmw, WordRace::delay(read_waiter)}, /*take=*/false);
    if (!head_reader && !head->spinning) {
      if (!head->woken) {  // wake_q_add, then wake_up_q once wait_lock is dropped
        wakes_now = true;
        head->woken = true;
        const Time issued = t + topo_->local_atomic() + read_waiter;
        head->retry_at = issued + wake_.draw(issued - head->slept);
      }
      if (spinner >= 0)
        retrier = race.add(head->cpu, head->retry_at, {Op::kLoad, Op::kRmw, Op::kRmw});
    }
  }
  race.run(line_, *topo_);
  Time done = waker >= 0 ? race.done(waker) : t;
  const int won = race.winner();
  if (wakes_now) woken.push_back({head->cpu, head->retry_at, /*retry=*/true, /*slept=*/true});

  if (won >= 0 && won == retrier) {
    // The woken writer got there first: the word is its own from then on;
    // its retry (already on its way) finds it so. The spinner's cmpxchg
    // failed: it spins on the new, running owner.
    const Waiter w = *head;
    queue_.erase(queue_.begin());
    handoff_ = false;
    writer_owns(w.cpu, race.done(retrier));
    if (rules_.adaptive && w.saw_nonspin) nonspin_rd_ = true;
    reserved_ = {w.cpu, w.since, write_start_};
    return done;
  }
  if (won >= 0 && won == spinner) {
    const Waiter s = osq_.front();
    osq_.erase(osq_.begin());
    const Time at = race.done(spinner);
    if (s.mode == LockMode::kExclusive) {
      writer_owns(s.cpu, at);
      record(s.mode, [&](LockStats& st) { st.record_handoff(releaser, s.cpu, write_start_ - s.since); });
      woken.push_back({s.cpu, write_start_});
      if (head_reader) {
        // rwsem_mark_wake's grant found the writer: undone; the head that
        // waited RWSEM_WAIT_TIMEOUT asks for the handoff.
        done = line_.rmw(*topo_, releaser, done);
        if (rules_.handoff && t - queue_.front().since >= rules_.handoff_timeout) {
          handoff_ = true;
          if (!rules_.handoff_spin) spinners_to_queue(t);
        }
      }
    } else {
      // A spinning reader took it (fetch_add): the readers behind it at the
      // OSQ's front follow, and the releaser's grant for the queue succeeds
      // too (readers share).
      ++readers_;
      read_start_[static_cast<std::size_t>(s.cpu)] = line_.store(*topo_, s.cpu, at);
      record(s.mode, [&](LockStats& st) { st.record_handoff(releaser, s.cpu, read_start_[static_cast<std::size_t>(s.cpu)] - s.since); });
      woken.push_back({s.cpu, read_start_[static_cast<std::size_t>(s.cpu)]});
      readers_own(at);
      spinning_readers_take(releaser, at, woken);
      if (head_reader) grant_queued_readers(releaser, done, woken);
    }
    return done;
  }
  if (won >= 0 && won == handoff_spinner) {
    const Waiter w = queue_.front();
    queue_.erase(queue_.begin());
    handoff_ = false;
    writer_owns(w.cpu, race.done(handoff_spinner));
    record(w.mode, [&](LockStats& st) { st.record_handoff(releaser, w.cpu, write_start_ - w.since); });
    woken.push_back({w.cpu, write_start_});
    return done;
  }
  if (head_reader) {
    // The releaser's fetch_add came first: the queue's readers have it.
    grant_queued_readers(releaser, done, woken);
    spinning_readers_take(releaser, done, woken);
  }
  return done;
}

void Rwsem::grant_queued_readers(int releaser, Time t, Handover& woken) {
  std::vector<Waiter> rest;
  int granted = 0;
  bool blocked = false;
  bool rd_nonspin = false;
  for (const Waiter& w : queue_) {
    if (w.mode == LockMode::kExclusive && !rules_.wake_all_readers) blocked = true;
    if (w.mode == LockMode::kExclusive || blocked || granted == RwsemRules::kMaxReadersWakeup) {
      rest.push_back(w);
      continue;
    }
    const Time at = t + wake_.draw(t - w.slept);
    ++readers_;
    ++granted;
    rd_nonspin = rd_nonspin || w.saw_nonspin;
    read_start_[static_cast<std::size_t>(w.cpu)] = at;
    record(w.mode, [&](LockStats& s) { s.record_handoff(releaser, w.cpu, at - w.since); });
    woken.push_back({w.cpu, at, false, /*slept=*/true});
  }
  queue_.swap(rest);
  if (granted == 0) return;
  handoff_ = false;  // a reader got it: HANDOFF is cleared with the grant
  if (rules_.adaptive && rd_nonspin) nonspin_rd_ = true;  // the first reader's last_rowner bit is copied
  readers_own(t);
}

void Rwsem::spinning_readers_take(int releaser, Time t, Handover& woken) {
  while (!osq_.empty() && osq_.front().mode == LockMode::kShared && !handoff_ && !nonspin_rd_) {
    const Waiter s = osq_.front();
    osq_.erase(osq_.begin());
    // It gets the OSQ, sees a reader owner and adds its READER_BIAS.
    const Time at = line_.store(*topo_, s.cpu, line_.rmw(*topo_, s.cpu, line_.load(*topo_, s.cpu, t)));
    ++readers_;
    read_start_[static_cast<std::size_t>(s.cpu)] = at;
    record(s.mode, [&](LockStats& st) { st.record_handoff(releaser, s.cpu, at - s.since); });
    woken.push_back({s.cpu, at});
    t = at;
  }
  // The reader spinners left (behind a writer in the OSQ, or stopped by
  // RD_NONSPINNABLE) stay: a writer spinner ahead of them spins on the
  // readers until its threshold.
  if (!osq_.empty() && osq_.front().mode == LockMode::kShared) {
    std::vector<Waiter> still;
    for (const Waiter& s : osq_) {
      if (s.mode == LockMode::kShared) to_queue(s, t);
      else still.push_back(s);
    }
    osq_.swap(still);
  }
}


}  // namespace vfssim::models

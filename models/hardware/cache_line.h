// A cache line under a MESI-like protocol, reduced to what costs time.
//
// State: the CPU holding it exclusively (after a store or an atomic) and
// the set of CPUs holding a shared copy (after loads). A line is one
// coherence point and requests to it serialise: each request starts when
// the previous one has finished (`busy_until`) and takes the transfer cost
// from the current holder. One request, one computed completion time: no
// retry is ever simulated.
//
//   load,  held here (owner or sharer)  -> local_hit, no serialisation
//   load,  held elsewhere               -> transfer(holder -> cpu); cpu joins sharers
//   RMW, exclusive here                 -> local_atomic
//   RMW, elsewhere or shared            -> transfer(holder -> cpu) + local_atomic
//                                          + invalidate_per_sharer x (other sharers)
//                                          ; cpu becomes the only holder
//   store                               -> the line is taken as by an RMW, with
//                                          local_hit for local_atomic (a plain mov);
//                                          the CPU goes on after local_hit once the
//                                          line's previous request is done: the store
//                                          buffer (x86-TSO) hides the miss, and its
//                                          own reads forward from it, but it holds
//                                          one store of a hot line at a time, so the
//                                          line's backlog stays bounded (a full store
//                                          buffer bounds it on the machine). A later
//                                          fence or atomic does not wait for the
//                                          store (not modelled).
//
// Under contention the machine's coherence (Topology::coherence) decides:
//   - an RMW queued behind another request, from the line's socket, costs
//     at least `contended_rmw` (the measured plateau of one hot atomic
//     counter in a socket: SOSP'13 5.4 "~20 -> ~120 cycles once 2+ cores");
//   - a queued RMW from another socket, with more than one request ahead
//     of it, costs at most `contended_rmw_remote` (the line serves runs of
//     requests inside a socket before it crosses; one request ahead is a
//     ping-pong, which pays the pair's transfer);
//   - on a broadcast machine a store to a shared line costs at least
//     `shared_store` (the invalidation broadcast); on a directory machine it
//     costs what a store to a modified line does at that distance (SOSP'13
//     Table 2), the pair's transfer.
// Retention (Coherence::retention_ops, retention_window): the line's
// grants are kept in service order as (cpu, start, done). At `now` the line
// is physically where the last grant done by `now` put it, while the next
// grant (start = that done) is still in flight. An exclusive request from
// that CPU, within the window of its previous completion, on a visit that
// has served fewer than retention_ops accesses, is retained: it completes
// at now + its own cost, the line's later grants keep their times (their
// transfer was already under way) and the line is busy that much longer
// for requests still to come. The same holds when nothing has taken the
// line from the CPU yet and only the spinners' re-reads of its last store
// are pending: the core holds off their snoops too, and they re-read once,
// after its last access (a qspinlock unlock followed by the same CPU's
// next lock attempt). So a visit serves up to retention_ops back-to-back
// accesses for one transfer, and a per-op time under saturation well below
// a transfer (perfbook's count_atomic on 8 x Platinum 8176: 22-35 ns per
// increment against a 47.5 ns pair; the probe: 5-8 ops per visit); paced
// accesses (SOSP'13's, a cpu_relax longer than the window) pay a transfer
// each.
//
// Spinners are readers of the line: a spinlock whose waiters spin on this
// line registers them (set_spinners: how many, and the time the line's
// home spends answering their re-reads, a `burst`). Every store to the line
// invalidates their copies and is followed by their re-reads: the line is
// busy for the burst after the store, so the next store to it (the next
// holder's, a release, the holder's own store to data on the lock's line)
// waits behind the spinners. That is how spinners slow the holder.
//
// Two words that live on one line (false sharing, a count beside a lock)
// are one CacheLine.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <vector>

#include "models/hardware/topology.h"
#include "sim/time.h"

namespace vfssim::models {

using sim::Time;

struct LineStats {
  std::uint64_t loads = 0;
  std::uint64_t rmws = 0;       // stores and atomic read-modify-writes
  std::uint64_t bounces = 0;    // requests that moved the line between CPUs
  Duration queue_wait{0};       // time requests spent behind earlier ones
  void reset() { *this = LineStats{}; }
  void merge(const LineStats& o) {
    loads += o.loads;
    rmws += o.rmws;
    bounces += o.bounces;
    queue_wait += o.queue_wait;
  }
};

class CacheLine {
 public:
  // Requests a load at `now`; returns when the data is available.
  Time load(const Topology& topo, int cpu, Time now) {
    ++stats_.loads;
    if (cpu == owner_ || is_sharer(cpu)) return now + topo.local_hit();
    Time start = now < busy_until_ ? busy_until_ : now;
    stats_.queue_wait += start - now;
    const int from = owner_ >= 0 ? owner_ : (sharer_count_ > 0 ? any_sharer_ : -1);
    Duration cost = from >= 0 ? topo.transfer(from, cpu) : topo.local_hit();
    if (from >= 0) ++stats_.bounces;
    // The line stays exclusive nowhere once two CPUs read it.
    if (owner_ >= 0) add_sharer(owner_);
    owner_ = -1;
    add_sharer(cpu);
    busy_until_ = start + cost;
    note_grant(topo, cpu, start, busy_until_);
    return busy_until_;
  }

  // Requests an atomic RMW at `now`; returns its completion.
  Time rmw(const Topology& topo, int cpu, Time now) { return take_exclusive(topo, cpu, now, topo.local_atomic()); }

  // Requests a plain store at `now` (write: LINE); returns when the CPU
  // goes on: local_hit after the line's previous request is done. The line
  // itself is taken by busy_until().
  Time store(const Topology& topo, int cpu, Time now) {
    const Time start = now < busy_until_ ? busy_until_ : now;
    (void)take_exclusive(topo, cpu, now, topo.local_hit(), true);
    return start + topo.local_hit();
  }
  // The same store, answered with when it is visible to the others (the
  // line is the storer's): what a waiter spinning on the word waits for
  // (an unlock).
  Time store_visible(const Topology& topo, int cpu, Time now) {
    return take_exclusive(topo, cpu, now, topo.local_hit(), true);
  }

 private:
  // The line moves to `cpu` exclusively; `own` is the requester's own
  // cost once it holds the line (a locked RMW, or a store's L1 write).
  Time take_exclusive(const Topology& topo, int cpu, Time now, Duration own, bool store = false) {
    ++stats_.rmws;
    // x86-TSO: the CPU's own earlier store to this line, still queued
    // behind others' requests, is in its store buffer; a locked RMW drains
    // it first and a later store follows it, so this access is issued when
    // that store completes (where the line then is: retained, or queued).
    if (cpu == draining_cpu_ && now < draining_until_) now = draining_until_;
    const Time done = take_exclusive_at(topo, cpu, now, own);
    if (store) {
      draining_cpu_ = cpu;
      draining_until_ = done;
    }
    return done;
  }
  Time take_exclusive_at(const Topology& topo, int cpu, Time now, Duration own) {
    switch (retained(topo, cpu, now)) {
      case Retained::kNo:
        break;
      case Retained::kInFlight: {  // the next grant's transfer is under way: it keeps its time
        const Time done = now + own;
        visit_.done = done;
        ++visit_.ops;
        busy_until_ += own;
        return done;
      }
      case Retained::kHeld: {  // the spinners' re-reads wait until the visit ends
        const Time done = now + own;
        visit_.done = done;
        ++visit_.ops;
        if (busy_until_ < done + spin_burst_) busy_until_ = done + spin_burst_;
        return done;
      }
    }
    const bool queued = now < busy_until_;
    const Time start = queued ? busy_until_ : now;
    stats_.queue_wait += start - now;
    Duration cost;
    if (owner_ == cpu && spinners_ == 0) {
      cost = own;
    } else {
      int from = owner_ >= 0 ? owner_ : (sharer_count_ > 0 ? any_sharer_ : -1);
      int others = sharer_count_ - (is_sharer(cpu) ? 1 : 0);
      if (from < 0 || from == cpu) {
        cost = own + topo.invalidate_per_sharer() * (others > 0 ? others : 0);
      } else {
        cost = topo.transfer(from, cpu) + own +
               topo.invalidate_per_sharer() * (others > 1 ? others - 1 : 0);
        ++stats_.bounces;
      }
      cost += topo.invalidate_per_sharer() * spinners_;  // the spinning copies
      const Coherence& c = topo.coherence();
      if (queued && from >= 0 && from != cpu) {
        if (topo.same_socket(from, cpu)) {
          if (cost < c.contended_rmw) cost = c.contended_rmw;
        } else if (c.contended_rmw_remote > Duration{0} && cost > c.contended_rmw_remote &&
                   start - now > cost + cost / 2) {
          // Runs inside a socket need more than the one request being
          // served ahead of this one: two CPUs alternating across sockets
          // (a ping-pong) pay their pair's transfer every time (ccbench,
          // mctop: scenarios/validation/hardware/).
          cost = c.contended_rmw_remote;
        }
      }
      if (c.kind == CoherenceKind::kBroadcast && (others > 0 || spinners_ > 0) && cost < c.shared_store)
        cost = c.shared_store;
    }
    clear_sharers();
    owner_ = cpu;
    const Time done = start + cost;
    busy_until_ = done + spin_burst_;  // the spinners re-read what was just written
    note_grant(topo, cpu, start, done);
    return done;
  }

  // Retention (see the header): a grant in service order, and the visit
  // the line is on (the last grant done by the time asked, and how many
  // accesses it has served there).
  struct Grant {
    int cpu = -1;
    Time start{}, done{};
  };
  struct Visit {
    int cpu = -1;
    Time done{};  // its last access's completion
    int ops = 0;
  };
  void note_grant(const Topology& topo, int cpu, Time start, Time done) {
    if (topo.coherence().retention_ops <= 1) return;
    grants_.push_back({cpu, start, done});
  }
  // Whether `cpu`'s exclusive request at `now` is served where the line is:
  //   kInFlight  the line is on its way to the next requester (a grant
  //              begun when the visit's last access completed, not done);
  //   kHeld      no request has taken the line from `cpu` since its last
  //              access: only the spinners' re-reads of what it wrote are
  //              pending, and a core holding off snoops serves them after
  //              its own accesses (one burst of re-reads, after the visit);
  //   kNo        the access queues for the line as any other.
  // Either way within the window of the visit's last access and below
  // retention_ops accesses.
  enum class Retained { kNo, kInFlight, kHeld };
  Retained retained(const Topology& topo, int cpu, Time now) {
    const Coherence& c = topo.coherence();
    if (c.retention_ops <= 1) return Retained::kNo;
    while (!grants_.empty() && grants_.front().done <= now) {
      const Grant g = grants_.front();
      grants_.pop_front();
      // A new visit when the line moved, or sat idle there past the window
      // (the hold-off restarts with the next burst of accesses).
      if (g.cpu != visit_.cpu || g.start > visit_.done + c.retention_window) visit_ = {g.cpu, g.done, 1};
      else visit_ = {g.cpu, g.done, visit_.ops + 1};
    }
    if (visit_.cpu != cpu || now < visit_.done || now - visit_.done > c.retention_window ||
        visit_.ops >= c.retention_ops)
      return Retained::kNo;
    if (grants_.empty()) return owner_ == cpu ? Retained::kHeld : Retained::kNo;
    // The line is in flight away from the visit's CPU: the next grant began
    // when the visit's last access completed and has not completed yet.
    // SMT siblings share the L1: a line between them never leaves the core,
    // and their accesses are the core's one after another.
    const int next = grants_.front().cpu;
    return next != cpu && grants_.front().start <= visit_.done && topo.core_of(next) != topo.core_of(cpu)
               ? Retained::kInFlight
               : Retained::kNo;
  }
  // A lock model moved the line itself: no visit survives it.
  void forget_visits() {
    grants_.clear();
    visit_ = Visit{};
  }

 public:
  // The CPUs spinning on this line (reading it until it changes) and the
  // time the line's home takes to answer all their re-reads after a store.
  void set_spinners(int count, Duration burst) {
    spinners_ = count;
    spin_burst_ = burst;
  }
  int spinners() const { return spinners_; }

  // Hands the line to `cpu` exclusively, arriving at `at`: used by lock
  // models that computed the handoff cost themselves (a queued lock's
  // release moves the line straight to the next waiter).
  void move_to(int cpu, Time at) {
    forget_visits();
    if (cpu != owner_) ++stats_.bounces;
    ++stats_.rmws;
    clear_sharers();
    owner_ = cpu;
    if (busy_until_ < at) busy_until_ = at;
  }

  // CPUs inside a cmpxchg retry loop on this line (models/kernel/
  // cmpxchg_loop.h): how many are still in one at `now` (each counts until
  // the completion computed for it), and a CPU entering one until `until`.
  int in_loop(Time now) {
    while (!loop_until_.empty() && loop_until_.top() <= now) loop_until_.pop();
    return static_cast<int>(loop_until_.size());
  }
  void enter_loop(Time until) { loop_until_.push(until); }
  // `grants` more grants of the line to `cpu` (its RMW having just made it
  // the owner), each costing `each`: a cmpxchg loop's retries, computed
  // together rather than requested one by one.
  void occupy(int cpu, std::int64_t grants, Duration each) {
    if (grants <= 0) return;
    forget_visits();
    stats_.rmws += static_cast<std::uint64_t>(grants);
    stats_.bounces += static_cast<std::uint64_t>(grants);
    owner_ = cpu;
    busy_until_ += each * grants;
  }

  int owner() const { return owner_; }
  int sharer_count() const { return sharer_count_; }
  Time busy_until() const { return busy_until_; }
  const LineStats& stats() const { return stats_; }
  void reset_stats() { stats_.reset(); }

 private:
  bool is_sharer(int cpu) const {
    auto w = static_cast<std::size_t>(cpu) / 64;
    return w < sharers_.size() && (sharers_[w] >> (cpu % 64) & 1u);
  }
  void add_sharer(int cpu) {
    auto w = static_cast<std::size_t>(cpu) / 64;
    if (w >= sharers_.size()) sharers_.resize(w + 1, 0);
    std::uint64_t bit = std::uint64_t{1} << (cpu % 64);
    if (!(sharers_[w] & bit)) {
      sharers_[w] |= bit;
      ++sharer_count_;
      any_sharer_ = cpu;
    }
  }
  void clear_sharers() {
    if (sharer_count_ == 0) return;
    for (auto& w : sharers_) w = 0;
    sharer_count_ = 0;
    any_sharer_ = -1;
  }

  int owner_ = -1;  // exclusive holder, or -1
  int draining_cpu_ = -1;   // the CPU whose last store to the line completes at draining_until_
  Time draining_until_{};
  int spinners_ = 0;           // CPUs spinning on the line (set by a spinlock)
  Duration spin_burst_{0};     // their re-reads after a store: the line is busy that long
  int sharer_count_ = 0;
  int any_sharer_ = -1;  // the most recent sharer: the source of the next transfer
  std::vector<std::uint64_t> sharers_;
  Time busy_until_{};
  // Completion times of the CPUs in a cmpxchg loop here (earliest on top).
  std::priority_queue<Time, std::vector<Time>, std::greater<>> loop_until_;
  // Retention only (Coherence::retention_ops > 1): grants not yet done by
  // the last request, in service order, and the visit the line is on.
  std::deque<Grant> grants_;
  Visit visit_;
  LineStats stats_;
};

}  // namespace vfssim::models

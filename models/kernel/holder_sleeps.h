// Whether a sleeping lock's holder is on its CPU: optimistic spinning
// (mutex_spin_on_owner, rwsem_spin_on_owner) goes on only while the owner
// runs, and a spinner that sees it leave the CPU gives up and sleeps.
//
// One task per CPU never gives up its CPU to another task in the model, so
// the holder is off its CPU exactly while it executes a `sleep:` step
// inside the critical section. The executor reports each such interval at
// the holder's local clock, which is never behind the global one; so when
// a waiter arrives at `t`, every sleep that started at or before `t` is
// known, and a sleep reported later starts after the waiter began
// spinning: the release, which comes after all of them, settles which
// spinners stopped and when.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "sim/time.h"

namespace vfssim::models {

using sim::Time;

class HolderSleeps {
 public:
  void add(Time from, Time until) { sleeps_.push_back({from, until}); }
  void clear() { sleeps_.clear(); }
  // The holder is on its CPU at `t`.
  bool running_at(Time t) const {
    for (const auto& s : sleeps_)
      if (s.from <= t && t < s.until) return false;
    return true;
  }
  // A waiter spinning since `since` (on a running holder) stops at the
  // first sleep of the hold that starts at or after it; nullopt: it spun
  // to the end of the hold.
  std::optional<Time> spin_stops(Time since) const {
    std::optional<Time> at;
    for (const auto& s : sleeps_)
      if (s.from >= since && (!at || s.from < *at)) at = s.from;
    return at;
  }

 private:
  struct Interval {
    Time from, until;
  };
  std::vector<Interval> sleeps_;  // of the current hold; cleared at its release
};

// A sleeping lock's wait list is FIFO by the instant a waiter joined it
// (`joined`; a spinner that gave up joins when it did): `w` goes after
// every waiter that joined at or before it.
template <class Waiter>
void join_wait_list(std::vector<Waiter>& list, const Waiter& w) {
  const auto at =
      std::upper_bound(list.begin(), list.end(), w.joined, [](Time t, const Waiter& x) { return t < x.joined; });
  list.insert(at, w);
}

// At the release: the spinners (spinning since `since`) that saw the holder
// go to sleep during the hold stopped then and joined the wait list.
template <class Waiter>
void stop_spinners(const HolderSleeps& sleeps, std::vector<Waiter>& spinners, std::vector<Waiter>& list) {
  std::vector<Waiter> still;
  for (Waiter s : spinners) {
    if (const auto stop = sleeps.spin_stops(s.since)) {
      s.joined = *stop;
      join_wait_list(list, s);
    } else {
      still.push_back(s);
    }
  }
  spinners.swap(still);
}

}  // namespace vfssim::models

// One discrete-event simulation: clock, pending events, handlers, stop rule.
//
// A Simulation owns everything a run touches; there is no global state, so
// any number of them may live in one process or run in parallel threads
// (the sweep does exactly that). Handlers never see the queue: they
// schedule through the Simulation, which stamps each event with a sequence
// number, so the order of execution is a pure function of the scenario and
// the seed.
//
// The loop (SST-core's Simulation::run, reduced): pop the earliest event,
// advance the clock to it, hand it to its target. Time never goes back: an
// event scheduled in the past is a model bug and throws.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "sim/event_queue.h"
#include "sim/time.h"

namespace vfssim::sim {

class Simulation;

class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void handle(Simulation& sim, const Event& e) = 0;
};

// Why a run stopped.
enum class StopReason { kTimeLimit, kRequested, kQueueEmpty, kEventBudget };

const char* to_string(StopReason r);

struct RunLimits {
  Time end = Time{Duration{std::numeric_limits<std::int64_t>::max()}};
  std::uint64_t max_events = std::numeric_limits<std::uint64_t>::max();
  // Work reported by handlers (add_work) after which run() returns as if
  // the event budget were spent: one event may do much work (a code path
  // of a million local steps), and budgets are checked between runs.
  std::uint64_t max_work = std::numeric_limits<std::uint64_t>::max();
};

class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Simulation {
 public:
  Simulation() = default;
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Registers a handler; the returned id is the `target` of its events.
  std::uint32_t add_handler(EventHandler* h) {
    handlers_.push_back(h);
    return static_cast<std::uint32_t>(handlers_.size() - 1);
  }

  Time now() const { return now_; }

  [[gnu::always_inline]] void schedule(Time at, std::uint32_t target, std::uint32_t kind, std::uint64_t arg = 0,
                                       std::uint8_t priority = 128) {
    if (at < now_) [[unlikely]]
      scheduled_in_the_past();
    queue_.push(Event{at, (std::uint64_t{priority} << 56) | next_seq_++, target, kind, arg});
  }

  // Asks the loop to stop after the current event.
  void request_stop() { stop_requested_ = true; }
  // Work a handler did beside its events (steps it ran without an event).
  void add_work(std::uint64_t n) { work_ += n; }
  std::uint64_t work() const { return work_; }

  // Runs until the next event lies past `limits.end`, the queue drains, a
  // handler asks to stop, or the event budget is spent. Events exactly at
  // `end` still run. Returns why it stopped; the clock is left at `end` when
  // the time limit was the reason.
  StopReason run(const RunLimits& limits);

  std::uint64_t events_executed() const { return events_executed_; }
  std::size_t pending() const { return queue_.size(); }

 private:
  // Out of line, so that schedule() inlines into the handlers' hot paths.
  [[noreturn, gnu::cold, gnu::noinline]] static void scheduled_in_the_past();

  Time now_ = kTimeZero;
  std::uint64_t next_seq_ = 0;
  std::uint64_t events_executed_ = 0;
  std::uint64_t work_ = 0;
  bool stop_requested_ = false;
  EventQueue queue_;
  std::vector<EventHandler*> handlers_;
};

}  // namespace vfssim::sim

// Simulated time: an integer count of picoseconds.
//
// A floating-point clock drifts and forces epsilons into every comparison
// (SimGrid's lesson); an int64 of picoseconds covers 106 days of simulated
// time, far beyond any run, and replays exactly. Duration is a std::chrono
// duration so units convert at compile time (ChampSim's choice); Time is a
// time point on the simulation's own clock so that "time + time" does not
// compile.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace vfssim::sim {

using Duration = std::chrono::duration<std::int64_t, std::pico>;

// The simulation clock: never read from the wall, only advanced by events.
struct SimClock {
  using rep = std::int64_t;
  using period = std::pico;
  using duration = Duration;
  using time_point = std::chrono::time_point<SimClock, Duration>;
  static constexpr bool is_steady = true;
};

using Time = SimClock::time_point;

constexpr Time kTimeZero{Duration{0}};

constexpr Duration picoseconds(std::int64_t v) { return Duration{v}; }
constexpr Duration nanoseconds(std::int64_t v) { return Duration{v * 1000}; }
constexpr Duration microseconds(std::int64_t v) { return Duration{v * 1000 * 1000}; }

constexpr std::int64_t ps(Duration d) { return d.count(); }
constexpr std::int64_t ps(Time t) { return t.time_since_epoch().count(); }
constexpr double seconds(Duration d) { return static_cast<double>(d.count()) * 1e-12; }
constexpr double seconds(Time t) { return seconds(t.time_since_epoch()); }

// "1.25us", "300ns", "12ps": the shortest exact-ish human form, for reports.
std::string format_duration(Duration d);

}  // namespace vfssim::sim

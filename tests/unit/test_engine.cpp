// The engine on its own: event order, determinism, independence.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "sim/parallel.h"
#include "sim/rng.h"
#include "sim/simulation.h"

using namespace vfssim::sim;

namespace {

// Records (time, tag) of every event it receives.
struct Recorder : EventHandler {
  std::vector<std::pair<std::int64_t, std::uint64_t>> seen;
  void handle(Simulation& sim, const Event& e) override { seen.emplace_back(ps(sim.now()), e.arg); }
};

// Schedules itself again after an exponential delay, `left` times.
struct Chain : EventHandler {
  RngStream rng;
  std::uint32_t id = 0;
  int left = 0;
  std::vector<std::int64_t> times;
  void handle(Simulation& sim, const Event&) override {
    times.push_back(ps(sim.now()));
    if (--left > 0) sim.schedule(sim.now() + Duration{static_cast<std::int64_t>(rng.exponential(1e6)) + 1}, id, 0);
  }
};

std::vector<std::int64_t> run_chain(std::uint64_t seed) {
  Simulation sim;
  Chain c;
  c.rng = RngStream(seed, "chain");
  c.id = sim.add_handler(&c);
  c.left = 1000;
  sim.schedule(kTimeZero, c.id, 0);
  sim.run({});
  return c.times;
}

}  // namespace

TEST_CASE("events run in (time, priority, sequence) order") {
  Simulation sim;
  Recorder r;
  const auto id = sim.add_handler(&r);
  sim.schedule(Time{nanoseconds(5)}, id, 0, 1);
  sim.schedule(Time{nanoseconds(1)}, id, 0, 2);
  sim.schedule(Time{nanoseconds(5)}, id, 0, 3, /*priority=*/10);  // same time, higher priority
  sim.schedule(Time{nanoseconds(5)}, id, 0, 4);                    // same time and priority: after tag 1
  sim.schedule(Time{nanoseconds(3)}, id, 0, 5);
  CHECK(sim.run({}) == StopReason::kQueueEmpty);
  const std::vector<std::pair<std::int64_t, std::uint64_t>> want{{1000, 2}, {3000, 5}, {5000, 3}, {5000, 1}, {5000, 4}};
  CHECK(r.seen == want);
  CHECK(sim.events_executed() == 5);
}

TEST_CASE("a heap of many random events pops in order") {
  Simulation sim;
  Recorder r;
  const auto id = sim.add_handler(&r);
  RngStream rng(7, "heap");
  for (std::uint64_t i = 0; i < 5000; ++i) sim.schedule(Time{Duration{static_cast<std::int64_t>(rng.below(1000))}}, id, 0, i);
  sim.run({});
  REQUIRE(r.seen.size() == 5000);
  for (std::size_t i = 1; i < r.seen.size(); ++i) {
    CHECK(r.seen[i - 1].first <= r.seen[i].first);
    if (r.seen[i - 1].first == r.seen[i].first) CHECK(r.seen[i - 1].second < r.seen[i].second);
  }
}

TEST_CASE("the event queue pops in (time, order) whatever its near events and heap hold") {
  // Random pushes and pops, the pending count drifting from 0 to a few
  // hundred and back (through the near array's limit both ways), ties in
  // time and priority included; a sorted vector is the reference.
  RngStream rng(11, "queue");
  EventQueue q;
  std::vector<Event> ref;
  std::uint64_t seq = 0;
  std::int64_t now = 0;
  const auto later = [](const Event& a, const Event& b) { return runs_before(b, a); };
  for (int step = 0; step < 200000; ++step) {
    const int phase = (step / 5000) % 4;  // filling, steady, draining, steady small
    const double p_push = phase == 0 ? 0.7 : phase == 2 ? 0.3 : 0.5;
    if (ref.empty() || rng.uniform() < p_push) {
      const std::int64_t delay = rng.uniform() < 0.2 ? 0 : static_cast<std::int64_t>(rng.below(rng.uniform() < 0.5 ? 50 : 5000));
      const std::uint8_t prio = rng.uniform() < 0.1 ? 0 : 128;
      const Event e{Time{Duration{now + delay}}, (std::uint64_t{prio} << 56) | seq++, 0, 0, seq};
      q.push(e);
      ref.push_back(e);
      std::push_heap(ref.begin(), ref.end(), later);
    } else {
      std::pop_heap(ref.begin(), ref.end(), later);
      const Event want = ref.back();
      ref.pop_back();
      REQUIRE(q.top().order == want.order);
      const Event got = q.pop();
      REQUIRE(got.time == want.time);
      REQUIRE(got.order == want.order);
      REQUIRE(got.arg == want.arg);
      now = ps(got.time);
    }
    REQUIRE(q.size() == ref.size());
  }
}

TEST_CASE("the time limit stops before later events and leaves the clock at the limit") {
  Simulation sim;
  Recorder r;
  const auto id = sim.add_handler(&r);
  sim.schedule(Time{nanoseconds(10)}, id, 0, 1);
  sim.schedule(Time{nanoseconds(20)}, id, 0, 2);
  sim.schedule(Time{nanoseconds(30)}, id, 0, 3);
  CHECK(sim.run({Time{nanoseconds(20)}}) == StopReason::kTimeLimit);
  CHECK(r.seen.size() == 2);  // an event exactly at the limit runs
  CHECK(sim.now() == Time{nanoseconds(20)});
  CHECK(sim.pending() == 1);
}

TEST_CASE("scheduling in the past is refused") {
  Simulation sim;
  Recorder r;
  const auto id = sim.add_handler(&r);
  sim.schedule(Time{nanoseconds(10)}, id, 0);
  sim.run({});
  CHECK_THROWS_AS(sim.schedule(Time{nanoseconds(5)}, id, 0), SimulationError);
}

TEST_CASE("named RNG streams are deterministic and independent of creation order") {
  RngStream a1(42, "task", 3), b1(42, "task", 4);
  RngStream b2(42, "task", 4), a2(42, "task", 3);
  for (int i = 0; i < 100; ++i) {
    CHECK(a1.next_u64() == a2.next_u64());
    CHECK(b1.next_u64() == b2.next_u64());
  }
  RngStream x(42, "task", 3), y(43, "task", 3), z(42, "other", 3);
  const auto vx = x.next_u64();
  CHECK(vx != y.next_u64());
  CHECK(vx != z.next_u64());
}

TEST_CASE("exponential draws have the requested mean") {
  RngStream r(1, "exp");
  double sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) sum += r.exponential(2.0);
  CHECK(sum / n == doctest::Approx(2.0).epsilon(0.01));
}

TEST_CASE("the same seed replays the same run; another seed does not") {
  CHECK(run_chain(5) == run_chain(5));
  CHECK(run_chain(5) != run_chain(6));
}

TEST_CASE("two simulations in parallel threads do not interfere") {
  const auto expect5 = run_chain(5);
  const auto expect9 = run_chain(9);
  std::vector<std::int64_t> got5, got9;
  std::thread t1([&] { for (int i = 0; i < 20; ++i) got5 = run_chain(5); });
  std::thread t2([&] { for (int i = 0; i < 20; ++i) got9 = run_chain(9); });
  t1.join();
  t2.join();
  CHECK(got5 == expect5);
  CHECK(got9 == expect9);
}

TEST_CASE("two simulations interleaved in one thread keep separate clocks") {
  Simulation s1, s2;
  Recorder r1, r2;
  const auto i1 = s1.add_handler(&r1);
  const auto i2 = s2.add_handler(&r2);
  s1.schedule(Time{nanoseconds(100)}, i1, 0, 1);
  s2.schedule(Time{nanoseconds(7)}, i2, 0, 2);
  s1.run({});
  CHECK(s2.now() == kTimeZero);
  s2.run({});
  CHECK(s1.now() == Time{nanoseconds(100)});
  CHECK(s2.now() == Time{nanoseconds(7)});
}

TEST_CASE("parallel_for_after starts a job only after the jobs it comes after, lowest first") {
  // Job i reads the values of the jobs it comes after: the results are the
  // same on 1 worker and on 4, and every job ran once.
  constexpr std::size_t n = 200;
  std::vector<std::vector<std::size_t>> after(n);
  for (std::size_t i = 1; i < n; ++i) {
    after[i].push_back(i / 2);
    if (i % 3 == 0) after[i].push_back(i - 1);
  }
  auto run = [&](unsigned workers) {
    std::vector<std::uint64_t> value(n, 0);
    std::vector<std::atomic<int>> done(n);
    parallel_for_after(n, workers, after, [&](std::size_t i) {
      std::uint64_t v = i + 1;
      for (std::size_t j : after[i]) {
        CHECK(done[j].load() == 1);
        v = v * 31 + value[j];
      }
      value[i] = v;
      ++done[i];
    });
    for (const auto& d : done) CHECK(d.load() == 1);
    return value;
  };
  const auto one = run(1);
  CHECK(run(4) == one);
  CHECK(one[3] == (4 * 31 + one[1]) * 31 + one[2]);
  // One worker takes the lowest-numbered job that may start.
  std::vector<std::size_t> order;
  parallel_for_after(4, 1, {{}, {}, {0}, {}}, [&](std::size_t i) { order.push_back(i); });
  CHECK(order == std::vector<std::size_t>{0, 1, 2, 3});
  // A job after a later one is refused; an error stops the rest.
  CHECK_THROWS_AS(parallel_for_after(2, 1, {{1}, {}}, [](std::size_t) {}), std::invalid_argument);
  std::atomic<int> ran{0};
  CHECK_THROWS_AS(parallel_for_after(3, 1, {{}, {0}, {1}},
                                     [&](std::size_t i) {
                                       ++ran;
                                       if (i == 1) throw std::runtime_error("job 1");
                                     }),
                  std::runtime_error);
  CHECK(ran.load() == 2);
}

// A hand-written DES of the bench's MCS model (see handwritten_mcs.h).
//
// Events are (time, seq, cpu, type) in a binary min-heap ordered by time
// then by scheduling order; three types: a task's start, its arrival at
// the lock after thinking, its release. Per task a xoshiro256** stream
// draws the start offset and the think times by inversion; waiters sit in
// a FIFO ring of CPU numbers. The streams are seeded as the engine seeds
// its tasks' (sim::derive_seed, then splitmix64: set-up only), and events
// are scheduled in the order the engine schedules them, so the two
// simulate the same acquisitions and the printed counts can be compared.
#include "bench/handwritten_mcs.h"

#include <cmath>
#include <ctime>
#include <chrono>
#include <vector>

#include "sim/rng.h"

namespace vfssim::bench {
namespace {

constexpr std::int64_t kThinkMean = 2'000'000;  // ps: 2 us
constexpr std::int64_t kHold = 200'000;         // 200 ns
constexpr std::int64_t kTransfer = 100'000;     // every line transfer of the flat machine
constexpr std::int64_t kAtomic = 100'000;       // an atomic on a line held here
constexpr std::int64_t kJitter = 1'000'000;     // tasks start in [0, 1 us)

struct Xoshiro256 {
  std::uint64_t s[4];
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t next() {
    const std::uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  std::uint64_t below(std::uint64_t n) { return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64); }
  std::int64_t exponential_ps(double mean) { return static_cast<std::int64_t>(-mean * std::log(1.0 - uniform()) + 0.5); }
};

enum Type : std::uint32_t { kStart, kArrive, kRelease };
struct Event {
  std::int64_t time;
  std::uint64_t seq;
  std::int32_t cpu;
  std::uint32_t type;
};

class Heap {  // binary min-heap on (time, seq), sifting a hole
 public:
  explicit Heap(std::size_t reserve) { h_.reserve(reserve); }
  bool empty() const { return h_.empty(); }
  const Event& top() const { return h_[0]; }
  void push(const Event& e) {
    std::size_t i = h_.size();
    h_.push_back(e);
    while (i > 0 && before(e, h_[(i - 1) / 2])) {
      h_[i] = h_[(i - 1) / 2];
      i = (i - 1) / 2;
    }
    h_[i] = e;
  }
  void pop() {
    const Event last = h_.back();
    h_.pop_back();
    const std::size_t n = h_.size();
    if (n == 0) return;
    std::size_t i = 0;
    for (std::size_t c = 1; c < n; c = 2 * i + 1) {
      if (c + 1 < n && before(h_[c + 1], h_[c])) ++c;
      if (!before(h_[c], last)) break;
      h_[i] = h_[c];
      i = c;
    }
    h_[i] = last;
  }

 private:
  static bool before(const Event& a, const Event& b) { return a.time != b.time ? a.time < b.time : a.seq < b.seq; }
  std::vector<Event> h_;
};

struct Model {
  std::int64_t warmup, end;
  std::vector<Xoshiro256> rng;
  Heap heap;
  std::uint64_t seq = 0;
  std::vector<int> ring;  // FIFO of waiting CPUs, capacity a power of two >= cpus
  std::size_t head = 0, waiting = 0;
  int holder = -1, word_owner = -1;
  std::uint64_t acquisitions = 0;

  Model(int cpus, std::int64_t w, std::int64_t e) : warmup(w), end(e), rng(cpus), heap(cpus + 1) {
    std::size_t cap = 1;
    while (cap < static_cast<std::size_t>(cpus)) cap *= 2;
    ring.resize(cap);
  }
  void schedule(std::int64_t at, int cpu, Type type) { heap.push({at, seq++, cpu, type}); }
  void think(int cpu, std::int64_t now) {
    const std::int64_t at = now + rng[cpu].exponential_ps(kThinkMean);
    if (at == now) arrive(cpu, now);  // a zero think: straight to the lock
    else schedule(at, cpu, kArrive);
  }
  void arrive(int cpu, std::int64_t now) {
    if (holder >= 0) {  // MCS: join the queue, spin on our own node
      ring[(head + waiting++) & (ring.size() - 1)] = cpu;
      return;
    }
    const std::int64_t cost = word_owner == cpu || word_owner < 0 ? kAtomic : kTransfer + kAtomic;
    holder = word_owner = cpu;
    schedule(now + cost + kHold, cpu, kRelease);
  }
  void release(int cpu, std::int64_t now) {
    if (now > warmup && now <= end) ++acquisitions;
    if (waiting == 0) {
      holder = -1;
    } else {  // the head's node is written: one transfer, then it holds the lock
      const int next = ring[head];
      head = (head + 1) & (ring.size() - 1);
      --waiting;
      holder = word_owner = next;
      schedule(now + kTransfer + kHold, next, kRelease);
    }
    think(cpu, now);
  }
};

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

HandwrittenResult run_handwritten_mcs(int cpus, std::int64_t warmup_ps, std::int64_t window_ps, std::uint64_t seed) {
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = thread_cpu_seconds();
  Model m(cpus, warmup_ps, warmup_ps + window_ps);
  for (int t = 0; t < cpus; ++t) {
    std::uint64_t sm = sim::derive_seed(seed, "task", static_cast<std::uint64_t>(t));
    for (auto& w : m.rng[t].s) w = sim::splitmix64(sm);
  }
  for (int t = 0; t < cpus; ++t) m.schedule(static_cast<std::int64_t>(m.rng[t].below(kJitter)), t, kStart);
  std::uint64_t events = 0;
  while (!m.heap.empty() && m.heap.top().time <= m.end) {
    const Event e = m.heap.top();
    m.heap.pop();
    events += e.time >= warmup_ps;
    switch (e.type) {
      case kStart: m.think(e.cpu, e.time); break;
      case kArrive: m.arrive(e.cpu, e.time); break;
      case kRelease: m.release(e.cpu, e.time); break;
    }
  }
  HandwrittenResult r;
  r.acquisitions = m.acquisitions;
  r.events = events;
  r.sim_seconds = static_cast<double>(window_ps) * 1e-12;
  r.cpu_seconds = thread_cpu_seconds() - cpu0;
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return r;
}

}  // namespace vfssim::bench

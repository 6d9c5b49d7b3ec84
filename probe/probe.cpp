// `vfssim probe`: measurements on the real machine, written as a machine
// preset and a lock scenario (see probe.h and docs/probe.md).
#include "probe/probe.h"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "probe/locks.h"

namespace vfssim::probe {
namespace {

namespace po = boost::program_options;
namespace fs = std::filesystem;

// Exit 2: the command line or the output directory is wrong.
struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Exit 1: a measurement could not be made or gave an impossible result.
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr int kLocalBatches = 9;  // local_hit, local_atomic, the calibration loops
constexpr int kPairBatches = 15;  // each matrix entry
constexpr int kRateBatches = 15;  // contended line and lock throughput points
constexpr double kLossWarning = 0.01;  // warn when other tasks took more of a phase's time

double now_ns() {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Median and range of a set of batch results: of `used` of `total` batches
// (robust_stat keeps those least disturbed by other tasks), `loss` the
// largest share of its time one of them lost.
struct Stat {
  double median = 0, lo = 0, hi = 0;
  int used = 0, total = 0;
  int clean = 0;  // batches that lost at most kCleanLoss
  double loss = 0;
  double spread() const { return median > 0 ? (hi - lo) / median : 0; }  // (max - min) / median
};

Stat stat_of(std::vector<double> v) {
  Stat s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  s.lo = v.front();
  s.hi = v.back();
  s.used = s.total = s.clean = static_cast<int>(n);
  return s;
}

constexpr double kCleanLoss = 0.01;  // a batch that lost more of its time to other tasks is disturbed

// The batches that lost at most kCleanLoss of their time to other tasks
// (loss[i]: of batch i); if fewer than half did, the least disturbed half.
Stat robust_stat(const std::vector<double>& v, const std::vector<double>& loss) {
  std::vector<std::size_t> idx(v.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return loss[a] < loss[b]; });
  const auto clean = static_cast<std::size_t>(std::count_if(loss.begin(), loss.end(), [](double l) { return l <= kCleanLoss; }));
  const std::size_t keep = std::max(clean, (v.size() + 1) / 2);
  std::vector<double> kept;
  double worst = 0;
  for (std::size_t i = 0; i < keep && i < idx.size(); ++i) {
    kept.push_back(v[idx[i]]);
    worst = std::max(worst, loss[idx[i]]);
  }
  Stat s = stat_of(kept);
  s.total = static_cast<int>(v.size());
  s.clean = static_cast<int>(clean);
  s.loss = worst;
  return s;
}

// Fewer than half the batches undisturbed: worth measuring again.
bool disturbed(const Stat& s) { return 2 * s.clean < s.total; }

// The less disturbed of two measurements of the same thing.
bool less_disturbed(const Stat& a, const Stat& b) { return a.clean != b.clean ? a.clean > b.clean : a.loss < b.loss; }

// The share of a wall-clock interval a thread did not run.
double lost(double wall_ns, double cpu_ns) { return wall_ns > 0 ? std::max(0.0, 1 - cpu_ns / wall_ns) : 0; }

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// A time for the scenario format: "7.04ns", "43.2ns" (whole picoseconds).
std::string ns(double v) {
  if (!(v > 0)) return "0ns";
  return fmt(v < 10 ? "%.2fns" : "%.1fns", v);
}

std::string pct(double f) { return fmt(f < 0.1 ? "%.1f%%" : "%.0f%%", 100 * f); }

std::string join(const std::vector<int>& v, const char* sep = ",") {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

// CPU ids in the order given, runs of consecutive ids as ranges: "0-3,8,10-11".
std::string ranges(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    s += (s.empty() ? "" : ",") + std::to_string(v[i]) + (j > i + 1 ? "-" + std::to_string(v[j]) : j == i + 1 ? "," + std::to_string(v[j]) : "");
    i = j + 1;
  }
  return s;
}

// A YAML single-quoted scalar.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "''";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out + "'";
}

// ---------------------------------------------------------------- the system

std::vector<int> allowed_cpus() {
  const long conf = sysconf(_SC_NPROCESSORS_CONF);
  const int max = std::max<long>(conf, 1) > 4096 ? 8192 : 4096;
  cpu_set_t* set = CPU_ALLOC(max);
  const std::size_t size = CPU_ALLOC_SIZE(max);
  CPU_ZERO_S(size, set);
  std::vector<int> out;
  if (sched_getaffinity(0, size, set) != 0) {
    const int e = errno;
    CPU_FREE(set);
    throw Failure(std::string("sched_getaffinity failed: ") + std::strerror(e));
  }
  for (int c = 0; c < max; ++c)
    if (CPU_ISSET_S(c, size, set)) out.push_back(c);
  CPU_FREE(set);
  return out;
}

bool read_int(const std::string& path, int& v) {
  std::ifstream f(path);
  return static_cast<bool>(f >> v);
}

struct CpuInfo {
  int os = 0, package = 0, node = 0, core = 0;
  bool sysfs = true;  // topology read from sysfs (else: its own package and core)
};

CpuInfo read_cpu(int os) {
  CpuInfo c;
  c.os = os;
  const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(os);
  if (!read_int(dir + "/topology/physical_package_id", c.package) || !read_int(dir + "/topology/core_id", c.core)) {
    c.sysfs = false;
    c.package = 0;
    c.core = os;
  }
  c.node = -1;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 4 && name.compare(0, 4, "node") == 0 &&
        std::all_of(name.begin() + 4, name.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
      c.node = std::stoi(name.substr(4));
      break;
    }
  }
  if (c.node < 0) c.node = c.package;
  return c;
}

std::string cpuinfo_field(const std::string& key) {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
    return v;
  }
  return {};
}

std::string cpu_model() {
  for (const char* k : {"model name", "Model", "cpu model", "Processor", "cpu"}) {
    const std::string v = cpuinfo_field(k);
    if (!v.empty()) return v;
  }
  return "unknown CPU";
}

bool under_hypervisor() { return (" " + cpuinfo_field("flags") + " ").find(" hypervisor ") != std::string::npos; }

std::string host_name() {
  char b[256] = {};
  if (gethostname(b, sizeof b - 1) != 0) b[0] = 0;
  std::string s;
  for (const char* p = b; *p; ++p)
    s += std::isalnum(static_cast<unsigned char>(*p)) || *p == '-' || *p == '_' || *p == '.' ? *p : '-';
  return s.empty() ? "unknown" : s;
}

std::string utc(const char* f) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[64];
  std::strftime(b, sizeof b, f, &tm);
  return b;
}

// ------------------------------------------------------------ pinned threads

// What other tasks took from the measuring threads while they measured:
// involuntary context switches (getrusage RUSAGE_THREAD) and the time lost,
// wall time minus the thread's CPU time (which, with paravirtual steal time
// accounting, also leaves out time the hypervisor gave to others).
struct Loss {
  long switches = 0;
  double lost_ns = 0, wall_ns = 0;
  double fraction() const { return wall_ns > 0 ? lost_ns / wall_ns : 0; }
};
std::mutex g_loss_mutex;
Loss g_loss;

long involuntary_switches() {
  rusage u{};
  return getrusage(RUSAGE_THREAD, &u) == 0 ? u.ru_nivcsw : 0;
}

double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

Loss loss_now() {
  std::lock_guard<std::mutex> g(g_loss_mutex);
  return g_loss;
}

// Runs fn(k, start) on one thread pinned to each cpus[k]; every thread waits
// until all are pinned, then starts at the same clock time `start`. A thread
// that cannot be pinned fails the whole run before any fn is called.
void run_pinned(const std::vector<int>& cpus, const std::function<void(int, double)>& fn) {
  const int n = static_cast<int>(cpus.size());
  std::atomic<int> ready{0};
  std::atomic<bool> go{false}, failed{false};
  std::atomic<double> start{0};
  std::mutex m;
  std::string error;
  std::vector<std::exception_ptr> exc(static_cast<std::size_t>(n));
  auto fail = [&](const std::string& why) {
    std::lock_guard<std::mutex> g(m);
    if (error.empty()) error = why;
    failed = true;
  };
  std::vector<std::thread> threads;
  for (int k = 0; k < n; ++k) {
    try {
      threads.emplace_back([&, k] {
        const int cpu = cpus[static_cast<std::size_t>(k)];
        cpu_set_t* set = CPU_ALLOC(cpu + 1);
        const std::size_t size = CPU_ALLOC_SIZE(cpu + 1);
        CPU_ZERO_S(size, set);
        CPU_SET_S(cpu, size, set);
        const int rc = pthread_setaffinity_np(pthread_self(), size, set);
        CPU_FREE(set);
        if (rc != 0) {
          fail("cannot pin a thread to CPU " + std::to_string(cpu) + ": pthread_setaffinity_np: " + std::strerror(rc));
        } else {
          int on = sched_getcpu();
          for (int i = 0; i < 100 && on != cpu; ++i) {
            sched_yield();
            on = sched_getcpu();
          }
          if (on != cpu)
            fail("a thread pinned to CPU " + std::to_string(cpu) + " runs on CPU " + std::to_string(on));
        }
        if (ready.fetch_add(1) + 1 == n) {
          start = now_ns() + 100e3;  // 100 us for everyone to wake up
          go.store(true, std::memory_order_release);
        }
        while (!go.load(std::memory_order_acquire)) sched_yield();
        if (failed) return;
        const double s = start.load();
        while (now_ns() < s) cpu_relax();
        const long sw0 = involuntary_switches();
        const double w0 = now_ns(), c0 = thread_cpu_ns();
        try {
          fn(k, s);
        } catch (...) {
          exc[static_cast<std::size_t>(k)] = std::current_exception();
        }
        const double wall = now_ns() - w0, cpu_time = thread_cpu_ns() - c0;
        const long sw = involuntary_switches() - sw0;
        std::lock_guard<std::mutex> g(g_loss_mutex);
        g_loss.switches += sw;
        g_loss.wall_ns += wall;
        g_loss.lost_ns += std::max(0.0, wall - cpu_time);
      });
    } catch (const std::exception& e) {
      fail(std::string("cannot start a measuring thread: ") + e.what());
      go = true;
      break;
    }
  }
  for (auto& t : threads) t.join();
  if (failed) throw Failure(error);
  for (auto& e : exc)
    if (e) std::rethrow_exception(e);
}

// Kills the process when a measurement hangs (a pinned thread that never
// runs would leave its partner spinning forever).
class Watchdog {
 public:
  explicit Watchdog(double seconds)
      : thread_([this, seconds] {
          std::unique_lock<std::mutex> l(m_);
          if (!cv_.wait_for(l, std::chrono::duration<double>(seconds), [this] { return done_; })) {
            std::fprintf(stderr, "vfssim probe: no progress after %.0f s (is a pinned thread starved?); giving up\n",
                         seconds);
            std::_Exit(1);
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> g(m_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// ---------------------------------------------------------------- local costs

// Time per call of f(n) / n: calibrated so that `batches` batches take about
// budget_ns, then the median over the batches. *per_batch gets n.
template <class F>
Stat per_op(F&& f, double budget_ns, int batches, std::uint64_t* per_batch = nullptr) {
  std::uint64_t iters = 16;
  double t = 0;
  for (;;) {
    const double t0 = now_ns();
    f(iters);
    t = now_ns() - t0;
    if (t >= 100e3 || iters >= (1ull << 36)) break;
    iters *= 4;
  }
  const double per = std::max(t / static_cast<double>(iters), 1e-3);
  const auto n = static_cast<std::uint64_t>(std::clamp(budget_ns / batches / per, 16.0, 1e11));
  std::vector<double> v, loss;
  for (int b = 0; b < batches; ++b) {
    const double c0 = thread_cpu_ns(), t0 = now_ns();
    f(n);
    const double wall = now_ns() - t0;
    loss.push_back(lost(wall, thread_cpu_ns() - c0));
    v.push_back(wall / static_cast<double>(n));
  }
  if (per_batch) *per_batch = n;
  return robust_stat(v, loss);
}

struct alignas(kLine) Line {
  std::atomic<std::uint64_t> v{0};
};

struct alignas(kLine) Ring {
  void* p[kLine / sizeof(void*)];
};

constexpr int kChase = 16;  // dependent loads per loop iteration

struct LocalCosts {
  int cpu = 0;
  Stat hit, cas, fadd;  // ns per op
  std::uint64_t hit_ops = 0, cas_ops = 0, fadd_ops = 0;  // ops per batch
};

LocalCosts measure_local(int cpu, double budget_ns) {
  LocalCosts r;
  r.cpu = cpu;
  run_pinned({cpu}, [&](int, double) {
    auto ring = std::make_unique<Ring>();
    for (auto& p : ring->p) p = &ring->p[0];  // every slot points at the first: a self loop
    void* volatile sink = nullptr;
    r.hit = per_op(
        [&](std::uint64_t n) {
          void* p = ring->p[0];
          for (std::uint64_t i = 0; i < n; ++i)
            for (int k = 0; k < kChase; ++k) p = *static_cast<void* volatile*>(p);
          sink = p;
        },
        budget_ns / 3, kLocalBatches, &r.hit_ops);
    r.hit.median /= kChase;
    r.hit.lo /= kChase;
    r.hit.hi /= kChase;
    r.hit_ops *= kChase;
    (void)sink;
    auto line = std::make_unique<Line>();
    r.cas = per_op(
        [&](std::uint64_t n) {
          std::uint64_t v = line->v.load(std::memory_order_relaxed);
          for (std::uint64_t i = 0; i < n; ++i, ++v) {
            std::uint64_t e = v;
            line->v.compare_exchange_strong(e, v + 1);
          }
        },
        budget_ns / 3, kLocalBatches, &r.cas_ops);
    r.fadd = per_op(
        [&](std::uint64_t n) {
          for (std::uint64_t i = 0; i < n; ++i) line->v.fetch_add(1);
        },
        budget_ns / 3, kLocalBatches, &r.fadd_ops);
  });
  return r;
}

// The caches of a CPU from sysfs (bytes; 0: unknown).
struct Caches {
  long l2 = 0, l3 = 0;
  std::string l3_shared;  // CPUs sharing its L3 (shared_cpu_list)
};

Caches read_caches(int cpu) {
  Caches c;
  const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache";
  for (int i = 0; i < 16; ++i) {
    const std::string idx = dir + "/index" + std::to_string(i);
    int level = 0;
    if (!read_int(idx + "/level", level)) continue;
    std::string type, size, shared;
    std::ifstream(idx + "/type") >> type;
    std::ifstream(idx + "/size") >> size;
    std::ifstream(idx + "/shared_cpu_list") >> shared;
    if (type == "Instruction" || size.empty()) continue;
    long v = 0;
    std::size_t used = 0;
    try {
      v = std::stol(size, &used);
    } catch (...) {
      continue;
    }
    const char unit = used < size.size() ? size[used] : 'B';
    v *= unit == 'K' ? 1024L : unit == 'M' ? 1024L * 1024 : unit == 'G' ? 1024L * 1024 * 1024 : 1;
    if (level == 2) c.l2 = v;
    if (level == 3) {
      c.l3 = v;
      c.l3_shared = shared;
    }
  }
  return c;
}

// Dependent loads over a random cyclic ring of `bytes` (one pointer per
// 64-byte line, Sattolo's permutation, so no prefetcher guesses the next):
// sized between the L2 and the L3, every load is an L3 hit.
struct LlcHit {
  Stat load;  // ns per load
  std::size_t bytes = 0;
  std::uint64_t loads = 0;  // per batch
};

LlcHit measure_llc(int cpu, std::size_t bytes, double budget_ns) {
  LlcHit r;
  r.bytes = bytes;
  run_pinned({cpu}, [&](int, double) {
    constexpr std::size_t kHuge = 2u << 20;
    const std::size_t size = (bytes + kHuge - 1) / kHuge * kHuge;
    void* mem = std::aligned_alloc(kHuge, size);
    if (!mem) throw Failure("cannot allocate " + std::to_string(size) + " bytes for the L3 ring");
    madvise(mem, size, MADV_HUGEPAGE);  // fewer TLB misses where transparent huge pages are on
    const std::size_t lines = bytes / kLine;
    std::vector<std::size_t> order(lines);
    for (std::size_t i = 0; i < lines; ++i) order[i] = i;
    std::mt19937_64 rng(12345);
    for (std::size_t i = lines - 1; i > 0; --i) std::swap(order[i], order[std::uniform_int_distribution<std::size_t>(0, i - 1)(rng)]);
    auto* base = static_cast<char*>(mem);
    // order is a single cycle: line i points to line order[i].
    for (std::size_t i = 0; i < lines; ++i) *reinterpret_cast<void**>(base + i * kLine) = base + order[i] * kLine;
    void* p = base;
    for (std::size_t i = 0; i < 2 * lines; ++i) p = *static_cast<void* volatile*>(p);  // warm the L3
    r.load = per_op(
        [&](std::uint64_t n) {
          for (std::uint64_t i = 0; i < n; ++i) p = *static_cast<void* volatile*>(p);
        },
        budget_ns, kLocalBatches, &r.loads);
    std::free(mem);
  });
  return r;
}

// ------------------------------------------------------- (a) the CAS ping-pong

struct Pair {
  Stat handoff;             // ns: round trip / 2
  std::uint64_t rounds = 0; // round trips per batch
};

constexpr std::uint64_t kStop = ~0ull;
constexpr double kMinRounds = 50;  // round trips per batch, at least

// The thread on `a` waits for 2k and CASes it to 2k+1, the thread on `b`
// waits for 2k+1 and CASes it to 2k+2. Both wait by retrying the CAS (as
// nviennot/core-to-core-latency does), so every step is one RMW on a line
// the other CPU holds: what the simulator charges transfer + local_atomic.
Pair pingpong(int a, int b, double budget_ns) {
  auto line = std::make_unique<Line>();
  // The batches' plan, on a line of its own: the leader publishes the
  // first batch's round and the rounds per batch, so the follower can note
  // its own CPU time at the same boundaries.
  struct alignas(kLine) Plan {
    std::atomic<std::uint64_t> first{kStop}, per{0};
  };
  auto plan = std::make_unique<Plan>();
  struct Tick {
    double wall, cpu;
  };
  std::vector<Tick> lead, follow;
  lead.reserve(kPairBatches + 1);
  follow.reserve(kPairBatches + 1);
  Pair r;
  int done = 0;  // batches run
  run_pinned({a, b}, [&](int k, double start) {
    auto& v = line->v;
    if (k == 1) {
      std::uint64_t boundary = kStop, per = 0;
      for (std::uint64_t round = 0;; ++round) {
        if (boundary == kStop) {
          boundary = plan->first.load(std::memory_order_acquire);
          if (boundary != kStop) per = plan->per.load(std::memory_order_relaxed);
        }
        if (round >= boundary) {
          follow.push_back({now_ns(), thread_cpu_ns()});
          boundary = follow.size() <= kPairBatches ? boundary + per : kStop - 1;
        }
        const std::uint64_t want = 2 * round + 1;
        std::uint64_t e = want;
        while (!v.compare_exchange_weak(e, want + 1, std::memory_order_acq_rel, std::memory_order_relaxed)) {
          if (e == kStop) return;
          e = want;
        }
      }
    }
    std::uint64_t round = 0;
    auto rounds = [&](std::uint64_t count) {
      for (const std::uint64_t end = round + count; round < end; ++round) {
        const std::uint64_t want = 2 * round;
        std::uint64_t e = want;
        while (!v.compare_exchange_weak(e, want + 1, std::memory_order_acq_rel, std::memory_order_relaxed)) e = want;
      }
    };
    rounds(200);  // warm up: both threads running, the line in play
    const double t0 = now_ns();
    rounds(500);
    const double rt = std::max((now_ns() - t0) / 500, 1.0);
    r.rounds = static_cast<std::uint64_t>(std::clamp(budget_ns * 0.85 / kPairBatches / rt, kMinRounds, 1e9));
    plan->per.store(r.rounds, std::memory_order_relaxed);
    plan->first.store(round + 50, std::memory_order_release);
    rounds(50);  // the follower sees the plan
    lead.push_back({now_ns(), thread_cpu_ns()});
    // Other tasks on these CPUs slow the batches down: past 1.5 times the
    // budget, stop after the batches run so far (at least 3).
    const double deadline = start + 1.5 * budget_ns;
    for (done = 0; done < kPairBatches; ++done) {
      if (done >= 3 && now_ns() > deadline) break;
      rounds(r.rounds);
      lead.push_back({now_ns(), thread_cpu_ns()});
    }
    while (v.load(std::memory_order_acquire) != 2 * round) cpu_relax();  // the partner's last CAS
    v.store(kStop, std::memory_order_release);
  });
  std::vector<double> batches, loss;
  for (int bt = 0; bt < done; ++bt) {
    const double wall = lead[bt + 1].wall - lead[bt].wall;
    batches.push_back(wall / (2.0 * static_cast<double>(r.rounds)));
    double l = lost(wall, lead[bt + 1].cpu - lead[bt].cpu);
    if (follow.size() > static_cast<std::size_t>(bt) + 1)
      l = std::max(l, lost(follow[bt + 1].wall - follow[bt].wall, follow[bt + 1].cpu - follow[bt].cpu));
    else
      l = 1;  // the follower's boundaries are missing: treat the batch as disturbed
    loss.push_back(l);
  }
  r.handoff = robust_stat(batches, loss);
  return r;
}

// --------------------------------------------------- rates over time windows

// One thread's (time, count, its CPU time) at each window boundary.
struct Mark {
  double t;
  std::uint64_t c;
  double cpu;
};

// Boundaries: a tenth of the budget of warm-up, then kRateBatches windows.
std::vector<double> windows(double start, double budget_ns) {
  std::vector<double> b;
  const double warm = budget_ns * 0.1, w = budget_ns * 0.9 / kRateBatches;
  for (int i = 0; i <= kRateBatches; ++i) b.push_back(start + warm + i * w);
  return b;
}

// Total rate (per second, all threads) in each window: the sum of the
// threads' own rates between their marks; a window is as disturbed as its
// most disturbed thread; median over the least disturbed windows.
Stat total_rate(const std::vector<std::vector<Mark>>& marks) {
  std::vector<double> per_window, loss;
  for (int w = 0; w < kRateBatches; ++w) {
    double sum = 0, worst = 0;
    for (const auto& m : marks) {
      if (m.size() < static_cast<std::size_t>(w) + 2) throw Failure("a measuring thread stopped early");
      const double dt = m[w + 1].t - m[w].t;
      if (dt > 0) sum += static_cast<double>(m[w + 1].c - m[w].c) / dt * 1e9;
      worst = std::max(worst, lost(dt, m[w + 1].cpu - m[w].cpu));
    }
    per_window.push_back(sum);
    loss.push_back(worst);
  }
  return robust_stat(per_window, loss);
}

// ------------------------------------------------- (b) one contended line

struct Contended {
  int threads = 0;
  Stat rate;  // fetch_adds per second, all threads
  std::uint64_t ops = 0;
  std::uint64_t visits = 0;  // runs of consecutive fetch_adds by one thread (the line's visits)
};

Contended contended_line(const std::vector<int>& cpus, double budget_ns) {
  const std::size_t n = cpus.size();
  auto line = std::make_unique<Line>();
  std::vector<std::vector<Mark>> marks(n);
  std::vector<std::uint64_t> counts(n), visits(n);
  run_pinned(cpus, [&](int k, double start) {
    const auto bounds = windows(start, budget_ns);
    auto& m = marks[static_cast<std::size_t>(k)];
    std::uint64_t c = 0, runs = 0, prev = kStop - 1;
    std::size_t next = 0;
    for (;;) {
      // A fetch_add that does not return this thread's last value + 1
      // found the line moved on: another thread's ops came between.
      for (int i = 0; i < 32; ++i) {
        const std::uint64_t old = line->v.fetch_add(1);
        runs += old != prev + 1;
        prev = old;
      }
      c += 32;
      const double t = now_ns();
      if (t >= bounds[next]) {
        m.push_back({t, c, thread_cpu_ns()});
        if (++next == bounds.size()) break;
      }
    }
    counts[static_cast<std::size_t>(k)] = c;
    visits[static_cast<std::size_t>(k)] = runs;
  });
  Contended r;
  r.threads = static_cast<int>(n);
  for (auto c : counts) r.ops += c;
  for (auto v : visits) r.visits += v;
  if (line->v.load() != r.ops)
    throw Failure("contended line: the counter is " + std::to_string(line->v.load()) + " after " +
                  std::to_string(r.ops) + " fetch_adds");
  r.rate = total_rate(marks);
  return r;
}

// ------------------------------------------------------------ (c) real locks

struct Loops {
  double ns_per_iter = 0;               // of busy()
  std::uint64_t think_iters = 0, cs_iters = 0;
  Stat think, cs;                       // ns per call, on one thread
  std::uint64_t think_calls = 0, cs_calls = 0;
};

struct alignas(kLine) Counter {
  std::uint64_t v = 0;
};

Loops calibrate_loops(int cpu, double budget_ns) {
  Loops l;
  run_pinned({cpu}, [&](int, double) {
    const Stat it = per_op([](std::uint64_t n) { busy(n); }, budget_ns / 3, kLocalBatches);
    l.ns_per_iter = it.median;
    l.think_iters = std::max<std::uint64_t>(1, std::llround(1000 / it.median));
    l.cs_iters = std::max<std::uint64_t>(1, std::llround(200 / it.median));
    l.think = per_op(
        [&](std::uint64_t n) {
          for (std::uint64_t i = 0; i < n; ++i) busy(l.think_iters);
        },
        budget_ns / 3, kLocalBatches, &l.think_calls);
    auto counter = std::make_unique<Counter>();
    l.cs = per_op(
        [&](std::uint64_t n) {
          for (std::uint64_t i = 0; i < n; ++i) {
            plain_inc(&counter->v);
            busy(l.cs_iters);
          }
        },
        budget_ns / 3, kLocalBatches, &l.cs_calls);
  });
  return l;
}

// The think loop on every CPU at once (nothing shared): per-call time,
// median over the threads of each one's median; the range over threads in
// lo/hi. Slower than on one thread when CPUs share a core (SMT, also a host's
// SMT siblings under a hypervisor) or a power budget.
Stat parallel_think(const std::vector<int>& cpus, double budget_ns, const Loops& loops) {
  std::vector<double> med(cpus.size());
  run_pinned(cpus, [&](int k, double) {
    med[static_cast<std::size_t>(k)] = per_op(
        [&](std::uint64_t n) {
          for (std::uint64_t i = 0; i < n; ++i) busy(loops.think_iters);
        },
        budget_ns, kLocalBatches).median;
  });
  return stat_of(med);
}

struct LockPoint {
  int threads = 0;
  Stat rate;  // acquisitions per second, all threads
  std::uint64_t acquisitions = 0, counter = 0;
};

// Each thread: acquire; critical section (the protected counter, cs loop);
// release; think loop. The counter must equal the acquisitions.
template <class Lock>
LockPoint lock_point(const std::vector<int>& cpus, double budget_ns, const Loops& loops) {
  const std::size_t n = cpus.size();
  auto lock = std::make_unique<Lock>();
  auto counter = std::make_unique<Counter>();
  std::vector<McsNode> nodes(n);
  std::vector<std::vector<Mark>> marks(n);
  std::vector<std::uint64_t> counts(n);
  const std::uint64_t think = loops.think_iters, cs = loops.cs_iters;
  run_pinned(cpus, [&](int k, double start) {
    const auto bounds = windows(start, budget_ns);
    auto& m = marks[static_cast<std::size_t>(k)];
    McsNode& node = nodes[static_cast<std::size_t>(k)];
    std::uint64_t c = 0;
    std::size_t next = 0;
    for (;;) {
      lock->lock(node);
      plain_inc(&counter->v);
      busy(cs);
      lock->unlock(node);
      busy(think);
      if ((++c & 7) == 0) {
        const double t = now_ns();
        if (t >= bounds[next]) {
          m.push_back({t, c, thread_cpu_ns()});
          if (++next == bounds.size()) break;
        }
      }
    }
    counts[static_cast<std::size_t>(k)] = c;
  });
  LockPoint r;
  r.threads = static_cast<int>(n);
  for (auto c : counts) r.acquisitions += c;
  r.counter = counter->v;
  r.rate = total_rate(marks);
  return r;
}

// ---------------------------------------------------------- the machine model

struct Model {
  std::vector<std::string> level_names;  // outermost first; the last is the thread
  std::vector<int> counts;               // children per element of the level above
  std::vector<int> os;                   // model CPU -> OS CPU
  std::map<int, int> index;              // OS CPU -> model CPU
  std::vector<std::vector<int>> keys;    // model CPU -> its element id at each level
  bool uniform = true;
  std::string why_flat;
  int numa_level = 0, core_level = 0;
  bool sysfs = true;
  int nodes = 1;

  // The level at which a and b share their deepest element; -1: none.
  int shared(int a, int b) const {
    int s = -1;
    for (std::size_t l = 0; l + 1 < level_names.size(); ++l) {
      if (keys[static_cast<std::size_t>(a)][l] != keys[static_cast<std::size_t>(b)][l]) break;
      s = static_cast<int>(l);
    }
    return s;
  }
};

// Socket > NUMA node (kept only when a socket holds several) > core >
// thread, from sysfs; the CPUs sorted so that every element's CPUs are
// consecutive, as the simulator numbers them. A tree that is not uniform
// (sockets with different numbers of probed cores, ...) cannot be written as
// levels: it becomes one socket of single-thread cores (the matrix still
// gives every pair its cost).
Model build_model_of(std::vector<CpuInfo> info) {
  Model m;
  for (const auto& i : info) m.sysfs = m.sysfs && i.sysfs;
  std::sort(info.begin(), info.end(), [](const CpuInfo& x, const CpuInfo& y) {
    return std::tie(x.package, x.node, x.core, x.os) < std::tie(y.package, y.node, y.core, y.os);
  });
  std::vector<std::vector<int>> tuples;
  for (const auto& i : info) tuples.push_back({i.package, i.node, i.core, i.os});
  std::set<int> node_set;
  for (const auto& i : info) node_set.insert(i.node);
  m.nodes = static_cast<int>(node_set.size());
  const std::vector<std::string> names = {"socket", "node", "core", "thread"};
  // Children per parent at each level; uniform if the same for every parent.
  std::vector<int> counts;
  std::string why;
  for (std::size_t l = 0; l < names.size(); ++l) {
    std::map<std::vector<int>, std::set<std::vector<int>>> children;
    for (const auto& t : tuples)
      children[std::vector<int>(t.begin(), t.begin() + static_cast<long>(l))].insert(
          std::vector<int>(t.begin(), t.begin() + static_cast<long>(l) + 1));
    std::set<std::size_t> sizes;
    for (const auto& [parent, ch] : children) sizes.insert(ch.size());
    if (sizes.size() != 1 && why.empty())
      why = "the probed CPUs' " + names[l] + "s are not spread evenly (" + std::to_string(*sizes.begin()) + " to " +
            std::to_string(*sizes.rbegin()) + " per parent)";
    counts.push_back(static_cast<int>(*sizes.rbegin()));
  }
  std::vector<std::size_t> keep;
  for (std::size_t l = 0; l < names.size(); ++l)
    if (names[l] != "node" || counts[l] > 1) keep.push_back(l);
  for (std::size_t k = 0; k < info.size(); ++k) {
    m.os.push_back(info[k].os);
    m.index[info[k].os] = static_cast<int>(k);
  }
  if (!why.empty()) {
    m.uniform = false;
    m.why_flat = why;
    m.level_names = {"socket", "core", "thread"};
    m.counts = {1, static_cast<int>(info.size()), 1};
    for (std::size_t k = 0; k < info.size(); ++k) m.keys.push_back({0, static_cast<int>(k), 0});
    m.numa_level = 0;
    m.core_level = 1;
    return m;
  }
  for (std::size_t l : keep) {
    m.level_names.push_back(names[l]);
    m.counts.push_back(counts[l]);
  }
  for (const auto& t : tuples) {
    std::vector<int> key;
    for (std::size_t l : keep) {
      // Element id: the rank of the prefix through level l among all CPUs.
      std::set<std::vector<int>> prefixes;
      for (const auto& u : tuples) prefixes.insert(std::vector<int>(u.begin(), u.begin() + static_cast<long>(l) + 1));
      const std::vector<int> mine(t.begin(), t.begin() + static_cast<long>(l) + 1);
      key.push_back(static_cast<int>(std::distance(prefixes.begin(), prefixes.find(mine))));
    }
    m.keys.push_back(key);
  }
  for (std::size_t l = 0; l < m.level_names.size(); ++l) {
    if (m.level_names[l] == "core") m.core_level = static_cast<int>(l);
    if (m.level_names[l] == "node") m.numa_level = static_cast<int>(l);
  }
  return m;
}

Model build_model(const std::vector<int>& cpus) {
  std::vector<CpuInfo> info;
  for (int c : cpus) info.push_back(read_cpu(c));
  return build_model_of(std::move(info));
}

// ----------------------------------------------------------------- the run

struct Options {
  std::string out;
  std::vector<int> cpus;
  bool cpus_given = false;
  double seconds = 20;
  bool quiet = false;
};

struct Results {
  std::string host, model, date, when;
  bool vm = false;
  Model topo;
  std::vector<LocalCosts> local;
  Caches caches;  // of the first probed CPU
  LlcHit llc;     // bytes == 0: not measured
  double local_hit = 0, local_atomic = 0, local_fadd = 0;
  std::vector<std::vector<Pair>> pairs;  // [model a][model b]
  std::vector<Contended> contended;
  Loops loops;
  Stat think_all;  // the think loop on all CPUs at once
  std::map<std::string, Loss> preempted;  // what other tasks took, per phase
  std::map<std::string, int> retries;     // points measured again, per phase
  std::string unstable;                   // why the matrix looks unstable, or empty
  std::vector<int> counts;  // thread counts of (b) and (c)
  double lock_point_ns = 0;  // time budget of one lock point
  std::map<std::string, std::vector<LockPoint>> locks;
  double wall = 0;
};

std::vector<int> parse_cpus(const std::string& s, const std::vector<int>& allowed) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  auto number = [&](const std::string& t) {
    std::size_t used = 0;
    int v = -1;
    try {
      v = std::stoi(t, &used);
    } catch (...) {
      used = 0;
    }
    if (t.empty() || used != t.size() || v < 0)
      throw BadInput("--cpus: '" + item + "' is not a CPU id (expected a list such as 0,1,2 or 0-3)");
    return v;
  };
  while (std::getline(ss, item, ',')) {
    const auto dash = item.find('-');
    int lo = 0, hi = 0;
    if (dash != std::string::npos && dash > 0) {
      lo = number(item.substr(0, dash));
      hi = number(item.substr(dash + 1));
      if (hi < lo) throw BadInput("--cpus: range '" + item + "' runs backwards");
    } else {
      lo = hi = number(item);
    }
    for (int c = lo; c <= hi; ++c) {
      if (std::find(out.begin(), out.end(), c) != out.end())
        throw BadInput("--cpus lists CPU " + std::to_string(c) + " twice");
      if (!std::binary_search(allowed.begin(), allowed.end(), c))
        throw BadInput("--cpus: CPU " + std::to_string(c) + " is not usable (this process may run on CPUs " +
                       join(allowed) + ", from sched_getaffinity)");
      out.push_back(c);
    }
  }
  if (out.empty()) throw BadInput("--cpus is empty (expected a list such as 0,1,2 or 0-3)");
  return out;
}

// 1..N up to 16 CPUs; beyond, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, ... and N.
std::vector<int> thread_counts(int n) {
  std::vector<int> c;
  if (n <= 16) {
    for (int i = 1; i <= n; ++i) c.push_back(i);
    return c;
  }
  for (int p = 1; p <= n; p *= 2) {
    c.push_back(p);
    if (p >= 2 && p + p / 2 < std::min(2 * p, n + 1) && p + p / 2 <= n) c.push_back(p + p / 2);
  }
  if (c.back() != n) c.push_back(n);
  return c;
}

// A pair whose batches disagree (spread over 50%), or whose two directions
// do (one more than 1.5 times the other), saw the line's cost change while
// it measured: under a hypervisor the vCPUs may have moved between host
// cores. Returns what to say about it, or "".
std::string unstable_matrix(const std::vector<std::vector<Pair>>& pairs, bool vm) {
  const std::size_t n = pairs.size();
  double spread = 0, ratio = 1;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      spread = std::max(spread, pairs[a][b].handoff.spread());
      const double x = pairs[a][b].handoff.median, y = pairs[b][a].handoff.median;
      if (x > 0 && y > 0) ratio = std::max(ratio, std::max(x, y) / std::min(x, y));
    }
  if (spread <= 0.5 && ratio <= 1.5) return {};
  return "the transfer matrix is unstable (a pair's batches spread up to " + pct(spread) +
         ", the two directions of a pair differ up to " + fmt("%.1f", ratio) + "x)" +
         (vm ? ": under a hypervisor the vCPUs may have moved between host cores while it measured"
             : ": the line's cost changed while it measured (power states? other load?)") +
         "; run it again";
}

class Progress {
 public:
  explicit Progress(bool quiet) : quiet_(quiet) {}
  void step(const std::string& what, std::size_t done, std::size_t total, const char* unit) {
    if (quiet_) return;
    const std::size_t every = std::max<std::size_t>(1, total / 10);
    if (done % every == 0 || done == total)
      std::cerr << "probe: " << what << " " << done << "/" << total << " " << unit << std::endl;
  }
  void say(const std::string& s) {
    if (!quiet_) std::cerr << "probe: " << s << std::endl;
  }

 private:
  bool quiet_;
};

Results measure(const Options& o) {
  Results r;
  const auto t0 = now_ns();
  Progress progress(o.quiet);
  r.host = host_name();
  r.model = cpu_model();
  r.date = utc("%Y-%m-%d");
  r.when = utc("%Y-%m-%dT%H:%M:%SZ");
  r.vm = under_hypervisor();
  r.topo = build_model(o.cpus);
  const int n = static_cast<int>(o.cpus.size());
  // The phases share 90% of the budget; the rest measures again, while it
  // lasts, points that other tasks disturbed in more than half their windows.
  const double S = 0.9 * o.seconds * 1e9, end = t0 + o.seconds * 1e9;
  r.counts = thread_counts(n);
  // Up to two more attempts at a disturbed point while the budget lasts;
  // keeps the least disturbed attempt.
  auto retrying = [&](const char* phase, double point_ns, auto measure, auto stat) {
    auto best = measure();
    for (int attempt = 0; attempt < 2 && disturbed(stat(best)) && now_ns() + point_ns < end; ++attempt) {
      auto again = measure();
      ++r.retries[phase];
      if (less_disturbed(stat(again), stat(best))) best = std::move(again);
    }
    return best;
  };

  Loss mark = loss_now();
  auto phase_done = [&](const char* phase) {
    const Loss now = loss_now();
    r.preempted[phase] = {now.switches - mark.switches, now.lost_ns - mark.lost_ns, now.wall_ns - mark.wall_ns};
    mark = now;
  };
  // Local costs on every CPU: 4% of the budget; an L3 hit on the first: 1%.
  for (std::size_t k = 0; k < o.cpus.size(); ++k) {
    r.local.push_back(measure_local(o.cpus[k], 0.04 * S / n));
    progress.step("local costs", k + 1, o.cpus.size(), "CPUs");
  }
  std::vector<double> hit, cas, fadd;
  for (const auto& l : r.local) {
    hit.push_back(l.hit.median);
    cas.push_back(l.cas.median);
    fadd.push_back(l.fadd.median);
  }
  r.local_hit = stat_of(hit).median;
  r.local_atomic = stat_of(cas).median;
  r.local_fadd = stat_of(fadd).median;
  r.caches = read_caches(o.cpus[0]);
  if (r.caches.l2 > 0 && r.caches.l3 >= 4 * r.caches.l2) {
    // 4 x L2 (at most a quarter of the L3): out of the private caches, well inside the L3.
    const auto bytes = static_cast<std::size_t>(std::min(4 * r.caches.l2, r.caches.l3 / 4));
    r.llc = measure_llc(o.cpus[0], bytes, 0.01 * S);
  }
  phase_done("local");

  // (a) the matrix: 38%.
  r.pairs.assign(static_cast<std::size_t>(n), std::vector<Pair>(static_cast<std::size_t>(n)));
  const std::size_t npairs = static_cast<std::size_t>(n) * (n - 1);
  std::size_t done = 0;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      const int ca = r.topo.os[static_cast<std::size_t>(a)], cb = r.topo.os[static_cast<std::size_t>(b)];
      const double pair_ns = 0.38 * S / static_cast<double>(npairs);
      r.pairs[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] = retrying(
          "matrix", pair_ns, [&] { return pingpong(ca, cb, pair_ns); }, [](const Pair& p) { return p.handoff; });
      progress.step("transfer matrix", ++done, npairs, "pairs");
    }
  phase_done("matrix");
  r.unstable = unstable_matrix(r.pairs, r.vm);
  if (!r.unstable.empty()) std::cerr << "probe: warning: " << r.unstable << "\n";

  // (b) the contended line: 15%.
  for (std::size_t i = 0; i < r.counts.size(); ++i) {
    const std::vector<int> first(o.cpus.begin(), o.cpus.begin() + r.counts[i]);
    const double point_ns = 0.15 * S / static_cast<double>(r.counts.size());
    r.contended.push_back(retrying(
        "contended", point_ns, [&] { return contended_line(first, point_ns); },
        [](const Contended& c) { return c.rate; }));
    progress.step("contended line", i + 1, r.counts.size(), "thread counts");
  }
  phase_done("contended");

  // (c) the loops (2%) alone and on every CPU at once (2%), then the locks (38%).
  r.loops = calibrate_loops(o.cpus[0], 0.02 * S);
  r.think_all = parallel_think(o.cpus, 0.02 * S, r.loops);
  progress.say("think loop " + fmt("%.1f", r.loops.think.median) + " ns (" + fmt("%.1f", r.think_all.median) +
               " ns on " + std::to_string(n) + " CPUs at once), critical section " + fmt("%.1f", r.loops.cs.median) +
               " ns on one thread");
  phase_done("loops");
  const double per_lock_point = r.lock_point_ns = 0.38 * S / (3 * r.counts.size());
  auto run_lock = [&](const std::string& kind, auto* tag) {  // tag: a null Lock*, for its type
    using Lock = std::remove_pointer_t<decltype(tag)>;
    auto& points = r.locks[kind];
    for (std::size_t i = 0; i < r.counts.size(); ++i) {
      const std::vector<int> first(o.cpus.begin(), o.cpus.begin() + r.counts[i]);
      points.push_back(retrying(
          "locks", per_lock_point,
          [&] {
            const LockPoint p = lock_point<Lock>(first, per_lock_point, r.loops);
            if (p.counter != p.acquisitions)
              throw Failure(kind + " lock with " + std::to_string(p.threads) + " threads: mutual exclusion failed: " +
                            "the protected counter is " + std::to_string(p.counter) + " after " +
                            std::to_string(p.acquisitions) + " acquisitions");
            return p;
          },
          [](const LockPoint& p) { return p.rate; }));
      progress.step(kind + " lock", i + 1, r.counts.size(), "thread counts");
    }
  };
  run_lock("tas", static_cast<TasLock*>(nullptr));
  run_lock("ticket", static_cast<TicketLock*>(nullptr));
  run_lock("mcs", static_cast<McsLock*>(nullptr));
  phase_done("locks");
  std::string where;
  for (const auto& [ph, v] : r.preempted)
    if (v.fraction() > kLossWarning) where += (where.empty() ? "" : ", ") + ph + " " + pct(v.fraction());
  if (!where.empty())
    std::cerr << "probe: warning: other tasks took time from the measuring threads (" << where
              << "): those numbers may be high; run it on an idle machine (the files say so)\n";
  r.wall = (now_ns() - t0) / 1e9;
  return r;
}

// ------------------------------------------------------------------ writers

std::string preemptions(const Results& r, std::initializer_list<const char*> phases) {
  std::string s;
  bool high = false;
  for (const char* p : phases) {
    const Loss v = r.preempted.count(p) ? r.preempted.at(p) : Loss{};
    high = high || v.fraction() > kLossWarning;
    const int again = r.retries.count(p) ? r.retries.at(p) : 0;
    s += (s.empty() ? "" : ", ") + std::string(p) + " " + pct(v.fraction()) + " (" + std::to_string(v.switches) +
         " preemptions" + (again ? ", " + std::to_string(again) + " re-measurements" : "") + ")";
  }
  return "# Time other tasks took from the measuring threads (wall - thread CPU time): " + s +
         (high ? ";\n# WARNING: more than " + pct(kLossWarning) + ": the numbers of that phase may be high.\n" : ".\n");
}

// "value   # comment", the comments lined up.
std::string commented(const std::string& value, const std::string& comment, std::size_t col = 34) {
  std::string s = value;
  if (s.size() < col) s.append(col - s.size(), ' ');
  else s += "  ";
  return s + "# " + comment;
}

// "median of 7 batches", or "median of the 4 of 7 batches least disturbed
// by other tasks (up to 3.1% of their time lost)".
std::string median_of(const Stat& s, const std::string& noun) {
  if (s.used == s.total) return "median of " + std::to_string(s.total) + " " + noun;
  return "median of the " + std::to_string(s.used) + " of " + std::to_string(s.total) + " " + noun +
         " least disturbed by other tasks (up to " + pct(s.loss) + " of their time lost)";
}

// Batches kept over a set of measurements: "all 9" or "5 to 9 of 9".
std::string kept_range(const std::vector<Stat>& v) {
  int lo = 1 << 30, hi = 0, total = 0;
  for (const auto& s : v) {
    lo = std::min(lo, s.used);
    hi = std::max(hi, s.used);
    total = std::max(total, s.total);
  }
  if (lo == total) return "all " + std::to_string(total);
  return (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) + " of " +
         std::to_string(total);
}

double matrix_entry(const Results& r, int a, int b) {
  return std::max(0.1, r.pairs[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)].handoff.median - r.local_atomic);
}

// `reread:` (a directory machine's time per re-read of a line its socket
// holds): an L3 hit, measured when sysfs gives the cache sizes.
std::string reread_line(const Results& r, const Model& m) {
  const int n = static_cast<int>(m.os.size());
  if (r.llc.bytes > 0)
    return commented("  reread: " + ns(r.llc.load.median),
                     "measured: an L3 hit: dependent loads over a random " + std::to_string(r.llc.bytes >> 10) +
                         " KiB ring (L2 " + std::to_string(r.caches.l2 >> 10) + " KiB, L3 " +
                         std::to_string(r.caches.l3 >> 10) + " KiB shared by CPUs " + r.caches.l3_shared +
                         ") on OS CPU " + std::to_string(m.os.empty() ? 0 : m.os[0]) + ", " +
                         median_of(r.llc.load, "batches") + " of " + std::to_string(r.llc.loads) +
                         " loads, spread " + pct(r.llc.load.spread()),
                     25) +
           "\n";
  std::vector<double> v;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b) v.push_back(matrix_entry(r, a, b));
  return commented("  reread: " + ns(stat_of(v).median),
                   "not measured: sysfs gives no L2/L3 sizes; the median transfer (a re-read as dear as a transfer)",
                   25) +
         "\n";
}

std::string machine_yaml(const Results& r, const Options& o) {
  const Model& m = r.topo;
  const int n = static_cast<int>(m.os.size());
  std::ostringstream y;
  Stat all_handoff;
  {
    std::vector<double> v;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        if (a != b) v.push_back(r.pairs[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)].handoff.median);
    all_handoff = stat_of(v);
  }
  std::uint64_t rmin = ~0ull, rmax = 0;
  double worst_spread = 0;
  std::vector<Stat> pair_stats;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b) {
        const auto& p = r.pairs[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
        pair_stats.push_back(p.handoff);
        rmin = std::min(rmin, p.rounds);
        rmax = std::max(rmax, p.rounds);
        worst_spread = std::max(worst_spread, p.handoff.spread());
      }
  const std::string pair_kept = kept_range(pair_stats);

  y << "# Written by `vfssim probe --seconds " << fmt("%g", o.seconds) << "` on " << r.host << ", " << r.when
    << " (" << fmt("%.1f", r.wall) << " s):\n"
    << "# " << r.model << (r.vm ? " (a virtual machine: /proc/cpuinfo has the hypervisor flag)" : "") << ".\n"
    << "# Probed OS CPUs " << ranges(o.cpus) << "; the simulator's CPU k is OS CPU " << join(m.os, ", ")
    << " (k = 0, 1, ...), ordered by socket, NUMA node, core from sysfs"
    << (m.sysfs ? "" : " (sysfs topology missing: each CPU taken as its own core)") << ".\n"
    << "# Every number is measured with threads pinned by sched_setaffinity (docs/probe.md) or marked\n"
    << "# 'not measured'. Spread = (max - min) / median over the batches.\n"
    << "# Convention: the simulator charges an RMW on a line another CPU holds transfer + local_atomic,\n"
    << "# so every transfer below (levels, interconnect, matrix) is the measured CAS handoff (half a\n"
    << "# ping-pong round trip: one CAS that first pulls the line over) minus local_atomic ("
    << ns(r.local_atomic) << "), and a\n# simulated remote CAS reproduces the measured handoff.\n";
  y << preemptions(r, {"local", "matrix", "contended"});
  if (!r.unstable.empty()) y << "# WARNING: " << r.unstable << ".\n";
  if (!m.uniform)
    y << "# The levels are flat: " << m.why_flat << "; written as one socket of " << n
      << " single-thread cores.\n";
  y << "machine: probed-" << r.host << "\n";
  std::string shape;
  for (std::size_t l = 0; l < m.level_names.size(); ++l)
    shape += (l ? " x " : "") + std::to_string(m.counts[l]) + " " + m.level_names[l] + (m.counts[l] > 1 ? "s" : "");
  y << "description: " << quoted(r.model + ", " + shape + " probed (OS CPUs " + ranges(o.cpus) + ") by vfssim probe on " +
                                 r.host + ", " + r.date)
    << "\n";

  // Level transfers: the median of the entries whose CPUs share that level's
  // element and no deeper one; a level without such pairs takes its inner
  // level's value (the loader wants outer >= inner).
  const std::size_t L = m.level_names.size();
  std::vector<std::vector<double>> at(L);
  std::vector<double> cross;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      const int s = m.shared(a, b);
      (s < 0 ? cross : at[static_cast<std::size_t>(s)]).push_back(matrix_entry(r, a, b));
    }
  std::vector<std::string> value(L), note(L);
  double inner = 0;
  std::string inner_name;
  for (int l = static_cast<int>(L) - 2; l >= 0; --l) {
    const auto& v = at[static_cast<std::size_t>(l)];
    const std::string& lname = m.level_names[static_cast<std::size_t>(l)];
    const std::string& child = m.level_names[static_cast<std::size_t>(l) + 1];
    double x = inner;
    if (v.empty()) {
      note[static_cast<std::size_t>(l)] =
          inner_name.empty()
              ? "not measured: no two probed CPUs share a " + lname + " but not a " + child + "; never charged"
              : "not measured: no two probed CPUs share a " + lname + " but not a " + child + "; the " + inner_name +
                    " level's value";
    } else {
      const Stat s = stat_of(v);
      x = std::max(s.median, inner);
      note[static_cast<std::size_t>(l)] = "measured: median of the " + std::to_string(v.size()) +
                                          " matrix entries between CPUs sharing a " + lname + " but not a " + child +
                                          " (" + ns(s.lo) + " to " + ns(s.hi) + ")" +
                                          (x > s.median ? ", raised to the inner level's value" : "");
      inner_name = lname;
    }
    value[static_cast<std::size_t>(l)] = ns(x);
    inner = x;
  }
  y << "levels:\n";
  for (std::size_t l = 0; l < L; ++l) {
    std::string entry = "  - {name: " + m.level_names[l] + ", count: " + std::to_string(m.counts[l]);
    if (l + 1 < L) {
      entry += ", transfer: " + value[l] + "}";
      y << commented(entry, note[l], 52) << "\n";
    } else {
      y << entry << "}\n";
    }
  }
  const std::string numa_note =
      r.topo.numa_level < r.topo.core_level && m.level_names[static_cast<std::size_t>(m.numa_level)] == "node"
          ? "sysfs: the probed CPUs lie in " + std::to_string(m.nodes) + " NUMA nodes"
          : "sysfs: the probed CPUs lie in " + std::to_string(m.nodes) + " NUMA node" + (m.nodes > 1 ? "s" : "") +
                "; nodes taken as sockets";
  y << commented("numa: " + m.level_names[static_cast<std::size_t>(m.numa_level)], numa_note) << "\n";
  y << "core: " << m.level_names[static_cast<std::size_t>(m.core_level)] << "\n";
  if (m.counts[0] > 1) {
    const Stat s = stat_of(cross);
    y << "interconnect:\n"
      << commented("  links: full", "not measured: every socket taken as one hop from every other") << "\n"
      << commented("  base: " + ns(s.median), "measured: median of the " + std::to_string(cross.size()) +
                                                  " cross-socket matrix entries (" + ns(s.lo) + " to " + ns(s.hi) +
                                                  ")")
      << "\n"
      << commented("  hop: 0ns", "not measured: the matrix carries each pair's cost") << "\n";
  }
  Stat hit_cpus, cas_cpus;
  {
    std::vector<double> h, c;
    for (const auto& l : r.local) {
      h.push_back(l.hit.median);
      c.push_back(l.cas.median);
    }
    hit_cpus = stat_of(h);
    cas_cpus = stat_of(c);
  }
  double hit_spread = 0, cas_spread = 0;
  std::uint64_t hit_ops = 0, cas_ops = 0;
  std::vector<Stat> hit_stats, cas_stats;
  for (const auto& l : r.local) {
    hit_stats.push_back(l.hit);
    cas_stats.push_back(l.cas);
    hit_spread = std::max(hit_spread, l.hit.spread());
    cas_spread = std::max(cas_spread, l.cas.spread());
    hit_ops = std::max(hit_ops, l.hit_ops);
    cas_ops = std::max(cas_ops, l.cas_ops);
  }
  y << commented("local_hit: " + ns(r.local_hit),
                 "measured: dependent loads of an L1-resident line (pointer chase), median over " +
                     std::to_string(n) + " CPUs (" + ns(hit_cpus.lo) + " to " + ns(hit_cpus.hi) +
                     ") of the median of " + kept_range(hit_stats) + " batches of up to " + std::to_string(hit_ops) +
                     " loads, batch spread up to " + pct(hit_spread))
    << "\n";
  y << commented("local_atomic: " + ns(r.local_atomic),
                 "measured: uncontended lock cmpxchg in a loop on a line held here, median over " +
                     std::to_string(n) + " CPUs (" + ns(cas_cpus.lo) + " to " + ns(cas_cpus.hi) +
                     ") of the median of " + kept_range(cas_stats) + " batches of up to " + std::to_string(cas_ops) +
                     " ops, batch spread up to " + pct(cas_spread) + "; fetch_add " + ns(r.local_fadd))
    << "\n";
  y << commented("invalidate_per_sharer: 0ns", "not measured") << "\n";
  y << "# measured: CAS ping-pong on one 64-byte line, the row's CPU leading (it CASes 2k to 2k+1, the\n"
    << "# column's CPU 2k+1 to 2k+2, each retrying its CAS until the value is its own); per entry the median\n"
    << "# over " << pair_kept << " batches (those that lost at most " << pct(kCleanLoss)
    << " of their time to other tasks, or the least disturbed\n# half) of " << rmin
    << (rmin == rmax ? "" : " to " + std::to_string(rmax))
    << " round trips of the handoff (round trip / 2), minus local_atomic " << ns(r.local_atomic)
    << " (entries under 0.1ns are written as 0.1ns);\n"
    << "# handoffs " << ns(all_handoff.lo) << " to " << ns(all_handoff.hi) << ", median " << ns(all_handoff.median)
    << "; batch spread up to " << pct(worst_spread) << ". Diagonal: 0ns (a CPU's own line costs local_hit).\n";
  y << "matrix:\n";
  for (int a = 0; a < n; ++a) {
    std::string row = "  - [";
    double spread = 0;
    std::vector<Stat> row_stats;
    for (int b = 0; b < n; ++b) {
      row += (b ? ", " : "") + (a == b ? std::string("0ns") : ns(matrix_entry(r, a, b)));
      if (a == b) continue;
      const Stat& h = r.pairs[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)].handoff;
      spread = std::max(spread, h.spread());
      row_stats.push_back(h);
    }
    row += "]";
    y << commented(row, "OS CPU " + std::to_string(m.os[static_cast<std::size_t>(a)]) + " leading; batch spread up to " +
                            pct(spread) + ", batches kept " + kept_range(row_stats), 0)
      << "\n";
  }
  const Contended& most = r.contended.back();
  y << "# (b) one contended line: back-to-back fetch_add by n threads on the first n probed CPUs,\n"
    << "# per-op time = 1 / throughput (the line's time per op; each thread waits n times that); a\n"
    << "# visit = a run of one thread's fetch_adds with no other's between (the line stays while they run):\n";
  for (const auto& c : r.contended)
    y << "#   n = " << c.threads << ": " << fmt("%.1f", c.rate.median / 1e6) << " Mops/s, " << ns(1e9 / c.rate.median)
      << " per op (" << median_of(c.rate, "windows") << ", spread " << pct(c.rate.spread()) << ")"
      << (c.threads > 1 ? ", " + fmt("%.1f", static_cast<double>(c.ops) /
                                                static_cast<double>(std::max<std::uint64_t>(c.visits, 1))) +
                              " ops per visit (" +
                              ns(1e9 / c.rate.median * static_cast<double>(c.ops) /
                                 static_cast<double>(std::max<std::uint64_t>(c.visits, 1))) +
                              " per visit)"
                        : std::string())
      << "\n";
  y << "coherence:\n"
    << "  kind: directory        # not measured: probe cannot tell; see docs/probe.md\n"
    << reread_line(r, m)
    << commented("  contended_rmw: " + ns(1e9 / most.rate.median),
                 "measured: per-op time of one line's fetch_add with " + std::to_string(most.threads) +
                     " contenders (1 / throughput), " + median_of(most.rate, "windows") +
                     ", spread " + pct(most.rate.spread()) +
                     (m.counts[0] > 1 ? "; the contenders span sockets" : ""),
                 25)
    << "\n";
  // Retention (models/hardware/cache_line.h): the ops a visit served with
  // the most contenders, and how long that visit held the line (ops x
  // per-op time): a core's back-to-back RMW inside that time stayed local.
  if (most.threads > 1) {
    const double per_visit = static_cast<double>(most.ops) / static_cast<double>(std::max<std::uint64_t>(most.visits, 1));
    const long ops = std::max(1L, std::lround(per_visit));
    y << commented("  retention: {ops: " + std::to_string(ops) + ", window: " + ns(1e9 / most.rate.median * per_visit) + "}",
                   "measured: " + fmt("%.1f", per_visit) + " fetch_adds per visit of the line with " +
                       std::to_string(most.threads) + " contenders, the visit lasting ops x per-op time",
                   25)
      << "\n";
  }
  return y.str();
}

std::string locks_yaml(const Results& r, const Options& o) {
  const Model& m = r.topo;
  std::ostringstream y;
  const double think = r.loops.think.median;
  const double cs = std::max(0.0, r.loops.cs.median - r.local_atomic);
  std::vector<int> placement;
  for (int c : o.cpus) placement.push_back(m.index.at(c));
  y << "# Written by `vfssim probe --seconds " << fmt("%g", o.seconds) << "` on " << r.host << ", " << r.when << ".\n"
    << "# The probe's lock loop on real spinlocks, threads pinned to OS CPUs " << ranges(o.cpus)
    << " (thread k on the k-th; the\n# simulator's CPUs " << join(placement, ", ")
    << " in ./machine.yaml). Each thread loops: acquire; critical section (a non-atomic increment\n"
    << "# of a counter on a line of its own, then a busy loop); release; think (a busy loop). The\n"
    << "# busy loop runs " << fmt("%.3f", r.loops.ns_per_iter) << " ns per iteration on OS CPU " << o.cpus[0]
    << ": think " << r.loops.think_iters << " iterations, critical section " << r.loops.cs_iters << ".\n"
    << "# The think loop with the " << r.topo.os.size() << " probed CPUs running it at once: " << ns(r.think_all.median)
    << " per call (" << ns(r.think_all.lo) << " to " << ns(r.think_all.hi) << " over the CPUs; one thread alone: "
    << ns(r.loops.think.median) << ")" << (r.think_all.hi > 1.1 * r.loops.think.median
                                            ? ": the CPUs slow each other (shared cores, a host's SMT siblings?)"
                                            : "") << ".\n"
    << preemptions(r, {"loops", "locks"})
    << "# Mutual exclusion held at every point: the protected counter equals the acquisitions:\n";
  for (const auto& [kind, points] : r.locks) {
    y << "#   " << kind << ":";
    for (const auto& p : points) y << " " << p.threads << " threads " << p.counter << " = " << p.acquisitions << ";";
    y << "\n";
  }
  y << "scenario: probe-locks-" << r.host << "\n"
    << "description: >\n  The lock loop of vfssim probe on " << r.host << " (" << r.model << "), " << r.date
    << ":\n  test-and-set, ticket and MCS spinlocks, " << r.counts.front() << " to " << r.counts.back()
    << " threads; the measured curves are the expect: figures.\n"
    << "source: " << quoted("vfssim probe on " + r.host + ", " + r.when) << "\n"
    << "machine: ./machine.yaml\n"
    << "workload:\n"
    << "  tasks: thread\n"
    << commented("  placement: [" + join(placement, ", ") + "]",
                 "thread k ran on OS CPU " + join(o.cpus) + " (k-th); these are those CPUs' indices in the machine",
                 40)
    << "\n"
    << "  loop: [iteration]\n"
    << "  warmup: 100us\n"
    << "  duration: 10ms\n"
    << "  cpus: [" << join(r.counts, ", ") << "]\n"
    << "strategies:\n";
  const std::map<std::string, std::string> what = {
      {"tas", "test-and-test-and-set with pause (probe/locks.h TasLock)"},
      {"ticket", "ticket lock: fetch_add on next, spin on owner with pause (probe/locks.h TicketLock)"},
      {"mcs", "MCS queue lock, one node per thread (probe/locks.h McsLock)"}};
  for (const char* kind : {"tas", "ticket", "mcs"}) {
    y << "  " << kind << ":\n"
      << "    description: " << quoted(what.at(kind)) << "\n"
      << "    locks:\n"
      << "      probe_lock: {kind: " << kind << ", scope: global}\n"
      << "    lines:\n"
      << "      data: {scope: global}        # the protected counter's line\n"
      << "    ops:\n"
      << "      iteration:\n"
      << commented("        - compute: " + ns(think),
                   "measured: the think loop on one thread, " + median_of(r.loops.think, "batches") + " of " +
                       std::to_string(r.loops.think_calls) + " calls, spread " + pct(r.loops.think.spread()),
                   40)
      << "\n"
      << "        - lock: probe_lock\n"
      << "          body:\n"
      << commented("            - atomic: data", "the counter increment (charged local_atomic on one thread)", 40)
      << "\n"
      << commented("            - compute: " + ns(cs),
                   "measured: the critical section on one thread (" + ns(r.loops.cs.median) + ", " +
                       median_of(r.loops.cs, "batches") + " of " + std::to_string(r.loops.cs_calls) +
                       " calls, spread " + pct(r.loops.cs.spread()) + ") minus local_atomic " + ns(r.local_atomic),
                   40)
      << "\n";
  }
  y << "expect:\n";
  for (const char* kind : {"tas", "ticket", "mcs"}) {
    const auto& points = r.locks.at(kind);
    std::string rep, spreads;
    std::vector<Stat> stats;
    for (const auto& p : points) {
      rep += (rep.empty() ? "" : ", ") + std::to_string(p.threads) + ": " + fmt("%.0f", p.rate.median);
      spreads += (spreads.empty() ? "" : ", ") + std::to_string(p.threads) + ": " + pct(p.rate.spread());
      stats.push_back(p.rate);
    }
    const double secs = r.lock_point_ns / 1e9 * 0.9 / kRateBatches;
    y << "  - figure: " << kind << "-acquisitions\n"
      << "    curve: {strategy: " << kind << "}\n"
      << "    metric: ops_per_sec               # acquisitions per second, all threads\n"
      << "    reported: {" << rep << "}\n"
      << "    fitted_at: 1                      # the think and critical-section times come from 1 thread\n"
      << "    tolerance: 25%\n"
      << "    source: "
      << quoted("vfssim probe on " + r.host + ", " + r.date + ": " + kind + " lock, threads on OS CPUs " +
                ranges(o.cpus) + "; per point the median of " + kept_range(stats) + " windows of " +
                fmt("%.3f", secs) + " s (the least disturbed by other tasks), spread " + spreads)
      << "\n";
  }
  return y.str();
}

void print_summary(std::ostream& out, const Results& r, const Options& o) {
  const Model& m = r.topo;
  const int n = static_cast<int>(m.os.size());
  out << "vfssim probe on " << r.host << " (" << r.model << "), OS CPUs " << ranges(o.cpus) << ", "
      << fmt("%.1f", r.wall) << " s\n";
  out << "local_hit " << fmt("%.2f", r.local_hit) << " ns, local_atomic " << fmt("%.2f", r.local_atomic)
      << " ns (CAS; fetch_add " << fmt("%.2f", r.local_fadd) << " ns)\n";
  if (n > 16) {  // too wide for a terminal: the range; machine.yaml has every entry
    std::vector<double> v;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        if (a != b) v.push_back(r.pairs[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)].handoff.median);
    const Stat h = stat_of(v);
    out << "CAS handoff over " << v.size() << " pairs: " << fmt("%.1f", h.lo) << " to " << fmt("%.1f", h.hi)
        << " ns, median " << fmt("%.1f", h.median) << " ns (every pair in machine.yaml)\n";
  } else {
    out << "CAS handoff (ns; row leads; machine.yaml subtracts local_atomic):\n      ";
    for (int b = 0; b < n; ++b) out << fmt("%8.0f", m.os[static_cast<std::size_t>(b)]);
    out << "\n";
    for (int a = 0; a < n; ++a) {
      out << fmt("%6.0f", m.os[static_cast<std::size_t>(a)]);
      for (int b = 0; b < n; ++b)
        out << (a == b ? std::string("       -")
                       : fmt("%8.1f", r.pairs[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)].handoff.median));
      out << "\n";
    }
  }
  out << "contended line (fetch_add on one line):\n  threads      Mops/s   ns/op (line)   ns/op (thread)\n";
  for (const auto& c : r.contended)
    out << fmt("  %7.0f", c.threads) << fmt("  %10.2f", c.rate.median / 1e6) << fmt("  %13.2f", 1e9 / c.rate.median)
        << fmt("  %15.2f", c.threads * 1e9 / c.rate.median) << "\n";
  out << "locks (acquisitions/s; think " << fmt("%.1f", r.loops.think.median) << " ns, critical section "
      << fmt("%.1f", r.loops.cs.median) << " ns):\n  threads";
  for (const char* k : {"tas", "ticket", "mcs"}) out << "  " << std::string(10 - std::strlen(k), ' ') << k;
  out << "\n";
  for (std::size_t i = 0; i < r.counts.size(); ++i) {
    out << fmt("  %7.0f", r.counts[i]);
    for (const char* k : {"tas", "ticket", "mcs"}) out << fmt("  %10.0f", r.locks.at(k)[i].rate.median);
    out << "\n";
  }
  out << "wrote " << (fs::path(o.out) / "machine.yaml").string() << " and "
      << (fs::path(o.out) / "probe-locks.yaml").string() << "\n";
}

void write_file(const fs::path& p, const std::string& text) {
  const fs::path tmp = p.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw Failure("cannot write " + tmp.string() + ": " + std::strerror(errno));
    f << text;
    f.close();
    if (!f) throw Failure("cannot write " + tmp.string() + ": " + std::strerror(errno));
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) throw Failure("cannot rename " + tmp.string() + " to " + p.string() + ": " + ec.message());
}

int run(const std::vector<std::string>& args) {
  po::options_description opts("vfssim probe --out DIR [options]");
  Options o;
  std::string cpus;
  opts.add_options()
    ("help,h", "this help")
    ("out", po::value(&o.out), "directory for machine.yaml and probe-locks.yaml (created if missing); required")
    ("cpus", po::value(&cpus), "CPU ids to use, comma-separated or ranges (0,2,4 or 0-3; default: all "
                               "sched_getaffinity allows); thread counts n use the first n")
    ("seconds", po::value(&o.seconds)->default_value(20), "total time budget, split over the measurements (1 to under 60)")
    ("quiet,q", "no progress on stderr");
  po::variables_map vm;
  const po::positional_options_description none;  // no operands: a stray word is an error
  po::store(po::command_line_parser(args).options(opts).positional(none).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  o.quiet = vm.count("quiet") > 0;
  if (o.out.empty()) throw BadInput("--out DIR is required (the directory for machine.yaml and probe-locks.yaml)");
  if (!(o.seconds >= 1 && o.seconds < 60))
    throw BadInput("--seconds " + fmt("%g", o.seconds) + " is out of range (expected at least 1 and under 60)");
  const std::vector<int> allowed = allowed_cpus();
  if (vm.count("cpus")) {
    o.cpus = parse_cpus(cpus, allowed);
    o.cpus_given = true;
    if (o.cpus.size() < 2)
      throw BadInput("--cpus lists one CPU; the probe needs at least 2 (a transfer is between two CPUs)");
  } else {
    o.cpus = allowed;
    if (o.cpus.size() < 2)
      throw Failure("the probe needs at least 2 usable CPUs; sched_getaffinity allows only CPU " + join(allowed) +
                    " (run it without taskset, or on a machine with more CPUs)");
  }
  if (o.cpus.size() > 4096) throw BadInput("--cpus: more than 4096 CPUs (the simulator's limit)");
  {
    const fs::path out(o.out);
    std::error_code ec;
    if (fs::exists(out, ec) && !fs::is_directory(out, ec))
      throw BadInput("--out " + o.out + " exists and is not a directory");
    fs::create_directories(out, ec);
    if (ec) throw BadInput("--out: cannot create directory " + o.out + ": " + ec.message());
    if (access(out.c_str(), W_OK) != 0) throw BadInput("--out: cannot write to " + o.out + ": " + std::strerror(errno));
  }
  Results r;
  {
    // A large machine's N(N-1) pairs may need more than the budget (at least
    // ~0.4 ms each); the watchdog allows for them.
    const double pairs = static_cast<double>(o.cpus.size()) * static_cast<double>(o.cpus.size() - 1);
    if (pairs * 0.4e-3 > 0.38 * o.seconds && !o.quiet)
      std::cerr << "probe: the transfer matrix's " << fmt("%.0f", pairs) << " pairs need at least "
                << fmt("%.0f", pairs * 0.4e-3) << " s: the run will take longer than --seconds " << fmt("%g", o.seconds)
                << "\n";
    Watchdog dog(3 * o.seconds + 60 + pairs * 5e-3);
    r = measure(o);
  }
  const fs::path out(o.out);
  write_file(out / "machine.yaml", machine_yaml(r, o));
  write_file(out / "probe-locks.yaml", locks_yaml(r, o));
  print_summary(std::cout, r, o);
  if (!o.quiet) std::cerr << "probe: done in " << fmt("%.1f", r.wall) << " s\n";
  return 0;
}

}  // namespace

int cmd_probe(const std::vector<std::string>& args) {
  try {
    return run(args);
  } catch (const po::error& e) {
    std::cerr << "vfssim probe: " << e.what() << "\n";
    return 2;
  } catch (const BadInput& e) {
    std::cerr << "vfssim probe: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "vfssim probe: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace vfssim::probe

// `vfssim probe`: helpers every measurement uses: batch statistics, formatting, the
// system (CPUs, caches, /proc), threads pinned to CPUs (probe.h, docs/probe.md).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "probe/locks.h"

namespace vfssim::probe {

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

constexpr double kCleanLoss = 0.01;  // a batch that lost more of its time to other tasks is disturbed

struct CpuInfo {
  int os = 0, package = 0, node = 0, core = 0;
  bool sysfs = true;  // topology read from sysfs (else: its own package and core)
};

// What other tasks took from the measuring threads while they measured:
// involuntary context switches (getrusage RUSAGE_THREAD) and the time lost,
// wall time minus the thread's CPU time (which, with paravirtual steal time
// accounting, also leaves out time the hypervisor gave to others).
struct Loss {
  long switches = 0;
  double lost_ns = 0, wall_ns = 0;
  double fraction() const { return wall_ns > 0 ? lost_ns / wall_ns : 0; }
};

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

struct alignas(kLine) Line {
  std::atomic<std::uint64_t> v{0};
};

constexpr std::uint64_t kStop = ~0ull;

double now_ns();

Stat stat_of(std::vector<double> v);

// The batches that lost at most kCleanLoss of their time to other tasks
// (loss[i]: of batch i); if fewer than half did, the least disturbed half.
Stat robust_stat(const std::vector<double>& v, const std::vector<double>& loss);

// Fewer than half the batches undisturbed: worth measuring again.
bool disturbed(const Stat& s);

// The less disturbed of two measurements of the same thing.
bool less_disturbed(const Stat& a, const Stat& b);

// The share of a wall-clock interval a thread did not run.
double lost(double wall_ns, double cpu_ns);

std::string fmt(const char* f, double v);

// A time for the scenario format: "7.04ns", "43.2ns" (whole picoseconds).
std::string ns(double v);

std::string pct(double f);

std::string join(const std::vector<int>& v, const char* sep = ",");

// CPU ids in the order given, runs of consecutive ids as ranges: "0-3,8,10-11".
std::string ranges(const std::vector<int>& v);

// A YAML single-quoted scalar.
std::string quoted(const std::string& s);

std::vector<int> allowed_cpus();

bool read_int(const std::string& path, int& v);

CpuInfo read_cpu(int os);

std::string cpu_model();

bool under_hypervisor();

std::string host_name();

std::string utc(const char* f);

double thread_cpu_ns();

Loss loss_now();

// Runs fn(k, start) on one thread pinned to each cpus[k]; every thread waits
// until all are pinned, then starts at the same clock time `start`. A thread
// that cannot be pinned fails the whole run before any fn is called.
void run_pinned(const std::vector<int>& cpus, const std::function<void(int, double)>& fn);

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

}  // namespace vfssim::probe

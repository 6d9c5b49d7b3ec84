// `vfssim probe`: helpers every measurement uses: batch statistics, formatting, the
// system (CPUs, caches, /proc), threads pinned to CPUs.
#include "probe/common.h"

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

namespace fs = std::filesystem;

double now_ns() {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

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

std::string join(const std::vector<int>& v, const char* sep) {
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
    // Appends, not "," + std::string: out of its old file GCC 12 inlines
    // that differently and warns falsely (-Wrestrict, PR105329).
    if (!s.empty()) s += ',';
    s += std::to_string(v[i]);
    if (j > i) s += j > i + 1 ? '-' : ',', s += std::to_string(v[j]);
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

namespace {

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

}  // namespace

std::string cpu_model() {
  for (const char* k : {"model name", "Model", "cpu model", "Processor", "cpu"}) {
    const std::string v = cpuinfo_field(k);
    if (!v.empty()) return v;
  }
  return "unknown CPU";
}

bool under_hypervisor() {
  std::string flags = " ";  // padded, so that the first and the last flag match too (appends: see ranges)
  flags += cpuinfo_field("flags");
  flags += ' ';
  return flags.find(" hypervisor ") != std::string::npos;
}

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

namespace {

std::mutex g_loss_mutex;

Loss g_loss;

long involuntary_switches() {
  rusage u{};
  return getrusage(RUSAGE_THREAD, &u) == 0 ? u.ru_nivcsw : 0;
}

}  // namespace

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

}  // namespace vfssim::probe

// Runs independent jobs on a fixed number of worker threads.
//
// Each job writes only its own result slot, so the output is the same
// whatever the number of workers: a sweep's points are independent
// single-threaded simulations and determinism comes from their seeds, not
// from scheduling.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace vfssim::sim {

// Number of workers to use when the user did not say: every hardware thread.
inline unsigned default_jobs() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

// Calls job(i) for i in [0, count) on up to `jobs` threads. Jobs are taken
// in index order. The first exception thrown by a job is rethrown here after
// all workers stop; jobs not yet started are skipped once one has failed or
// `cancelled` returns true.
inline void parallel_for(std::size_t count, unsigned jobs, const std::function<void(std::size_t)>& job,
                         const std::function<bool()>& cancelled = {}) {
  if (jobs == 0) jobs = 1;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (;;) {
      if (failed.load() || (cancelled && cancelled())) return;
      std::size_t i = next.fetch_add(1);
      if (i >= count) return;
      try {
        job(i);
      } catch (...) {
        std::lock_guard<std::mutex> lk(error_mutex);
        if (!first_error) first_error = std::current_exception();
        failed.store(true);
      }
    }
  };
  unsigned n = static_cast<unsigned>(std::min<std::size_t>(jobs, count));
  if (n <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(n);
    for (unsigned t = 0; t < n; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace vfssim::sim

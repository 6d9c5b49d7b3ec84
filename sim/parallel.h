// Runs independent jobs on a fixed number of worker threads.
//
// Each job writes only its own result slot, so the output is the same
// whatever the number of workers: a sweep's points are independent
// single-threaded simulations and determinism comes from their seeds, not
// from scheduling.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace vfssim::sim {

// Number of workers to use when the user did not say: every hardware thread.
inline unsigned default_jobs() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

// Runs `worker` on n threads (in this one when n <= 1) and waits for them.
inline void run_workers(unsigned n, const std::function<void()>& worker) {
  if (n <= 1) {
    worker();
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(n);
  for (unsigned t = 0; t < n; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
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
  run_workers(static_cast<unsigned>(std::min<std::size_t>(jobs, count)), worker);
  if (first_error) std::rethrow_exception(first_error);
}

// parallel_for with an order between jobs: job(i) starts only once every
// job in after[i] (all below i) has finished, and a free worker takes the
// lowest-numbered job that may start. A job that reads what the jobs it
// comes after wrote gets the same inputs whatever the number of workers,
// so the results stay deterministic; numbering the jobs on the longest
// chain first keeps that chain moving while the others fill the gaps.
// Errors and `cancelled` as parallel_for: no job starts after either.
inline void parallel_for_after(std::size_t count, unsigned jobs, const std::vector<std::vector<std::size_t>>& after,
                               const std::function<void(std::size_t)>& job, const std::function<bool()>& cancelled = {}) {
  if (after.size() != count) throw std::invalid_argument("parallel_for_after: one list of prior jobs per job");
  std::vector<std::size_t> waiting(count);  // unfinished prior jobs
  std::vector<std::vector<std::size_t>> then(count);
  std::set<std::size_t> ready;
  for (std::size_t i = 0; i < count; ++i) {
    for (std::size_t j : after[i]) {
      if (j >= i) throw std::invalid_argument("parallel_for_after: job " + std::to_string(i) + " after job " +
                                              std::to_string(j) + ", not below it");
      then[j].push_back(i);
    }
    waiting[i] = after[i].size();
    if (waiting[i] == 0) ready.insert(i);
  }
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t running = 0, finished = 0;
  bool failed = false;
  std::exception_ptr first_error;
  auto worker = [&] {
    std::unique_lock<std::mutex> lk(mutex);
    for (;;) {
      // Jobs below every waiting one have started, and run on other
      // workers: whatever waits has something running to wait for.
      changed.wait(lk, [&] { return !ready.empty() || finished == count || failed || running == 0; });
      if (failed || finished == count || ready.empty() || (cancelled && cancelled())) break;
      const std::size_t i = *ready.begin();
      ready.erase(ready.begin());
      ++running;
      lk.unlock();
      std::exception_ptr error;
      try {
        job(i);
      } catch (...) {
        error = std::current_exception();
      }
      lk.lock();
      --running;
      ++finished;
      if (error && !first_error) first_error = error;
      failed = failed || error;
      for (std::size_t k : then[i])
        if (--waiting[k] == 0) ready.insert(k);
      changed.notify_all();
    }
    changed.notify_all();  // the others see the end too
  };
  run_workers(static_cast<unsigned>(std::min<std::size_t>(jobs == 0 ? 1 : jobs, count)), worker);
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace vfssim::sim

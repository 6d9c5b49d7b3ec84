// The real spinlocks `vfssim probe` measures, and the primitives of its
// loops: cpu_relax (pause), a calibrated busy loop, a non-atomic increment.
//
// Each lock has lock(Node&) / unlock(Node&); Node is the per-thread queue
// node (used by MCS only). The lock word of each lock sits on a 64-byte
// line of its own.
#pragma once

#include <atomic>
#include <cstdint>

namespace vfssim::probe {

constexpr std::size_t kLine = 64;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

// n iterations of a dependent multiply-add chain (a few cycles each: the
// chain's latency, not the front end, sets the pace); `vfssim probe`
// calibrates n against the clock. Out of line and 64-byte aligned, so that
// the calibration and every loop run the same code at the same alignment
// (an inlined one-cycle loop ran 1x or 2.5x slower depending on where it
// landed).
[[gnu::noinline, gnu::aligned(64)]] inline std::uint64_t busy(std::uint64_t n) {
  std::uint64_t x = n;
  for (std::uint64_t i = 0; i < n; ++i) {
    x = x * 0x9E3779B97F4A7C15ull + i;
    asm volatile("" : "+r"(x));
  }
  return x;
}

// ++*p as one non-atomic read-modify-write (`addq $1, mem` without lock on
// x86): two CPUs inside the critical section at once lose increments, which
// is how the probe checks mutual exclusion.
inline void plain_inc(std::uint64_t* p) {
#if defined(__x86_64__)
  asm volatile("addq $1, %0" : "+m"(*p)::"memory");
#else
  volatile std::uint64_t* v = p;
  *v = *v + 1;
#endif
}

struct alignas(kLine) McsNode {
  std::atomic<McsNode*> next{nullptr};
  std::atomic<bool> locked{false};
};

// Test-and-test-and-set: spin reading the word (with pause) until it looks
// free, then try the exchange.
struct alignas(kLine) TasLock {
  std::atomic<std::uint32_t> word{0};
  void lock(McsNode&) {
    for (;;) {
      if (word.load(std::memory_order_relaxed) == 0 && word.exchange(1, std::memory_order_acquire) == 0) return;
      cpu_relax();
    }
  }
  void unlock(McsNode&) { word.store(0, std::memory_order_release); }
};

// Ticket lock: next and owner share one line (as in Linux's ticket
// spinlock); take a ticket with fetch_add on next, spin (with pause) until
// owner reaches it.
struct alignas(kLine) TicketLock {
  std::atomic<std::uint32_t> next{0};
  std::atomic<std::uint32_t> owner{0};
  void lock(McsNode&) {
    const std::uint32_t t = next.fetch_add(1, std::memory_order_relaxed);
    while (owner.load(std::memory_order_acquire) != t) cpu_relax();
  }
  void unlock(McsNode&) { owner.store(owner.load(std::memory_order_relaxed) + 1, std::memory_order_release); }
};

// MCS (Mellor-Crummey and Scott): swap yourself onto the tail, spin on your
// own node; the holder hands over by clearing its successor's flag.
struct alignas(kLine) McsLock {
  std::atomic<McsNode*> tail{nullptr};
  void lock(McsNode& n) {
    n.next.store(nullptr, std::memory_order_relaxed);
    n.locked.store(true, std::memory_order_relaxed);
    McsNode* prev = tail.exchange(&n, std::memory_order_acq_rel);
    if (!prev) return;
    prev->next.store(&n, std::memory_order_release);
    while (n.locked.load(std::memory_order_acquire)) cpu_relax();
  }
  void unlock(McsNode& n) {
    McsNode* succ = n.next.load(std::memory_order_acquire);
    if (!succ) {
      McsNode* expected = &n;
      if (tail.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel, std::memory_order_relaxed))
        return;
      while (!(succ = n.next.load(std::memory_order_acquire))) cpu_relax();
    }
    succ->locked.store(false, std::memory_order_release);
  }
};

}  // namespace vfssim::probe

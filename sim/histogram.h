// A log-linear histogram of non-negative integers (HdrHistogram's layout):
// fixed memory, O(1) record, exact integer arithmetic, so the same values
// give the same quantiles on every machine and in every order.
//
// Values below 2^(kSubBits+1) have a bucket each (exact). Above, each
// power-of-two range [2^m, 2^(m+1)) is cut into 2^kSubBits equal buckets,
// so a bucket is at most 1/2^kSubBits of its lower end wide and its
// midpoint is within 1/2^(kSubBits+1) (0.4%) of any value in it. The
// smallest and largest values are kept exactly, and a quantile is clamped
// to them: a histogram of one repeated value reports that value.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace vfssim::sim {

class LogLinearHistogram {
 public:
  static constexpr int kSubBits = 7;                             // 128 buckets per power of two
  static constexpr std::int64_t kHalf = std::int64_t{1} << kSubBits;
  // Buckets 0 (values 0 .. 2*kHalf-1) to 63-1-kSubBits (values up to INT64_MAX).
  static constexpr std::size_t kCounts = static_cast<std::size_t>(64 - kSubBits) << kSubBits;

  // Negative values are recorded as 0 (a duration never is negative).
  // Branch-free but for the clamp: one of these per simulated loop iteration.
  void record(std::int64_t v) {
    v = std::max<std::int64_t>(v, 0);
    ++counts_[index_of(v)];
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }

  void merge(const LogLinearHistogram& o) {
    for (std::size_t i = 0; i < kCounts; ++i) counts_[i] += o.counts_[i];
    min_ = std::min(min_, o.min_);
    max_ = std::max(max_, o.max_);
  }

  // The values recorded (a sum over the buckets: not kept, so that record stays one increment).
  std::uint64_t count() const {
    std::uint64_t n = 0;
    for (const auto c : counts_) n += c;
    return n;
  }
  std::int64_t min() const { return max_ < 0 ? 0 : min_; }  // 0 when empty
  std::int64_t max() const { return max_ < 0 ? 0 : max_; }  // 0 when empty

  // The q-quantile (0 <= q <= 1): the value of rank ceil(q * count) (at
  // least 1) in ascending order, as the midpoint of its bucket clamped to
  // [min, max] (the first and last rank: min and max exactly). 0 when empty.
  std::int64_t quantile(double q) const {
    const std::uint64_t total = count();
    if (total == 0) return 0;
    const double want = std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(total));
    const std::uint64_t rank = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(want), 1, total);
    if (rank == total) return max_;  // the extreme ranks are known exactly
    if (rank == 1) return min_;
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < kCounts; ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::clamp(lowest_of(i) + width_of(i) / 2, min_, max_);
    }
    return max_;  // unreachable: the counts add up to total
  }

  // Bucket of a value: bucket b (its power of two above 2*kHalf) and the
  // value's top kSubBits+1 bits; bucket 0 is the values below 2*kHalf.
  static std::size_t index_of(std::int64_t v) {
    const auto u = static_cast<std::uint64_t>(v);
    const int b = std::max(0, (63 - std::countl_zero(u | static_cast<std::uint64_t>(2 * kHalf - 1))) - kSubBits);
    const auto sub = static_cast<std::int64_t>(u >> b);  // kHalf <= sub < 2*kHalf for b > 0
    return static_cast<std::size_t>((static_cast<std::int64_t>(b + 1) << kSubBits) + (sub - kHalf));
  }
  static std::int64_t lowest_of(std::size_t i) {
    const int b = static_cast<int>(i >> kSubBits) - 1;
    if (b <= 0) return static_cast<std::int64_t>(i);
    const std::int64_t sub = static_cast<std::int64_t>(i & (kHalf - 1)) + kHalf;
    return sub << b;
  }
  static std::int64_t width_of(std::size_t i) {
    const int b = static_cast<int>(i >> kSubBits) - 1;
    return b <= 0 ? 1 : std::int64_t{1} << b;
  }

 private:
  std::array<std::uint64_t, kCounts> counts_{};
  std::int64_t min_ = std::numeric_limits<std::int64_t>::max();  // of the values recorded
  std::int64_t max_ = -1;                                         // -1: none recorded
};

}  // namespace vfssim::sim

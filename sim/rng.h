// Named, deterministic random-number streams.
//
// Every draw in a run comes from a stream whose state is derived from
// (run seed, stable stream name, index) only. Nothing depends on the order
// in which streams are created, on the thread that runs the point or on
// the number of workers in a sweep: the same seed gives the same bytes.
//
// The generator is xoshiro256** (Blackman & Vigna); seeds are expanded with
// splitmix64, as its authors recommend. Distributions are computed here, not
// with <random>'s, whose algorithms differ between standard libraries.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

namespace vfssim::sim {

constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// FNV-1a: a stable hash of a stream name (std::hash is not stable across
// implementations).
constexpr std::uint64_t stable_hash(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// Mixes a run seed, a stream name and an index into a 64-bit stream seed.
constexpr std::uint64_t derive_seed(std::uint64_t run_seed, std::string_view name,
                                    std::uint64_t index = 0) {
  std::uint64_t s = run_seed;
  std::uint64_t a = splitmix64(s);
  s ^= stable_hash(name);
  std::uint64_t b = splitmix64(s);
  s ^= index * 0xd1342543de82ef95ULL;
  std::uint64_t c = splitmix64(s);
  return a ^ (b << 1) ^ (c << 2) ^ index;
}

class RngStream {
 public:
  RngStream() : RngStream(0, "default") {}
  RngStream(std::uint64_t run_seed, std::string_view name, std::uint64_t index = 0) {
    std::uint64_t sm = derive_seed(run_seed, name, index);
    for (auto& w : s_) w = splitmix64(sm);
  }

  std::uint64_t next_u64() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; the tiny
  // bias is irrelevant at simulation sizes and keeps one draw per call).
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next_u64()) * n) >> 64);
  }

  // Exponential with the given mean, by inversion: 1 - U is in (0, 1], so
  // the log is finite. (log is several times cheaper than log1p in glibc,
  // and this is the hottest draw of a lock benchmark.)
  [[gnu::always_inline]] double exponential(double mean) { return -mean * std::log(1.0 - uniform()); }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
  }
  std::uint64_t s_[4];
};

}  // namespace vfssim::sim

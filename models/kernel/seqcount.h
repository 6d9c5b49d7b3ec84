// seqcount_t / seqlock_t: readers never write; a reader that overlapped a
// writer retries (include/linux/seqlock.h).
//
//   read_seqbegin:  load the sequence; while it is odd (a writer is inside)
//                   spin until the writer's closing increment arrives
//   read_seqretry:  load it again; differs from the value at begin -> retry
//   write_seqcount_begin / _end: increment (odd while writing), each an
//                   RMW on the sequence's line that invalidates the readers'
//                   copies, which is what makes readers of a hot seqcount
//                   pay a transfer after every write
//
// Writers must already be serialised (seqlock_t's spinlock, or the caller's
// lock for a bare seqcount); the model checks that they are.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "models/hardware/cache_line.h"
#include "models/kernel/lock.h"

namespace vfssim::models {

struct SeqStats {
  std::uint64_t reads = 0;    // read sections begun
  std::uint64_t retries = 0;  // read sections that had to start again
  std::uint64_t writes = 0;
  std::uint64_t begin_waits = 0;  // readers that found a writer inside
  void reset() { *this = SeqStats{}; }
  void merge(const SeqStats& o) {
    reads += o.reads;
    retries += o.retries;
    writes += o.writes;
    begin_waits += o.begin_waits;
  }
};

class SeqCount {
 public:
  explicit SeqCount(const Topology& topo) : topo_(&topo) {}
  virtual ~SeqCount() = default;

  // read_seqbegin at `now`. True: the read section starts at `at` with
  // sequence `seq`. False: a writer is inside; the caller waits for
  // write_end, which hands it back through `woken`.
  virtual bool read_begin(int cpu, Time now, Time& at, std::uint64_t& seq);
  // read_seqretry at `now` for a section begun with `seq`: true when the
  // reader must retry. `at` is when the check completes.
  virtual bool read_retry(int cpu, Time now, std::uint64_t seq, Time& at);
  // write_seqcount_begin / _end; return when the increment completes.
  virtual Time write_begin(int cpu, Time now);
  virtual Time write_end(int cpu, Time now, std::vector<Grant>& woken);

  std::uint64_t sequence() const { return seq_; }
  const SeqStats& stats() const { return stats_; }
  void reset_stats() { stats_.reset(); }

 protected:
  const Topology* topo_;
  std::uint64_t seq_ = 0;
  CacheLine line_;
  std::vector<int> waiting_;  // readers spinning for the sequence to turn even
  SeqStats stats_;
};

}  // namespace vfssim::models

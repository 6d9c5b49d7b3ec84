#include "models/kernel/seqcount.h"

namespace vfssim::models {

bool SeqCount::read_begin(int cpu, Time now, Time& at, std::uint64_t& seq) {
  ++stats_.reads;
  if (seq_ & 1) {  // odd: a writer is inside; spin until it leaves
    ++stats_.begin_waits;
    waiting_.push_back(cpu);
    return false;
  }
  at = line_.load(*topo_, cpu, now);
  seq = seq_;
  return true;
}

bool SeqCount::read_retry(int cpu, Time now, std::uint64_t seq, Time& at) {
  at = line_.load(*topo_, cpu, now);
  const bool retry = seq_ != seq;
  if (retry) ++stats_.retries;
  return retry;
}

Time SeqCount::write_begin(int cpu, Time now) {
  if (seq_ & 1) throw std::logic_error("seqcount: two writers inside at once (writers are not serialised)");
  ++seq_;  // even -> odd
  ++stats_.writes;
  return line_.rmw(*topo_, cpu, now);
}

Time SeqCount::write_end(int cpu, Time now, std::vector<Grant>& woken) {
  ++seq_;  // odd -> even
  const Time done = line_.rmw(*topo_, cpu, now);
  // Spinning readers see the even value once the line reaches them; they
  // resume at read_begin and load it.
  for (int r : waiting_) woken.push_back({r, done + topo_->transfer(cpu, r), /*retry=*/true});
  waiting_.clear();
  return done;
}

}  // namespace vfssim::models

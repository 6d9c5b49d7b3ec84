#include "models/codepath/invariant_checker.h"

namespace vfssim::models {

InvariantChecker::InvariantChecker(std::vector<std::string> lock_names, std::size_t seqcounts)
    : lock_names_(std::move(lock_names)),
      exclusive_holder_(lock_names_.size(), -1),
      shared_holders_(lock_names_.size(), 0),
      last_release_(lock_names_.size(), sim::Time{}),
      write_epoch_(seqcounts, 0) {}

void InvariantChecker::write_begin(std::uint32_t seq, const std::string& name) {
  if (write_epoch_[seq] & 1)
    throw InvariantViolation("seqcount '" + name + "': two writers inside at once; serialise them with a lock");
  ++write_epoch_[seq];
}

void InvariantChecker::accept_read(std::uint32_t seq, std::uint64_t begun, const std::string& name, int cpu) const {
  const std::uint64_t now = write_epoch_[seq];
  if (now != begun || (now & 1))
    throw InvariantViolation("seqcount '" + name + "': cpu " + std::to_string(cpu) +
                             " accepted a read that overlapped a write");
}

}  // namespace vfssim::models

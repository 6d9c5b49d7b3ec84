#include "models/codepath/invariant_checker.h"

namespace vfssim::models {

InvariantChecker::InvariantChecker(std::vector<std::string> lock_names, std::size_t seqcounts)
    : lock_names_(std::move(lock_names)),
      exclusive_holder_(lock_names_.size(), -1),
      shared_holders_(lock_names_.size(), 0),
      last_release_(lock_names_.size(), sim::Time{}),
      write_epoch_(seqcounts, 0) {}

void InvariantChecker::granted(std::uint32_t id, int cpu, sim::Time at, LockMode mode) {
  if (exclusive_holder_[id] >= 0)
    throw InvariantViolation("mutual exclusion broken: lock '" + lock_names_[id] + "' granted to cpu " +
                             std::to_string(cpu) + " while cpu " + std::to_string(exclusive_holder_[id]) +
                             " holds it exclusively");
  if (mode == LockMode::kShared) {
    ++shared_holders_[id];
    return;
  }
  if (shared_holders_[id] > 0)
    throw InvariantViolation("reader-writer exclusion broken: lock '" + lock_names_[id] + "' granted to writer cpu " +
                             std::to_string(cpu) + " while " + std::to_string(shared_holders_[id]) + " readers hold it");
  if (at < last_release_[id])
    throw InvariantViolation("lock '" + lock_names_[id] + "' granted before its previous release");
  exclusive_holder_[id] = cpu;
}

void InvariantChecker::released(std::uint32_t id, int cpu, sim::Time at, LockMode mode) {
  if (mode == LockMode::kShared) {
    if (shared_holders_[id] <= 0)
      throw InvariantViolation("cpu " + std::to_string(cpu) + " released read lock '" + lock_names_[id] +
                               "' nobody holds");
    --shared_holders_[id];
  } else {
    if (exclusive_holder_[id] != cpu)
      throw InvariantViolation("cpu " + std::to_string(cpu) + " released lock '" + lock_names_[id] +
                               "' it does not hold");
    exclusive_holder_[id] = -1;
  }
  if (last_release_[id] < at) last_release_[id] = at;
}

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

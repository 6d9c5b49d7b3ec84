#include "models/codepath/invariant_checker.h"

namespace vfssim::models {

InvariantChecker::InvariantChecker(std::vector<std::string> lock_names, std::size_t seqcounts)
    : lock_names_(std::move(lock_names)),
      held_(lock_names_.size()),
      write_epoch_(seqcounts, 0) {}

void InvariantChecker::fail_granted_while_held(std::uint32_t id, int cpu) const {
  throw InvariantViolation("mutual exclusion broken: lock '" + lock_names_[id] + "' granted to cpu " +
                           std::to_string(cpu) + " while cpu " + std::to_string(held_[id].exclusive_holder) +
                           " holds it exclusively");
}

void InvariantChecker::fail_granted_to_writer(std::uint32_t id, int cpu, sim::Time at) const {
  if (held_[id].shared_holders > 0)
    throw InvariantViolation("reader-writer exclusion broken: lock '" + lock_names_[id] + "' granted to writer cpu " +
                             std::to_string(cpu) + " while " + std::to_string(held_[id].shared_holders) + " readers hold it");
  (void)at;
  throw InvariantViolation("lock '" + lock_names_[id] + "' granted before its previous release");
}

void InvariantChecker::fail_released(std::uint32_t id, int cpu, LockMode mode) const {
  if (mode == LockMode::kShared)
    throw InvariantViolation("cpu " + std::to_string(cpu) + " released read lock '" + lock_names_[id] +
                             "' nobody holds");
  throw InvariantViolation("cpu " + std::to_string(cpu) + " released lock '" + lock_names_[id] +
                           "' it does not hold");
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

// `vfssim probe`: measure the machine vfssim runs on, so the model can be
// checked against hardware (docs/probe.md).
//
//   vfssim probe --out DIR [--cpus LIST] [--seconds S] [--quiet]
//
// With threads pinned to the CPUs of LIST (default: every CPU
// sched_getaffinity allows) it measures
//   (a) the core-to-core transfer matrix (a CAS ping-pong per ordered pair),
//       local_atomic (uncontended CAS) and local_hit (dependent L1 loads);
//   (b) one contended line: fetch_add throughput against the number of
//       contending threads;
//   (c) real test-and-set, ticket and MCS spinlocks: acquisitions per
//       second against threads, with a calibrated critical section and
//       think time, checking mutual exclusion;
// and writes DIR/machine.yaml (a machine preset with the measured matrix)
// and DIR/probe-locks.yaml (a scenario of the lock loop whose expect:
// figures are the measured curves), both loadable by the scenario loader.
//
// Exit status: 0 done, 1 a measurement failed (a thread could not be
// pinned, mutual exclusion broke, fewer than 2 usable CPUs), 2 bad input.
#pragma once

#include <string>
#include <vector>

namespace vfssim::probe {

int cmd_probe(const std::vector<std::string>& args);

}  // namespace vfssim::probe

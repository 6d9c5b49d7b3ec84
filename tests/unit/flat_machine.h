// The unit tests' flat machine: `cpus` CPUs at one level, transfer 100 ns,
// local hit 1 ns, local atomic 10 ns (the costs their exact-time asserts
// are computed from), as the `machine:` section of a scenario.
#pragma once

#include <string>

namespace vfssim::testing {

inline std::string flat_machine(int cpus) {
  return "machine:\n"
         "  levels:\n"
         "    - {name: machine, count: 1, transfer: 100ns}\n"
         "    - {name: cpu, count: " + std::to_string(cpus) + "}\n"
         "  local_hit: 1ns\n"
         "  local_atomic: 10ns\n";
}

}  // namespace vfssim::testing

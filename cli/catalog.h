// What comes with vfssim: `vfssim machines` (the machine presets, their
// size and the source of each latency), `vfssim library` (the kernel
// code-path library and the benchmarks) and `vfssim new` (starter
// scenarios written from templates or from a benchmark's test).
#pragma once

#include <string>
#include <vector>

namespace vfssim::report {

int cmd_machines(const std::vector<std::string>& args);
int cmd_new(const std::vector<std::string>& args);
// `vfssim library [VERSION [OP]]`, `library diff FROM TO [OP]`, `library
// resolve FILE`: the code-path and benchmark libraries (scenarios/kernel/,
// scenarios/benchmarks/) and a scenario as the loader expands it.
int cmd_library(const std::vector<std::string>& args);

}  // namespace vfssim::report

// What comes with vfssim: `vfssim machines` (the machine presets, their
// size and the source of each latency) and `vfssim new` (starter
// scenarios written from templates).
#pragma once

#include <string>
#include <vector>

namespace vfssim::report {

int cmd_machines(const std::vector<std::string>& args);
int cmd_new(const std::vector<std::string>& args);

}  // namespace vfssim::report

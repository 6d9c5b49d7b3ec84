// `vfssim compare FILE --base A --new B [--cpus N] [--reps N] [--variant V] [--json]`:
// two strategies of a scenario at one CPU count, side by side in the
// format of the 0-day robot's (LKP) comparisons, with each one's
// bottleneck and next bottleneck (results/review.h).
#pragma once

#include <string>
#include <vector>

namespace vfssim::report {

int cmd_compare(const std::vector<std::string>& args);

}  // namespace vfssim::report

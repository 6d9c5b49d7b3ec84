// `vfssim validate [PATH...] [--json] [--jobs N] [--reps N] [--seed N] [--db PATH]`:
// every reported figure of the scenarios' `expect:` blocks against the
// simulator's prediction.
//
// PATH is a scenario file or a directory (its *.yaml files, sorted);
// default scenarios/seed. The distinct points the figures need (strategy,
// variant, CPUs) of all scenarios run together in parallel; each figure's
// prediction is
//   ratio, change:  metric(new) / metric(base)   (a change is scored as 1 + change)
//   value:          metric(point)
// with metric ops_per_sec, us_per_op = 1e6 x CPUs / ops_per_sec (time of
// one operation of one task) or share:PREFIX (summed profile share of the
// chains starting with PREFIX). error = |predicted - reported| / |reported|.
// direction_ok (ratio, change): whether predicted and reported are on the
// same side of 1; null when the reported ratio is within 2% of 1.
//
// Exit status: 1 when a prediction (a figure not `fitted`) is outside its
// tolerance or has the wrong direction, 2 on bad input, else 0.
#pragma once

#include <string>
#include <vector>

namespace vfssim::report {

int cmd_validate(const std::vector<std::string>& args);

}  // namespace vfssim::report

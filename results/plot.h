// `vfssim run --plot PATH`: the curves as a self-contained SVG file.
//
// ops/s against CPUs on a log2 axis, one polyline with markers per curve
// (strategy or strategy/variant), a legend and a title. Reported figures
// of the scenario that are values of ops_per_sec at a point (`expect:`
// entries with `value:` and metric ops_per_sec) are drawn as hollow
// markers in the colour of their curve, when that curve is plotted.
#pragma once

#include <string>
#include <vector>

#include "models/experiment/experiment.h"

namespace vfssim::report {

std::string plot_svg(const models::Scenario& sc, const std::vector<models::CurvePoint>& curve);

// Writes plot_svg() to `path`; throws std::runtime_error when it cannot.
void write_plot(const std::string& path, const models::Scenario& sc, const std::vector<models::CurvePoint>& curve);

}  // namespace vfssim::report

// `vfssim run --plot PATH`: the curves as a self-contained SVG file, or
// that SVG rendered to PNG (librsvg + cairo, in-process: one drawing code
// path for both formats).
//
// ops/s against CPUs on a log2 axis with a tick label at every plotted CPU
// count; the y axis is logarithmic when the plotted values span more than
// 10x (or as --plot-y says). Each point carries an error bar (error_extent),
// and the scenario's reported figures (`expect:`) that map to a point are
// drawn in their curve's colour (reported_marks). One panel per workload
// variant when the curve holds several.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/experiment/experiment.h"

namespace vfssim::report {

enum class YScale { kAuto, kLinear, kLog };
// "auto", "linear" or "log"; throws std::invalid_argument naming the value.
YScale parse_y_scale(const std::string& s);

struct PlotOptions {
  YScale y = YScale::kAuto;  // kAuto: log when the plotted values (all panels) span more than kLogSpan
};

// Values spanning more than this factor get a log y axis under YScale::kAuto.
inline constexpr double kLogSpan = 10;

// The vertical extent of a point's error bar, in ops/s: the replication
// spread. Today mean +- one sample standard deviation (no bar with one
// replication); the one place to switch to a confidence interval.
struct Extent {
  double lo = 0, hi = 0;
  bool empty() const { return !(hi > lo); }
};
Extent error_extent(const models::CurvePoint& cp);

// A reported figure (`expect:`) placed on the plot, in ops/s at a CPU count.
// Values (ops/s, us per op = 1e6 CPUs / ops/s, speedup x the curve's 1-CPU
// rate) and finite peak heights are placed directly; ratios and changes at
// the predicted base point x the reported ratio (1 + change), computed in
// the figure's metric. Shares and spreads are no point of a throughput
// curve; figures whose curve (or base) is not plotted are left out.
struct ReportedMark {
  std::string figure, kind;  // kind: value | peak | ratio | change
  std::string strategy, variant;
  int cpus = 0;
  double ops_per_sec = 0;
  std::optional<models::CurvePoint> base;  // ratio, change: the predicted base point
  std::string note;                        // how the figure was converted, for the tooltip
};
std::vector<ReportedMark> reported_marks(const models::Scenario& sc, const std::vector<models::CurvePoint>& curve);

std::string plot_svg(const models::Scenario& sc, const std::vector<models::CurvePoint>& curve,
                     const PlotOptions& opt = {});

enum class PlotFormat { kSvg, kPng };
// True when this build renders PNG (built with librsvg2-dev and libcairo2-dev).
bool png_supported();
// Checks a --plot path before anything runs: the extension (.svg or .png),
// an existing writable directory, a PNG renderer when it ends in .png.
// Throws std::invalid_argument naming the path and what is wrong.
PlotFormat check_plot_path(const std::string& path);

// Writes the plot to `path` in the format its extension names; throws
// std::runtime_error when it cannot.
void write_plot(const std::string& path, const models::Scenario& sc, const std::vector<models::CurvePoint>& curve,
                const PlotOptions& opt = {});

// The SVG rendered as PNG bytes (results/plot_png.cpp); throws
// std::runtime_error when the renderer is missing or fails.
std::string svg_to_png(const std::string& svg);

}  // namespace vfssim::report

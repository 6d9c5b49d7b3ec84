#include "results/plot.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "results/report.h"

namespace vfssim::report {

namespace {

using models::CurvePoint;

// Tableau 10: distinguishable, and readable in grey.
const char* const kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr std::size_t kNumColours = sizeof kColours / sizeof kColours[0];

const char* colour_of(std::size_t series) { return kColours[series % kNumColours]; }

// Beyond ten curves the colours repeat: the dash pattern tells them apart.
const char* const kDashes[] = {"", "7,3", "2,3", "9,3,2,3"};
std::string stroke_style(std::size_t series) {
  std::string s = std::string("stroke=\"") + colour_of(series) + "\"";
  const char* dash = kDashes[(series / kNumColours) % (sizeof kDashes / sizeof kDashes[0])];
  if (*dash) s += std::string(" stroke-dasharray=\"") + dash + "\"";
  return s;
}

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string gnum(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string cpus_text(int cpus) { return count_of(static_cast<std::size_t>(cpus), "CPU"); }

// 1, 2 or 5 times a power of ten, at least `raw`.
double nice_step(double raw) {
  if (raw <= 0) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

const CurvePoint* find_point(const std::vector<CurvePoint>& curve, const std::string& strategy,
                             const std::string& variant, int cpus) {
  for (const auto& cp : curve)
    if (cp.strategy == strategy && cp.variant == variant && cp.cpus == cpus) return &cp;
  return nullptr;
}

bool plotted(const std::vector<CurvePoint>& curve, const std::string& strategy, const std::string& variant) {
  return std::any_of(curve.begin(), curve.end(),
                     [&](const CurvePoint& cp) { return cp.strategy == strategy && cp.variant == variant; });
}

// A figure's metric at a point from that point's ops/s, and back: us per op
// is CPU time per iteration (as results/validation.cpp scores it), speedup
// is over the curve's own 1-CPU rate. Nothing for metrics that are no rate.
std::optional<double> ops_to_metric(const std::string& metric, double ops, int cpus, const CurvePoint* one) {
  if (metric == "ops_per_sec") return ops;
  if (metric == "us_per_op" && ops > 0) return 1e6 * cpus / ops;
  if (metric == "speedup" && one && one->ops_per_sec > 0) return ops / one->ops_per_sec;
  return std::nullopt;
}

std::optional<double> metric_to_ops(const std::string& metric, double v, int cpus, const CurvePoint* one) {
  if (!std::isfinite(v)) return std::nullopt;
  if (metric == "ops_per_sec") return v;
  if (metric == "us_per_op" && v > 0) return 1e6 * cpus / v;
  if (metric == "speedup" && one) return v * one->ops_per_sec;
  return std::nullopt;
}

// One workload variant's curves and reported figures, drawn in one frame.
struct Panel {
  std::string variant;
  std::vector<const CurvePoint*> points;
  std::vector<const ReportedMark*> marks;
};

struct Frame {
  double left, right, top, bottom;
};

class SvgPlot {
 public:
  SvgPlot(const models::Scenario& sc, const std::vector<CurvePoint>& curve, const PlotOptions& opt)
      : sc_(sc), curve_(curve), opt_(opt), marks_(reported_marks(sc, curve)) {
    for (const auto& cp : curve) {
      if (std::none_of(panels_.begin(), panels_.end(), [&](const Panel& p) { return p.variant == cp.variant; }))
        panels_.push_back(Panel{cp.variant, {}, {}});
      panel_of(cp.variant).points.push_back(&cp);
    }
    multi_ = panels_.size() > 1;
    for (const auto& cp : curve) {
      const std::string n = name(cp.strategy, cp.variant);
      if (std::find(names_.begin(), names_.end(), n) == names_.end()) names_.push_back(n);
    }
    for (const auto& m : marks_)
      if (has_panel(m.variant)) panel_of(m.variant).marks.push_back(&m);
    // One scale for every panel, so that panels compare at a glance.
    double lo = 0, hi = 0;
    for (const auto& p : panels_) range(p, lo, hi);
    log_ = lo > 0 && (opt_.y == YScale::kLog || (opt_.y == YScale::kAuto && hi / lo > kLogSpan));
  }

  std::string draw() {
    constexpr double kWidth = 900, kLeft = 84, kRight = 620;
    const double panel_h = multi_ ? 240 : 374, pitch = panel_h + (multi_ ? 96 : 0);
    const double first_top = multi_ ? 80 : 56;
    const double plots_bottom = first_top + pitch * static_cast<double>(panels_.size() - 1) + panel_h + 56;
    const double legend_bottom = first_top + 8 + 20.0 * static_cast<double>(names_.size() + 3) + 12;
    const double height = std::max({500.0, plots_bottom, legend_bottom});

    s_ << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
       << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << num(height)
       << "\" viewBox=\"0 0 " << kWidth << ' ' << num(height)
       << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
       << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
       << "<text x=\"" << num(kWidth / 2) << "\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">" << esc(sc_.name)
       << " on " << esc(sc_.machine_name) << ": throughput against CPUs</text>\n";
    for (std::size_t i = 0; i < panels_.size(); ++i) {
      const double top = first_top + pitch * static_cast<double>(i);
      draw_panel(panels_[i], Frame{kLeft, kRight, top, top + panel_h});
    }
    draw_legend(kRight + 24, first_top + 8);
    s_ << "</svg>\n";
    return s_.str();
  }

 private:
  // Curves are named by strategy in a panel per variant, else strategy/variant.
  std::string name(const std::string& strategy, const std::string& variant) const {
    return multi_ ? strategy : series_name(strategy, variant);
  }
  std::size_t series_index(const std::string& strategy, const std::string& variant) const {
    return static_cast<std::size_t>(std::find(names_.begin(), names_.end(), name(strategy, variant)) - names_.begin());
  }
  bool has_panel(const std::string& variant) const {
    return std::any_of(panels_.begin(), panels_.end(), [&](const Panel& p) { return p.variant == variant; });
  }
  Panel& panel_of(const std::string& variant) {
    return *std::find_if(panels_.begin(), panels_.end(), [&](const Panel& p) { return p.variant == variant; });
  }

  // Widens [lo, hi] to every value a panel draws (lo: the least positive one;
  // 0 while there is none).
  static void range(const Panel& panel, double& lo, double& hi) {
    auto see = [&](double v) {
      if (v > 0) lo = lo == 0 ? v : std::min(lo, v);
      hi = std::max(hi, v);
    };
    for (const auto* cp : panel.points) {
      see(cp->ops_per_sec);
      if (const Extent e = error_extent(*cp); !e.empty()) {
        see(e.lo);
        see(e.hi);
      }
      if (!std::isnan(cp->band_p10)) {
        see(cp->band_p10);
        see(cp->band_p90);
      }
    }
    for (const auto* m : panel.marks) see(m->ops_per_sec);
  }

  void draw_panel(const Panel& panel, const Frame& f) {
    // The CPU counts on the x axis: every plotted point and reported figure.
    std::set<int> cpus;
    for (const auto* cp : panel.points) cpus.insert(cp->cpus);
    for (const auto* m : panel.marks) cpus.insert(m->cpus);
    double lx0 = std::log2(*cpus.begin()), lx1 = std::log2(*cpus.rbegin());
    if (lx1 - lx0 < 1e-9) {
      lx0 -= 1;
      lx1 += 1;
    }
    auto px = [&](double c) { return f.left + 12 + (std::log2(c) - lx0) / (lx1 - lx0) * (f.right - f.left - 24); };

    double lo = 0, hi = 0;
    range(panel, lo, hi);
    const bool log = log_ && lo > 0;
    if (multi_) {
      const auto& v = sc_.variant(panel.variant);
      s_ << "<text class=\"panel-title\" x=\"" << num((f.left + f.right) / 2) << "\" y=\"" << num(f.top - 12)
         << "\" text-anchor=\"middle\" font-size=\"14\">variant " << esc(panel.variant)
         << (v.machine_name != sc_.machine_name ? " on " + esc(v.machine_name) : "") << "</text>\n";
    }

    // Y axis: decades on a log scale, 1-2-5 steps from 0 on a linear one.
    std::function<double(double)> py;
    s_ << "<g class=\"y-axis\" data-scale=\"" << (log ? "log" : "linear") << "\">\n";
    auto tick = [&](double v, bool major, bool label) {
      const double y = py(v);
      s_ << "<line x1=\"" << num(f.left) << "\" y1=\"" << num(y) << "\" x2=\"" << num(f.right) << "\" y2=\"" << num(y)
         << "\" stroke=\"" << (major ? "#ccc" : "#eee") << "\"/>\n";
      if (label)
        s_ << "<text class=\"y-tick" << (major ? " major" : "") << "\" data-value=\"" << gnum(v) << "\" x=\""
           << num(f.left - 6) << "\" y=\"" << num(y + 4) << "\" text-anchor=\"end\">" << esc(format_rate(v))
           << "</text>\n";
    };
    if (log) {
      const int d0 = static_cast<int>(std::floor(std::log10(lo)));
      int d1 = static_cast<int>(std::ceil(std::log10(hi)));
      if (d1 == d0) ++d1;
      py = [=](double v) {
        const double t = v > 0 ? (std::log10(v) - d0) / (d1 - d0) : 0;
        return f.bottom - std::clamp(t, 0.0, 1.0) * (f.bottom - f.top);
      };
      for (int d = d0; d <= d1; ++d) {
        const double p = std::pow(10.0, d);
        tick(p, true, true);
        if (d < d1)
          for (int m = 2; m <= 9; ++m) tick(m * p, false, d1 - d0 <= 2 && (m == 2 || m == 5));
      }
    } else {
      const double step = nice_step((hi > 0 ? hi : 1) / 5);
      const double ytop = std::max(step, std::ceil(hi / step) * step);
      py = [=](double v) { return f.bottom - std::max(v, 0.0) / ytop * (f.bottom - f.top); };
      for (double v = 0; v <= ytop + step / 2; v += step) tick(v, true, true);
    }
    s_ << "</g>\n";

    // X axis: a tick and label at every CPU count; a label that would touch
    // the one before it goes on a second row.
    s_ << "<g class=\"x-axis\" text-anchor=\"middle\">\n";
    double row_end[2] = {-1e9, -1e9};
    for (int c : cpus) {
      const double x = px(c), half = 3.6 * static_cast<double>(std::to_string(c).size());
      const int row = x - half >= row_end[0] + 4 ? 0 : 1;
      row_end[row] = x + half;
      s_ << "<line x1=\"" << num(x) << "\" y1=\"" << num(f.bottom) << "\" x2=\"" << num(x) << "\" y2=\""
         << num(f.bottom + 5 + 13 * row) << "\" stroke=\"black\"/>\n"
         << "<text class=\"x-tick\" data-cpus=\"" << c << "\" x=\"" << num(x) << "\" y=\""
         << num(f.bottom + 18 + 13 * row) << "\">" << c << "</text>\n";
    }
    s_ << "</g>\n";
    s_ << "<line x1=\"" << num(f.left) << "\" y1=\"" << num(f.bottom) << "\" x2=\"" << num(f.right) << "\" y2=\""
       << num(f.bottom) << "\" stroke=\"black\"/>\n"
       << "<line x1=\"" << num(f.left) << "\" y1=\"" << num(f.top) << "\" x2=\"" << num(f.left) << "\" y2=\""
       << num(f.bottom) << "\" stroke=\"black\"/>\n"
       << "<text x=\"" << num((f.left + f.right) / 2) << "\" y=\"" << num(f.bottom + 48)
       << "\" text-anchor=\"middle\">CPUs (log2 scale)</text>\n"
       << "<text transform=\"translate(18," << num((f.top + f.bottom) / 2)
       << ") rotate(-90)\" text-anchor=\"middle\">operations per second (" << (log ? "log" : "linear")
       << " scale)</text>\n";

    // Curves, each point with its error bar, and with --uncertainty the
    // 80% band (p10..p90 over the samples of the ranges) shaded under it.
    for (std::size_t si = 0; si < names_.size(); ++si) {
      std::string pts, upper, lower;
      std::ostringstream bars, markers;
      for (const auto* cp : panel.points) {
        if (series_index(cp->strategy, cp->variant) != si) continue;
        const std::string x = num(px(cp->cpus)), y = num(py(cp->ops_per_sec));
        pts += (pts.empty() ? "" : " ") + x + "," + y;
        if (!std::isnan(cp->band_p10)) {
          upper += (upper.empty() ? "M" : "L") + x + "," + num(py(cp->band_p90));
          lower = "L" + x + "," + num(py(cp->band_p10)) + lower;  // back from right to left
        }
        const Extent e = error_extent(*cp);
        if (!e.empty()) {
          const double xc = px(cp->cpus);
          bars << "<path class=\"error-bar\" d=\"M" << num(xc) << ',' << num(py(e.lo)) << "V" << num(py(e.hi))
               << "M" << num(xc - 4) << ',' << num(py(e.lo)) << "h8M" << num(xc - 4) << ',' << num(py(e.hi))
               << "h8\" stroke=\"" << colour_of(si) << "\" stroke-width=\"1.5\" fill=\"none\"><title>"
               << esc(names_[si]) << " @ " << cpus_text(cp->cpus) << ": " << esc(format_rate(e.lo)) << " .. "
               << esc(format_rate(e.hi)) << " ops/s (mean ± 1 stddev, " << cp->reps.size()
               << " replications)</title></path>\n";
        }
        markers << "<circle data-cpus=\"" << cp->cpus << "\" data-ops=\"" << gnum(cp->ops_per_sec) << "\" cx=\""
                << x << "\" cy=\"" << y << "\" r=\"3.5\" fill=\"" << colour_of(si) << "\"><title>"
                << esc(names_[si]) << " @ " << cpus_text(cp->cpus) << ": " << esc(format_rate(cp->ops_per_sec))
                << " ops/s</title></circle>\n";
      }
      if (pts.empty()) continue;
      s_ << "<g class=\"curve\" data-series=\"" << esc(names_[si]) << "\" data-variant=\"" << esc(panel.variant)
         << "\">\n";
      if (!upper.empty())
        s_ << "<path class=\"band\" d=\"" << upper << lower << "Z\" fill=\"" << colour_of(si)
           << "\" fill-opacity=\"0.18\" stroke=\"none\"><title>" << esc(names_[si])
           << ": 80% band (p10..p90 over the samples of the ranges)</title></path>\n";
      s_ << "<polyline fill=\"none\" " << stroke_style(si) << " stroke-width=\"2\" points=\"" << pts << "\"/>\n"
         << bars.str() << markers.str() << "</g>\n";
    }

    // Reported figures: hollow circles (values, peaks) and hollow diamonds
    // (ratios, changes) joined by a dotted line to the base they multiply.
    for (const auto* m : panel.marks) {
      const std::size_t si = series_index(m->strategy, m->variant);
      const double x = px(m->cpus), y = py(m->ops_per_sec);
      const std::string title = "<title>reported " + esc(m->figure) + ": " + esc(m->note) + " = " +
                                esc(format_rate(m->ops_per_sec)) + " ops/s @ " + cpus_text(m->cpus) + "</title>";
      if (!m->base) {
        s_ << "<circle class=\"reported value\" data-figure=\"" << esc(m->figure) << "\" data-ops=\""
           << gnum(m->ops_per_sec) << "\" cx=\"" << num(x)
           << "\" cy=\"" << num(y) << "\" r=\"7\" fill=\"none\" stroke=\"" << colour_of(si)
           << "\" stroke-width=\"2\">" << title << "</circle>\n";
        continue;
      }
      if (m->base->variant == panel.variant)
        s_ << "<line class=\"reported-base\" x1=\"" << num(px(m->base->cpus)) << "\" y1=\""
           << num(py(m->base->ops_per_sec)) << "\" x2=\"" << num(x) << "\" y2=\"" << num(y) << "\" stroke=\""
           << colour_of(si) << "\" stroke-width=\"1\" stroke-dasharray=\"2,3\"/>\n";
      s_ << "<path class=\"reported ratio\" data-figure=\"" << esc(m->figure) << "\" data-ops=\""
         << gnum(m->ops_per_sec) << "\" d=\"M" << num(x) << ','
         << num(y - 7) << "l7,7l-7,7l-7,-7z\" fill=\"none\" stroke=\"" << colour_of(si) << "\" stroke-width=\"2\">"
         << title << "</path>\n";
    }
  }

  void draw_legend(double lx, double ly) {
    s_ << "<g class=\"legend\">\n";
    for (std::size_t si = 0; si < names_.size(); ++si, ly += 20)
      s_ << "<line x1=\"" << num(lx) << "\" y1=\"" << num(ly) << "\" x2=\"" << num(lx + 24) << "\" y2=\"" << num(ly)
         << "\" " << stroke_style(si) << " stroke-width=\"2\"/>"
         << "<circle cx=\"" << num(lx + 12) << "\" cy=\"" << num(ly) << "\" r=\"3.5\" fill=\"" << colour_of(si)
         << "\"/><text x=\"" << num(lx + 32) << "\" y=\"" << num(ly + 4) << "\">" << esc(names_[si]) << "</text>\n";
    const bool bars = std::any_of(curve_.begin(), curve_.end(), [](const CurvePoint& cp) { return !error_extent(cp).empty(); });
    const bool values = std::any_of(marks_.begin(), marks_.end(), [](const ReportedMark& m) { return !m.base; });
    const bool ratios = std::any_of(marks_.begin(), marks_.end(), [](const ReportedMark& m) { return m.base.has_value(); });
    if (bars) {
      s_ << "<path d=\"M" << num(lx + 12) << ',' << num(ly - 7) << "v14M" << num(lx + 8) << ',' << num(ly - 7)
         << "h8M" << num(lx + 8) << ',' << num(ly + 7) << "h8\" stroke=\"#555\" stroke-width=\"1.5\" fill=\"none\"/>"
         << "<text x=\"" << num(lx + 32) << "\" y=\"" << num(ly + 4) << "\">± 1 stddev over replications</text>\n";
      ly += 20;
    }
    if (values) {
      s_ << "<circle cx=\"" << num(lx + 12) << "\" cy=\"" << num(ly) << "\" r=\"7\" fill=\"none\" stroke=\"#555\" "
         << "stroke-width=\"2\"/><text x=\"" << num(lx + 32) << "\" y=\"" << num(ly + 4)
         << "\">reported value (expect:)</text>\n";
      ly += 20;
    }
    if (ratios)
      s_ << "<path d=\"M" << num(lx + 12) << ',' << num(ly - 7) << "l7,7l-7,7l-7,-7z\" fill=\"none\" stroke=\"#555\" "
         << "stroke-width=\"2\"/><text x=\"" << num(lx + 32) << "\" y=\"" << num(ly + 4)
         << "\">reported ratio × predicted base</text>\n";
    s_ << "</g>\n";
  }

  const models::Scenario& sc_;
  const std::vector<CurvePoint>& curve_;
  PlotOptions opt_;
  std::vector<ReportedMark> marks_;
  std::vector<Panel> panels_;
  std::vector<std::string> names_;
  bool multi_ = false;
  bool log_ = false;  // y scale of every panel
  std::ostringstream s_;
};

}  // namespace

YScale parse_y_scale(const std::string& s) {
  if (s == "auto") return YScale::kAuto;
  if (s == "linear") return YScale::kLinear;
  if (s == "log") return YScale::kLog;
  throw std::invalid_argument("--plot-y: '" + s + "' is not a y scale (expected linear, log or auto)");
}

Extent error_extent(const CurvePoint& cp) {
  if (cp.reps.size() < 2 || !(cp.stddev > 0)) return {cp.ops_per_sec, cp.ops_per_sec};
  return {cp.ops_per_sec - cp.stddev, cp.ops_per_sec + cp.stddev};
}

std::vector<ReportedMark> reported_marks(const models::Scenario& sc, const std::vector<CurvePoint>& curve) {
  std::vector<ReportedMark> out;
  for (const auto& e : sc.expect) {
    const auto& np = e.new_point;
    if (!plotted(curve, np.strategy, np.variant)) continue;
    const CurvePoint* one = find_point(curve, np.strategy, np.variant, 1);
    ReportedMark m{e.id, e.kind, np.strategy, np.variant, np.cpus, 0, std::nullopt, ""};
    std::optional<double> ops;
    char note[160];
    if (e.kind == "value" || e.kind == "peak") {
      ops = metric_to_ops(e.metric, e.reported, np.cpus, one);
      std::snprintf(note, sizeof note, "%s%s %g", e.kind == "peak" ? "peak " : "",
                    e.bound == "at_least" ? ">=" : e.bound == "at_most" ? "<=" : "", e.reported);
      m.note = std::string(note) + " " + e.metric;
    } else if (e.kind == "ratio" || e.kind == "change") {
      const auto& bp = e.base_point;
      const CurvePoint* base = find_point(curve, bp.strategy, bp.variant, bp.cpus);
      if (!base) continue;
      const auto base_metric = ops_to_metric(e.metric, base->ops_per_sec, bp.cpus,
                                             find_point(curve, bp.strategy, bp.variant, 1));
      if (base_metric) ops = metric_to_ops(e.metric, *base_metric * e.reported, np.cpus, one);
      CurvePoint b = *base;
      b.reps.clear();  // the mark needs where the base is, not its replications
      m.base = std::move(b);
      if (e.kind == "ratio")
        std::snprintf(note, sizeof note, "ratio %g", e.reported);
      else
        std::snprintf(note, sizeof note, "change %+g%%", 100 * (e.reported - 1));
      m.note = std::string(note) + " of " + e.metric + " x predicted " + series_name(bp.strategy, bp.variant) + " @ " +
               cpus_text(bp.cpus);
    }
    if (!ops || !std::isfinite(*ops)) continue;
    m.ops_per_sec = *ops;
    out.push_back(std::move(m));
  }
  return out;
}

std::string plot_svg(const models::Scenario& sc, const std::vector<CurvePoint>& curve, const PlotOptions& opt) {
  if (curve.empty()) throw std::runtime_error("nothing to plot: the sweep has no points");
  return SvgPlot(sc, curve, opt).draw();
}

PlotFormat check_plot_path(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext != ".svg" && ext != ".png")
    throw std::invalid_argument("--plot " + path + ": unknown plot format '" + ext +
                                "' (expected a file name ending in .svg or .png)");
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw std::invalid_argument("--plot " + path + ": directory " + dir.string() + " does not exist");
  if (fs::is_directory(p, ec)) throw std::invalid_argument("--plot " + path + ": is a directory");
  if (::access(dir.c_str(), W_OK) != 0 || (fs::exists(p, ec) && ::access(p.c_str(), W_OK) != 0))
    throw std::invalid_argument("--plot " + path + ": not writable");
  if (ext == ".png" && !png_supported())
    throw std::invalid_argument("--plot " + path +
                                ": this vfssim was built without a PNG renderer (librsvg and cairo: install "
                                "librsvg2-dev, e.g. with scripts/install-deps.sh, and rebuild), or write .svg");
  return ext == ".png" ? PlotFormat::kPng : PlotFormat::kSvg;
}

void write_plot(const std::string& path, const models::Scenario& sc, const std::vector<CurvePoint>& curve,
                const PlotOptions& opt) {
  PlotFormat format;
  try {
    format = check_plot_path(path);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
  const std::string svg = plot_svg(sc, curve, opt);
  const std::string bytes = format == PlotFormat::kPng ? svg_to_png(svg) : svg;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error(path + ": cannot write the plot");
  f << bytes;
  f.close();
  if (!f) throw std::runtime_error(path + ": cannot write the plot");
}

}  // namespace vfssim::report

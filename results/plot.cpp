#include "results/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "results/report.h"

namespace vfssim::report {

namespace {

// Tableau 10: distinguishable, and readable in grey.
const char* const kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

// Beyond ten curves the colours repeat: the dash pattern tells them apart.
const char* const kDashes[] = {"", "7,3", "2,3", "9,3,2,3"};
std::string stroke_style(std::size_t series) {
  constexpr std::size_t nc = sizeof kColours / sizeof kColours[0];
  std::string s = std::string("stroke=\"") + kColours[series % nc] + "\"";
  const char* dash = kDashes[(series / nc) % (sizeof kDashes / sizeof kDashes[0])];
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

std::string series_name(const std::string& strategy, const std::string& variant) {
  return variant == "default" ? strategy : strategy + "/" + variant;
}

// 1, 2 or 5 times a power of ten, at least `raw`.
double nice_step(double raw) {
  if (raw <= 0) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

struct Overlay {
  std::size_t series;
  int cpus;
  double rate;
  std::string figure;
};

}  // namespace

std::string plot_svg(const models::Scenario& sc, const std::vector<models::CurvePoint>& curve) {
  constexpr double kWidth = 820;
  constexpr double kLeft = 80, kRight = 600, kTop = 56, kBottom = 430;  // plot area

  std::vector<std::string> names;
  for (const auto& cp : curve) {
    const std::string n = series_name(cp.strategy, cp.variant);
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  // The legend (one row per curve, one for reported figures) may need a taller canvas.
  const double kHeight = std::max(500.0, 56 + 8 + 20.0 * static_cast<double>(names.size() + 1) + 12);
  std::vector<Overlay> overlays;
  for (const auto& e : sc.expect) {
    if (e.kind != "value" || e.metric != "ops_per_sec") continue;
    const auto it = std::find(names.begin(), names.end(), series_name(e.new_point.strategy, e.new_point.variant));
    if (it == names.end()) continue;
    overlays.push_back({static_cast<std::size_t>(it - names.begin()), e.new_point.cpus, e.reported, e.id});
  }

  int cmin = 0, cmax = 0;
  double ymax = 0;
  auto see = [&](int cpus, double rate) {
    cmin = cmin == 0 ? cpus : std::min(cmin, cpus);
    cmax = std::max(cmax, cpus);
    ymax = std::max(ymax, rate);
  };
  for (const auto& cp : curve) see(cp.cpus, cp.ops_per_sec);
  for (const auto& o : overlays) see(o.cpus, o.rate);
  if (cmin == 0) cmin = cmax = 1;
  double lx0 = std::log2(cmin), lx1 = std::log2(cmax);
  if (lx1 - lx0 < 1e-9) {
    lx0 -= 1;
    lx1 += 1;
  }
  const double step = nice_step((ymax > 0 ? ymax : 1) / 5);
  const double ytop = std::max(step, std::ceil(ymax / step) * step);
  auto px = [&](double cpus) { return kLeft + 12 + (std::log2(cpus) - lx0) / (lx1 - lx0) * (kRight - kLeft - 24); };
  auto py = [&](double rate) { return kBottom - rate / ytop * (kBottom - kTop); };

  std::ostringstream s;
  s << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
    << "\" viewBox=\"0 0 " << kWidth << ' ' << kHeight << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << num(kWidth / 2) << "\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">" << esc(sc.name)
    << " on " << esc(sc.machine_name) << ": throughput against CPUs</text>\n";

  // Grid and y ticks.
  s << "<g stroke=\"#ddd\" stroke-width=\"1\">\n";
  for (double v = step; v <= ytop + step / 2; v += step)
    s << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(py(v)) << "\" x2=\"" << num(kRight) << "\" y2=\""
      << num(py(v)) << "\"/>\n";
  s << "</g>\n<g text-anchor=\"end\">\n";
  for (double v = 0; v <= ytop + step / 2; v += step)
    s << "<text x=\"" << num(kLeft - 6) << "\" y=\"" << num(py(v) + 4) << "\">" << esc(format_rate(v)) << "</text>\n";
  s << "</g>\n";
  // X ticks: powers of two (every other one when there are many).
  const int k0 = static_cast<int>(std::ceil(lx0 - 1e-9)), k1 = static_cast<int>(std::floor(lx1 + 1e-9));
  const int every = k1 - k0 > 12 ? 2 : 1;
  s << "<g text-anchor=\"middle\">\n";
  for (int k = k0; k <= k1; k += every) {
    if (k < 0) continue;
    const double x = px(std::ldexp(1.0, k));
    s << "<line x1=\"" << num(x) << "\" y1=\"" << num(kBottom) << "\" x2=\"" << num(x) << "\" y2=\""
      << num(kBottom + 5) << "\" stroke=\"black\"/>\n"
      << "<text x=\"" << num(x) << "\" y=\"" << num(kBottom + 19) << "\">" << (1L << k) << "</text>\n";
  }
  s << "</g>\n";
  // Axes.
  s << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(kBottom) << "\" x2=\"" << num(kRight) << "\" y2=\""
    << num(kBottom) << "\" stroke=\"black\"/>\n"
    << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(kTop) << "\" x2=\"" << num(kLeft) << "\" y2=\""
    << num(kBottom) << "\" stroke=\"black\"/>\n"
    << "<text x=\"" << num((kLeft + kRight) / 2) << "\" y=\"" << num(kBottom + 42)
    << "\" text-anchor=\"middle\">CPUs (log2 scale)</text>\n"
    << "<text transform=\"translate(18," << num((kTop + kBottom) / 2)
    << ") rotate(-90)\" text-anchor=\"middle\">operations per second</text>\n";

  // Curves.
  for (std::size_t si = 0; si < names.size(); ++si) {
    const char* colour = kColours[si % (sizeof kColours / sizeof kColours[0])];
    std::string pts;
    std::ostringstream markers;
    for (const auto& cp : curve) {
      if (series_name(cp.strategy, cp.variant) != names[si]) continue;
      const std::string x = num(px(cp.cpus)), y = num(py(cp.ops_per_sec));
      pts += (pts.empty() ? "" : " ") + x + "," + y;
      markers << "<circle cx=\"" << x << "\" cy=\"" << y << "\" r=\"3.5\" fill=\"" << colour << "\"><title>"
              << esc(names[si]) << " @ " << cp.cpus << " CPUs: " << esc(format_rate(cp.ops_per_sec))
              << " ops/s</title></circle>\n";
    }
    s << "<g class=\"curve\" data-series=\"" << esc(names[si]) << "\">\n"
      << "<polyline fill=\"none\" " << stroke_style(si) << " stroke-width=\"2\" points=\"" << pts << "\"/>\n"
      << markers.str() << "</g>\n";
  }
  // Reported figures: hollow markers on their curve's colour.
  for (const auto& o : overlays) {
    const char* colour = kColours[o.series % (sizeof kColours / sizeof kColours[0])];
    s << "<circle class=\"reported\" cx=\"" << num(px(o.cpus)) << "\" cy=\"" << num(py(o.rate))
      << "\" r=\"7\" fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\"><title>reported " << esc(o.figure)
      << ": " << esc(format_rate(o.rate)) << " ops/s @ " << o.cpus << " CPUs</title></circle>\n";
  }

  // Legend.
  double ly = kTop + 8;
  const double lx = kRight + 24;
  s << "<g class=\"legend\">\n";
  for (std::size_t si = 0; si < names.size(); ++si, ly += 20) {
    const char* colour = kColours[si % (sizeof kColours / sizeof kColours[0])];
    s << "<line x1=\"" << num(lx) << "\" y1=\"" << num(ly) << "\" x2=\"" << num(lx + 24) << "\" y2=\"" << num(ly)
      << "\" " << stroke_style(si) << " stroke-width=\"2\"/>"
      << "<circle cx=\"" << num(lx + 12) << "\" cy=\"" << num(ly) << "\" r=\"3.5\" fill=\"" << colour << "\"/>"
      << "<text x=\"" << num(lx + 32) << "\" y=\"" << num(ly + 4) << "\">" << esc(names[si]) << "</text>\n";
  }
  if (!overlays.empty())
    s << "<circle cx=\"" << num(lx + 12) << "\" cy=\"" << num(ly) << "\" r=\"7\" fill=\"none\" stroke=\"#555\" "
      << "stroke-width=\"2\"/><text x=\"" << num(lx + 32) << "\" y=\"" << num(ly + 4)
      << "\">reported (expect:)</text>\n";
  s << "</g>\n</svg>\n";
  return s.str();
}

void write_plot(const std::string& path, const models::Scenario& sc, const std::vector<models::CurvePoint>& curve) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error(path + ": cannot write the plot");
  f << plot_svg(sc, curve);
  f.close();
  if (!f) throw std::runtime_error(path + ": cannot write the plot");
}

}  // namespace vfssim::report

#include "results/report.h"

#include <optional>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "results/review.h"
#include "results/schema.h"
#include "results/spread.h"

namespace vfssim::report {

using nlohmann::json;
using models::CurvePoint;
using models::PointResult;

namespace {

double us(sim::Duration d) { return static_cast<double>(d.count()) * 1e-6; }

std::string series(const CurvePoint& cp) { return series_name(cp.strategy, cp.variant); }

// The 1-CPU rate of each curve (strategy/variant) that has a 1-CPU point:
// speedup and efficiency are relative to it, never to the sweep's first
// point (a curve swept from 64 CPUs would show 64x for a collapsed kernel).
std::map<std::string, double> one_cpu_rates(const std::vector<CurvePoint>& curve) {
  std::map<std::string, double> out;
  for (const auto& cp : curve)
    if (cp.cpus == 1) out[series(cp)] = cp.ops_per_sec;
  return out;
}

std::optional<double> speedup_of(const std::map<std::string, double>& one, const CurvePoint& cp) {
  const auto it = one.find(series(cp));
  if (it == one.end() || it->second <= 0) return std::nullopt;
  return cp.ops_per_sec / it->second;
}

double share(const PointResult& p, sim::Duration t) {
  return p.cpu_time.count() > 0 ? static_cast<double>(t.count()) / static_cast<double>(p.cpu_time.count()) : 0.0;
}

template <class R>
json record_json(const std::vector<schema::Field<R>>& fields, const R& r, const schema::Context& c) {
  json out = json::object();
  for (const auto& v : schema::shown_record(fields, r, c)) {
    if (v.optional && schema::all_null(v.values)) continue;
    if (!v.list) {
      out[v.key] = schema::to_json(v.values.front());
      continue;
    }
    if (v.object) {
      json obj = json::object();
      for (std::size_t i = 0; i < v.values.size(); ++i) obj[v.names[i]] = schema::to_json(v.values[i]);
      out[v.key] = obj;
      continue;
    }
    json list = json::array();
    for (const auto& x : v.values) list.push_back(schema::to_json(x));
    out[v.key] = schema::all_null(v.values) ? json(nullptr) : list;
  }
  return out;
}

}  // namespace

json stats_json(const PointResult& p, std::optional<std::size_t> profile_top) {
  json out = json::object();
  const schema::Context c = schema::context_of(p);
  schema::for_each_stats_table([&](const auto& t) {
    const auto rows = schema::rows_of(t, p);
    if (!t.list) {
      out[t.key] = record_json(t.fields, *rows.front(), c);
      return;
    }
    if (t.omit_empty && rows.empty()) return;
    json list = json::array();
    const bool is_profile = &t == static_cast<const void*>(&schema::profile());
    const std::size_t n = is_profile && profile_top ? std::min(*profile_top, rows.size()) : rows.size();
    for (std::size_t i = 0; i < n; ++i) list.push_back(record_json(t.fields, *rows[i], c));
    out[t.key] = std::move(list);
  });
  return out;
}

std::string series_name(const std::string& strategy, const std::string& variant) {
  return variant == "default" ? strategy : strategy + "/" + variant;
}

std::string count_of(std::size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string format_rate(double v) {
  char buf[32];
  if (v >= 1e9) std::snprintf(buf, sizeof buf, "%.3gG", v / 1e9);
  else if (v >= 1e6) std::snprintf(buf, sizeof buf, "%.3gM", v / 1e6);
  else if (v >= 1e3) std::snprintf(buf, sizeof buf, "%.3gk", v / 1e3);
  else std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

json run_json(const models::Scenario& sc, const RunInfo& info, const std::vector<CurvePoint>& curve) {
  json points = json::array();
  const auto one = one_cpu_rates(curve);
  for (const auto& cp : curve) {
    json reps = json::array();
    for (const auto& r : cp.reps) reps.push_back(r.ops_per_sec);
    // Details (lock_stat, profile) come from the first replication.
    const PointResult& p0 = cp.reps.front();
    const std::optional<double> speedup = speedup_of(one, cp);
    points.push_back(json{{"strategy", cp.strategy},
                          {"variant", cp.variant},
                          {"cpus", cp.cpus},
                          {"ops", p0.ops},
                          {"speedup", speedup ? json(*speedup) : json(nullptr)},
                          {"efficiency", speedup ? json(*speedup / cp.cpus) : json(nullptr)},
                          {"reps", reps},
                          {"stop", p0.stop},
                          {"bottleneck", bottleneck_json(find_bottleneck(cp.reps))}});
    // ops_per_sec, stddev, events, stddev_pct, ci95 (the bottleneck's columns are its object above)
    points.back().update(record_json(schema::curve().fields, cp, {}));
    // lock_stat, lines, seqcounts, pools, profile, rcu: the schema's tables (results/schema.h).
    points.back().update(stats_json(p0, info.profile_top));
  }
  return json{{"scenario", sc.name},
              {"machine", sc.machine_name},
              {"seed", info.seed},
              {"replications", info.reps},
              {"scenario_hash", sc.hash},
              {"tool_version", VFSSIM_VERSION},
              {"warmup_us", us(sc.workload.warmup)},
              {"duration_us", us(sc.workload.duration)},
              {"points", points}};
}

json uncertainty_json(const models::Scenario& sc, int samples) {
  json ranges = json::array();
  for (const auto& r : sc.ranges) {
    const double per = r.time ? 1e6 : 1;  // picoseconds per microsecond
    ranges.push_back(json{{"name", r.name},
                          {"unit", r.time ? "us" : ""},
                          {"estimate", r.estimate / per},
                          {"low", r.lo / per},
                          {"high", r.hi / per},
                          {"why", r.why.empty() ? json(nullptr) : json(r.why)},
                          // a fitted constant: [low, high] is its search range; each sample re-fits it to this figure
                          {"fit", r.fit.empty() ? json(nullptr) : json(r.fit)}});
  }
  return json{{"samples", samples}, {"ranges", ranges}};
}

json sensitivity_json(const CurvePoint& cp) {
  json out = json::array();
  for (const auto& [name, rho] : cp.sensitivity) out.push_back(json{{"constant", name}, {"rho", rho}});
  return out;
}

void print_sensitivity(std::ostream& os, const std::vector<CurvePoint>& curve, std::size_t top) {
  os << "\nwhat moves each point most (Spearman rho of the constant's samples with the rate, top " << top << "):\n";
  for (const auto& cp : curve) {
    os << "  " << series(cp) << " @ " << cp.cpus << ":";
    char buf[32];
    for (std::size_t i = 0; i < cp.sensitivity.size() && i < top; ++i) {
      std::snprintf(buf, sizeof buf, "%+.2f", cp.sensitivity[i].second);
      os << (i ? ", " : " ") << cp.sensitivity[i].first << " " << buf;
    }
    os << "\n";
  }
}

namespace {

// The tasks' fairness (max/min per-task rate) and per-op p99 latency of a
// curve point, means over its replications: "inf" when a task starved,
// "-" when not measured.
std::string fairness_cell(const CurvePoint& cp) {
  double sum = 0;
  for (const auto& r : cp.reps) {
    if (std::isnan(r.tasks.ops_per_sec_max)) return "-";
    if (std::isnan(r.tasks.fairness)) return r.tasks.ops_per_sec_max > 0 ? "inf" : "-";
    sum += r.tasks.fairness;
  }
  if (cp.reps.empty()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", sum / static_cast<double>(cp.reps.size()));
  return buf;
}
std::string p99_cell(const CurvePoint& cp) {
  double sum = 0;
  for (const auto& r : cp.reps) {
    if (!r.tasks.latency_p99) return "-";
    sum += static_cast<double>(r.tasks.latency_p99->count());
  }
  if (cp.reps.empty()) return "-";
  // Rounded to the three digits printed before the unit is chosen, so that
  // 999.7 ns prints as 1us, not 1e+03ns.
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", sum / static_cast<double>(cp.reps.size()));
  const double ps = std::strtod(buf, nullptr);
  if (ps >= 1e12) std::snprintf(buf, sizeof buf, "%.3gs", ps * 1e-12);
  else if (ps >= 1e9) std::snprintf(buf, sizeof buf, "%.3gms", ps * 1e-9);
  else if (ps >= 1e6) std::snprintf(buf, sizeof buf, "%.3gus", ps * 1e-6);
  else if (ps >= 1e3) std::snprintf(buf, sizeof buf, "%.3gns", ps * 1e-3);
  else std::snprintf(buf, sizeof buf, "%.0fps", ps);
  return buf;
}

}  // namespace

void print_curve_table(std::ostream& os, const std::vector<CurvePoint>& curve) {
  std::string current;
  const auto one = one_cpu_rates(curve);
  // --uncertainty adds the 80% band; a run without it prints as before.
  const bool banded = std::any_of(curve.begin(), curve.end(), [](const CurvePoint& cp) { return !std::isnan(cp.band_p10); });
  char line[200];
  for (const auto& cp : curve) {
    if (series(cp) != current) {
      current = series(cp);
      os << "\nstrategy " << current << (one.count(current) ? "" : " (no 1-CPU point: no speedup)") << "\n";
      std::snprintf(line, sizeof line, "%6s %14s %10s %25s %9s %11s", "cpus", "ops/s", "stddev", "95% CI", "speedup",
                    "efficiency");
      os << line;
      // The tasks' fairness and tail latency (always), then the band (only with --uncertainty: last).
      std::snprintf(line, sizeof line, " %8s %10s", "max/min", "p99 op");
      os << line;
      if (banded) {
        std::snprintf(line, sizeof line, " %25s", "p10-p90");
        os << line;
      }
      os << "\n";
    }
    const std::optional<double> speedup = speedup_of(one, cp);
    char sp[32] = "-", eff[32] = "-", sd[32] = "-", ci[64] = "-";
    if (speedup) {
      std::snprintf(sp, sizeof sp, "%.2f", *speedup);
      std::snprintf(eff, sizeof eff, "%.1f%%", 100.0 * *speedup / cp.cpus);
    }
    // One replication has no spread: "-", not 0.00%.
    const int n = static_cast<int>(cp.reps.size());
    if (const auto pct = stddev_pct(cp.ops_per_sec, cp.stddev, n)) std::snprintf(sd, sizeof sd, "%.2f%%", *pct);
    if (const auto c = ci95(cp.ops_per_sec, cp.stddev, n)) std::snprintf(ci, sizeof ci, "%.0f..%.0f", c->first, c->second);
    std::snprintf(line, sizeof line, "%6d %14.0f %10s %25s %9s %11s", cp.cpus, cp.ops_per_sec, sd, ci, sp, eff);
    os << line;
    std::snprintf(line, sizeof line, " %8s %10s", fairness_cell(cp).c_str(), p99_cell(cp).c_str());
    os << line;
    if (banded) {
      char band[64] = "-";
      if (!std::isnan(cp.band_p10)) std::snprintf(band, sizeof band, "%.0f..%.0f", cp.band_p10, cp.band_p90);
      std::snprintf(line, sizeof line, " %25s", band);
      os << line;
    }
    os << "\n";
    // With roles: each role's ops/s (mean over the replications) and tasks.
    if (!cp.reps.empty() && !cp.reps.front().roles.empty()) {
      std::string roles = "       roles:";
      for (std::size_t i = 0; i < cp.reps.front().roles.size(); ++i) {
        double sum = 0;
        for (const auto& r : cp.reps) sum += r.roles.at(i).ops_per_sec;
        const auto& role = cp.reps.front().roles[i];
        roles += (i ? ", " : " ") + role.name + " " + format_rate(sum / static_cast<double>(cp.reps.size())) + "/s (" +
                 count_of(static_cast<std::size_t>(role.tasks), "task") + ")";
      }
      os << roles << "\n";
    }
  }
}

// Log y axis: a collapsed curve stays visible beside one 100x higher. A
// cell two curves fall on shows '*' (never one letter over another); the
// dotted segments between points never cover a mark.
void print_chart(std::ostream& os, const std::vector<CurvePoint>& curve, int width, int height) {
  if (curve.empty()) return;
  std::vector<std::string> names;
  for (const auto& cp : curve)
    if (std::find(names.begin(), names.end(), series(cp)) == names.end()) names.push_back(series(cp));
  double lo = 0, hi = 0;
  int cmin = curve.front().cpus, cmax = curve.front().cpus;
  for (const auto& cp : curve) {
    if (cp.ops_per_sec > 0) lo = lo == 0 ? cp.ops_per_sec : std::min(lo, cp.ops_per_sec);
    hi = std::max(hi, cp.ops_per_sec);
    cmin = std::min(cmin, cp.cpus);
    cmax = std::max(cmax, cp.cpus);
  }
  if (hi <= 0) lo = hi = 1;
  double ly0 = std::log10(lo), ly1 = std::log10(hi);
  if (ly1 - ly0 < 0.1) {  // a flat chart: a band of +-12% around it
    ly0 -= 0.05;
    ly1 += 0.05;
  }
  const double lx0 = std::log2(cmin), lx1 = std::log2(cmax);
  std::vector<std::string> grid(height, std::string(width, ' '));
  auto col = [&](int cpus) {
    return lx1 > lx0 ? static_cast<int>(std::lround((std::log2(cpus) - lx0) / (lx1 - lx0) * (width - 1))) : 0;
  };
  auto row = [&](double v) {
    if (v <= 0) return height - 1;
    return std::clamp(static_cast<int>(std::lround((ly1 - std::log10(v)) / (ly1 - ly0) * (height - 1))), 0, height - 1);
  };
  auto is_mark = [](char ch) { return ch != ' ' && ch != '.'; };
  bool overlap = false;
  for (std::size_t si = 0; si < names.size(); ++si) {
    const char mark = static_cast<char>('A' + si % 26);
    int prev_c = -1, prev_r = -1;
    for (const auto& cp : curve) {
      if (series(cp) != names[si]) continue;
      const int c = col(cp.cpus), r = row(cp.ops_per_sec);
      if (prev_c >= 0)  // dotted segment between points
        for (int x = prev_c + 1; x < c; ++x) {
          const int y = prev_r + (r - prev_r) * (x - prev_c) / std::max(1, c - prev_c);
          if (grid[y][x] == ' ') grid[y][x] = '.';
        }
      char& cell = grid[r][c];
      if (is_mark(cell) && cell != mark) {
        cell = '*';
        overlap = true;
      } else {
        cell = mark;
      }
      prev_c = c;
      prev_r = r;
    }
  }
  os << "\nops/s (log scale, max " << format_rate(hi) << ")\n";
  for (int r = 0; r < height; ++r) {
    char label[16];
    const double v = std::pow(10.0, ly1 - (ly1 - ly0) * r / (height - 1));
    if (r % 4 == 0 || r == height - 1) std::snprintf(label, sizeof label, "%8s |", format_rate(v).c_str());
    else std::snprintf(label, sizeof label, "%8s |", "");
    os << label << grid[r] << "\n";
  }
  // CPU labels: a label that would touch the one before goes on a second line.
  os << std::string(9, ' ') << '+' << std::string(width, '-') << "\n";
  std::vector<std::string> axis(2, std::string(width + 4, ' '));
  int end[2] = {-2, -2};
  std::vector<int> counts;
  for (const auto& cp : curve) counts.push_back(cp.cpus);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  for (int cpus : counts) {
    const std::string t = std::to_string(cpus);
    const int c = std::clamp(col(cpus) - static_cast<int>(t.size()) / 2, 0, width + 4 - static_cast<int>(t.size()));
    const int line = c > end[0] + 1 ? 0 : 1;
    if (line == 1 && c <= end[1] + 1) continue;  // no room on either line
    axis[line].replace(c, t.size(), t);
    end[line] = c + static_cast<int>(t.size()) - 1;
  }
  for (auto& a : axis) a.erase(a.find_last_not_of(' ') + 1);
  os << std::string(10, ' ') << axis[0] << "  CPUs\n";
  if (!axis[1].empty()) os << std::string(10, ' ') << axis[1] << "\n";
  for (std::size_t si = 0; si < names.size(); ++si)
    os << "          " << static_cast<char>('A' + si % 26) << " = " << names[si] << "\n";
  if (overlap) os << "          * = two or more curves at the same place\n";
}

namespace {

// /proc/lock_stat's layout (kernel/locking/lockdep_proc.c, lock_stat
// version 0.4): a 40-character right-aligned class name, 14-character
// columns, times in microseconds with two decimals.
constexpr int kLockStatName = 40;
constexpr int kLockStatWidth = kLockStatName + 1 + 12 * (14 + 1);  // the separator lines

std::string seq_line(char c, int offset, int length) {
  return std::string(static_cast<std::size_t>(std::max(0, offset)), ' ') +
         std::string(static_cast<std::size_t>(std::max(0, length)), c) + "\n";
}

// A row of counters; `label` is the class name with its ":" ("NAME:",
// "NAME-W:", "NAME-R:"), right-aligned as the kernel's %40s: / %38s-W:.
std::string lock_stat_row(const std::string& label, const models::LockStats& s) {
  char line[512];
  auto t = [](sim::Duration d) { return us(d); };
  const double wavg = s.contentions ? us(s.wait_total) / static_cast<double>(s.contentions) : 0.0;
  const double havg = s.holds ? us(s.hold_total) / static_cast<double>(s.holds) : 0.0;
  std::snprintf(line, sizeof line,
                "%*s%14llu %14llu %14.2f %14.2f %14.2f %14.2f %14llu %14llu %14.2f %14.2f %14.2f %14.2f\n",
                kLockStatName + 1, label.c_str(), static_cast<unsigned long long>(s.con_bounces),
                static_cast<unsigned long long>(s.contentions), t(s.wait_min), t(s.wait_max), t(s.wait_total), wavg,
                static_cast<unsigned long long>(s.acq_bounces), static_cast<unsigned long long>(s.acquisitions),
                t(s.hold_min), t(s.hold_max), t(s.hold_total), havg);
  return line;
}

}  // namespace

void print_lock_stat(std::ostream& os, const PointResult& p) {
  char line[512];
  os << "lock_stat version 0.4\n" << seq_line('-', 0, kLockStatWidth);
  std::snprintf(line, sizeof line, "%*s %14s %14s %14s %14s %14s %14s %14s %14s %14s %14s %14s %14s\n", kLockStatName,
                "class name", "con-bounces", "contentions", "waittime-min", "waittime-max", "waittime-total",
                "waittime-avg", "acq-bounces", "acquisitions", "holdtime-min", "holdtime-max", "holdtime-total",
                "holdtime-avg");
  os << line << seq_line('-', 0, kLockStatWidth) << "\n";
  // The kernel's order (lock_stat_cmp): most contentions first; ties keep
  // the declaration order.
  std::vector<const models::LockReport*> locks;
  for (const auto& l : p.locks) locks.push_back(&l);
  std::stable_sort(locks.begin(), locks.end(),
                   [](const auto* a, const auto* b) { return a->stats.contentions > b->stats.contentions; });
  for (const auto* l : locks) {
    // The kernel's name buffer holds 37 characters (snprintf into 38).
    const std::string name = l->name.substr(0, kLockStatName - 3);
    bool split = false;
    for (const auto& m : p.lock_modes)
      if (m.name == l->name) {
        os << lock_stat_row(name + "-" + m.mode + ":", m.stats);
        split = m.mode == "R" || split;
      }
    if (!split) os << lock_stat_row(name + ":", l->stats);
    if (l->stats.contentions == 0) continue;
    // Contention points, then contending points, each under a dash line
    // as long as the name (+2 for a -R suffix), right-aligned with it.
    const int namelen = static_cast<int>(name.size()) + (split ? 2 : 0);
    bool any = false;
    for (const char* kind : {"contention", "contending"}) {
      bool first = true;
      for (const auto& c : p.contention_points) {
        if (c.lock != l->name || c.kind != kind) continue;
        if (first) os << seq_line('-', kLockStatName - namelen, namelen);
        first = false;
        any = true;
        const std::string step = "[<step " + std::to_string(c.step) + ">]";
        std::snprintf(line, sizeof line, "%*s %14llu %29s ", kLockStatName, name.c_str(),
                      static_cast<unsigned long long>(c.contentions), step.c_str());
        os << line << c.chain << "\n";
      }
    }
    if (any) os << "\n" << seq_line('.', 0, kLockStatWidth) << "\n";
  }
}

void print_profile(std::ostream& os, const PointResult& p, std::size_t top) {
  char line[512];
  for (std::size_t i = 0; i < p.profile.size() && i < top; ++i) {
    const auto& e = p.profile[i];
    std::snprintf(line, sizeof line, "%7.2f%%  %s%s\n", 100.0 * share(p, e.time), e.chain.c_str(),
                  e.detail.empty() ? "" : ("  [" + e.detail + "]").c_str());
    os << line;
  }
}

}  // namespace vfssim::report

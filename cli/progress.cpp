#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>
#include <sstream>

#include "results/report.h"

namespace po = boost::program_options;

namespace vfssim::report {

void add_progress_options(po::options_description& opts, std::string& mode) {
  opts.add_options()
    ("progress", po::value(&mode)->default_value("auto"),
     "progress on stderr: auto (when stderr is a terminal), always, never")
    ("quiet,q", "no progress or notes on stderr (--progress never)");
}

bool progress_enabled(const po::variables_map& vm, const std::string& mode) {
  if (mode != "auto" && mode != "always" && mode != "never")
    throw po::error("--progress: '" + mode + "' is not a progress mode (expected auto, always or never)");
  if (vm.count("quiet")) {
    if (mode == "always") throw po::error("--quiet and --progress always contradict each other");
    return false;
  }
  return mode == "always" || (mode == "auto" && ::isatty(STDERR_FILENO) == 1);
}

std::string format_duration(double seconds) {
  char buf[48];
  const long s = seconds < 0 ? 0 : static_cast<long>(seconds + 0.5);
  if (seconds < 9.95) std::snprintf(buf, sizeof buf, "%.1f s", seconds < 0 ? 0.0 : seconds);
  else if (s < 60) std::snprintf(buf, sizeof buf, "%ld s", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%ld min %02ld s", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%ld h %02ld min", s / 3600, s / 60 % 60);
  return buf;
}

Progress::Progress(bool enabled, std::size_t total, std::string noun, std::ostream& err)
    : enabled_(enabled), total_(total), noun_(std::move(noun)), err_(err), t0_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  if (enabled_ && (done_ > 0 || running_ > 0)) err_ << "\r\033[K" << std::flush;
}

void Progress::start() {
  std::lock_guard<std::mutex> lk(mutex_);
  ++running_;
  draw(last_);
}

void Progress::finish(const std::string& what) {
  std::lock_guard<std::mutex> lk(mutex_);
  if (running_ > 0) --running_;
  ++done_;
  last_ = what;
  draw(what);
}

void Progress::note(const std::string& what) {
  std::lock_guard<std::mutex> lk(mutex_);
  last_ = what;
  draw(what);
}

void Progress::set_total(std::size_t total) {
  std::lock_guard<std::mutex> lk(mutex_);
  total_ = total;
}

void Progress::draw(const std::string& what) {
  if (!enabled_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  // A stream, not "[" + std::string: GCC 12 warns (-Wrestrict, falsely) on the latter.
  std::ostringstream line;
  line << '[' << done_ << '/' << count_of(total_, noun_) << " done, " << running_ << " running] "
       << format_duration(elapsed) << " elapsed";
  // The rate so far: points differ in cost, so this is a rough guide.
  if (done_ > 0 && done_ < total_)
    line << ", about " << format_duration(elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_))
         << " left";
  if (!what.empty()) line << "; last: " << what;
  err_ << "\r" << line.str() << "\033[K" << std::flush;
}

}  // namespace vfssim::report

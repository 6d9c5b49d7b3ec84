// Progress of `vfssim run` and `vfssim validate` on stderr: one line,
// rewritten in place (\r, then \033[K to erase what the last one left),
// only where a terminal shows it. --progress auto (the default) draws it
// when stderr is a terminal, always draws it, never does not; -q/--quiet
// means never.
#pragma once

#include <boost/program_options.hpp>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <ostream>
#include <string>

namespace vfssim::report {

// --progress auto|always|never and -q/--quiet, into `mode`.
void add_progress_options(boost::program_options::options_description& opts, std::string& mode);
// Whether to draw progress, from the options add_progress_options() read;
// throws po::error for a bad --progress or --quiet with --progress always.
bool progress_enabled(const boost::program_options::variables_map& vm, const std::string& mode);

// "0.4 s", "12 s", "3 min 05 s", "1 h 02 min".
std::string format_duration(double seconds);

// Thread-safe: start() and finish() are called from the worker threads.
class Progress {
 public:
  // `noun`: what is counted, singular ("point", "replication").
  Progress(bool enabled, std::size_t total, std::string noun, std::ostream& err);
  ~Progress();  // erases the line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void start();
  // One finished; `what` names it ("baseline @ 48 CPUs").
  void finish(const std::string& what);
  void set_total(std::size_t total);
  // Something done that is not counted (a sample made before its points run).
  void note(const std::string& what);

 private:
  void draw(const std::string& what);  // with mutex_ held

  bool enabled_;
  std::size_t total_, done_ = 0, running_ = 0;
  std::string noun_, last_;
  std::ostream& err_;
  std::chrono::steady_clock::time_point t0_;
  std::mutex mutex_;
};

}  // namespace vfssim::report

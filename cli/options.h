// Command-line parsing shared by the subcommands that take one scenario FILE.
#pragma once

#include <boost/program_options.hpp>
#include <iostream>
#include <string>
#include <vector>

namespace vfssim::report {

// The command line as stored with a run: arguments joined by spaces.
inline std::string join_args(const std::vector<std::string>& args) {
  std::string joined;
  for (const auto& a : args) joined += (joined.empty() ? "" : " ") + a;
  return joined;
}

// Parses `args` against `opts` plus one positional FILE into `file` and
// `vm`. Prints `opts` and returns false on --help; throws po::error naming
// `command` when FILE is missing.
inline bool parse_file_command(const std::vector<std::string>& args, const boost::program_options::options_description& opts,
                               const std::string& command, std::string& file,
                               boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  po::options_description hidden;
  hidden.add_options()("file", po::value(&file));
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("file", 1);
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts;
    return false;
  }
  if (file.empty()) throw po::error(command + " needs a scenario FILE");
  return true;
}

}  // namespace vfssim::report

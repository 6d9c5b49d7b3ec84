// Command-line parsing shared by the subcommands that take one scenario FILE.
#pragma once

#include <boost/program_options.hpp>
#include <iostream>
#include <string>
#include <typeinfo>
#include <vector>

namespace vfssim::report {

// The command line as stored with a run: arguments joined by spaces.
inline std::string join_args(const std::vector<std::string>& args) {
  std::string joined;
  for (const auto& a : args) joined += (joined.empty() ? "" : " ") + a;
  return joined;
}

// program_options reads "-1" into an unsigned option as 2^64-1 (or 2^32-1):
// every unsigned option given a negative value is refused, naming it.
inline void refuse_negative_unsigned(const boost::program_options::parsed_options& parsed,
                                     const boost::program_options::variables_map& vm) {
  for (const auto& o : parsed.options) {
    if (o.string_key.empty() || !vm.count(o.string_key)) continue;
    const auto& type = vm[o.string_key].value().type();
    const bool is_unsigned = type == typeid(unsigned) || type == typeid(unsigned long) ||
                             type == typeid(unsigned long long) || type == typeid(std::size_t);
    for (const auto& v : o.value)
      if (is_unsigned && !v.empty() && v.find_first_not_of(" \t") != std::string::npos &&
          v[v.find_first_not_of(" \t")] == '-')
        throw boost::program_options::error("--" + o.string_key + " must be 0 or more, not " + v);
  }
}

// Parses `args` against `opts` (shown by --help) and `hidden` (the
// positional arguments `pos` names) into `vm`, refusing negative values of
// unsigned options.
inline void parse_command(const std::vector<std::string>& args, const boost::program_options::options_description& opts,
                          const boost::program_options::options_description& hidden,
                          const boost::program_options::positional_options_description& pos,
                          boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  po::options_description all;
  all.add(opts).add(hidden);
  const po::parsed_options parsed = po::command_line_parser(args).options(all).positional(pos).run();
  po::store(parsed, vm);
  po::notify(vm);
  refuse_negative_unsigned(parsed, vm);
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
  po::positional_options_description pos;
  pos.add("file", 1);
  parse_command(args, opts, hidden, pos, vm);
  if (vm.count("help")) {
    std::cout << opts;
    return false;
  }
  if (file.empty()) throw po::error(command + " needs a scenario FILE");
  return true;
}

}  // namespace vfssim::report

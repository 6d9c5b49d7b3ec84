// `vfssim probe`: the writers: DIR/machine.yaml, DIR/probe-locks.yaml and the summary (probe.h, docs/probe.md).
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

#include "probe/run.h"

namespace vfssim::probe {

std::string machine_yaml(const Results& r, const Options& o);

std::string locks_yaml(const Results& r, const Options& o);

void print_summary(std::ostream& out, const Results& r, const Options& o);

void write_file(const std::filesystem::path& p, const std::string& text);

}  // namespace vfssim::probe

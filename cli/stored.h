// The stored-results commands: history, show, diff, export. They read the
// results database and never create one.
#pragma once

#include <string>
#include <vector>

namespace vfssim::report {

int cmd_history(const std::vector<std::string>& args);
int cmd_show(const std::vector<std::string>& args);
int cmd_diff(const std::vector<std::string>& args);
int cmd_export(const std::vector<std::string>& args);

}  // namespace vfssim::report

// Where the scenarios that come with vfssim are: the seed and validation
// sets and the machine presets. Found from the executable, not the working
// directory, so that `vfssim validate` works from anywhere.
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "models/scenario/scenario.h"

// Set by CMakeLists.txt: the source tree's scenarios/, the installed copy
// (install(DIRECTORY scenarios ...)) and that copy relative to the
// installed executable's directory (a relocated install).
#ifndef VFSSIM_SOURCE_SCENARIOS
#define VFSSIM_SOURCE_SCENARIOS ""
#endif
#ifndef VFSSIM_INSTALL_SCENARIOS
#define VFSSIM_INSTALL_SCENARIOS ""
#endif
#ifndef VFSSIM_INSTALL_SCENARIOS_FROM_BIN
#define VFSSIM_INSTALL_SCENARIOS_FROM_BIN ""
#endif

namespace vfssim::models {

namespace fs = std::filesystem;

std::string scenarios_dir() {
  auto usable = [](const fs::path& p) {
    std::error_code ec;
    return !p.empty() && fs::is_directory(p, ec);
  };
  if (const char* env = std::getenv("VFSSIM_SCENARIOS"); env && *env) return env;
  // An installed vfssim: BINDIR/../share/vfssim/scenarios (Linux's
  // /proc/self/exe; the Python module's process is python3, whose prefix
  // is checked the same way).
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && *VFSSIM_INSTALL_SCENARIOS_FROM_BIN) {
    const fs::path beside = (exe.parent_path() / VFSSIM_INSTALL_SCENARIOS_FROM_BIN).lexically_normal();
    if (usable(beside)) return beside.string();
  }
  // A build tree's vfssim: the source tree it was built from.
  if (usable(VFSSIM_SOURCE_SCENARIOS)) return VFSSIM_SOURCE_SCENARIOS;
  if (usable(VFSSIM_INSTALL_SCENARIOS)) return VFSSIM_INSTALL_SCENARIOS;
  return VFSSIM_SOURCE_SCENARIOS;  // gone: messages name where it was looked for
}

}  // namespace vfssim::models

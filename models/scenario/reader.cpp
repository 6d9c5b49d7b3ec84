#include "models/scenario/reader.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace vfssim::models {

Duration parse_duration(const std::string& text, const SourceMark& mark) {
  static const std::pair<const char*, std::int64_t> units[] = {
      {"ps", 1}, {"ns", 1000}, {"us", 1000000}, {"µs", 1000000}, {"ms", 1000000000}, {"s", 1000000000000}};
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  const std::string number = text.substr(0, i);
  const std::string unit = text.substr(i);
  const std::string expected = "a time with a unit, such as 120ns, 2.5us, 4ms (units: ps, ns, us, ms, s)";
  if (!text.empty() && text[0] == '-') throw ScenarioError(mark, "time '" + text + "' is negative", "a time of zero or more, such as 100ns");
  if (number.empty() || std::count(number.begin(), number.end(), '.') > 1 || number == ".")
    throw ScenarioError(mark, "'" + text + "' is not a time", expected);
  std::int64_t scale = 0;
  for (const auto& [u, f] : units)
    if (unit == u) scale = f;
  if (unit.empty()) throw ScenarioError(mark, "time '" + text + "' has no unit", expected);
  if (scale == 0) throw ScenarioError(mark, "time '" + text + "' has an unknown unit '" + unit + "'", expected);
  // Exact decimal arithmetic: integer part and fraction in picoseconds.
  const auto dot = number.find('.');
  const std::string ip = number.substr(0, dot);
  std::string fp = dot == std::string::npos ? "" : number.substr(dot + 1);
  const std::size_t first_digit = ip.find_first_not_of('0');  // 0001ns is 1ns
  const std::string ip_digits = first_digit == std::string::npos ? "" : ip.substr(first_digit);
  while (!fp.empty() && fp.back() == '0') fp.pop_back();
  // A day of simulated time at most: an exponential draw (up to ~37 times
  // its mean) then still fits the int64 picosecond clock.
  const std::string too_large = "at most 86400s (a day) of simulated time";
  if (ip_digits.size() > 15) throw ScenarioError(mark, "time '" + text + "' is too large", too_large);
  if (fp.size() > 12) throw ScenarioError(mark, "time '" + text + "' is finer than a picosecond", "a whole number of picoseconds");
  __int128 v = (ip_digits.empty() ? 0 : std::stoll(ip_digits)) * static_cast<__int128>(scale);
  __int128 denom = 1;
  __int128 frac = 0;
  for (char c : fp) {
    if (denom > static_cast<__int128>(1e18)) break;
    frac = frac * 10 + (c - '0');
    denom *= 10;
  }
  __int128 fpart = frac * scale;
  if (fpart % denom != 0) throw ScenarioError(mark, "time '" + text + "' is finer than a picosecond", "a whole number of picoseconds");
  v += fpart / denom;
  if (v > static_cast<__int128>(86400) * 1000000000000LL) throw ScenarioError(mark, "time '" + text + "' is too large", too_large);
  return Duration{static_cast<std::int64_t>(v)};
}

namespace parse {

Scope parse_scope(const Reader& r, const YAML::Node& n) {
  const std::string s = r.scalar(n, "scope");
  if (s == "global") return Scope::kGlobal;
  if (s == "node") return Scope::kNode;
  if (s == "cpu") return Scope::kCpu;
  if (s == "process") return Scope::kProcess;
  if (s == "task") return Scope::kTask;
  r.fail(n, "unknown scope '" + s + "'", "one of: global, node, cpu, process, task");
}

namespace {

// `s` as a number when all of it is one (std::stod reads a prefix).
std::optional<double> whole_number(const std::string& s) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (...) {
    return std::nullopt;
  }
  if (s.empty() || used != s.size()) return std::nullopt;
  return v;
}

}  // namespace

double parse_probability(const Reader& r, const YAML::Node& n, const std::string& what, std::string& param) {
  if (Reader::is_param(n)) {
    param = r.param_name(n, what);
    return 0;
  }
  const std::string p = r.scalar(n, what);
  const std::optional<double> v = whole_number(p);
  if (!v || !(*v >= 0.0 && *v <= 1.0))
    r.fail(n, what + " '" + p + "' is not a number from 0 to 1", "a probability such as 0.25");
  return *v;
}

NumberRef parse_number_ref(const Reader& r, const YAML::Node& n, const std::string& what) {
  NumberRef v;
  if (Reader::is_param(n)) {
    v.param = r.param_name(n, what);
    return v;
  }
  const std::string t = r.scalar(n, what);
  const std::optional<double> x = whole_number(t);
  if (!x || !std::isfinite(*x) || *x < 0)
    r.fail(n, what + " '" + t + "' is not a number >= 0", "a number such as 1024, or $NAME of a number parameter");
  v.value = *x;
  return v;
}

double parse_fraction(const Reader& r, const YAML::Node& n, const std::string& what) {
  std::string s = r.scalar(n, what);
  double scale = 1;
  if (!s.empty() && s.back() == '%') {
    s.pop_back();
    scale = 0.01;
  }
  const std::optional<double> v = whole_number(s);
  if (!v || !std::isfinite(*v))
    r.fail(n, what + " '" + n.Scalar() + "' is not a number", "a number or a percentage such as 25%");
  return *v * scale;
}

ParamValue parse_param(const Reader& r, const YAML::Node& n, const std::string& name) {
  ParamValue v;
  const std::string s = r.scalar(n, "parameter '" + name + "'");
  if (s == "true" || s == "false") {
    v.type = ParamValue::Type::kBool;
    v.flag = s == "true";
    return v;
  }
  if (!s.empty() && std::isalpha(static_cast<unsigned char>(s.back()))) {
    if (!std::isdigit(static_cast<unsigned char>(s[0])) && s[0] != '.')  // a word, not a time
      r.fail(n, "parameter '" + name + "' is '" + s + "'", "true/false, a number, or a time with a unit");
    v.type = ParamValue::Type::kTime;
    v.time = r.duration(n, "parameter '" + name + "'", false);
    return v;
  }
  const std::optional<double> x = whole_number(s);
  if (!x) r.fail(n, "parameter '" + name + "' is '" + s + "'", "true/false, a number, or a time with a unit");
  v.number = *x;
  v.type = ParamValue::Type::kNumber;
  return v;
}

// A scenario or machine file: a regular file (a FIFO would block, a device
// never end) of at most kMaxFileBytes.
std::string read_file(const std::string& path) {
  constexpr std::uintmax_t kMaxFileBytes = 4 << 20;
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw ScenarioError({path, 0, 0}, "cannot open the file", "a readable file");
  if (!std::filesystem::is_regular_file(status))
    throw ScenarioError({path, 0, 0}, "not a regular file (a directory, FIFO or device)", "a scenario file");
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxFileBytes)
    throw ScenarioError({path, 0, 0}, "the file has " + std::to_string(size) + " bytes",
                        "at most " + std::to_string(kMaxFileBytes) + " bytes (4 MiB)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError({path, 0, 0}, "cannot open the file", "a readable file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

// Parser events, of which only where the document starts is kept.
struct DocumentStart : YAML::EventHandler {
  YAML::Mark mark;
  void OnDocumentStart(const YAML::Mark& m) override { mark = m; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

YAML::Node parse_yaml(const std::string& text, const std::string& file) {
  try {
    YAML::Node root = YAML::Load(text);
    // One document: a second one (after '---') would be ignored silently.
    // Asked of the parser for two documents at most: yaml-cpp 0.7's LoadAll
    // never returns on some inputs (found by fuzz_run).
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    DocumentStart first, second;
    if (parser.HandleNextDocument(first) && parser.HandleNextDocument(second))
      throw ScenarioError({file, second.mark.line + 1, second.mark.column + 1}, "the file holds a second YAML document",
                          "one document (no second '---')");
    return root;
  } catch (const YAML::DeepRecursion& e) {  // yaml-cpp's message is only "bad file"
    throw ScenarioError({file, e.mark.line + 1, e.mark.column + 1},
                        "YAML nesting deeper than " + std::to_string(e.depth() - 1) + " levels",
                        "a shallower file (flatten the steps into ops and calls)");
  } catch (const YAML::ParserException& e) {
    throw ScenarioError({file, e.mark.line + 1, e.mark.column + 1}, "YAML syntax error: " + e.msg, "valid YAML");
  }
}

}  // namespace parse
}  // namespace vfssim::models

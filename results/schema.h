// The result schema: every field of every stats type of a point, declared
// once (name, type, unit, description, how to read and write it).
//
// The `vfssim run --json` document, the Python dicts and DataFrames of the
// bindings and the SQLite tables (INSERT and the read-back of --resume) are
// all generated from these tables; `vfssim schema` prints them and
// docs/results-db.md carries that list (scripts/results-schema.py checks it).
//
// Names: a field's `name` is its JSON and Python key and its SQLite column,
// except that a time (Type::kTime, a sim::Duration) is NAME_us in JSON and
// Python (microseconds, a real, as /proc/lock_stat prints) and NAME_ps in
// SQLite (whole picoseconds: read back exactly), and that `column`, when
// set, overrides the SQLite column name (a lock's "name" is column "lock").
// A derived field (no `set`) is computed from the others: written out,
// never read back; a field with `stored` false has no SQLite column.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/experiment/point_result.h"

namespace vfssim::report::schema {

enum class Type { kInteger, kReal, kText, kBool, kTime };
const char* to_string(Type t);  // "integer", "real", "text", "bool", "time"
const char* sql_type(Type t);   // the SQLite column type: INTEGER, REAL or TEXT

// One field's value; monostate is null (JSON null, Python None, SQL NULL).
// A kTime value is its picoseconds (an int64).
using Value = std::variant<std::monostate, std::int64_t, double, std::string, bool>;

// What a getter may need beyond its record: the point's CPU time (the
// profile's 100%).
struct Context {
  sim::Duration cpu_time{0};
};

template <class R>
struct Field {
  const char* name;
  Type type;
  const char* unit;  // what the number counts ("" for names, flags and plain counts spelled out in the description)
  const char* description;
  Value (*get)(const R&, const Context&);
  void (*set)(R&, const Value&) = nullptr;  // null: derived, not read back
  const char* column = nullptr;             // SQLite column when it is not the name (times: NAME_ps)
  bool stored = true;                       // has an SQLite column
  // JSON and Python: consecutive fields of one group are one list under
  // the group's name (ci95_lo, ci95_hi -> "ci95": [lo, hi]), null when
  // every element is null; SQLite keeps a column each.
  const char* group = nullptr;
  bool shown = true;  // false: SQLite only (JSON and Python show it in another form, e.g. the bottleneck object)
  // A group shown as an object keyed by what follows the group's name
  // (band_p10 -> "band": {"p10": ...}) rather than a list.
  bool object = false;
  // Left out of JSON and Python when null: a field only some runs have
  // (--uncertainty's band), so that the others' documents stay as they were.
  bool optional = false;
};

// JSON/Python key and SQLite column of a field.
template <class R>
std::string key_of(const Field<R>& f) {
  return f.type == Type::kTime ? std::string(f.name) + "_us" : std::string(f.name);
}
template <class R>
std::string column_of(const Field<R>& f) {
  if (f.column) return f.column;
  return f.type == Type::kTime ? std::string(f.name) + "_ps" : std::string(f.name);
}

// The records of one kind in a point: a list (`list`) or one record (`one`).
template <class R>
struct Table {
  const char* sql;          // SQLite table, keyed by run_id, strategy, variant, cpus, rep
  const char* key;          // JSON and Python key of the records in a point ("" for the point itself)
  const char* description;  // one row per ...
  std::vector<Field<R>> fields;
  std::vector<R> models::PointResult::* list = nullptr;
  R models::PointResult::* one = nullptr;
  // JSON: no key at all when the list is empty (a table only some
  // scenarios fill, such as roles: the others' documents stay as they were).
  bool omit_empty = false;
};

// Per replication: the point's own scalars (table points, the Python point
// dict), and its stats.
const Table<models::PointResult>& points();
const Table<models::LockReport>& locks();
const Table<models::LockModeReport>& lock_modes();
const Table<models::ContentionPoint>& contention_points();
const Table<models::LineReport>& lines();
const Table<models::SeqReport>& seqcounts();
const Table<models::PoolReport>& pools();
const Table<models::ProfileEntry>& profile();
const Table<models::RcuStats>& rcu();
const Table<models::RoleReport>& roles();
const Table<models::TaskStats>& tasks();
// Per curve point (table curve; JSON points and Python curve dicts).
struct CurveFields {
  const char* sql;
  std::vector<Field<models::CurvePoint>> fields;
};
const CurveFields& curve();

// The schema as data (`vfssim schema --json`, _vfssim.result_schema()):
// {"point" | "lock_stat" | "lock_stat_rw" | "contention_points" | "lines" | "seqcounts" | "pools" | "profile" |
// "rcu" | "roles" | "tasks" | "curve": {"table", "rows", "fields": [{"key", "name", "type",
// "unit", "description", "column" (null: not stored), "sql_type",
// "derived"}]}}, in schema order.
nlohmann::ordered_json describe();

// Calls fn(table) for each per-replication stats table, in schema order
// (not points(): its rows are the point itself).
template <class Fn>
void for_each_stats_table(Fn&& fn) {
  fn(locks());
  fn(lock_modes());
  fn(contention_points());
  fn(lines());
  fn(seqcounts());
  fn(pools());
  fn(profile());
  fn(rcu());
  fn(roles());
  fn(tasks());
}

// The records of a table in a point, as pointers (one record for `one`).
template <class R>
std::vector<const R*> rows_of(const Table<R>& t, const models::PointResult& p) {
  std::vector<const R*> out;
  if (t.list)
    for (const auto& r : p.*(t.list)) out.push_back(&r);
  else if (t.one)
    out.push_back(&(p.*(t.one)));
  else if constexpr (std::is_same_v<R, models::PointResult>)
    out.push_back(&p);
  return out;
}

// A new record of the table in `p` to read into: appended to the list,
// or the single record (or the point itself) reset.
template <class R>
R& new_row(const Table<R>& t, models::PointResult& p) {
  if (t.list) return (p.*(t.list)).emplace_back();
  if (t.one) return p.*(t.one);
  if constexpr (std::is_same_v<R, models::PointResult>) return p;
  throw std::logic_error(std::string("schema table ") + t.sql + " has no records");
}

// A record as JSON and Python show it: (key, value) in field order, a
// group's fields as one list (`list` true), SQLite-only fields left out.
struct ShownValue {
  std::string key;
  std::vector<Value> values;  // one, or a group's elements
  bool list = false;
  bool object = false;             // a group as {name: value}: names[i] of values[i]
  std::vector<std::string> names;  // of an object group's elements
  bool optional = false;           // left out when every value is null
};
template <class R>
Value shown(const Field<R>& f, const R& r, const Context& c);
template <class R>
std::vector<ShownValue> shown_record(const std::vector<Field<R>>& fields, const R& r, const Context& c) {
  std::vector<ShownValue> out;
  for (const auto& f : fields) {
    if (!f.shown) continue;
    const std::string member = f.group ? key_of(f).substr(std::min(key_of(f).size(), std::string(f.group).size() + 1)) : "";
    if (f.group && !out.empty() && out.back().list && out.back().key == f.group) {
      out.back().values.push_back(shown(f, r, c));
      out.back().names.push_back(member);
      continue;
    }
    out.push_back(ShownValue{f.group ? f.group : key_of(f), {shown(f, r, c)}, f.group != nullptr, f.object, {member},
                             f.optional});
  }
  return out;
}
// True when every element of a shown list is null (the list is shown as null).
bool all_null(const std::vector<Value>& values);

// Values read back (SQLite) as the field's C++ type; a scope by its name.
std::int64_t as_int(const Value& v);
double as_real(const Value& v);
std::string as_text(const Value& v);
models::Scope scope_named(const std::string& s);  // throws std::invalid_argument

inline Context context_of(const models::PointResult& p) { return Context{p.cpu_time}; }

// A value as JSON (monostate: null).
nlohmann::json to_json(const Value& v);

// A field's value as JSON and Python show it: a time in microseconds.
template <class R>
Value shown(const Field<R>& f, const R& r, const Context& c) {
  Value v = f.get(r, c);
  if (f.type == Type::kTime && !std::holds_alternative<std::monostate>(v)) return static_cast<double>(as_int(v)) * 1e-6;
  return v;
}

// A point as self-contained JSON and back: its spec, every stored field of
// every table of the schema, and the per-task iterations. What pickling
// carries to another process or machine (Python's NativePoint): unpack
// gives a point whose tables, document and what-ifs are the original's.
nlohmann::json pack(const models::PointResult& p);
models::PointResult unpack(const nlohmann::json& j);  // throws std::invalid_argument on a malformed pack

}  // namespace vfssim::report::schema

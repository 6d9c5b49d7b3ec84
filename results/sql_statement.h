// A prepared SQLite statement for the results store: bind by position,
// step, read columns; errors become StoreError. Shared by cli/store.cpp
// and cli/store_durable.cpp.
#pragma once

#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <variant>

#include "results/schema.h"
#include "results/store.h"

namespace vfssim::report {

// SQLite's message for the last error on `db`, "FILE: SQLite: ...", with the operating
// system's for an I/O error: "disk I/O error (File too large)", "database
// or disk is full (No space left on device)". SQLite keeps the errno of
// some failures only (sqlite3_system_errno); for a failed write it is
// still this thread's errno when the error is read, right after the call.
// The file's name leads (every caller's message names the database).
inline std::string sqlite_error(sqlite3* db, int errno_after = errno) {
  const char* file = sqlite3_db_filename(db, "main");
  std::string msg = std::string(file && *file ? file : "results database") + ": SQLite: " + sqlite3_errmsg(db);
  int e = sqlite3_system_errno(db);
  const int primary = sqlite3_extended_errcode(db) & 0xff;
  if (e == 0 && (primary == SQLITE_IOERR || primary == SQLITE_FULL || primary == SQLITE_CANTOPEN)) e = errno_after;
  if (e != 0) msg += std::string(" (") + std::strerror(e) + ")";
  return msg;
}

class Sql {
 public:
  Sql(sqlite3* db, const char* text) : db_(db) {
    if (sqlite3_prepare_v2(db, text, -1, &st_, nullptr) != SQLITE_OK)
      throw StoreError(sqlite_error(db));
  }
  ~Sql() { sqlite3_finalize(st_); }
  Sql(const Sql&) = delete;
  Sql& operator=(const Sql&) = delete;
  Sql& bind(int i, std::int64_t v) {
    sqlite3_bind_int64(st_, i, v);
    return *this;
  }
  Sql& bind(int i, double v) {
    sqlite3_bind_double(st_, i, v);
    return *this;
  }
  // A real that may be undefined: NaN and infinities are stored as NULL.
  Sql& bind_real(int i, double v) {
    if (std::isfinite(v)) sqlite3_bind_double(st_, i, v);
    else sqlite3_bind_null(st_, i);
    return *this;
  }
  Sql& bind_null(int i) {
    sqlite3_bind_null(st_, i);
    return *this;
  }
  Sql& bind(int i, const std::string& v) {
    sqlite3_bind_text(st_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  bool step() {
    const int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw StoreError(sqlite_error(db_));
  }
  void run() {
    step();
    sqlite3_reset(st_);
  }
  std::int64_t i64(int c) { return sqlite3_column_int64(st_, c); }
  std::uint64_t u64(int c) { return static_cast<std::uint64_t>(sqlite3_column_int64(st_, c)); }
  double f64(int c) { return sqlite3_column_double(st_, c); }
  bool null(int c) { return sqlite3_column_type(st_, c) == SQLITE_NULL; }
  std::string text(int c) {
    const unsigned char* t = sqlite3_column_text(st_, c);
    return t ? reinterpret_cast<const char*>(t) : "";
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
};

// This machine's name, stored with the pid of the process that writes a
// run (runs.host, runs.pid: schema 8).
inline std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

// The five key columns every per-replication table of the results store
// starts with: run_id, strategy, variant, cpus, rep.
inline void bind_key(Sql& s, std::int64_t run_id, const models::CurvePoint& cp, int rep) {
  s.bind(1, run_id).bind(2, cp.strategy).bind(3, cp.variant).bind(4, static_cast<std::int64_t>(cp.cpus));
  s.bind(5, static_cast<std::int64_t>(rep));
}

// Generated from the result schema (results/schema.h): the INSERT of a
// per-replication table (the five key columns, then every stored field),
// its SELECT for read-back (strategy, variant, cpus, rep, then every field
// that is read back), and the binding and reading of one record.
template <class R>
std::string insert_sql(const schema::Table<R>& t) {
  std::string cols = "run_id, strategy, variant, cpus, rep", marks = "?,?,?,?,?";
  for (const auto& f : t.fields)
    if (f.stored) {
      cols += ", " + schema::column_of(f);
      marks += ",?";
    }
  return std::string("INSERT INTO ") + t.sql + "(" + cols + ") VALUES (" + marks + ")";
}
template <class R>
std::string select_sql(const schema::Table<R>& t) {
  std::string cols = "strategy, variant, cpus, rep";
  for (const auto& f : t.fields)
    if (f.stored && f.set) cols += ", " + schema::column_of(f);
  return "SELECT " + cols + " FROM " + t.sql + " WHERE run_id=? ORDER BY rowid";
}

inline void bind_value(Sql& s, int i, const schema::Value& v) {
  std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, std::monostate>) s.bind_null(i);
        else if constexpr (std::is_same_v<X, bool>) s.bind(i, static_cast<std::int64_t>(x));
        else s.bind(i, x);
      },
      v);
}

// Binds the stored fields of `r` from parameter `first` on.
template <class R>
void bind_record(Sql& s, int first, const std::vector<schema::Field<R>>& fields, const R& r, const schema::Context& c) {
  int i = first;
  for (const auto& f : fields)
    if (f.stored) bind_value(s, i++, f.get(r, c));
}

// Reads the fields that are read back into `r`, from column `first` on.
template <class R>
void read_record(Sql& q, int first, const std::vector<schema::Field<R>>& fields, R& r) {
  int c = first;
  for (const auto& f : fields) {
    if (!f.stored || !f.set) continue;
    schema::Value v;
    if (q.null(c)) v = std::monostate{};
    else if (f.type == schema::Type::kReal) v = q.f64(c);
    else if (f.type == schema::Type::kText) v = q.text(c);
    else v = q.i64(c);
    try {
      f.set(r, v);
    } catch (const std::invalid_argument& e) {
      throw StoreError(std::string(e.what()) + " in column " + schema::column_of(f) + " of the results database");
    }
    ++c;
  }
}

}  // namespace vfssim::report

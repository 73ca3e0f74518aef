#include "memory/experience_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <ctime>
#include <set>

#include "memory/export_check.h"
#include "memory/store.h"

namespace ucut::memory {

namespace {

std::string now_iso() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

nlohmann::json parse_or_empty(const std::string& s) {
  auto j = nlohmann::json::parse(s, nullptr, false);
  return j.is_discarded() ? nlohmann::json::object() : j;
}

constexpr const char* kExpCols =
    "id, class, bucket, gpu, policy, problem, slow_hash, fast_hash, slow_config, fast_config, "
    "slow_s, fast_s, gain, diff, lesson, seen, uses, helps, created_at";
constexpr const char* kPriorCols =
    "id, class, bucket, gpu, policy, problem, config, config_name, program_hash, speedup, "
    "frac_sol, wins, uses, helps, created_at";

// `hint`: the database's own (a missing grant, the statement timeout: sql.h), when it gave one.
Error db_error(const std::string& path, const std::string& what, const std::string& msg, const std::string& hint = {}) {
  return make_error(ErrorCode::io, path + ": " + what + ": " + msg,
                    !hint.empty() ? hint
                    : sql_is_postgres(path)
                        ? "check the PostgreSQL server (see 'ucutlass memory stats'), or choose another store with --db"
                        : "check the store file (see 'ucutlass memory stats'), or choose another with --db");
}

template <typename T>
void sort_best_first(std::vector<T>& v, const MemoryQuery& q, double (*use)(const T&)) {
  std::stable_sort(v.begin(), v.end(), [&](const T& a, const T& b) {
    int da = q.bucket.empty() ? 0 : memory_bucket_distance(q.bucket, a.key.bucket);
    int db = q.bucket.empty() ? 0 : memory_bucket_distance(q.bucket, b.key.bucket);
    if (da != db) return da < db;
    double ua = use(a), ub = use(b);
    if (ua != ub) return ua > ub;
    return a.id > b.id;
  });
}

std::string where_of(const MemoryQuery& q, std::vector<std::string>& args) {
  std::string w = "1=1";
  if (!q.cls.empty()) { w += " AND class = ?"; args.push_back(q.cls); }
  if (!q.gpu.empty()) { w += " AND gpu = ?"; args.push_back(q.gpu); }
  if (!q.policy.empty()) { w += " AND policy = ?"; args.push_back(q.policy); }
  return w;
}

}  // namespace

MemoryDb::MemoryDb(std::unique_ptr<SqlConn> c, std::string path, MemoryCaps caps)
    : c_(std::move(c)), path_(std::move(path)), caps_(caps) {}

Result<std::unique_ptr<MemoryDb>> MemoryDb::open(const std::string& path, MemoryCaps caps, StoreAccess access) {
  if (sql_is_postgres(path)) {
    auto c = store_open_postgres_conn(path, access);  // connects, applies every migration
    if (!c) return c.error();
    const std::string where = (*c)->where();
    return std::unique_ptr<MemoryDb>(new MemoryDb(std::move(*c), where, caps));
  }
  if (path == ":memory:")
    return make_error(ErrorCode::invalid_input, "the optimization memory needs a file, not :memory:",
                      "give --db a file path (tests use a temporary file)");
  {
    auto migrated = store_open_sqlite(path, access);  // creates the file as allowed, applies every migration
    if (!migrated) return migrated.error();
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return db_error(path, "cannot open the optimization memory", msg);
  }
  sqlite3_busy_timeout(db, 10000);
  return std::unique_ptr<MemoryDb>(new MemoryDb(sql_sqlite_adopt(db, path), path, caps));
}

MemoryDb::~MemoryDb() = default;

Status MemoryDb::write_transaction(const std::function<Status()>& body) {
  return c_->transaction([&]() -> Status {
    // Taken again by a nested write (memory_learn's adds): the lock stacks and is held until the
    // outermost transaction ends either way.
    if (auto s = c_->lock_writers(kSqlLockMemory); !s)
      return db_error(path_, "waiting for the memory's write lock", s.error().message, s.error().hint);
    return body();
  });
}

Status MemoryDb::transaction(const std::function<Status()>& body) { return write_transaction(body); }

Status MemoryDb::exec(const std::string& sql, const std::vector<SqlValue>& params) {
  if (auto r = c_->query(sql, params); !r) return db_error(path_, "memory query failed", r.error().message, r.error().hint);
  return ok_status();
}

Status MemoryDb::bump_meta(const std::string& key, int64_t by) {
  auto r = c_->query("INSERT INTO memory_meta(key, value) VALUES(?, ?) "
                     "ON CONFLICT(key) DO UPDATE SET value = memory_meta.value + excluded.value",
                     {key, by});
  if (!r) return db_error(path_, "updating memory_meta", r.error().message, r.error().hint);
  return ok_status();
}

int64_t MemoryDb::meta(const std::string& key) {
  auto r = c_->query("SELECT value FROM memory_meta WHERE key = ?", {key});
  return r && !r->empty() ? r->front().integer(0) : 0;
}

namespace {
std::vector<SqlValue> text_args(const std::vector<std::string>& args) {
  return std::vector<SqlValue>(args.begin(), args.end());
}
}  // namespace

Result<std::vector<Experience>> MemoryDb::load_experiences(const std::string& where,
                                                           const std::vector<std::string>& args) {
  auto r = c_->query(std::string("SELECT ") + kExpCols + " FROM experiences WHERE " + where, text_args(args));
  if (!r) return db_error(path_, "reading experiences", r.error().message, r.error().hint);
  std::vector<Experience> out;
  out.reserve(r->size());
  for (const auto& q : *r) {
    Experience e;
    e.id = q.integer(0);
    e.key = {q.text(1), q.text(2), q.text(3), q.text(4)};
    e.problem = q.text(5);
    e.slow_hash = q.text(6);
    e.fast_hash = q.text(7);
    e.slow_config = parse_or_empty(q.text(8));
    e.fast_config = parse_or_empty(q.text(9));
    e.slow_s = q.real(10);
    e.fast_s = q.real(11);
    e.gain = q.real(12);
    e.diff = q.text(13);
    e.lesson = q.text(14);
    e.seen = static_cast<int>(q.integer(15));
    e.uses = static_cast<int>(q.integer(16));
    e.helps = static_cast<int>(q.integer(17));
    e.created_at = q.text(18);
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::vector<Prior>> MemoryDb::load_priors(const std::string& where,
                                                 const std::vector<std::string>& args) {
  auto r = c_->query(std::string("SELECT ") + kPriorCols + " FROM priors WHERE " + where, text_args(args));
  if (!r) return db_error(path_, "reading priors", r.error().message, r.error().hint);
  std::vector<Prior> out;
  out.reserve(r->size());
  for (const auto& q : *r) {
    Prior p;
    p.id = q.integer(0);
    p.key = {q.text(1), q.text(2), q.text(3), q.text(4)};
    p.problem = q.text(5);
    p.config = parse_or_empty(q.text(6));
    p.config_name = q.text(7);
    p.program_hash = q.text(8);
    p.speedup = q.real(9);
    p.frac_sol = q.real(10);
    p.wins = static_cast<int>(q.integer(11));
    p.uses = static_cast<int>(q.integer(12));
    p.helps = static_cast<int>(q.integer(13));
    p.created_at = q.text(14);
    out.push_back(std::move(p));
  }
  return out;
}

Result<int64_t> MemoryDb::add_and_curate(const std::function<Result<int64_t>()>& insert) {
  std::optional<int64_t> id;
  auto st = write_transaction([&]() -> Status {
    auto r = insert();
    if (!r) return r.error();
    if (auto c = evict_over_caps(); !c) return c.error();
    id = *r;
    return ok_status();
  });
  if (!st) return st.error();
  return *id;
}

Result<int64_t> MemoryDb::add_experience(const Experience& e) {
  return add_and_curate([&] { return insert_experience(e); });
}

Result<int64_t> MemoryDb::insert_experience(const Experience& e) {
  const std::string key = experience_dedupe_key(e);
  auto found = c_->query("SELECT id FROM experiences WHERE dedupe = ?", {key});
  if (!found) return db_error(path_, "looking up an experience", found.error().message, found.error().hint);
  if (!found->empty()) {
    const int64_t id = found->front().integer(0);
    auto up = c_->query(std::string("UPDATE experiences SET seen = seen + ?, uses = uses + ?, helps = helps + ?, "
                                    "gain = ") + sql_greatest(c_->dialect()) + "(gain, ?) WHERE id = ?",
                        {int64_t{std::max(1, e.seen)}, int64_t{e.uses}, int64_t{e.helps}, e.gain, id});
    if (!up) return db_error(path_, "merging an experience", up.error().message, up.error().hint);
    if (auto s = bump_meta("merged", 1); !s) return s.error();
    return id;
  }
  auto ins = c_->query("INSERT INTO experiences(dedupe, class, bucket, gpu, policy, problem, slow_hash, "
                       "fast_hash, slow_config, fast_config, slow_s, fast_s, gain, diff, lesson, seen, uses, "
                       "helps, created_at) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id",
                       {key, e.key.cls, e.key.bucket, e.key.gpu, e.key.policy, e.problem, e.slow_hash, e.fast_hash,
                        e.slow_config.dump(), e.fast_config.dump(), e.slow_s, e.fast_s, e.gain, e.diff, e.lesson,
                        int64_t{std::max(1, e.seen)}, int64_t{e.uses}, int64_t{e.helps},
                        e.created_at.empty() ? now_iso() : e.created_at});
  if (!ins || ins->empty())
    return db_error(path_, "adding an experience", ins ? "no id came back" : ins.error().message, ins ? "" : ins.error().hint);
  return ins->front().integer(0);
}

Result<int64_t> MemoryDb::add_prior(const Prior& p) {
  return add_and_curate([&] { return insert_prior(p); });
}

Result<int64_t> MemoryDb::insert_prior(const Prior& p) {
  const std::string key = prior_dedupe_key(p);
  auto found = c_->query("SELECT id FROM priors WHERE dedupe = ?", {key});
  if (!found) return db_error(path_, "looking up a prior", found.error().message, found.error().hint);
  if (!found->empty()) {
    const int64_t id = found->front().integer(0);
    const std::string greatest = sql_greatest(c_->dialect());
    auto up = c_->query("UPDATE priors SET wins = wins + ?, uses = uses + ?, helps = helps + ?, speedup = " +
                            greatest + "(speedup, ?), frac_sol = " + greatest + "(frac_sol, ?) WHERE id = ?",
                        {int64_t{std::max(1, p.wins)}, int64_t{p.uses}, int64_t{p.helps}, p.speedup, p.frac_sol, id});
    if (!up) return db_error(path_, "merging a prior", up.error().message, up.error().hint);
    if (auto s = bump_meta("merged", 1); !s) return s.error();
    return id;
  }
  auto ins = c_->query("INSERT INTO priors(dedupe, class, bucket, gpu, policy, problem, config, config_name, "
                       "program_hash, speedup, frac_sol, wins, uses, helps, created_at) "
                       "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id",
                       {key, p.key.cls, p.key.bucket, p.key.gpu, p.key.policy, p.problem, p.config.dump(),
                        p.config_name, p.program_hash, p.speedup, p.frac_sol, int64_t{std::max(1, p.wins)},
                        int64_t{p.uses}, int64_t{p.helps}, p.created_at.empty() ? now_iso() : p.created_at});
  if (!ins || ins->empty())
    return db_error(path_, "adding a prior", ins ? "no id came back" : ins.error().message, ins ? "" : ins.error().hint);
  return ins->front().integer(0);
}

Result<std::vector<Experience>> MemoryDb::experiences(const MemoryQuery& q) {
  std::vector<std::string> args;
  auto all = load_experiences(where_of(q, args), args);
  if (!all) return all.error();
  std::vector<Experience> v;
  for (auto& e : *all)
    if (q.bucket.empty() || memory_bucket_distance(q.bucket, e.key.bucket) <= q.max_distance)
      v.push_back(std::move(e));
  sort_best_first<Experience>(v, q, &experience_usefulness);
  if (q.limit > 0 && static_cast<int>(v.size()) > q.limit) v.resize(q.limit);
  return v;
}

Result<std::vector<Prior>> MemoryDb::priors(const MemoryQuery& q) {
  std::vector<std::string> args;
  auto all = load_priors(where_of(q, args), args);
  if (!all) return all.error();
  std::vector<Prior> v;
  for (auto& p : *all)
    if (q.bucket.empty() || memory_bucket_distance(q.bucket, p.key.bucket) <= q.max_distance)
      v.push_back(std::move(p));
  sort_best_first<Prior>(v, q, &prior_usefulness);
  if (q.limit > 0 && static_cast<int>(v.size()) > q.limit) v.resize(q.limit);
  return v;
}

Result<std::optional<Experience>> MemoryDb::experience(int64_t id) {
  auto v = load_experiences("id = ?", {std::to_string(id)});
  if (!v) return v.error();
  if (v->empty()) return std::optional<Experience>{};
  return std::optional<Experience>{v->front()};
}

Result<std::optional<Prior>> MemoryDb::prior(int64_t id) {
  auto v = load_priors("id = ?", {std::to_string(id)});
  if (!v) return v.error();
  if (v->empty()) return std::optional<Prior>{};
  return std::optional<Prior>{v->front()};
}

Status MemoryDb::mark_prior_used(int64_t id, bool helped) {
  return exec("UPDATE priors SET uses = uses + 1, helps = helps + ? WHERE id = ?", {int64_t{helped ? 1 : 0}, id});
}

Status MemoryDb::mark_experience_used(int64_t id, bool helped) {
  return exec("UPDATE experiences SET uses = uses + 1, helps = helps + ? WHERE id = ?",
              {int64_t{helped ? 1 : 0}, id});
}

Result<int> MemoryDb::curate() {
  std::optional<int> n;
  auto st = write_transaction([&]() -> Status {
    auto r = evict_over_caps();
    if (!r) return r.error();
    n = *r;
    return ok_status();
  });
  if (!st) return st.error();
  return *n;
}

Result<int> MemoryDb::evict_over_caps() {
  int evicted = 0;
  auto exps = load_experiences("1=1", {});
  if (!exps) return exps.error();
  if (static_cast<int>(exps->size()) > caps_.experiences) {
    MemoryQuery all;
    sort_best_first<Experience>(*exps, all, &experience_usefulness);
    for (size_t i = caps_.experiences; i < exps->size(); ++i) {
      if (auto s = exec("DELETE FROM experiences WHERE id = ?", {(*exps)[i].id}); !s)
        return s.error();
      ++evicted;
    }
    if (auto s = bump_meta("evicted_experiences", static_cast<int64_t>(exps->size()) - caps_.experiences); !s)
      return s.error();
  }
  auto prs = load_priors("1=1", {});
  if (!prs) return prs.error();
  if (static_cast<int>(prs->size()) > caps_.priors) {
    MemoryQuery all;
    sort_best_first<Prior>(*prs, all, &prior_usefulness);
    for (size_t i = caps_.priors; i < prs->size(); ++i) {
      if (auto s = exec("DELETE FROM priors WHERE id = ?", {(*prs)[i].id}); !s)
        return s.error();
      ++evicted;
    }
    if (auto s = bump_meta("evicted_priors", static_cast<int64_t>(prs->size()) - caps_.priors); !s)
      return s.error();
  }
  return evicted;
}

Result<MemoryStats> MemoryDb::stats() {
  MemoryStats s;
  s.path = path_;
  auto e = load_experiences("1=1", {});
  if (!e) return e.error();
  auto p = load_priors("1=1", {});
  if (!p) return p.error();
  s.experiences = static_cast<int>(e->size());
  s.priors = static_cast<int>(p->size());
  std::set<std::string> classes;
  for (const auto& x : *e) {
    classes.insert(x.key.cls);
    s.best_gain = std::max(s.best_gain, x.gain);
  }
  for (const auto& x : *p) classes.insert(x.key.cls);
  s.classes = static_cast<int>(classes.size());
  s.evicted_experiences = meta("evicted_experiences");
  s.evicted_priors = meta("evicted_priors");
  s.merged = meta("merged");
  return s;
}

Result<nlohmann::json> MemoryDb::export_json() {
  auto e = load_experiences("1=1 ORDER BY id", {});
  if (!e) return e.error();
  auto p = load_priors("1=1 ORDER BY id", {});
  if (!p) return p.error();
  nlohmann::json doc = {{"schema", "ucutlass.memory/1"},
                        {"experiences", nlohmann::json::array()},
                        {"priors", nlohmann::json::array()}};
  for (const auto& x : *e) doc["experiences"].push_back(experience_to_json(x));
  for (const auto& x : *p) doc["priors"].push_back(prior_to_json(x));
  return doc;
}

Result<ImportCounts> MemoryDb::import_json(const nlohmann::json& doc, const std::string& source) {
  if (auto s = memory_check_export(doc, source); !s) return s.error();
  ImportCounts n;
  auto st = write_transaction([&]() -> Status {
    n = {};
    for (const auto& j : doc["experiences"]) {
      if (auto r = insert_experience(experience_from_json(j)); !r) return r.error();
      ++n.experiences;
    }
    for (const auto& j : doc["priors"]) {
      if (auto r = insert_prior(prior_from_json(j)); !r) return r.error();
      ++n.priors;
    }
    auto evicted = evict_over_caps();
    if (!evicted) return evicted.error();
    n.evicted = *evicted;
    return ok_status();
  });
  if (!st) return st.error();
  return n;
}

}  // namespace ucut::memory

#include "memory/experience_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <ctime>
#include <set>

#include "memory/export_check.h"
#include "memory/sqlite_tx.h"
#include "memory/store.h"

namespace ucut::memory {

namespace {

// A prepared statement with text/real/int binding by position (1-based).
class Q {
 public:
  Q(sqlite3* db, const std::string& sql) : db_(db) {
    rc_ = sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr);
  }
  ~Q() { sqlite3_finalize(s_); }
  bool ok() const { return rc_ == SQLITE_OK; }
  Q& text(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.c_str(), -1, SQLITE_TRANSIENT);
    return *this;
  }
  Q& real(int i, double v) {
    sqlite3_bind_double(s_, i, v);
    return *this;
  }
  Q& integer(int i, int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  int step() { return sqlite3_step(s_); }
  std::string col_text(int i) {
    auto p = sqlite3_column_text(s_, i);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  double col_real(int i) { return sqlite3_column_double(s_, i); }
  int64_t col_int(int i) { return sqlite3_column_int64(s_, i); }
  std::string error() const { return sqlite3_errmsg(db_); }

 private:
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
  int rc_;
};

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

Error db_error(const std::string& path, const std::string& what, const std::string& msg) {
  return make_error(ErrorCode::io, path + ": " + what + ": " + msg,
                    "check the store file (see 'ucutlass memory stats'), or choose another with --db");
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

Result<std::unique_ptr<MemoryDb>> MemoryDb::open(const std::string& path, MemoryCaps caps, StoreAccess access) {
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
  return std::unique_ptr<MemoryDb>(new MemoryDb(db, path, caps));
}

MemoryDb::~MemoryDb() { sqlite3_close(db_); }

Status MemoryDb::transaction(const std::function<Status()>& body) { return sqlite_transaction(db_, path_, body); }

Status MemoryDb::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return db_error(path_, "memory query failed", msg);
  }
  return ok_status();
}

Status MemoryDb::bump_meta(const std::string& key, int64_t by) {
  Q q(db_, "INSERT INTO memory_meta(key, value) VALUES(?, ?) "
           "ON CONFLICT(key) DO UPDATE SET value = value + excluded.value");
  q.text(1, key).integer(2, by);
  if (q.step() != SQLITE_DONE) return db_error(path_, "updating memory_meta", q.error());
  return ok_status();
}

int64_t MemoryDb::meta(const std::string& key) {
  Q q(db_, "SELECT value FROM memory_meta WHERE key = ?");
  q.text(1, key);
  return q.step() == SQLITE_ROW ? q.col_int(0) : 0;
}

Result<std::vector<Experience>> MemoryDb::load_experiences(const std::string& where,
                                                           const std::vector<std::string>& args) {
  Q q(db_, std::string("SELECT ") + kExpCols + " FROM experiences WHERE " + where);
  if (!q.ok()) return db_error(path_, "reading experiences", q.error());
  for (size_t i = 0; i < args.size(); ++i) q.text(static_cast<int>(i + 1), args[i]);
  std::vector<Experience> out;
  while (q.step() == SQLITE_ROW) {
    Experience e;
    e.id = q.col_int(0);
    e.key = {q.col_text(1), q.col_text(2), q.col_text(3), q.col_text(4)};
    e.problem = q.col_text(5);
    e.slow_hash = q.col_text(6);
    e.fast_hash = q.col_text(7);
    e.slow_config = parse_or_empty(q.col_text(8));
    e.fast_config = parse_or_empty(q.col_text(9));
    e.slow_s = q.col_real(10);
    e.fast_s = q.col_real(11);
    e.gain = q.col_real(12);
    e.diff = q.col_text(13);
    e.lesson = q.col_text(14);
    e.seen = static_cast<int>(q.col_int(15));
    e.uses = static_cast<int>(q.col_int(16));
    e.helps = static_cast<int>(q.col_int(17));
    e.created_at = q.col_text(18);
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::vector<Prior>> MemoryDb::load_priors(const std::string& where,
                                                 const std::vector<std::string>& args) {
  Q q(db_, std::string("SELECT ") + kPriorCols + " FROM priors WHERE " + where);
  if (!q.ok()) return db_error(path_, "reading priors", q.error());
  for (size_t i = 0; i < args.size(); ++i) q.text(static_cast<int>(i + 1), args[i]);
  std::vector<Prior> out;
  while (q.step() == SQLITE_ROW) {
    Prior p;
    p.id = q.col_int(0);
    p.key = {q.col_text(1), q.col_text(2), q.col_text(3), q.col_text(4)};
    p.problem = q.col_text(5);
    p.config = parse_or_empty(q.col_text(6));
    p.config_name = q.col_text(7);
    p.program_hash = q.col_text(8);
    p.speedup = q.col_real(9);
    p.frac_sol = q.col_real(10);
    p.wins = static_cast<int>(q.col_int(11));
    p.uses = static_cast<int>(q.col_int(12));
    p.helps = static_cast<int>(q.col_int(13));
    p.created_at = q.col_text(14);
    out.push_back(std::move(p));
  }
  return out;
}

Result<int64_t> MemoryDb::add_and_curate(const std::function<Result<int64_t>()>& insert) {
  return sqlite_transaction_value<int64_t>(db_, path_, [&]() -> Result<int64_t> {
    auto id = insert();
    if (!id) return id;
    if (auto c = evict_over_caps(); !c) return c.error();
    return id;
  });
}

Result<int64_t> MemoryDb::add_experience(const Experience& e) {
  return add_and_curate([&] { return insert_experience(e); });
}

Result<int64_t> MemoryDb::insert_experience(const Experience& e) {
  const std::string key = experience_dedupe_key(e);
  {
    Q find(db_, "SELECT id FROM experiences WHERE dedupe = ?");
    find.text(1, key);
    if (find.step() == SQLITE_ROW) {
      int64_t id = find.col_int(0);
      Q up(db_, "UPDATE experiences SET seen = seen + ?, uses = uses + ?, helps = helps + ?, "
                "gain = MAX(gain, ?) WHERE id = ?");
      up.integer(1, std::max(1, e.seen)).integer(2, e.uses).integer(3, e.helps).real(4, e.gain).integer(5, id);
      if (up.step() != SQLITE_DONE) return db_error(path_, "merging an experience", up.error());
      if (auto s = bump_meta("merged", 1); !s) return s.error();
      return id;
    }
  }
  Q ins(db_, "INSERT INTO experiences(dedupe, class, bucket, gpu, policy, problem, slow_hash, "
             "fast_hash, slow_config, fast_config, slow_s, fast_s, gain, diff, lesson, seen, uses, "
             "helps, created_at) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  ins.text(1, key).text(2, e.key.cls).text(3, e.key.bucket).text(4, e.key.gpu).text(5, e.key.policy)
      .text(6, e.problem).text(7, e.slow_hash).text(8, e.fast_hash).text(9, e.slow_config.dump())
      .text(10, e.fast_config.dump()).real(11, e.slow_s).real(12, e.fast_s).real(13, e.gain)
      .text(14, e.diff).text(15, e.lesson).integer(16, std::max(1, e.seen)).integer(17, e.uses)
      .integer(18, e.helps).text(19, e.created_at.empty() ? now_iso() : e.created_at);
  if (ins.step() != SQLITE_DONE) return db_error(path_, "adding an experience", ins.error());
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
}

Result<int64_t> MemoryDb::add_prior(const Prior& p) {
  return add_and_curate([&] { return insert_prior(p); });
}

Result<int64_t> MemoryDb::insert_prior(const Prior& p) {
  const std::string key = prior_dedupe_key(p);
  {
    Q find(db_, "SELECT id FROM priors WHERE dedupe = ?");
    find.text(1, key);
    if (find.step() == SQLITE_ROW) {
      int64_t id = find.col_int(0);
      Q up(db_, "UPDATE priors SET wins = wins + ?, uses = uses + ?, helps = helps + ?, "
                "speedup = MAX(speedup, ?), frac_sol = MAX(frac_sol, ?) WHERE id = ?");
      up.integer(1, std::max(1, p.wins)).integer(2, p.uses).integer(3, p.helps).real(4, p.speedup)
          .real(5, p.frac_sol).integer(6, id);
      if (up.step() != SQLITE_DONE) return db_error(path_, "merging a prior", up.error());
      if (auto s = bump_meta("merged", 1); !s) return s.error();
      return id;
    }
  }
  Q ins(db_, "INSERT INTO priors(dedupe, class, bucket, gpu, policy, problem, config, config_name, "
             "program_hash, speedup, frac_sol, wins, uses, helps, created_at) "
             "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  ins.text(1, key).text(2, p.key.cls).text(3, p.key.bucket).text(4, p.key.gpu).text(5, p.key.policy)
      .text(6, p.problem).text(7, p.config.dump()).text(8, p.config_name).text(9, p.program_hash)
      .real(10, p.speedup).real(11, p.frac_sol).integer(12, std::max(1, p.wins)).integer(13, p.uses)
      .integer(14, p.helps).text(15, p.created_at.empty() ? now_iso() : p.created_at);
  if (ins.step() != SQLITE_DONE) return db_error(path_, "adding a prior", ins.error());
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
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
  return exec("UPDATE priors SET uses = uses + 1, helps = helps + " + std::to_string(helped ? 1 : 0) +
              " WHERE id = " + std::to_string(id));
}

Status MemoryDb::mark_experience_used(int64_t id, bool helped) {
  return exec("UPDATE experiences SET uses = uses + 1, helps = helps + " +
              std::to_string(helped ? 1 : 0) + " WHERE id = " + std::to_string(id));
}

Result<int> MemoryDb::curate() {
  return sqlite_transaction_value<int>(db_, path_, [&] { return evict_over_caps(); });
}

Result<int> MemoryDb::evict_over_caps() {
  int evicted = 0;
  auto exps = load_experiences("1=1", {});
  if (!exps) return exps.error();
  if (static_cast<int>(exps->size()) > caps_.experiences) {
    MemoryQuery all;
    sort_best_first<Experience>(*exps, all, &experience_usefulness);
    for (size_t i = caps_.experiences; i < exps->size(); ++i) {
      if (auto s = exec("DELETE FROM experiences WHERE id = " + std::to_string((*exps)[i].id)); !s)
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
      if (auto s = exec("DELETE FROM priors WHERE id = " + std::to_string((*prs)[i].id)); !s)
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
  return sqlite_transaction_value<ImportCounts>(db_, path_, [&]() -> Result<ImportCounts> {
    ImportCounts n;
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
    return n;
  });
}

}  // namespace ucut::memory

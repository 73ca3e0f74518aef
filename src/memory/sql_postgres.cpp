// The PostgreSQL implementation of the SQL seam (sql.h), over libpq. Parameters go as text with
// their types named (int8, float8; text and NULL left for the server to infer from the column they
// meet), results come back as text and SqlRow converts them. Transactions run at READ COMMITTED
// (named in BEGIN): every statement sees what committed before it started, so a write that first
// takes the memory's advisory lock (lock_writers) sees every earlier writer's rows.
//
// What a server may do to a command is bounded (docs/memory.md, "Timeouts"): connecting waits at
// most the connect timeout (libpq waits for ever by default, so a host that accepts TCP and never
// answers hung every command), and each of the tool's statements runs under a statement_timeout.
// The server's refusals are explained where they are met: a missing grant (SQLSTATE 42501) names
// the privilege, the object and the GRANT that gives it; a cancelled statement names the timeout.
// Every message passes through sql_redact_message: no password leaves this file.
#include <libpq-fe.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "memory/sql.h"

namespace ucut::memory {
namespace {

// Type OIDs from PostgreSQL's catalog (pg_type.dat); stable across versions, and not in libpq's headers.
constexpr Oid kInt8Oid = 20;
constexpr Oid kFloat8Oid = 701;

std::string trimmed(const char* s) {
  std::string m = s ? s : "";
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return m;
}

// An identifier as SQL needs it written: bare when it is one PostgreSQL would not fold, else quoted.
std::string sql_ident(const std::string& name) {
  bool bare = !name.empty() && (std::islower(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char ch : name)
    bare = bare && (std::islower(static_cast<unsigned char>(ch)) || std::isdigit(static_cast<unsigned char>(ch)) || ch == '_');
  if (bare) return name;
  std::string q = "\"";
  for (char ch : name) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

// The statement's first word, upper-cased.
std::string statement_verb(const std::string& sql) {
  size_t i = 0;
  while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i]))) ++i;
  std::string word;
  while (i < sql.size() && std::isalpha(static_cast<unsigned char>(sql[i])))
    word += static_cast<char>(std::toupper(static_cast<unsigned char>(sql[i++])));
  return word;
}

// The privileges one of the tool's statements needs on the table it writes or reads: RETURNING and
// ON CONFLICT read the table, DO UPDATE updates it, an UPDATE or DELETE reads the rows it picks.
std::string statement_privileges(const std::string& sql) {
  const std::string verb = statement_verb(sql);
  if (verb == "INSERT") {
    const bool reads = sql.find("RETURNING") != std::string::npos || sql.find("ON CONFLICT") != std::string::npos;
    const bool updates = sql.find("DO UPDATE") != std::string::npos;
    return std::string("INSERT") + (updates ? ", UPDATE" : "") + (reads ? " and SELECT" : "");
  }
  if (verb == "UPDATE" || verb == "DELETE") return verb + " and SELECT";
  return "SELECT";
}

std::string double_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

class PgConn final : public SqlConn {
 public:
  PgConn(PGconn* c, std::string where, std::string conninfo, PgTimeouts timeouts)
      : c_(c), where_(std::move(where)), conninfo_(std::move(conninfo)), timeouts_(timeouts) {}
  ~PgConn() override { PQfinish(c_); }

  SqlDialect dialect() const override { return SqlDialect::postgres; }
  const std::string& where() const override { return where_; }

  Status exec(const std::string& sql) override {
    PGresult* r = PQexec(c_, sql.c_str());
    Status st = check(r, sql);
    PQclear(r);
    return st;
  }

  Result<std::vector<SqlRow>> query(const std::string& sql, const std::vector<SqlValue>& params) override {
    const std::string text = sql_placeholders(sql);
    std::vector<std::string> values(params.size());
    std::vector<const char*> ptrs(params.size(), nullptr);
    std::vector<Oid> types(params.size(), 0);
    for (size_t i = 0; i < params.size(); ++i) {
      const auto& p = params[i];
      if (auto t = std::get_if<std::string>(&p)) {
        values[i] = *t;
      } else if (auto n = std::get_if<int64_t>(&p)) {
        values[i] = std::to_string(*n);
        types[i] = kInt8Oid;
      } else if (auto d = std::get_if<double>(&p)) {
        values[i] = double_text(*d);
        types[i] = kFloat8Oid;
      } else {
        continue;  // NULL: a null pointer
      }
      ptrs[i] = values[i].c_str();
    }
    PGresult* r = PQexecParams(c_, text.c_str(), static_cast<int>(params.size()), types.data(), ptrs.data(), nullptr,
                               nullptr, 0);
    if (auto st = check(r, sql); !st) {
      PQclear(r);
      return st.error();
    }
    std::vector<SqlRow> rows;
    const int nrows = PQntuples(r), ncols = PQnfields(r);
    rows.reserve(nrows);
    for (int i = 0; i < nrows; ++i) {
      SqlRow row;
      row.cells.reserve(ncols);
      for (int j = 0; j < ncols; ++j) {
        if (PQgetisnull(r, i, j)) row.cells.emplace_back(std::monostate{});
        else row.cells.emplace_back(std::string(PQgetvalue(r, i, j), static_cast<size_t>(PQgetlength(r, i, j))));
      }
      rows.push_back(std::move(row));
    }
    PQclear(r);
    return rows;
  }

  Status transaction(const std::function<Status()>& body) override {
    const bool outer = PQtransactionStatus(c_) == PQTRANS_IDLE;
    // READ COMMITTED named, not left to the server's default_transaction_isolation: under
    // REPEATABLE READ the snapshot would be taken as the advisory lock is requested, before the
    // wait, and a merge would miss the row the writer it waited for just committed.
    if (auto s = step(outer ? "BEGIN ISOLATION LEVEL READ COMMITTED" : "SAVEPOINT ucut_tx"); !s) return s;
    const char* rollback = outer ? "ROLLBACK" : "ROLLBACK TO SAVEPOINT ucut_tx; RELEASE SAVEPOINT ucut_tx";
    Status result = ok_status();
    try {
      result = body();
    } catch (...) {
      (void)step(rollback);
      throw;
    }
    // A statement that failed aborts the whole transaction on PostgreSQL, and COMMIT would then
    // quietly roll back: a body that went on after an error it ignored must not report success.
    if (result && PQtransactionStatus(c_) == PQTRANS_INERROR)
      result = make_error(ErrorCode::io, where_ + ": a statement of this transaction failed",
                          "nothing of this change was written; see the error before this one");
    if (!result) {
      (void)step(rollback);
      return result;
    }
    if (auto s = step(outer ? "COMMIT" : "RELEASE SAVEPOINT ucut_tx"); !s) {
      (void)step(rollback);
      return s;
    }
    return ok_status();
  }

  // The session's role and first schema, for the hints (sql_open_postgres asks the server).
  void set_session(std::string user, std::string schema) {
    user_ = std::move(user);
    schema_ = std::move(schema);
  }

  Status lock_writers(int64_t key) override {
    auto r = query("SELECT pg_advisory_xact_lock(?)", {key});
    if (!r) return r.error();
    return ok_status();
  }

 private:
  Status check(PGresult* r, const std::string& sql) {
    const auto st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_EMPTY_QUERY) return ok_status();
    std::string msg = trimmed(r ? PQresultErrorMessage(r) : PQerrorMessage(c_));
    if (msg.empty()) msg = trimmed(PQerrorMessage(c_));
    msg = sql_redact_message(msg, conninfo_);
    const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
    const std::string sqlstate = state ? state : "";
    if (sqlstate == "42501") return permission_error(r, msg, sql);
    if (sqlstate == "57014" && timeouts_.statement_s > 0)  // query_canceled: the statement timeout, here
      return make_error(ErrorCode::io, msg + " (the tool's statement timeout is " +
                                           std::to_string(timeouts_.statement_s) + " s)",
                        "the server did not finish within the statement timeout: another ucutlass holding the "
                        "store's lock that long, or a slow or overloaded server; raise it with "
                        "UCUTLASS_PG_STATEMENT_TIMEOUT=SECONDS (0: no limit)");
    return make_error(ErrorCode::io, msg);
  }

  // SQLSTATE 42501 insufficient_privilege: which privilege on which object, and the GRANT.
  Error permission_error(PGresult* r, const std::string& msg, const std::string& sql) const {
    const char* p = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    const std::string primary = p ? p : "";
    const std::string kind_name = primary.substr(primary.find(" for ") == std::string::npos ? primary.size()
                                                                                          : primary.find(" for ") + 5);
    const std::string verb = statement_verb(sql);
    const bool ddl = verb == "CREATE" || verb == "ALTER" || verb == "DROP" || primary.rfind("must be owner", 0) == 0;
    std::string schema = schema_;
    if (kind_name.rfind("schema ", 0) == 0) schema = kind_name.substr(7);
    if (schema.empty()) schema = "public";
    if (ddl)
      return make_error(ErrorCode::io, msg + " (creating or changing the store's tables needs the schema's CREATE "
                                             "privilege or the tables' owner)",
                        "the store's owner runs this ucutlass once to create or migrate the store, then grants "
                        "the team its use: " + sql_pg_grants(user_, schema) + " (docs/memory.md, \"Grants for a team\")");
    const std::string what = kind_name.empty() ? "the object it names" : kind_name;
    const bool table = kind_name.rfind("table ", 0) == 0 || kind_name.empty();
    const std::string needed = table ? statement_privileges(sql) : kind_name.rfind("database ", 0) == 0 ? "CONNECT" : "USAGE";
    const std::string lacks = needed.find(" and ") == std::string::npos
                                  ? "the role " + sql_ident(user_) + " lacks " + needed + " on " + what
                                  : "the statement needs " + needed + " on " + what + "; the role " + sql_ident(user_) +
                                        " lacks one of them";
    return make_error(ErrorCode::io, msg + " (" + lacks + ")",
                      "ask the store's owner to grant a teammate's role what the tool uses: " +
                          sql_pg_grants(user_, schema) + " (docs/memory.md, \"Grants for a team\")");
  }

  // A transaction step, with the message the store's other transactions give (sqlite_tx.cpp).
  Status step(const char* sql) {
    if (auto s = exec(sql); !s)
      return make_error(ErrorCode::io, where_ + ": " + sql + " failed: " + s.error().message,
                        "nothing of this change was written; check the PostgreSQL server and the connection");
    return ok_status();
  }

  PGconn* c_;
  std::string where_;
  std::string conninfo_;  // as given, password included: only to mask it in messages
  PgTimeouts timeouts_;
  std::string user_, schema_;  // the session's role and first schema, for the hints
};

// libpq prints server notices (e.g. "relation already exists, skipping") to stderr by default;
// they are not errors and ucutlass's output stays its own.
void quiet_notices(void*, const char*) {}

}  // namespace

std::string sql_pg_grants(const std::string& role, const std::string& schema) {
  const std::string r = sql_ident(role.empty() ? "ROLE" : role), n = sql_ident(schema);
  return "GRANT USAGE ON SCHEMA " + n + " TO " + r + "; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " +
         n + " TO " + r + "; GRANT USAGE ON ALL SEQUENCES IN SCHEMA " + n + " TO " + r + ";";
}

namespace {

// One value of a connection's effective options (the connection string's, the environment's,
// libpq's defaults), "" when unset.
std::string conn_option(PGconn* c, const char* keyword) {
  std::string v;
  PQconninfoOption* opts = PQconninfo(c);
  for (auto* o = opts; o && o->keyword; ++o)
    if (std::string(o->keyword) == keyword && o->val) v = o->val;
  PQconninfoFree(opts);
  return v;
}

// Why a connection failed, with the fix: libpq's message (masked) read for the cases a user can act
// on. libpq gives no SQLSTATE for a refused connection, so the server's words are matched: they are
// English unless the server's lc_messages says otherwise, and then the generic message stands.
Error connect_error(PGconn* c, const std::string& where, const std::string& conninfo) {
  std::string msg = c ? trimmed(PQerrorMessage(c)) : "out of memory";
  msg = sql_redact_message(msg, conninfo);
  std::string host = c && PQhost(c) ? PQhost(c) : "";
  const std::string port = c && PQport(c) ? PQport(c) : "";
  if (host.empty() || host[0] == '/') host = host.empty() ? "the local socket" : "the socket in " + host;
  const std::string server = host + (port.empty() || host.rfind("the ", 0) == 0 ? "" : ":" + port);
  const std::string dbname = c && PQdb(c) ? PQdb(c) : "";
  if (msg.find("timeout expired") != std::string::npos) {
    const std::string secs = c ? conn_option(c, "connect_timeout") : "";
    return make_error(ErrorCode::io,
                      where + ": the PostgreSQL server at " + server + " did not answer within " +
                          (secs.empty() ? "the connect timeout" : secs + " s") + " (" + msg + ")",
                      "check the host and port (is a PostgreSQL server listening there, and reachable through "
                      "firewalls?); a slow network needs a longer wait: connect_timeout=SECONDS in the URL "
                      "(?connect_timeout=30) or PGCONNECT_TIMEOUT=30");
  }
  if (msg.find("database \"") != std::string::npos && msg.find("does not exist") != std::string::npos)
    return make_error(ErrorCode::not_found,
                      where + ": the PostgreSQL server at " + server + " has no database \"" + dbname + "\"",
                      "create it (createdb -h " + host + (port.empty() ? "" : " -p " + port) + " " +
                          (dbname.empty() ? "NAME" : dbname) +
                          ", as a role allowed to), or fix the database name in --db (or UCUTLASS_STORE)");
  if (msg.find("permission denied for database") != std::string::npos || msg.find("CONNECT privilege") != std::string::npos)
    return make_error(ErrorCode::io, where + ": the server at " + server + " refused the connection: " + msg,
                      "ask the database's owner: GRANT CONNECT ON DATABASE " + sql_ident(dbname) + " TO " +
                          sql_ident(c && PQuser(c) ? PQuser(c) : "ROLE") + "; then the store's grants "
                          "(docs/memory.md, \"Grants for a team\")");
  if (msg.find("password authentication failed") != std::string::npos ||
      msg.find("no password supplied") != std::string::npos)
    return make_error(ErrorCode::io, where + ": the server at " + server + " refused the credentials: " + msg,
                      "check the user name and the password: PGPASSWORD, or a line host:port:database:user:password "
                      "in ~/.pgpass (chmod 600); keep it out of the URL");
  return make_error(ErrorCode::io, where + ": cannot connect to the PostgreSQL store at " + server + ": " + msg,
                    "check the connection string (postgresql://user@host:port/database), that the server runs "
                    "and accepts connections from this host, and the password (PGPASSWORD or ~/.pgpass)");
}

}  // namespace

Result<std::unique_ptr<SqlConn>> sql_open_postgres(const std::string& conninfo) {
  auto timeouts = sql_pg_timeouts();
  if (!timeouts) return timeouts.error();
  return sql_open_postgres(conninfo, *timeouts);
}

Result<std::unique_ptr<SqlConn>> sql_open_postgres(const std::string& conninfo, const PgTimeouts& timeouts) {
  const std::string where = sql_redact_conninfo(conninfo);
  // Keywords in order, later ones winning: the defaults first, then the connection string
  // (expanded from "dbname"), whose own connect_timeout then wins. PGCONNECT_TIMEOUT fills
  // connect_timeout only where nothing is given, so it is given here only without it.
  const std::string connect_s = std::to_string(timeouts.connect_s);
  std::vector<const char*> keys = {"fallback_application_name"}, values = {"ucutlass"};
  if (const char* env = std::getenv("PGCONNECT_TIMEOUT"); !env || !*env) {
    keys.push_back("connect_timeout");
    values.push_back(connect_s.c_str());
  }
  keys.push_back("dbname");
  values.push_back(conninfo.c_str());
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* c = PQconnectdbParams(keys.data(), values.data(), 1);
  if (!c || PQstatus(c) != CONNECTION_OK) {
    Error e = connect_error(c, where, conninfo);
    PQfinish(c);
    return e;
  }
  PQsetNoticeProcessor(c, quiet_notices, nullptr);
  std::unique_ptr<PgConn> conn(new PgConn(c, where, conninfo, timeouts));
  // The statement timeout, unless the connection string's options set one (theirs then stands).
  if (timeouts.statement_s > 0 && conn_option(c, "options").find("statement_timeout") == std::string::npos)
    if (auto s = conn->exec("SET statement_timeout = " + std::to_string(timeouts.statement_s * 1000)); !s)
      return make_error(ErrorCode::io, where + ": setting the statement timeout: " + s.error().message, s.error().hint);
  auto who = conn->query("SELECT current_user, current_schema()", {});
  if (!who || who->empty())
    return make_error(ErrorCode::io, where + ": the server does not answer queries: " +
                                         (who ? std::string("no row") : who.error().message),
                      "check the PostgreSQL server");
  conn->set_session(who->front().text(0), who->front().text(1));
  return std::unique_ptr<SqlConn>(std::move(conn));
}

}  // namespace ucut::memory

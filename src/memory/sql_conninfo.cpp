// PostgreSQL connection strings (sql.h): which `--db` values are one, and how one is shown without
// its passwords. libpq takes two forms, and a password can sit in three places:
//   - a URL, "postgresql://[user[:password]@][host][:port][,...][/dbname][?param=value&...]": the
//     user info, and the `password` / `sslpassword` parameters (whose names libpq percent-decodes);
//   - key=value pairs, "host=db password='a b' dbname=ucut": the `password` and `sslpassword`
//     values, single-quoted or not, with backslash escapes.
// One scanner finds them all (redact below); the passwords it finds are also looked for in
// messages, since libpq quotes what it could not parse ("missing \"=\" after \"...\"").
#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "memory/sql.h"

namespace ucut::memory {
namespace {

constexpr const char* kMask = "***";

bool is_url(const std::string& s) { return s.rfind("postgresql://", 0) == 0 || s.rfind("postgres://", 0) == 0; }

bool is_secret_keyword(const std::string& k) { return k == "password" || k == "sslpassword"; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX decoded; a '%' not followed by two hex digits is kept (libpq refuses such a URL anyway).
std::string percent_decode(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

void keep_secret(std::vector<std::string>* secrets, const std::string& raw, const std::string& decoded) {
  if (!secrets) return;
  for (const auto& s : {raw, decoded})
    if (!s.empty() && std::find(secrets->begin(), secrets->end(), s) == secrets->end()) secrets->push_back(s);
}

std::string redact(const std::string& s, std::vector<std::string>* secrets);

// The URL form. Where the user info ends is read two ways and the later '@' wins: libpq's (the
// first '@' before any '/'), and the last '@' before the first '?' (a password holding a raw '/'
// or '@', which libpq would misread as host text and quote in its error). Over-masking a database
// name holding ':' and '@' is the price; a password shown is never.
std::string redact_url(const std::string& s, std::vector<std::string>* secrets) {
  const size_t start = s.find("://") + 3;
  size_t at = std::string::npos;
  for (size_t i = start; i < s.size() && s[i] != '/'; ++i)
    if (s[i] == '@') {
      at = i;
      break;
    }
  const size_t query = s.find('?', start);
  const size_t last_at = s.rfind('@', query == std::string::npos ? std::string::npos : query);
  if (last_at != std::string::npos && last_at >= start && (at == std::string::npos || last_at > at)) at = last_at;
  std::string out = s.substr(0, start);
  size_t rest = start;
  if (at != std::string::npos) {
    const size_t colon = s.find(':', start);
    if (colon != std::string::npos && colon < at) {
      const std::string pw = s.substr(colon + 1, at - colon - 1);
      keep_secret(secrets, pw, percent_decode(pw));
      out += s.substr(start, colon + 1 - start) + kMask;
    } else {
      out += s.substr(start, at - start);
    }
    rest = at;
  }
  // The parameters: after the first '?' that follows the user info.
  const size_t q = s.find('?', rest);
  if (q == std::string::npos) return out + s.substr(rest);
  out += s.substr(rest, q + 1 - rest);
  size_t i = q + 1;
  while (i <= s.size()) {
    size_t amp = s.find('&', i);
    if (amp == std::string::npos) amp = s.size();
    const std::string param = s.substr(i, amp - i);
    const size_t eq = param.find('=');
    const std::string key = percent_decode(param.substr(0, eq));
    if (eq != std::string::npos && is_secret_keyword(key)) {
      const std::string value = param.substr(eq + 1);
      keep_secret(secrets, value, percent_decode(value));
      out += param.substr(0, eq + 1) + kMask;
    } else if (eq != std::string::npos && key == "dbname") {
      out += param.substr(0, eq + 1) + redact(percent_decode(param.substr(eq + 1)), secrets);
    } else {
      out += param;
    }
    if (amp < s.size()) out += '&';
    i = amp + 1;
  }
  return out;
}

// The key=value form, scanned as libpq's conninfo_parse does: `keyword = value` pairs separated by
// white space, a value single-quoted or bare, a backslash escaping the next character in either.
// Text that is not a pair is kept and the scan goes on, so a malformed string is masked too.
std::string redact_pairs(const std::string& s, std::vector<std::string>* secrets) {
  std::string out;
  size_t i = 0;
  const size_t n = s.size();
  auto space = [&](size_t j) { return j < n && std::isspace(static_cast<unsigned char>(s[j])); };
  while (i < n) {
    const size_t ws = i;
    while (space(i)) ++i;
    out += s.substr(ws, i - ws);
    if (i >= n) break;
    const size_t kstart = i;
    while (i < n && !space(i) && s[i] != '=') ++i;
    const std::string keyword = s.substr(kstart, i - kstart);
    size_t j = i;
    while (space(j)) ++j;
    if (j >= n || s[j] != '=') {  // not a pair: keep the word, go on
      out += s.substr(kstart, i - kstart);
      continue;
    }
    ++j;
    while (space(j)) ++j;
    // The value: [vstart, vend) as written, `value` unescaped.
    const size_t vstart = j;
    std::string value;
    if (j < n && s[j] == '\'') {
      ++j;
      while (j < n && s[j] != '\'') {
        if (s[j] == '\\' && j + 1 < n) ++j;
        value += s[j++];
      }
      if (j < n) ++j;  // the closing quote; an unterminated one runs to the end
    } else {
      while (j < n && !space(j)) {
        if (s[j] == '\\' && j + 1 < n) ++j;
        value += s[j++];
      }
    }
    out += s.substr(kstart, vstart - kstart);
    if (is_secret_keyword(keyword)) {
      keep_secret(secrets, s.substr(vstart, j - vstart), value);
      out += kMask;
    } else if (keyword == "dbname" && (is_url(value) || value.find('=') != std::string::npos)) {
      // libpq may expand a dbname that is itself a connection string.
      std::vector<std::string> inner;
      const std::string shown = redact(value, &inner);
      if (inner.empty()) {
        out += s.substr(vstart, j - vstart);
      } else {
        for (const auto& x : inner) keep_secret(secrets, x, x);
        out += "'" + shown + "'";
      }
    } else {
      out += s.substr(vstart, j - vstart);
    }
    i = j;
  }
  return out;
}

std::string redact(const std::string& s, std::vector<std::string>* secrets) {
  if (is_url(s)) return redact_url(s, secrets);
  if (s.find('=') != std::string::npos) return redact_pairs(s, secrets);
  return s;
}

bool parses_as_pairs(const std::string& s) {
  if (s.find('=') == std::string::npos) return false;
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(s.c_str(), &err);
  PQfreemem(err);
  if (!opts) return false;
  PQconninfoFree(opts);
  return true;
}

}  // namespace

bool sql_is_postgres(const std::string& path) { return is_url(path) || parses_as_pairs(path); }

std::string sql_redact_conninfo(const std::string& conninfo) { return redact(conninfo, nullptr); }

std::string sql_redact_message(const std::string& message, const std::string& conninfo) {
  std::vector<std::string> secrets;
  (void)redact(conninfo, &secrets);
  // Longest first: a password that contains another (its decoded form) is masked whole.
  std::sort(secrets.begin(), secrets.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  std::string out = message;
  for (const auto& secret : secrets)
    for (size_t at = out.find(secret); at != std::string::npos; at = out.find(secret, at + 3))
      out.replace(at, secret.size(), kMask);
  return out;
}

Result<PgTimeouts> sql_pg_timeouts() {
  PgTimeouts t;
  if (const char* v = std::getenv("UCUTLASS_PG_STATEMENT_TIMEOUT"); v && *v) {
    char* end = nullptr;
    const long s = std::strtol(v, &end, 10);
    if (*end || s < 0 || s > 86400)
      return make_error(ErrorCode::invalid_input,
                        std::string("UCUTLASS_PG_STATEMENT_TIMEOUT: '") + v + "' is not a number of seconds (0 to 86400)",
                        "set it to the seconds one query of the PostgreSQL store may take (0: no limit), or unset "
                        "it for the default of 60");
    t.statement_s = static_cast<int>(s);
  }
  return t;
}

}  // namespace ucut::memory

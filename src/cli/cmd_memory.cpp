// `ucutlass memory stats|list|show ID|export FILE|import FILE`: look at, move and merge the
// optimization memory (experiences and priors, docs/memory.md) in the result store. Only import
// writes (one transaction, after checking the whole file); the others never create a store.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "memory/experience_store.h"
#include "memory/export_check.h"
#include "memory/store.h"
#include "support/fs.h"

namespace ucut {

namespace {
struct MemoryArgs {
  std::string action;
  std::string arg;
  std::string db;
  int limit = 20;
  std::string cls;
};

int fail(const Error& e) { return cli_fail("memory", e); }

// The memory export in `path`, parsed; a syntax error names its line and column.
Result<nlohmann::json> read_export(const std::string& path) {
  auto text = fs_read(path);
  if (!text) return text.error();
  try {
    return nlohmann::json::parse(*text);
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    if (auto at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);  // drop "[json.exception...]"
    return make_error(ErrorCode::invalid_input, path + ": not valid JSON: " + what,
                      "create the file with 'ucutlass memory export FILE'; nothing was imported");
  }
}

int run_memory(const MemoryArgs& a) {
  if ((a.action == "show" || a.action == "export" || a.action == "import") && a.arg.empty())
    return cli_usage("memory", "memory " + a.action + " needs " + (a.action == "show" ? "an ID" : "a FILE"),
                     a.action == "show" ? "ucutlass memory show e12" : "ucutlass memory " + a.action + " memory.json");
  // An import is checked whole before the store is even opened: a bad file changes nothing.
  nlohmann::json doc;
  if (a.action == "import") {
    auto d = read_export(a.arg);
    if (!d) return fail(d.error());
    if (auto st = memory::memory_check_export(*d, a.arg); !st) return fail(st.error());
    doc = std::move(*d);
  }
  const std::string path = a.db.empty() ? memory::store_default_path() : a.db;
  // Only import writes; the other actions read and never create a store.
  auto db = memory::MemoryDb::open(path, {}, a.action == "import" ? memory::StoreAccess::create
                                                                 : memory::StoreAccess::existing);
  if (!db) return fail(db.error());
  auto& m = **db;
  if (a.action == "stats") {
    auto s = m.stats();
    if (!s) return fail(s.error());
    std::printf("store: %s\nexperiences: %d\npriors: %d\nproblem classes: %d\nbest gain: %.2fx\n"
                "merged duplicates: %lld\nevicted (by usefulness): %lld experiences, %lld priors\n",
                s->path.c_str(), s->experiences, s->priors, s->classes, s->best_gain,
                static_cast<long long>(s->merged), static_cast<long long>(s->evicted_experiences),
                static_cast<long long>(s->evicted_priors));
    return 0;
  }
  if (a.action == "list") {
    memory::MemoryQuery q;
    q.cls = a.cls;
    q.limit = a.limit;
    auto p = m.priors(q);
    if (!p) return fail(p.error());
    auto e = m.experiences(q);
    if (!e) return fail(e.error());
    std::printf("priors (%zu):\n", p->size());
    for (const auto& x : *p)
      std::printf("  p%lld  %-24s %-14s %-6s %-5s %5.2fx  wins %d  helps %d/%d  %s\n",
                  static_cast<long long>(x.id), x.key.cls.c_str(), x.key.bucket.c_str(),
                  x.key.gpu.c_str(), x.key.policy.c_str(), x.speedup, x.wins, x.helps, x.uses,
                  x.config_name.c_str());
    std::printf("experiences (%zu):\n", e->size());
    for (const auto& x : *e)
      std::printf("  e%lld  %5.2fx  %s\n", static_cast<long long>(x.id), x.gain, x.lesson.c_str());
    return 0;
  }
  if (a.action == "show") {
    std::string id = a.arg;
    bool prior = !id.empty() && id[0] == 'p';
    if (!id.empty() && (id[0] == 'p' || id[0] == 'e')) id = id.substr(1);
    char* end = nullptr;
    long long n = std::strtoll(id.c_str(), &end, 10);
    if (id.empty() || *end)
      return cli_usage("memory", "memory show: '" + a.arg + "' is not a record id",
                       "use an id from 'ucutlass memory list', e.g. e12 or p3");
    nlohmann::json j;
    if (prior) {
      auto r = m.prior(n);
      if (!r) return fail(r.error());
      if (!*r) return fail(make_error(ErrorCode::not_found, "memory show: no prior p" + id,
                                      "'ucutlass memory list' shows the ids"));
      j = memory::prior_to_json(**r);
    } else {
      auto r = m.experience(n);
      if (!r) return fail(r.error());
      if (!*r) return fail(make_error(ErrorCode::not_found, "memory show: no experience e" + id,
                                      "'ucutlass memory list' shows the ids"));
      j = memory::experience_to_json(**r);
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  if (a.action == "export") {
    auto doc = m.export_json();
    if (!doc) return fail(doc.error());
    if (auto s = fs_write_atomic(a.arg, doc->dump(2) + "\n"); !s) return fail(s.error());
    std::printf("exported %zu experiences and %zu priors to %s\n", (*doc)["experiences"].size(),
                (*doc)["priors"].size(), a.arg.c_str());
    return 0;
  }
  if (a.action == "import") {
    auto n = m.import_json(doc, a.arg);
    if (!n) return fail(n.error());
    std::printf("imported %d experiences and %d priors from %s (duplicates merged)\n", n->experiences,
                n->priors, a.arg.c_str());
    return 0;
  }
  return cli_usage("memory", "unknown action '" + a.action + "'", "use one of stats, list, show ID, export FILE, import FILE");
}
}  // namespace

CommandRun cmd_memory(CLI::App& sub) {
  auto a = std::make_shared<MemoryArgs>();
  sub.add_option("action", a->action, "stats | list | show ID | export FILE | import FILE")
      ->required()
      ->check(CLI::IsMember({"stats", "list", "show", "export", "import"}));
  sub.add_option("arg", a->arg, "record id (show) or file (export/import)");
  cli_add_db_option(sub, a->db, "result store holding the memory (stats, list, show and export never create one)");
  sub.add_option("--limit", a->limit, "records to list")->capture_default_str();
  sub.add_option("--class", a->cls, "list only this problem class");
  return [a] { return run_memory(*a); };
}

}  // namespace ucut

// `ucutlass check prog.ucut`: runs the front end (dsl_compile) and prints the diagnostics, or
// "ok: <name> (<n> stages), hash <12 hex>". `--json` prints one JSON object instead (for tools
// and the agent). `--functions` prints the epilogue function table of docs/language.md.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "dsl/dsl.h"
#include "support/fs.h"

namespace ucut {

CommandRun cmd_check(CLI::App& sub) {
  struct Opts {
    std::string path;
    bool json = false;
    bool functions = false;
  };
  auto o = std::make_shared<Opts>();
  sub.add_option("program", o->path, "the .ucut program to check");
  sub.add_flag("--json", o->json, "print the result as JSON");
  sub.add_flag("--functions", o->functions, "print the epilogue function table (Markdown) and exit");
  return [o] {
    if (o->functions) {
      std::fputs(dsl::dsl_function_table_markdown().c_str(), stdout);
      return 0;
    }
    if (o->path.empty()) return cli_usage("check", "no program given", "ucutlass check prog.ucut");
    auto text = fs_read(o->path);
    if (!text) return cli_fail("check", text.error());
    SourceFile src{o->path, *text};
    dsl::CheckResult r = dsl::dsl_compile(src);
    if (o->json) {
      nlohmann::json j;
      j["ok"] = r.program.has_value();
      j["diagnostics"] = nlohmann::json::array();
      for (const auto& d : r.diagnostics)
        j["diagnostics"].push_back({{"line", d.span.begin.line}, {"col", d.span.begin.col}, {"length", d.span.length},
                                    {"severity", d.severity == Severity::error ? "error" : "warning"},
                                    {"message", d.message}, {"hint", d.hint}, {"text", diag_render(src, d)}});
      if (r.program) {
        j["name"] = r.program->name;
        j["stages"] = r.program->stages.size();
        j["hash"] = dsl::dsl_hash(*r.program);
      }
      // Diagnostics quote the source, which may hold bytes that are not UTF-8: replace them.
      std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      return r.program ? kExitOk : kExitFailed;
    }
    std::fputs(diag_render_all(src, r.diagnostics).c_str(), stderr);
    if (!r.program) return kExitFailed;
    const auto& p = *r.program;
    std::printf("ok: %s (%zu stage%s), hash %s\n", p.name.c_str(), p.stages.size(), p.stages.size() == 1 ? "" : "s",
                dsl::dsl_hash(p).substr(0, 12).c_str());
    return 0;
  };
}

}  // namespace ucut

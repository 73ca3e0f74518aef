// `ucutlass fmt prog.ucut [--write]`: prints the checked program in canonical form (dsl_print),
// or rewrites the file in place. A program that does not check is not formatted (exit 1).
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "dsl/dsl.h"
#include "support/fs.h"

namespace ucut {

CommandRun cmd_fmt(CLI::App& sub) {
  struct Opts {
    std::string path;
    bool write = false;
  };
  auto o = std::make_shared<Opts>();
  sub.add_option("program", o->path, "the .ucut program to format")->required();
  sub.add_flag("-w,--write", o->write, "rewrite the file instead of printing");
  return [o] {
    auto text = fs_read(o->path);
    if (!text) return cli_fail("fmt", text.error());
    SourceFile src{o->path, *text};
    dsl::CheckResult r = dsl::dsl_compile(src);
    std::fputs(diag_render_all(src, r.diagnostics).c_str(), stderr);
    if (!r.program) return kExitFailed;
    std::string out = dsl::dsl_print(*r.program);
    if (!o->write) {
      std::fputs(out.c_str(), stdout);
      return 0;
    }
    if (out == *text) return 0;
    if (auto st = fs_write_atomic(o->path, out); !st) return cli_fail("fmt", st.error());
    return kExitOk;
  };
}

}  // namespace ucut

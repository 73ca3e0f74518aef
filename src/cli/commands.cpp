#include "cli/commands.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "build/cache_gc.h"
#include "memory/store.h"
#include "support/diagnostics.h"
#include "support/fs.h"

namespace ucut {

// The one table of commands. Keep it sorted by the order a user meets them.
const std::vector<CommandSpec>& cli_commands() {
  static const std::vector<CommandSpec> table = {
      {"version", "print the tool, CUTLASS and ABI versions", cmd_version},
      {"extract", "extract the Problem IR (problem.json) of a PyTorch problem file", cmd_extract},
      {"check", "check a μCUTLASS program: diagnostics, or its name, stage count and hash", cmd_check},
      {"fmt", "print a μCUTLASS program in canonical form (--write rewrites the file)", cmd_fmt},
      {"compile", "generate the CUTLASS kernel library (.cu) of a program and build its .so with nvcc", cmd_compile},
      {"sol", "speed-of-light report of a problem: FLOPs, bytes, bound per policy, bottleneck", cmd_sol},
      {"lower", "write the μCUTLASS program (auto knobs) a problem.json lowers to", cmd_lower},
      {"space", "rank the valid configurations of each stage of a program (no GPU needed)", cmd_space},
      {"calibrate", "measure this GPU's copy bandwidth and GEMM ceilings for 'sol' (needs a GPU)", cmd_calibrate},
      {"eval", "check and time kernel candidates for a problem under the evaluation contract (needs a GPU)", cmd_eval},
      {"baseline", "time PyTorch eager and torch.compile on a problem (needs a GPU; cached)", cmd_baseline},
      {"export", "write a KernelBench solution (ModelNew) that runs a compiled kernel library", cmd_export},
      {"optimize", "search for a faster correct kernel for a problem", cmd_optimize},
      {"bench", "optimize a suite and print the headline figures", cmd_bench},
      {"memory", "inspect, export and import the optimization memory", cmd_memory},
      {"cache", "show or clean the kernel cache (libraries, objects, candidate folders)", cmd_cache},
  };
  return table;
}

CLI::Option* cli_add_profile_option(CLI::App& sub, std::string& profile) {
  return sub.add_option("--profile", profile, "contract profile: default (1e-4 fp32, 1e-2 f16/bf16) or kb-v01 (1e-2)")
      ->check(CLI::IsMember({"default", "kb-v01"}))
      ->capture_default_str();
}

CLI::Option* cli_add_db_option(CLI::App& sub, std::string& db) {
  // No environment mirror: UCUTLASS_STORE moves the default store (store_default_path), which a
  // simulated run must not write to.
  return sub.add_option("--db", db, "memory store (default: $UCUTLASS_STORE or the data folder; a synthetic run: "
                                    "OUT/simulated-memory.db)");
}

std::string cli_memory_path(const std::string& db, bool simulated, const std::string& out) {
  if (!db.empty()) return db;
  return simulated ? out + "/simulated-memory.db" : memory::store_default_path();
}

void cli_apply_cache_cap() {
  const std::string note = build::cache_enforce_cap(fs_cache_dir());
  if (!note.empty()) std::fprintf(stderr, "%s\n", note.c_str());
}

int cli_main(int argc, char** argv) {
  CLI::App app{"ucutlass: writes, checks and tunes CUTLASS kernels for PyTorch programs"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "help for every command");
  std::vector<std::pair<CLI::App*, CommandRun>> runners;
  std::vector<std::string> names;
  for (const auto& spec : cli_commands()) {
    CLI::App* sub = app.add_subcommand(spec.name, spec.summary);
    runners.emplace_back(sub, spec.setup(*sub));
    names.emplace_back(spec.name);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (argc > 1 && argv[1][0] != '-') {
      bool known = false;
      for (const auto& n : names) known = known || n == argv[1];
      if (!known) {
        std::string guess = diag_closest(argv[1], names);
        std::fprintf(stderr, "ucutlass: unknown command '%s'%s\n", argv[1],
                     guess.empty() ? "" : ("; did you mean '" + guess + "'?").c_str());
        std::fprintf(stderr, "hint: 'ucutlass --help' lists the commands\n");
        return 2;
      }
    }
    return app.exit(e) == 0 ? 0 : 2;
  }
  for (auto& [sub, run] : runners) {
    if (!sub->parsed()) continue;
    const int rc = run();
    // The searches build many kernels: keep the cache under its cap (`compile` does it itself).
    if (sub->get_name() == "optimize" || sub->get_name() == "bench") cli_apply_cache_cap();
    return rc;
  }
  return 2;
}

}  // namespace ucut

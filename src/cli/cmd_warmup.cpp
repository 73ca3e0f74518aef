// `ucutlass warmup`: builds the kernel zoo into the kernel store (app/warmup.h), pinned, on every
// core, or as Ray tasks on a cluster's build nodes (`--executor ray`, docs/scale-out.md); the
// objects come back into this machine's store; resumable (units already stored are skipped); `--dry-run` counts the units and the
// compile time they need; `--export FILE` packs the store's pinned units into one archive a team
// or a CI job publishes, `--import FILE` installs one (pinned). docs/kernel-abi.md, "The kernel
// zoo".
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "app/adapters_build.h"
#include "app/suite_report.h"
#include "app/warmup.h"
#include "build/cache_gc.h"
#include "build/program_build.h"
#include "cli/commands.h"
#include "codegen/gemm_common.h"
#include "codegen/simt_common.h"
#include "sol/hardware.h"
#include "support/fs.h"
#include "support/paths.h"
#include "support/subprocess.h"

namespace ucut {

namespace {

namespace sfs = std::filesystem;

// Measured: one sm90 GEMM unit is ~40-45 s of one core (docs/benchmarks.md); the dry run's estimate.
constexpr double kUnitCoreSeconds = 45;
// An sm80-API GEMM unit (CUTLASS 2.x, no epilogue): ~10 s (the kb zoo's 24 new units, 247 core-s).
constexpr double kSm80UnitCoreSeconds = 11;

struct WarmupArgs {
  std::string tier = "v1";
  int top = 0;
  // The GPUs whose rankings pick the configurations (comma-separated): the zoo is the union, so it
  // serves whichever of them the search runs on (their rankings differ: docs/benchmarks.md, run CM).
  std::string gpu = "h100,h200";
  int jobs = 0;
  bool dry_run = false;
  bool list = false;
  std::string export_path, import_path;
  std::string suite, match, profile = "default", policy = "tf32";
  int top_k = 3;
  std::string cutlass_dir = paths_cutlass_dir();
  ExecutorArgs exec;  // --executor and --ray-address (no evaluation here: --eval-executor is not offered)
};

std::string store_dir() { return fs_cache_dir() + "/kernels/stage"; }

std::string toolchain(build::Compiler& nvcc) {
  return nvcc.version() + ", CUTLASS " + build::BuildOptions{}.cutlass_version + ", " + codegen::kSm90UnitEmitter;
}

int run_export(const WarmupArgs& a) {
  auto nvcc = build::build_nvcc_compiler();
  std::vector<std::string> keys;
  std::error_code ec;
  for (sfs::directory_iterator it(store_dir(), ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".pin" && sfs::exists(sfs::path(it->path()).replace_extension(".o")))
      keys.push_back(it->path().stem().string());
  if (keys.empty())
    return cli_fail("warmup", make_error(ErrorCode::not_found, "the kernel store " + store_dir() + " holds no pinned units",
                                         "run 'ucutlass warmup' (or --import an archive) first"),
                    kExitUsage);
  std::sort(keys.begin(), keys.end());
  const std::string tmp = fs_cache_dir() + "/zoo-export." + std::to_string(::getpid());
  sfs::remove_all(tmp, ec);
  nlohmann::ordered_json manifest = {{"ucutlass_zoo", 1}, {"toolchain", toolchain(*nvcc)}, {"units", keys}};
  std::string list;
  for (const auto& k : keys) list += "stage/" + k + ".o\n";
  if (auto st = fs_write_atomic(tmp + "/manifest.json", manifest.dump(1) + "\n"); !st) return cli_fail("warmup", st.error());
  if (auto st = fs_write_atomic(tmp + "/files", list); !st) return cli_fail("warmup", st.error());
  const std::string out = sfs::absolute(a.export_path).string();
  ProcessSpec ps;
  ps.argv = {"tar", "-cJf", out, "-C", tmp, "manifest.json", "-C", fs_cache_dir() + "/kernels", "-T", tmp + "/files"};
  auto r = subprocess_run(ps);
  sfs::remove_all(tmp, ec);
  if (!r || !r->success())
    return cli_fail("warmup", make_error(ErrorCode::io, "cannot write " + out + ": " + (r ? r->err : r.error().render()),
                                         "check the folder exists and is writable"),
                    kExitEnvironment);
  std::printf("exported %zu pinned stored units (%s) to %s\n", keys.size(), toolchain(*nvcc).c_str(), out.c_str());
  return 0;
}

int run_import(const WarmupArgs& a) {
  if (!fs_exists(a.import_path))
    return cli_fail("warmup", make_error(ErrorCode::not_found, a.import_path + ": no such archive"), kExitUsage);
  auto nvcc = build::build_nvcc_compiler();
  const std::string tmp = fs_cache_dir() + "/zoo-import." + std::to_string(::getpid());
  std::error_code ec;
  sfs::remove_all(tmp, ec);
  if (auto st = fs_mkdirs(tmp); !st) return cli_fail("warmup", st.error(), kExitEnvironment);
  ProcessSpec ps;
  ps.argv = {"tar", "-xJf", a.import_path, "-C", tmp};
  auto r = subprocess_run(ps);
  auto fail = [&](const std::string& why, const std::string& hint, int code) {
    sfs::remove_all(tmp, ec);
    return cli_fail("warmup", make_error(ErrorCode::invalid_input, a.import_path + ": " + why, hint), code);
  };
  if (!r || !r->success())
    return fail("not a readable .tar.xz archive: " + (r ? r->err : r.error().render()), "give a file 'ucutlass warmup --export' wrote",
                kExitFailed);
  auto text = fs_read(tmp + "/manifest.json");
  nlohmann::json m = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
  if (!m.is_object() || m.value("ucutlass_zoo", 0) != 1 || !m.contains("units") || !m["units"].is_array())
    return fail("not a ucutlass kernel zoo (no manifest.json naming its units)", "give a file 'ucutlass warmup --export' wrote",
                kExitFailed);
  const std::string theirs = m.value("toolchain", std::string("?")), ours = toolchain(*nvcc);
  if (theirs != ours)
    return fail("built with " + theirs + "; this machine has " + ours + ", so the search would never use its units",
                "build a zoo here with 'ucutlass warmup', or import one built with the same nvcc", kExitFailed);
  if (auto st = fs_mkdirs(store_dir()); !st) return fail(st.error().render(), "", kExitEnvironment);
  int installed = 0, present = 0;
  for (const auto& k : m["units"]) {
    const std::string key = k.is_string() ? k.get<std::string>() : "";
    const std::string from = tmp + "/stage/" + key + ".o", to = store_dir() + "/" + key + ".o";
    if (key.empty() || !fs_exists(from)) return fail("unit " + key + " is named but missing", "export the zoo again", kExitFailed);
    if (fs_exists(to)) ++present;
    else {
      sfs::rename(from, to, ec);
      if (ec) sfs::copy_file(from, to, sfs::copy_options::overwrite_existing, ec);
      if (ec) return fail("cannot install " + to + ": " + ec.message(), "", kExitEnvironment);
      ++installed;
    }
    if (auto st = build::cache_pin(to); !st) return fail(st.error().render(), "", kExitEnvironment);
  }
  sfs::remove_all(tmp, ec);
  std::printf("imported %d stored units (%d were already there), pinned, into %s\n", installed, present,
              store_dir().c_str());
  return 0;
}

int run_warmup(const WarmupArgs& a) {
  if (!a.export_path.empty() && !a.import_path.empty())
    return cli_usage("warmup", "--export and --import are two commands", "run one, then the other");
  if (!a.export_path.empty()) return run_export(a);
  if (!a.import_path.empty()) return run_import(a);
  if (int rc = cli_check_executor("warmup", a.exec); rc != kExitOk) return rc;
  std::vector<sol::HwSpec> hws;
  for (std::string name : cli_split_commas(a.gpu)) {  // "h100, h200": each name trimmed
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (name.empty()) continue;
    auto hw = sol::hw_lookup(name);
    if (!hw) return cli_fail("warmup", hw.error(), kExitUsage);
    hws.push_back(*hw);
  }
  if (hws.empty()) return cli_usage("warmup", "--gpu names no GPU", "give one or more, comma-separated: --gpu h100,h200");
  std::string gpus;
  for (const auto& hw : hws) gpus += (gpus.empty() ? "" : ", ") + hw.name;
  // The units each GPU's ranking picks (units_for), one list: their union, or the first error.
  auto union_over_gpus = [&](const auto& units_for) -> Result<std::vector<app::ZooUnit>> {
    std::vector<std::vector<app::ZooUnit>> per_gpu;
    for (const auto& hw : hws) {
      Result<std::vector<app::ZooUnit>> found = units_for(hw);
      if (!found) return found.error();
      per_gpu.push_back(std::move(*found));
    }
    return app::warmup_union(std::move(per_gpu));
  };
  Result<std::vector<app::ZooUnit>> units = std::vector<app::ZooUnit>{};
  std::string what;
  if (!a.suite.empty()) {
    if (!fs_exists(a.suite))
      return cli_fail("warmup", make_error(ErrorCode::not_found, a.suite + ": no such suite folder or problem file"),
                      kExitUsage);
    app::SuiteZooOptions so;
    so.files = cli_suite_files(a.suite, a.match);
    if (so.files.empty())
      return cli_fail("warmup", make_error(ErrorCode::not_found, "no problem .py files found in " + a.suite +
                                                                     (a.match.empty() ? "" : " matching '" + a.match + "'")),
                      kExitUsage);
    so.policy = cli_policy(a.policy);
    so.profile = a.profile;
    so.top = a.top_k;
    so.out_dir = fs_cache_dir() + "/zoo-suite";
    units = union_over_gpus([&](const sol::HwSpec& hw) {
      so.gpu = hw.name;
      std::fprintf(stderr, "warmup: ranking the opening of %zu problems for the %s (%s, profile %s, top %d)\n",
                   so.files.size(), hw.name.c_str(), a.policy.c_str(), a.profile.c_str(), a.top_k);
      return app::warmup_suite_units(so, [](const std::string& problem, int n, const std::string& error) {
        if (error.empty()) std::fprintf(stderr, "  %s: %d stored unit%s\n", problem.c_str(), n, n == 1 ? "" : "s");
        else std::fprintf(stderr, "  %s: left out: %s\n", problem.c_str(), app::suite_error_line(error, 160).c_str());
      });
    });
    what = "suite " + a.suite + (a.match.empty() ? "" : " (" + a.match + ")") + ", top " + std::to_string(a.top_k) +
           ", ranked for " + gpus;
  } else {
    app::ZooOptions zo;
    zo.tier = a.tier;
    zo.top = a.top;
    units = union_over_gpus([&](const sol::HwSpec& hw) { return app::warmup_zoo_units(zo, hw); });
    what = fmt::format("zoo {}: {} forms x {} shapes, ranked for {}", a.tier, app::warmup_zoo_forms().size(),
                       app::warmup_zoo_shapes().size(), gpus);
  }
  if (!units) return cli_fail("warmup", units.error(), units.error().code == ErrorCode::invalid_input ? kExitUsage : -1);
  const int jobs = a.jobs > 0 ? a.jobs : build::build_default_jobs();
  if (a.list)
    for (const auto& u : *units) std::printf("%s  %-28s %s\n", u.unit.name.c_str(), u.form.c_str(), u.config.c_str());
  std::shared_ptr<build::Compiler> nvcc;
  int missing = 0;
  double core_s = 0;
  if (app::nvcc_available()) nvcc = build::build_nvcc_compiler();
  for (const auto& u : *units) {
    if (nvcc && fs_exists(build::build_store_object_path(*nvcc, u.unit, {}))) continue;
    ++missing;
    core_s += u.unit.source.find(codegen::kSm80UnitEmitter) != std::string::npos ? kSm80UnitCoreSeconds : kUnitCoreSeconds;
  }
  std::printf("%s: %zu stored units, %d not in the store: ~%.1f core-hours of nvcc (~%.0f min on %d job%s)\n",
              what.c_str(), units->size(), missing, core_s / 3600, core_s / 60 / jobs, jobs, jobs == 1 ? "" : "s");
  // --list and --dry-run only look: neither builds (a --list that went on to compile the whole
  // zoo, 6.5 core-hours, was found by hand).
  if (a.dry_run || a.list) return 0;
  if (!nvcc)
    return cli_fail("warmup", make_error(ErrorCode::not_found, "nvcc not found: the zoo cannot be built here",
                                         "install the CUDA 13 toolkit or set UCUTLASS_NVCC"),
                    kExitEnvironment);
  if (!build::cutlass_present(a.cutlass_dir))
    return cli_fail("warmup", build::cutlass_missing_error(a.cutlass_dir), kExitEnvironment);
  // The objects compile here or as Ray tasks; either way they are written into this machine's store.
  std::shared_ptr<build::Compiler> compiler = nvcc;
  if (a.exec.executor == "ray") {
    auto c = cli_executor_compiler(a.exec);
    if (!c) return cli_fail("warmup", c.error(), kExitEnvironment);
    compiler = *c;
  }
  std::vector<build::BuildUnit> todo;
  for (const auto& u : *units) todo.push_back(u.unit);
  build::BuildOptions bo;
  bo.jobs = jobs;
  const bool tty = ::isatty(STDERR_FILENO);
  const auto t0 = std::chrono::steady_clock::now();
  size_t done = 0;
  auto summary = build::build_store_units(
      *compiler, todo,
      // the runtime headers too: f32x3w's GEMM units include its main loop from there
      {a.cutlass_dir + "/include", a.cutlass_dir + "/tools/util/include", codegen::simt_runtime_include_dir()},
      fs_cache_dir() + "/zoo-sources", bo, true, [&](const build::StoreUnitEvent& e) {
        ++done;
        const auto& u = (*units)[e.index];
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const std::string what = !e.ok ? "FAILED" : e.present ? "stored" : fmt::format("built {:.0f} s", e.seconds);
        if (!e.ok) std::fprintf(stderr, "%s%s (%s): %s\n", tty ? "\n" : "", u.unit.name.c_str(), u.form.c_str(), e.message.c_str());
        if (tty) {
          const int width = 30, filled = static_cast<int>(width * done / todo.size());
          std::fprintf(stderr, "\r[%s%s] %zu/%zu units, %.0f s%s", std::string(filled, '#').c_str(),
                       std::string(width - filled, ' ').c_str(), done, todo.size(), wall, done == todo.size() ? "\n" : "");
        } else {
          std::fprintf(stderr, "[%zu/%zu] %s %s  %s  %s\n", done, todo.size(), what.c_str(), u.unit.name.c_str(),
                       u.form.c_str(), u.config.c_str());
        }
        std::fflush(stderr);
      });
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("warmup: %d built (%.0f core-s), %d already stored, %d failed, %.0f s wall; every zoo unit is pinned in %s\n",
              summary.built, summary.compile_seconds, summary.present, summary.failed, wall, store_dir().c_str());
  if (const std::string ray = cli_executor_summary(compiler); !ray.empty()) std::printf("%s\n", ray.c_str());
  return summary.failed ? kExitFailed : kExitOk;
}

}  // namespace

CommandRun cmd_warmup(CLI::App& sub) {
  auto a = std::make_shared<WarmupArgs>();
  sub.add_option("--tier", a->tier, "v1 (the top 4 configurations of each form and shape) or full (the top 12)")
      ->check(CLI::IsMember({"v1", "full"}))
      ->capture_default_str();
  sub.add_option("--top", a->top, "configurations per form and shape (overrides the tier)")->check(CLI::PositiveNumber);
  sub.add_option("--gpu", a->gpu, "the GPUs whose rankings pick the configurations, comma-separated (the zoo is their union)")->capture_default_str();
  sub.add_option("--jobs,-j", a->jobs, "parallel nvcc jobs (default: by cores and memory, ~3.5 GB each)")
      ->envname("UCUTLASS_JOBS");
  sub.add_flag("--dry-run", a->dry_run, "count the units and the compile time they need; build nothing");
  sub.add_flag("--list", a->list, "print every zoo unit: its name, form and configuration, and build nothing");
  sub.add_option("--export", a->export_path, "pack the store's pinned units into FILE (.tar.xz) and stop");
  sub.add_option("--import", a->import_path, "install the units of FILE (from --export), pinned, and stop");
  sub.add_option("--suite", a->suite,
                 "instead of the generic zoo: the stored units a suite's search opens with (each problem's "
                 "top-ranked candidates, as 'bench --plan' ranks them)");
  sub.add_option("--match", a->match, "--suite: shell patterns of the problem files, comma-separated");
  cli_add_profile_option(sub, a->profile);
  cli_add_policy_option(sub, a->policy, "--suite: the precision policy the openings are ranked under");
  sub.add_option("--top-k", a->top_k, "--suite: opening candidates per problem")->check(CLI::PositiveNumber)->capture_default_str();
  sub.add_option("--cutlass-dir", a->cutlass_dir, "folder holding CUTLASS's include/ and tools/util/include/")
      ->envname("UCUTLASS_CUTLASS_DIR")
      ->capture_default_str();
  cli_add_executor_options(sub, a->exec, /*evaluations=*/false);  // the objects come back into this store
  return [a] { return run_warmup(*a); };
}

}  // namespace ucut

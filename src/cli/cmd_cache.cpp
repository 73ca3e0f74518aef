// `ucutlass cache [stats]` and `ucutlass cache clean [--max-size SIZE] [--all]`: the cache
// folder's disk use (built libraries, unit objects, candidate folders, baselines) and its
// cleaning (build/cache_gc.h). Commands that build kernels keep it under UCUTLASS_CACHE_MAX.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "build/cache_gc.h"
#include "cli/commands.h"
#include "support/fs.h"

namespace ucut {

namespace {

struct CacheArgs {
  std::string action = "stats";
  std::string max_size;
  bool all = false;
  bool pinned = false;
};

void print_usage(const build::CacheUsage& u) {
  std::printf("cache: %s\n", u.root.c_str());
  for (const auto& a : u.areas) {
    std::printf("  %-10s %7lld %-8s %10s  %s", a.name.c_str(), static_cast<long long>(a.entries),
                a.name == "baselines" ? "files" : "entries", build::cache_format_size(a.bytes).c_str(), a.path.c_str());
    if (a.pinned > 0) std::printf("  (%lld pinned: a zoo's)", static_cast<long long>(a.pinned));
    std::printf("\n");
  }
  if (u.stale_files > 0)
    std::printf("  %-10s %7lld %-8s %10s  (killed builds; 'ucutlass cache clean' removes them)\n", "leftovers",
                static_cast<long long>(u.stale_files), "files", build::cache_format_size(u.stale_bytes).c_str());
  std::printf("  %-10s %27s\n", "total", build::cache_format_size(u.total_bytes()).c_str());
  auto cap = build::cache_max_bytes();
  if (!cap) std::printf("cap: %s\n", cap.error().render().c_str());
  else if (*cap == 0) std::printf("cap: none (UCUTLASS_CACHE_MAX=0)\n");
  else std::printf("cap: %s (UCUTLASS_CACHE_MAX), applied after every command that builds kernels\n",
                   build::cache_format_size(*cap).c_str());
}

int run_cache(const CacheArgs& a) {
  const std::string root = fs_cache_dir();
  if (a.action == "stats") {
    print_usage(build::cache_usage(root));
    return 0;
  }
  // "clean" (the option's check admits only the two actions)
  build::CacheCleanOptions o;
  o.all = a.all;
  o.pinned = a.pinned;
  if (a.pinned && !a.all)
    return cli_fail("cache", make_error(ErrorCode::invalid_input, "--pinned removes a zoo's stored units only with --all",
                                        "run 'ucutlass cache clean --all --pinned'"),
                    kExitUsage);
  if (!a.max_size.empty()) {
    auto v = build::cache_parse_size(a.max_size);
    if (!v) return cli_fail("cache", make_error(v.error().code, "--max-size " + v.error().message, v.error().hint), kExitUsage);
    o.max_bytes = *v;
  } else if (!a.all) {
    auto cap = build::cache_max_bytes();
    if (!cap) return cli_fail("cache", cap.error(), kExitUsage);
    o.max_bytes = *cap == 0 ? -1 : *cap;
  }
  build::CacheCleanResult r = build::cache_clean(root, o);
  std::printf("removed %lld entr%s (%s) and %lld leftover%s of killed builds; the cache now holds %s\n",
              static_cast<long long>(r.removed_entries), r.removed_entries == 1 ? "y" : "ies",
              build::cache_format_size(r.removed_bytes).c_str(), static_cast<long long>(r.stale_removed),
              r.stale_removed == 1 ? "" : "s", build::cache_format_size(r.total_after).c_str());
  if (!r.target_met)
    std::printf("the target was not met: the rest was used within the hour (--all removes it too)\n");
  return 0;
}

}  // namespace

CommandRun cmd_cache(CLI::App& sub) {
  auto a = std::make_shared<CacheArgs>();
  sub.add_option("action", a->action, "stats (default) or clean")->check(CLI::IsMember({"stats", "clean"}));
  sub.add_option("--max-size", a->max_size,
                 "clean: evict the least recently used entries until the cache fits (e.g. 5G; default: the cap)");
  sub.add_flag("--all", a->all,
               "clean: remove every library, object, stored unit and candidate folder (not the baselines, not a zoo's "
               "pinned units)");
  sub.add_flag("--pinned", a->pinned, "clean --all: the pinned stored units a zoo installed too");
  return [a] { return run_cache(*a); };
}

}  // namespace ucut

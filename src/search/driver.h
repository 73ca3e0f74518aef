// What `ucutlass optimize` and `ucutlass bench` share: one problem's search assembled from its
// parts (space, compiler, evaluator, strategy, journal, memory seeds), the live progress line,
// and writing out/<problem>/ (best.ucut, report.json, report.md). Problems come from a
// ProblemSource; today the one wired source is the synthetic surface (fake_surface.h, problem
// names "synthetic" or "synthetic:<name>"); real problem.py files need the adapters over
// src/space, src/build and src/eval (see docs/optimizer.md, "Search").
#pragma once

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "memory/experience_store.h"
#include "search/builtin_strategy.h"
#include "search/fake_surface.h"
#include "search/memory_bridge.h"
#include "search/run_report.h"
#include "search/session.h"

namespace ucut::search {

struct DriverOptions {
  SessionOptions session;
  uint64_t seed = 1;
  int top_k = 8;
  std::string policy = "tf32";
  std::string profile = "default";
  std::string out_dir = "out";
  bool resume = false;
  memory::MemoryDb* memory = nullptr;  // null: no seeding, no learning
  FILE* progress = nullptr;            // live progress line; null: quiet
};

// One problem's search with everything it owns.
class ProblemRun {
 public:
  // Recognised synthetic names: "synthetic", "synthetic:<name>" (name varies the surface).
  static bool is_synthetic(const std::string& problem);
  static Result<std::unique_ptr<ProblemRun>> synthetic(const std::string& problem, const DriverOptions& opt);

  SearchSession& session() { return *session_; }
  const std::string& name() const { return name_; }
  std::string out_dir() const { return opt_.out_dir + "/" + name_; }
  // The report after (or during) the search.
  RunReport report() const;
  // Writes best.ucut, report.json, report.md under out_dir(); learns into the memory.
  Status finish();

 private:
  ProblemRun() = default;
  std::string name_;
  DriverOptions opt_;
  memory::MemoryKey key_;
  SeedTrace trace_;
  FakeClock fake_clock_;
  SteadyClock steady_;
  std::unique_ptr<FakeSpace> space_;
  std::unique_ptr<FakeCompiler> compiler_;
  std::unique_ptr<FakeEvaluator> evaluator_;
  std::unique_ptr<BuiltinStrategy> strategy_;
  std::unique_ptr<FileJournal> journal_;
  std::unique_ptr<SearchSession> session_;
};

// "[ 7/40] best 2.31x  71% SOL  | tf32_128x256x64_c2x1_s4 ok 1.02 ms"
std::string progress_line(const Attempt& a, const SearchState& s, int budget);

}  // namespace ucut::search

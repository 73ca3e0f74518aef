// Cross-problem learning on the synthetic surface: a second problem of a known kind reaches its
// best in fewer attempts with the memory of the first than with an empty memory.
#include "search/memory_bridge.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "search/fake_surface.h"
#include "search/session.h"

namespace ucut::search {
namespace {

struct Outcome {
  int attempts_to_best = 0;
  std::string best;
  SearchState state;
  SeedTrace trace;
};

Outcome search(const SurfaceSpec& spec, memory::MemoryDb* db, const memory::MemoryKey& key) {
  FakeClock clock;
  FakeSpace space(spec);
  FakeCompiler compiler(spec);
  FakeEvaluator evaluator(space, &clock);
  BuiltinOptions bo;
  Outcome r;
  if (db) {
    auto seeds = memory::memory_seeds(*db, key);
    EXPECT_TRUE(seeds);
    r.trace = memory_apply_seeds(*seeds, space, bo);
  }
  BuiltinStrategy strategy(space, bo);
  SessionOptions so;
  so.budget.attempts = 40;
  so.rules.eps = -1;
  so.rules.stagnation = 0;
  so.t_sol = spec.t_sol;
  SearchSession s(spec.problem, strategy, compiler, evaluator, clock, nullptr, so);
  s.run();
  r.state = s.state();
  r.attempts_to_best = *s.state().best + 1;
  r.best = s.state().best_attempt()->cand.name;
  if (db) {
    auto n = memory::memory_learn(*db, memory_learn_input(s.state(), key, spec.problem, spec.t_sol, r.trace));
    EXPECT_TRUE(n);
  }
  return r;
}

TEST(MemoryBridge, PriorsReduceAttemptsToBestOnASimilarProblem) {
  char tmpl[] = "/tmp/ucut-bridge-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  auto db = memory::MemoryDb::open(dir + "/store.db");
  ASSERT_TRUE(db) << db.error().render();
  memory::MemoryKey key{"gemm f32", "m12_n12_k12", "h200", "tf32"};

  SurfaceSpec first;
  first.problem = "gemm_a";
  Outcome a = search(first, db->get(), key);
  EXPECT_GT(a.attempts_to_best, 5);  // the ranking alone is off: it takes refinement
  auto st = (*db)->stats();
  ASSERT_TRUE(st);
  EXPECT_EQ(st->priors, 1);
  EXPECT_GE(st->experiences, 1);

  // A similar problem: same optimum, other sizes and times (same class and bucket).
  SurfaceSpec second;
  second.problem = "gemm_b";
  second.t_opt = 1.7e-3;
  second.t_sol = 1.4e-3;
  second.t_eager = 5e-3;
  Outcome cold = search(second, nullptr, key);
  Outcome warm = search(second, db->get(), key);
  EXPECT_EQ(cold.best, warm.best);
  EXPECT_EQ(warm.attempts_to_best, 1);
  EXPECT_LT(warm.attempts_to_best, cold.attempts_to_best);
  EXPECT_EQ(warm.state.attempts[0].cand.origin, "prior");

  // The prior that seeded the second search is credited: used once, helped once.
  auto priors = (*db)->priors(memory::MemoryQuery{});
  ASSERT_TRUE(priors);
  ASSERT_EQ(priors->size(), 1u);
  EXPECT_EQ((*priors)[0].uses, 1);
  EXPECT_EQ((*priors)[0].helps, 1);
  EXPECT_EQ((*priors)[0].wins, 2);  // it won the second problem too: merged, not duplicated
  std::filesystem::remove_all(dir);
}

// A remembered winner of the synthetic surface's class.
memory::Prior prior(int64_t id, const char* tile, const char* precision) {
  memory::Prior p;
  p.id = id;
  p.config = {{"tile", tile}, {"cluster", "1x1"}, {"stages", 4}, {"precision", precision}};
  return p;
}

// The precision lesson: when every remembered winner (two or more) needed 3xTF32, the next problem
// of the class starts there and spends no attempt on a TF32 mismatch; one TF32 winner, or a single
// prior, is no lesson.
TEST(MemoryBridge, RememberedWinnersAboveTf32StartTheLadderThere) {
  SurfaceSpec spec;
  spec.tf32_mismatch = true;
  FakeSpace space(spec);
  memory::MemorySeeds seeds;
  seeds.priors = {prior(1, "128x256x64", "f32x3"), prior(2, "128x128x64", "f32x3")};
  BuiltinOptions bo;
  SeedTrace t = memory_apply_seeds(seeds, space, bo);
  ASSERT_EQ(t.priors_applied, 2);
  EXPECT_EQ(t.start_rung, 1);
  EXPECT_EQ(bo.start_rung, 1);
  FakeClock clock;
  FakeCompiler compiler(spec);
  FakeEvaluator evaluator(space, &clock);
  BuiltinStrategy strategy(space, bo);
  SessionOptions so;
  so.budget.attempts = 10;
  so.rules.eps = -1;
  so.rules.stagnation = 0;
  SearchSession s(spec.problem, strategy, compiler, evaluator, clock, nullptr, so);
  s.run();
  for (const auto& a : s.state().attempts) {
    EXPECT_EQ(a.cand.rung, 1) << a.cand.name;
    EXPECT_EQ(a.status, RunStatus::ok) << a.cand.name;  // no TF32 mismatch was spent
  }
  // A TF32 winner among them: no lesson. A single prior: no lesson.
  memory::MemorySeeds mixed;
  mixed.priors = {prior(1, "128x256x64", "f32x3"), prior(3, "128x128x64", "tf32")};
  BuiltinOptions bo2;
  EXPECT_EQ(memory_apply_seeds(mixed, space, bo2).start_rung, 0);
  EXPECT_EQ(bo2.start_rung, 0);
  memory::MemorySeeds one;
  one.priors = {prior(1, "128x256x64", "f32x3")};
  BuiltinOptions bo3;
  EXPECT_EQ(memory_apply_seeds(one, space, bo3).start_rung, 0);
}

// Winners on the summation-order rung (FP32 SIMT) passed because their own reference rounds
// beyond the tolerance: they neither seed this problem nor start its ladder there.
TEST(MemoryBridge, SummationOrderWinnersAreNotALessonOfTheClass) {
  SurfaceSpec spec;
  spec.summation_order_rung = 2;
  FakeSpace space(spec);
  memory::MemorySeeds seeds;
  seeds.priors = {prior(1, "128x256x64", "f32"), prior(2, "128x128x64", "f32"), prior(3, "128x128x64", "f32x3")};
  BuiltinOptions bo;
  SeedTrace t = memory_apply_seeds(seeds, space, bo);
  EXPECT_EQ(t.priors_found, 3);
  EXPECT_EQ(t.priors_applied, 1);
  ASSERT_EQ(bo.seeds.size(), 1u);
  EXPECT_EQ(bo.seeds[0].rung, 1);
  EXPECT_EQ(bo.start_rung, 0);  // one applied prior: no lesson
  // Without a summation-order rung the same priors seed as before.
  FakeSpace plain{SurfaceSpec{}};
  BuiltinOptions bo2;
  EXPECT_EQ(memory_apply_seeds(seeds, plain, bo2).priors_applied, 3);
  EXPECT_EQ(bo2.start_rung, 1);
}

TEST(MemoryBridge, ExperienceMovesAreAppliedAroundTheBest) {
  memory::MemorySeeds seeds;
  memory::Experience e;
  e.id = 42;
  e.slow_config = {{"tile", "128x128x64"}, {"cluster", "1x1"}, {"stages", 4}, {"precision", "tf32"}};
  e.fast_config = {{"tile", "128x256x64"}, {"cluster", "2x1"}, {"stages", 4}, {"precision", "tf32"}};
  seeds.experiences.push_back(e);
  SurfaceSpec spec;
  FakeSpace space(spec);
  BuiltinOptions bo;
  bo.top_k = 1;
  SeedTrace t = memory_apply_seeds(seeds, space, bo);
  ASSERT_EQ(bo.moves.size(), 1u);
  EXPECT_EQ(bo.moves[0], (nlohmann::json{{"cluster", "2x1"}, {"tile", "128x256x64"}}));
  FakeClock clock;
  FakeCompiler compiler(spec);
  FakeEvaluator evaluator(space, &clock);
  BuiltinStrategy strategy(space, bo);
  SessionOptions so;
  so.budget.attempts = 4;
  so.lookahead = 1;
  SearchSession s(spec.problem, strategy, compiler, evaluator, clock, nullptr, so);
  s.run();
  ASSERT_GE(s.state().attempts.size(), 2u);
  EXPECT_EQ(s.state().attempts[1].cand.origin, "experience#0");
  auto in = memory_learn_input(s.state(), {}, "p", 0, t);
  EXPECT_EQ(in.attempts[1].experience_id, 42);
}

}  // namespace
}  // namespace ucut::search

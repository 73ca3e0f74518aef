// The adapters and the planning pipeline without a GPU, nvcc or Python: problems come from the
// hand-written Problem IR files of tests/golden/lower (pipeline_prepare skips extraction for a
// .json), kernels are only emitted (.cu), never compiled.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <set>
#include <vector>
#include <thread>

#include "dsl/dsl.h"
#include "app/adapters_build.h"
#include "app/adapters_eval.h"
#include "app/adapters_space.h"
#include "app/driver.h"
#include "app/pipeline.h"
#include "build/program_build.h"
#include "search/builtin_strategy.h"
#include "support/scoped_env.h"
#include "support/fs.h"

namespace ucut::app {
namespace {

const std::string kGolden = std::string(UCUTLASS_SOURCE_DIR) + "/tests/golden/lower/";

// A fresh folder for one test, removed when the test program ends.
std::string temp_dir(const std::string& name) {
  struct Made {
    std::vector<std::filesystem::path> dirs;
    ~Made() {
      std::error_code ec;
      for (const auto& d : dirs) std::filesystem::remove_all(d, ec);
    }
  };
  static Made made;
  auto d = std::filesystem::temp_directory_path() / ("ucut-adapters-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  made.dirs.push_back(d);
  return d.string();
}

PreparedProblem prepare(const std::string& file, const std::string& out) {
  PrepareOptions o;
  o.out_dir = out;
  auto p = pipeline_prepare(kGolden + file, o);
  EXPECT_TRUE(p) << (p ? "" : p.error().render());
  return p ? std::move(*p) : PreparedProblem{};
}

std::unique_ptr<RealSpace> space_of(const PreparedProblem& p) {
  space::SpaceOptions so;
  so.policy = p.policy;
  auto s = RealSpace::create(p.lowered.program, p.hw, so);
  EXPECT_TRUE(s);
  return s ? std::move(*s) : nullptr;
}

TEST(Pipeline, PreparesAProblemJsonWithoutPython) {
  auto p = prepare("linear_bias_gelu.json", temp_dir("prep"));
  EXPECT_EQ(p.name, "linear_bias_gelu");
  EXPECT_TRUE(p.problem_py.empty());
  EXPECT_GT(p.t_sol(), 0);
  EXPECT_EQ(p.lowered.program.stages.size(), 1u);
  EXPECT_EQ(p.key.cls, "gemm f32");
  EXPECT_EQ(p.key.bucket, "m9_n11_k10");
}

// With bf16x3 on the ladder (rung 1): kb-v01 starts a two-input GEMM there
// (its rounding holds 1e-2 where TF32's does not) and the contract's SOL is its own, three bf16
// products per fp32 one, under 3xTF32's; the default profile skips it, and so does the
// reference-class probe's chain (rung 2, 3xTF32 on wgmma).
TEST(Pipeline, Bf16x3IsARungBetweenTf32And3xTf32) {
  const ScopedEnv on("UCUTLASS_OFFER_BF16X3", "1");
  auto p = prepare("einsum_two_k.json", temp_dir("bf16x3"));
  auto s = space_of(p);
  ASSERT_TRUE(s);
  const auto loose = pipeline_tf32_bound(p, "kb-v01");
  EXPECT_TRUE(loose.fails);
  EXPECT_FALSE(loose.bf16x3_fails);
  EXPECT_EQ(pipeline_start_rung(loose, *s), 1);
  EXPECT_EQ(s->ranked(1, 1).at(0).config.value("precision", ""), "bf16x3");
  const sol::SolBound* exact = p.sol.reference_for(sol::Policy::exact);
  const sol::SolBound* bf16 = p.sol.reference_for(sol::Policy::bf16);
  ASSERT_TRUE(exact && bf16);
  EXPECT_DOUBLE_EQ(pipeline_sol_contract(p.sol, loose), sol::sol_scale_tensor_f32(*bf16, 3.0).t_sol);
  EXPECT_LE(pipeline_sol_contract(p.sol, loose), exact->t_sol);  // this one is memory-bound: equal
  const auto strict = pipeline_tf32_bound(p, "default");
  EXPECT_TRUE(strict.bf16x3_fails);
  EXPECT_EQ(pipeline_reference_class_probe_floor(strict), 2);
  EXPECT_EQ(pipeline_start_rung(strict, *s), *s->summation_order_rung());
  // without it (UCUTLASS_OFFER_BF16X3=0) the ladder and the contract are as before
  const ScopedEnv off("UCUTLASS_OFFER_BF16X3", "0");
  auto s0 = space_of(p);
  ASSERT_TRUE(s0);
  EXPECT_NE(s0->ranked(1, 1).at(0).config.value("precision", ""), "bf16x3");
  EXPECT_DOUBLE_EQ(pipeline_sol_contract(p.sol, loose), exact->t_sol);
  EXPECT_EQ(pipeline_reference_class_probe_floor(strict), 1);
}

// A GEMM of two problem inputs, K = 512: under the default 1e-4 neither TF32 nor 3xTF32 meets the
// tolerance (space/precision.h), so planning and search start at the FP32 SIMT rung and the contract's
// SOL is that rung's; under kb-v01 3xTF32 is the start (TF32's absolute error on the rescaled trial).
TEST(Pipeline, TwoInputGemmsStartWhereTheirPrecisionCanPass) {
  const ScopedEnv on("UCUTLASS_OFFER_BF16X3", "1");
  auto p = prepare("einsum_two_k.json", temp_dir("start"));
  auto s = space_of(p);
  ASSERT_TRUE(s);
  const auto order = s->summation_order_rung();
  ASSERT_TRUE(order);
  const auto strict = pipeline_tf32_bound(p, "default");
  EXPECT_TRUE(strict.faithful_fails) << strict.reason;
  EXPECT_EQ(pipeline_start_rung(strict, *s), *order);
  EXPECT_EQ(s->ranked(1, *order).at(0).config.value("precision", ""), "f32");
  const sol::SolBound* exact = p.sol.reference_for(sol::Policy::exact);
  ASSERT_NE(exact, nullptr);
  EXPECT_GT(pipeline_sol_contract(p.sol, strict), exact->t_sol);
  EXPECT_DOUBLE_EQ(pipeline_sol_contract(p.sol, strict), p.sol.fp32_simt.t_sol);
  const auto loose = pipeline_tf32_bound(p, "kb-v01");
  EXPECT_TRUE(loose.fails);
  EXPECT_FALSE(loose.faithful_fails);
  EXPECT_EQ(pipeline_start_rung(loose, *s), 1);
  EXPECT_DOUBLE_EQ(pipeline_sol_contract(p.sol, loose), exact->t_sol);
  // The reference-class probe: under the default profile (float64 pass) the rung below FP32 SIMT,
  // mma.sync's 3xTF32, is probed once; kb-v01 (no float64 pass, 3xTF32 allowed anyway) has none.
  const int probe = pipeline_reference_class_probe(strict, *s, "default");
  EXPECT_EQ(probe, *order - 1);
  EXPECT_EQ(s->ranked(1, probe).at(0).config.value("precision", ""), "f32x3");
  // Where it passes, the probe chains to the rung the elementwise bound allows: 3xTF32 on wgmma.
  // (bf16x3's rung, 1, fails this tolerance too: the chain skips it)
  const int chain = pipeline_reference_class_probe_floor(strict);
  EXPECT_EQ(chain, 2);
  ASSERT_LT(chain, probe);
  const std::string wgmma = s->ranked(1, chain).at(0).config.value("precision", "");
  EXPECT_TRUE(wgmma == "f32x3s" || wgmma == "f32x3k" || wgmma == "f32x3w") << wgmma;
  EXPECT_EQ(pipeline_reference_class_probe(loose, *s, "kb-v01"), -1);
  EXPECT_EQ(pipeline_reference_class_probe(strict, *s, "kb-v01"), -1);
  // The plan shows it second, as the search measures it.
  PlanOptions po;
  po.profile = "default";
  po.codegen = false;
  po.top = 3;
  const Plan plan = pipeline_plan(p, *s, po);
  ASSERT_GE(plan.top.size(), 2u);
  EXPECT_EQ(plan.top[1].cand.origin, "probe");
  EXPECT_EQ(plan.top[1].cand.rung, probe);
  // In the search: once the probe passes, the next proposals are probes of the chained rung, one
  // per precision mix (at most two), before the reopened floor's top-k.
  search::BuiltinOptions bo;
  bo.start_rung = *order;
  bo.probe_rung = probe;
  bo.probe_floor = chain;
  search::BuiltinStrategy st(*s, bo);
  search::SearchState state;
  std::optional<search::Candidate> c;
  for (int i = 0; i < 4 && (c = st.propose(state)); ++i) {
    state.proposed.insert(c->hash);
    if (c->origin == "probe") break;
  }
  ASSERT_TRUE(c && c->origin == "probe");
  search::Attempt passed;
  passed.cand = *c;
  passed.status = RunStatus::ok;
  passed.time_s = 1e-3;
  passed.passed_by_float64 = true;
  state.attempts.push_back(passed);
  state.best = 0;
  st.observe(state.attempts.back(), state);
  EXPECT_EQ(st.floor_rung(), probe);
  std::set<std::string> mixes;
  std::vector<std::string> order_seen;
  while ((c = st.propose(state)) && c->origin == "probe") {
    state.proposed.insert(c->hash);
    EXPECT_EQ(c->rung, chain) << c->name;
    EXPECT_TRUE(mixes.insert(c->config.value("precision", "")).second) << c->name;
    order_seen.push_back(c->config.value("precision", ""));
  }
  EXPECT_GE(mixes.size(), 1u);
  EXPECT_LE(mixes.size(), 2u);
  // f32x3w (promoting every 128 of K, as accurate as mma.sync's 3xTF32) is probed first
  if (mixes.count("f32x3w")) {
    EXPECT_EQ(order_seen.front(), "f32x3w");
  }
  ASSERT_TRUE(c);
  EXPECT_EQ(c->rung, probe) << c->name;  // then the reopened floor's own ranking
  EXPECT_EQ(c->origin, "rank");
}

// A problem with an op outside the language prepares with a torch stage (and says what share of
// the work its kernels do); one that keeps no kernel stage is unsupported, naming the op.
TEST(Pipeline, UnsupportedProblemsNameTheOp) {
  PrepareOptions o;
  o.out_dir = temp_dir("unsup");
  auto t = pipeline_prepare(kGolden + "torch_conv_relu.json", o);
  ASSERT_TRUE(t) << t.error().render();
  EXPECT_EQ(t->lowered.torch_ops, std::vector<int>{0});
  // Both ops are memory-bound at this size: the ReLU moves 2 x 460.8 KB, the convolution (18
  // input channels, refused: conv_align_c) 589.8 KB + 10.4 KB + 460.8 KB, so the kernel's share of
  // the SOL time is 921600 / 1982592.
  EXPECT_NEAR(t->kernel_share, 921600.0 / 1982592.0, 1e-3);
  bool noted = false;
  for (const auto& n : t->notes) noted = noted || n.find("the kernel stages do") != std::string::npos;
  EXPECT_TRUE(noted);
  auto p = pipeline_prepare(kGolden + "unsupported_conv_only.json", o);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::unsupported);
  EXPECT_NE(p.error().message.find("conv2d"), std::string::npos) << p.error().message;
  EXPECT_NE(p.error().message.find("no kernel stage"), std::string::npos) << p.error().message;
  auto missing = pipeline_prepare(kGolden + "no_such_problem.py", o);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::not_found);
}

TEST(RealSpace, RanksDistinctCheckedPrograms) {
  auto p = prepare("linear_bias_gelu.json", temp_dir("rank"));
  auto s = space_of(p);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->primary_stage(), 0);
  auto top = s->ranked(8);
  ASSERT_EQ(top.size(), 8u);
  std::set<std::string> hashes;
  for (size_t i = 0; i < top.size(); ++i) {
    const search::Candidate& c = top[i];
    EXPECT_TRUE(hashes.insert(c.hash).second) << c.name;
    auto checked = dsl::dsl_compile({"c.ucut", c.program});
    ASSERT_TRUE(checked.program) << c.program;
    EXPECT_EQ(dsl::dsl_hash(*checked.program), c.hash);
    EXPECT_EQ(c.config.value("tile", ""), c.config["tile"].get<std::string>());
    EXPECT_NE(c.config.value("tile", "auto"), "auto");
    if (i > 0 && top[i - 1].rung == c.rung) {
      EXPECT_LE(top[i - 1].predicted_s, c.predicted_s);
    }
  }
  EXPECT_EQ(top[0].rung, 0);
  EXPECT_EQ(top[0].config.value("precision", ""), "tf32");
}

// Attention: q @ k^T may run in tf32 (wgmma) or 3xTF32 on wgmma, p @ v (B is N-contiguous) in
// tf32m (TF32 on mma.sync), 3xTF32 on wgmma (its split stages transpose v) or the SM80 3xTF32.
// Both start at TF32's rung, so a mismatch can raise the floor and lift them, to rung 1 (f32x3s
// and f32x3k: with K = 64 and 128 both GEMMs take f32x3k, one output pass where f32x3s makes
// five) and then f32x3 (rung 2).
TEST(RealSpace, MixedPrecisionProgramsClimbTheLadder) {
  const ScopedEnv off("UCUTLASS_OFFER_BF16X3", "0");  // bf16x3's rung would be the second
  auto p = prepare("attention_rank4.json", temp_dir("mixed"));
  auto s = space_of(p);
  ASSERT_TRUE(s);
  search::Candidate best = s->ranked(1).at(0);
  EXPECT_EQ(best.rung, 0);
  EXPECT_NE(best.name.find("gemm_tf32_"), std::string::npos) << best.name;
  EXPECT_NE(best.name.find("gemm_tf32m_"), std::string::npos) << best.name;
  auto up = s->at_rung(best, 1);
  ASSERT_TRUE(up);
  EXPECT_EQ(up->rung, 1);
  EXPECT_EQ(up->name.find("gemm_tf32"), std::string::npos) << up->name;
  EXPECT_NE(up->name.find("gemm_f32x3k"), std::string::npos) << up->name;
  for (const auto& n : s->neighbors(*up)) EXPECT_EQ(n.name.find("gemm_tf32"), std::string::npos) << n.name;
  auto top = s->at_rung(*up, 2);
  ASSERT_TRUE(top);
  EXPECT_EQ(top->name.find("gemm_f32x3s"), std::string::npos) << top->name;
  EXPECT_EQ(top->name.find("gemm_f32x3k"), std::string::npos) << top->name;
  // both GEMMs have FP32 SIMT: the summation-order rung, the last
  EXPECT_EQ(s->summation_order_rung(), 3);
  auto simt = s->at_rung(*top, 3);
  ASSERT_TRUE(simt);
  EXPECT_EQ(simt->name.find("gemm_f32x3"), std::string::npos) << simt->name;
  EXPECT_FALSE(s->at_rung(*top, 4));
}

// Stage descents (search/builtin_strategy.h): lifted to f32x3s, each GEMM stage alone goes back
// to TF32's rung while the other takes its fastest configuration on its rung or above (more
// precision never costs accuracy), most predicted time saved first; the candidates' rung
// signatures say which stage runs where. A program on the rung itself has no descents.
TEST(RealSpace, DescentsMoveOneGemmStageBackToTheFailedRung) {
  auto p = prepare("attention_rank4.json", temp_dir("descents"));
  auto s = space_of(p);
  ASSERT_TRUE(s);
  search::Candidate best = s->ranked(1).at(0);
  EXPECT_TRUE(s->descents(best, 0).empty());
  EXPECT_EQ(s->rung_signature(best), "0,0");
  auto up = s->at_rung(best, 1);
  ASSERT_TRUE(up);
  EXPECT_EQ(s->rung_signature(*up), "1,1");
  const auto down = s->descents(*up, 0);
  ASSERT_EQ(down.size(), 2u);
  std::set<std::string> sigs;
  double saved = 1e9;
  for (const auto& d : down) {
    EXPECT_EQ(d.origin, "descent");
    EXPECT_EQ(d.rung, 0);
    EXPECT_LT(d.predicted_s, up->predicted_s) << d.name;
    EXPECT_LE(up->predicted_s - d.predicted_s, saved) << "most time saved first";
    saved = up->predicted_s - d.predicted_s;
    sigs.insert(s->rung_signature(d));
  }
  // one stage on TF32's rung, the other on its fastest configuration at f32x3s's rung or above
  ASSERT_EQ(sigs.size(), 2u);
  int first_down = 0, second_down = 0;
  for (const auto& sig : sigs) {
    ASSERT_EQ(sig.size(), 3u) << sig;
    first_down += sig[0] == '0' && sig[2] >= '1';
    second_down += sig[2] == '0' && sig[0] >= '1';
  }
  EXPECT_EQ(first_down, 1);
  EXPECT_EQ(second_down, 1);
  // one stage down already: the other is the only one above the rung, so no further descent
  for (const auto& d : down) EXPECT_TRUE(s->descents(d, 0).empty()) << d.name;
}

TEST(RealSpace, NeighborsConfigsAndTheLadder) {
  const ScopedEnv off("UCUTLASS_OFFER_BF16X3", "0");  // the rungs without bf16x3's
  auto p = prepare("linear_bias_gelu.json", temp_dir("nbr"));
  auto s = space_of(p);
  ASSERT_TRUE(s);
  search::Candidate best = s->ranked(1).at(0);
  auto nbrs = s->neighbors(best);
  ASSERT_FALSE(nbrs.empty());
  for (const auto& n : nbrs) {
    EXPECT_NE(n.hash, best.hash);
    EXPECT_EQ(n.rung, best.rung);
    int differ = 0;
    for (auto it = best.config.begin(); it != best.config.end(); ++it) differ += n.config[it.key()] != *it;
    EXPECT_GE(differ, 1) << n.name;
  }
  // A config names the same candidate; a partial one (an experience move) finds a valid one.
  auto again = s->from_config(best.config);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->hash, best.hash);
  auto moved = s->from_config({{"cluster", "1x1"}});
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->config.value("cluster", ""), "1x1");
  EXPECT_FALSE(s->from_config({{"tile", "7x7x7"}}));
  EXPECT_FALSE(s->from_config({{"s9.threads", 128}}));
  // tf32 -> 3xTF32 on wgmma (f32x3w here: a 512 x 2048 x 1024 Linear, where f32x3s's split passes
  // cost more than the in-kernel split) -> the SM80 3xTF32 (f32x3) on f32 data; nothing past the
  // ladder.
  auto up = s->at_rung(best, 1);
  ASSERT_TRUE(up);
  EXPECT_EQ(up->rung, 1);
  EXPECT_EQ(up->config.value("precision", ""), "f32x3w");
  auto up2 = s->at_rung(best, 2);
  ASSERT_TRUE(up2);
  EXPECT_EQ(up2->config.value("precision", ""), "f32x3");
  // -> FP32 SIMT, the reference's summation order: K in one piece (split-K would change it)
  ASSERT_EQ(s->summation_order_rung(), 3);
  auto up3 = s->at_rung(best, 3);
  ASSERT_TRUE(up3);
  EXPECT_EQ(up3->config.value("precision", ""), "f32");
  EXPECT_EQ(up3->config.value("split_k", 0), 1) << up3->config.dump();
  EXPECT_FALSE(s->at_rung(best, 5));
}

// FP32 SIMT (and the SM80 3xTF32) sum each output in K order whatever the tile: one class per
// split_k; the wgmma precisions are each their own configuration.
TEST(RealSpace, SummationClassesOfTheSm80Gemms) {
  const ScopedEnv off("UCUTLASS_OFFER_BF16X3", "0");  // the rungs without bf16x3's
  auto p = prepare("linear_bias_gelu.json", temp_dir("classes"));
  auto s = space_of(p);
  ASSERT_TRUE(s);
  std::map<std::string, std::set<std::string>> names_by_class;
  std::map<std::string, std::set<std::string>> splits_by_class;
  for (const auto& c : s->ranked(64, 3)) {
    ASSERT_EQ(c.config.value("precision", ""), "f32") << c.name;
    names_by_class[s->summation_class(c)].insert(c.name);
    splits_by_class[s->summation_class(c)].insert(c.config["split_k"].dump());
  }
  size_t largest = 0;
  for (const auto& [cls, names] : names_by_class) largest = std::max(largest, names.size());
  EXPECT_GE(largest, 2u);  // several SIMT tiles, one order
  for (const auto& [cls, splits] : splits_by_class) EXPECT_EQ(splits.size(), 1u) << cls;
  std::set<std::string> rung0;
  auto top = s->ranked(8, 0);
  for (const auto& c : top) rung0.insert(s->summation_class(c));
  EXPECT_EQ(rung0.size(), top.size());  // tf32 on wgmma: every configuration its own class
}

// Layout copies (elementwise stages) and windows a thread reduces compute the same values in every
// configuration: candidates that differ only there are one class, so a rounding mismatch of the
// GEMM between them rules out its layout-copy variants, not its other tiles.
TEST(RealSpace, ElementwiseAndWindowKnobsAreOneSummationClass) {
  const SourceFile src{"copy_gemm.ucut",
                       "ucut 1\nin x : f32[512, 512]\nin b : f32[256, 512]\nin z : f32[8, 64, 1024]\n"
                       "tmp a : f32[512, 512]\nout y : f32[512, 256]\nout q : f32[8, 64, 512]\n"
                       "stage a = elementwise {\n  body {\n    a = x * 2.0\n  }\n}\n"
                       "stage y = gemm(a, b.T) {\n  precision tf32\n}\n"
                       "stage q = window avg(z, window=[2], stride=[2], padding=[0]) {\n  epilogue {\n    q = acc\n  }\n}\n"};
  auto r = dsl::dsl_compile(src);
  ASSERT_TRUE(r.program.has_value()) << diag_render_all(src, r.diagnostics);
  auto s = RealSpace::create(*r.program, *sol::hw_lookup("h200"), space::SpaceOptions{});
  ASSERT_TRUE(s.ok()) << s.error().render();
  std::map<std::string, std::set<std::string>> copies_by_class;  // class -> the copy stage's configurations
  std::map<std::string, std::set<std::string>> gemms_by_class;
  for (const auto& c : (*s)->ranked(256)) {
    const std::string cls = (*s)->summation_class(c);
    const auto first = c.name.find('+'), last = c.name.rfind('+');
    ASSERT_NE(first, last) << c.name;  // copy+gemm+window
    copies_by_class[cls].insert(c.name.substr(0, first) + "+" + c.name.substr(last + 1));
    gemms_by_class[cls].insert(c.name.substr(first + 1, last - first - 1));
    EXPECT_NE(cls.find(":elementwise"), std::string::npos) << cls;
    EXPECT_NE(cls.find(":window"), std::string::npos) << cls;
  }
  size_t largest = 0;
  for (const auto& [cls, copies] : copies_by_class) largest = std::max(largest, copies.size());
  EXPECT_GE(largest, 2u) << "several copy and window configurations share a class";
  for (const auto& [cls, gemms] : gemms_by_class) EXPECT_EQ(gemms.size(), 1u) << cls;  // each TF32 tile its own
  EXPECT_GE(gemms_by_class.size(), 2u);
}

// A one-column fp32 GEMM: the FP32 rung offers the gemv schedules (cuBLAS's GEMV orders) in one
// chunk per SM of the GPU, a quarter of that and one chunk; each group size and chunk count is its
// own summation class, apart from the CUTLASS SIMT kernels' classes.
TEST(RealSpace, GemvChunkCountsAreSummationClasses) {
  auto r = dsl::dsl_compile(SourceFile{"gemv.ucut", "ucut 1\nin a : f32[4096, 65536]\nin x : f32[65536, 1]\n"
                                                    "out y : f32[4096, 1]\nstage y = gemm(a, x)\n"});
  ASSERT_TRUE(r.program.has_value());
  sol::HwSpec hw = *sol::hw_lookup("h200");
  hw.sms = 114;  // an H100 PCIe's count: the first chunk count follows the GPU
  auto s = RealSpace::create(*r.program, hw, space::SpaceOptions{});
  ASSERT_TRUE(s.ok()) << s.error().render();
  const int rung = (*s)->summation_order_rung().value_or(-1);
  ASSERT_GE(rung, 0);
  std::vector<std::string> gemv;
  std::map<std::string, std::string> class_of;
  for (const auto& c : (*s)->ranked(64, rung)) {
    class_of[c.name] = (*s)->summation_class(c);
    if (c.name.rfind("gemv", 0) == 0) gemv.push_back(c.name);
  }
  std::sort(gemv.begin(), gemv.end());
  EXPECT_EQ(gemv, (std::vector<std::string>{"gemv16_f32_k1", "gemv16_f32_k114", "gemv16_f32_k28", "gemv32_f32_k1",
                                            "gemv32_f32_k114", "gemv32_f32_k28"}));
  ASSERT_TRUE(class_of.count("gemm_f32_t128x64x8_s4_w1_a1")) << "the CUTLASS SIMT kernels stay on the rung";
  EXPECT_EQ(class_of["gemv16_f32_k114"], "s0:f32:gemv16:k114:auto");
  std::set<std::string> classes;
  for (const auto& n : gemv) classes.insert(class_of[n]);
  EXPECT_EQ(classes.size(), gemv.size());
  EXPECT_EQ(classes.count(class_of["gemm_f32_t128x64x8_s4_w1_a1"]), 0u);
  EXPECT_EQ((*s)->ranked(1, rung).at(0).name.rfind("gemv", 0), 0u);  // a gemv ranks first on its rung
}

// A raised floor ranks its own rung: distinct 3xTF32 configurations best first, not rung-0
// candidates lifted onto a few of them.
TEST(RealSpace, RankingFromARaisedFloor) {
  const ScopedEnv off("UCUTLASS_OFFER_BF16X3", "0");  // the rungs without bf16x3's
  auto p = prepare("linear_bias_gelu.json", temp_dir("floor"));
  auto s = space_of(p);
  ASSERT_TRUE(s);
  auto top = s->ranked(8, 1);
  ASSERT_EQ(top.size(), 8u);
  std::set<std::string> hashes;
  for (size_t i = 0; i < top.size(); ++i) {
    EXPECT_EQ(top[i].rung, 1) << top[i].name;
    const std::string prec = top[i].config.value("precision", "");
    EXPECT_TRUE(prec == "f32x3s" || prec == "f32x3k" || prec == "f32x3w") << top[i].name;
    EXPECT_TRUE(hashes.insert(top[i].hash).second);
    if (i > 0) {
      EXPECT_LE(top[i - 1].predicted_s, top[i].predicted_s);
    }
  }
  EXPECT_EQ(s->ranked(1, 3).at(0).config.value("precision", ""), "f32");
}

// 16-bit data has one precision: no summation-order rung to jump to.
TEST(RealSpace, SixteenBitProgramsHaveNoSummationOrderRung) {
  PrepareOptions o;
  o.out_dir = temp_dir("bf16order");
  auto prepared = pipeline_prepare(std::string(UCUTLASS_SOURCE_DIR) + "/tests/data/problems/gemm_bf16.json", o);
  ASSERT_TRUE(prepared) << prepared.error().render();
  auto s = space_of(*prepared);
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->summation_order_rung());
  // a floor above its one rung ranks that rung
  EXPECT_EQ(s->ranked(1, 1).at(0).config.value("precision", ""), "bf16");
}

// A long-row fp32 cumsum has PyTorch's own order (`order torch`) beside its fp64 plans: the
// candidate in that order is one step away from any other, every torch-order plan is one
// summation class (the block and the loads ahead do not change a sum), and the fp64 plans are
// another (they round the exact prefix once).
TEST(RealSpace, ScansHaveTheReferencesOwnOrder) {
  PrepareOptions o;
  o.out_dir = temp_dir("scanorder");
  auto prepared = pipeline_prepare(std::string(UCUTLASS_SOURCE_DIR) + "/tests/data/problems/cumsum_rows.json", o);
  ASSERT_TRUE(prepared) << prepared.error().render();
  auto s = space_of(*prepared);
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->has_reference_order());
  EXPECT_FALSE(s->summation_order_rung());
  std::set<std::string> torch_classes, fp64_classes;
  std::optional<search::Candidate> fp64, torch;
  for (const auto& c : s->ranked(64)) {
    const bool t = c.config.value("order", "") == "torch";
    (t ? torch_classes : fp64_classes).insert(s->summation_class(c));
    if (t && !torch) torch = c;
    if (!t && !fp64) fp64 = c;
  }
  ASSERT_TRUE(torch && fp64);
  EXPECT_EQ(torch_classes.size(), 1u);
  EXPECT_EQ(fp64_classes.size(), 1u);
  EXPECT_NE(*torch_classes.begin(), *fp64_classes.begin());
  auto moved = s->reference_order(*fp64);
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->config.value("order", ""), "torch");
  EXPECT_NE(moved->program.find("order torch"), std::string::npos);
  EXPECT_FALSE(s->reference_order(*moved));  // already there
  EXPECT_TRUE(s->in_reference_order(*moved));
  EXPECT_FALSE(s->in_reference_order(*fp64));
  EXPECT_TRUE(s->from_config(moved->config));  // the memory can name it
  EXPECT_EQ(s->from_config(moved->config)->hash, moved->hash);
}

TEST(RealSpace, MultiStageProgramsVaryEachStage) {
  auto p = prepare("gemm_softmax.json", temp_dir("multi"));
  auto s = space_of(p);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->stages().size(), 2u);
  auto top = s->ranked(40);
  std::set<std::string> gemm_parts, row_parts;
  for (const auto& c : top) {
    auto plus = c.name.find('+');
    ASSERT_NE(plus, std::string::npos) << c.name;
    gemm_parts.insert(c.name.substr(0, plus));
    row_parts.insert(c.name.substr(plus + 1));
  }
  EXPECT_GT(gemm_parts.size(), 1u);
  EXPECT_GT(row_parts.size(), 1u);
  // The other stage's knobs are prefixed with its name in the config.
  const std::string other = s->stages()[static_cast<size_t>(1 - s->primary_stage())].name;
  bool prefixed = false;
  for (auto it = top[0].config.begin(); it != top[0].config.end(); ++it)
    prefixed |= it.key().rfind(other + ".", 0) == 0;
  EXPECT_TRUE(prefixed) << top[0].config.dump();
}

// With the anchor's per-stage profile, the neighbours of the stage whose measured time most
// exceeds the model's prediction come first; without one, the predicted order (neighbors()).
TEST(RealSpace, MeasuredNeighborsStepTheStageTheModelMissesFirst) {
  auto p = prepare("gemm_softmax.json", temp_dir("measured"));
  auto s = space_of(p);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->stages().size(), 2u);
  const search::Candidate best = s->ranked(1).at(0);
  const std::string gemm = s->stages()[static_cast<size_t>(s->primary_stage())].name;
  const std::string rows = s->stages()[static_cast<size_t>(1 - s->primary_stage())].name;
  // which stage a neighbour steps: the other stage's knobs carry its name as a prefix
  auto steps_rows = [&](const search::Candidate& n) {
    for (auto it = best.config.begin(); it != best.config.end(); ++it)
      if (n.config[it.key()] != *it) return it.key().rfind(rows + ".", 0) == 0;
    return false;
  };
  const auto plain = s->neighbors(best);
  ASSERT_GT(plain.size(), 2u);
  std::vector<std::string> names;
  for (const auto& n : s->neighbors_measured(best, {})) names.push_back(n.name);
  std::vector<std::string> plain_names;
  for (const auto& n : plain) plain_names.push_back(n.name);
  EXPECT_EQ(names, plain_names);  // no profile: the predicted order
  size_t row_steps = 0;
  for (const auto& n : plain) row_steps += steps_rows(n);
  ASSERT_GT(row_steps, 0u);
  ASSERT_LT(row_steps, plain.size());
  // the softmax stage took a second (far above any prediction): its steps first, then the GEMM's
  auto by_rows = s->neighbors_measured(best, {{gemm, "gemm", "", 1e-3}, {rows, "rowwise", "", 1000.0}});
  ASSERT_EQ(by_rows.size(), plain.size());
  for (size_t i = 0; i < by_rows.size(); ++i) EXPECT_EQ(steps_rows(by_rows[i]), i < row_steps) << i << by_rows[i].name;
  // the GEMM took it (an f32x3s expansion's parts count for their stage): the GEMM's steps first
  auto by_gemm = s->neighbors_measured(best, {{gemm + "_p1", "gemm", "", 600.0}, {gemm + "_epi", "gemm", "", 400.0},
                                              {rows, "rowwise", "", 1e-3}});
  for (size_t i = 0; i < by_gemm.size(); ++i)
    EXPECT_EQ(steps_rows(by_gemm[i]), i >= plain.size() - row_steps) << i << by_gemm[i].name;
}

TEST(RealCompiler, EmitOnlyWritesTheKernelLibrarySource) {
  auto p = prepare("linear_bias_gelu.json", temp_dir("emit"));
  auto s = space_of(p);
  ASSERT_TRUE(s);
  RealCompilerOptions o;
  o.root = temp_dir("emit-build");
  o.emit_only = true;
  RealCompiler compiler(o, nullptr);
  search::Candidate c = s->ranked(1).at(0);
  search::CompileOutcome out = compiler.compile(c);
  ASSERT_TRUE(out.ok) << out.message;
  EXPECT_TRUE(out.so_path.empty());
  auto cu = fs_read(out.cu_path);
  ASSERT_TRUE(cu);
  EXPECT_NE(cu->find("ucut_run"), std::string::npos);
  EXPECT_NE(cu->find(c.hash), std::string::npos);
  search::Candidate broken = c;
  broken.program = "ucut 1\nthis is not a program\n";
  broken.ast = nullptr;  // text alone (a journal's, an LLM's) is parsed and checked
  search::CompileOutcome bad = compiler.compile(broken);
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.message.find("does not check"), std::string::npos);
}

// The space's candidates carry their checked program, and the build generates code from it
// without parsing the text again: for every lowered golden program, each of its top candidates'
// kernel library (every unit's source) is the one its canonical text, parsed and checked, gives.
TEST(RealSpace, CandidatesCarryTheProgramTheirTextChecksTo) {
  const std::string out = temp_dir("ast");
  int programs = 0, compared = 0;
  for (const auto& e : std::filesystem::directory_iterator(kGolden)) {
    const std::string file = e.path().filename().string();
    if (e.path().extension() != ".json" || !fs_exists(kGolden + e.path().stem().string() + ".ucut")) continue;
    PrepareOptions o;
    o.out_dir = out;
    auto p = pipeline_prepare(kGolden + file, o);
    if (!p) continue;  // the golden of a refusal
    space::SpaceOptions so;
    so.policy = p->policy;
    auto s = RealSpace::create(p->lowered.program, p->hw, so);
    ASSERT_TRUE(s) << file;
    ++programs;
    for (const search::Candidate& c : (*s)->ranked(6)) {
      ASSERT_TRUE(c.ast) << file << " " << c.name;
      EXPECT_EQ(dsl::dsl_print(*c.ast), c.program) << file;
      EXPECT_EQ(dsl::dsl_hash(*c.ast), c.hash) << file;
      auto checked = dsl::dsl_compile({"c.ucut", c.program});
      ASSERT_TRUE(checked.program) << c.program;
      auto from_ast = build::program_build_request(*c.ast, "c.ucut", c.hash, out, "/cutlass");
      auto from_text = build::program_build_request(*checked.program, "c.ucut", c.hash, out, "/cutlass");
      ASSERT_EQ(static_cast<bool>(from_ast), static_cast<bool>(from_text)) << file << " " << c.name;
      if (!from_ast) continue;
      EXPECT_EQ(from_ast->request.source, from_text->request.source) << file << " " << c.name;
      ASSERT_EQ(from_ast->request.units.size(), from_text->request.units.size()) << file;
      for (size_t u = 0; u < from_ast->request.units.size(); ++u)
        EXPECT_EQ(from_ast->request.units[u].source, from_text->request.units[u].source) << file << " " << c.name;
      EXPECT_EQ(from_ast->config_names, from_text->config_names) << file;
      ++compared;
    }
  }
  EXPECT_GE(programs, 40);
  EXPECT_GE(compared, 150);
}

TEST(Planning, WritesThePlanAndSaysNothingWasMeasured) {
  const std::string out = temp_dir("plan");
  auto p = prepare("linear_bias_gelu.json", out);
  PlanOptions po;
  po.top = 3;
  po.compile = false;  // emit only
  po.build_root = out + "/build";
  DriverOptions opt;
  opt.out_dir = out;
  auto r = plan_problem(p, po, opt, "no GPU: nothing was measured");
  ASSERT_TRUE(r) << r.error().render();
  ASSERT_EQ(r->plan.top.size(), 3u);
  for (const auto& c : r->plan.top) {
    ASSERT_TRUE(c.built);
    EXPECT_TRUE(c.built->ok) << c.built->message;
    // the TF32 rounding bound: a Linear + GELU under 1e-4 starts above tf32, and so does the plan
    EXPECT_GE(c.cand.rung, 1) << c.cand.name;
  }
  bool said = false;
  for (const auto& n : r->plan.notes) said = said || n.rfind("precision: TF32 rounds", 0) == 0;
  EXPECT_TRUE(said);
  const std::string dir = out + "/linear_bias_gelu";
  auto best = fs_read(dir + "/best.ucut");
  ASSERT_TRUE(best);
  EXPECT_EQ(*best, r->plan.top[0].cand.program);
  EXPECT_TRUE(fs_exists(dir + "/best.cu"));
  EXPECT_FALSE(fs_exists(dir + "/best.so"));
  EXPECT_TRUE(fs_exists(dir + "/lowered.ucut"));
  auto md = fs_read(dir + "/report.md");
  ASSERT_TRUE(md);
  EXPECT_NE(md->find("no GPU: nothing was measured"), std::string::npos);
  auto js = fs_read(dir + "/report.json");
  ASSERT_TRUE(js);
  auto j = nlohmann::json::parse(*js);
  EXPECT_EQ(j["measured"], false);
  EXPECT_EQ(j["plan"]["ranked"].size(), 3u);
  EXPECT_EQ(j["attempts"].size(), 0u);
  EXPECT_GT(j["sol"].size(), 0u);
}

TEST(EvalAdapter, RecordsBecomeOutcomes) {
  eval::RunRecord r;
  r.status = "ok";
  r.median_ms = 1.5;
  r.eval_seconds = 3;
  search::EvalOutcome e = eval_outcome_from_record(r);
  EXPECT_EQ(e.status, RunStatus::ok);
  EXPECT_DOUBLE_EQ(e.time_s, 1.5e-3);
  EXPECT_DOUBLE_EQ(e.gpu_seconds, 3);
  EXPECT_TRUE(e.stage_ms.empty());
  // the per-stage profile (docs/eval-contract.md, "Per-stage times"); an entry without a time dropped
  r.stage_ms = nlohmann::json::array({{{"stage", "t0"}, {"kind", "gemm"}, {"config", "g"}, {"ms", 1.0}},
                                      {{"stage", "y"}, {"kind", "elementwise"}, {"config", "e"}, {"ms", 0.5}},
                                      {{"stage", "z"}, {"ms", nullptr}}});
  e = eval_outcome_from_record(r);
  EXPECT_EQ(e.stage_ms, (search::StageTimes{{"t0", "gemm", "g", 1.0}, {"y", "elementwise", "e", 0.5}}));
  r.status = "rejected";
  r.error = "faster than 0.9 x t_SOL";
  e = eval_outcome_from_record(r);
  EXPECT_EQ(e.status, RunStatus::rejected);
  EXPECT_EQ(e.time_s, 0);
  EXPECT_TRUE(e.stage_ms.empty());  // only an ok candidate's
  r.status = "exploded";
  e = eval_outcome_from_record(r);
  EXPECT_EQ(e.status, RunStatus::launch_error);
  EXPECT_NE(e.message.find("exploded"), std::string::npos);
  r.status = "ok";
  r.median_ms = std::nan("");
  EXPECT_EQ(eval_outcome_from_record(r).status, RunStatus::launch_error);
  // A mismatch is a rounding mismatch only when the trials found it and every run repeated bit for bit.
  r.status = "mismatch";
  r.phase = "correctness";
  r.deterministic = true;
  r.correctness = {{"bitwise_repeatable", true}};
  EXPECT_TRUE(eval_outcome_from_record(r).rounding_mismatch);
  r.correctness = {{"bitwise_repeatable", false}};
  EXPECT_FALSE(eval_outcome_from_record(r).rounding_mismatch);
  r.correctness = {{"bitwise_repeatable", true}};
  r.deterministic = false;
  EXPECT_FALSE(eval_outcome_from_record(r).rounding_mismatch);
  r.deterministic = true;
  r.phase = "recheck";
  EXPECT_FALSE(eval_outcome_from_record(r).rounding_mismatch);
  r.phase = "bind";
  EXPECT_FALSE(eval_outcome_from_record(r).rounding_mismatch);
}

TEST(EvalAdapter, GpuCountsAndLists) {
  auto two = gpus_parse("2");
  ASSERT_TRUE(two);
  EXPECT_EQ(*two, (std::vector<int>{0, 1}));
  auto list = gpus_parse("0,3");
  ASSERT_TRUE(list);
  EXPECT_EQ(*list, (std::vector<int>{0, 3}));
  EXPECT_FALSE(gpus_parse("0"));
  EXPECT_FALSE(gpus_parse("two"));
}

}  // namespace
}  // namespace ucut::app

namespace ucut::app {
namespace {

// The search's view of the kernel store: a candidate that differs from a built one only in runtime
// knobs (raster, swizzle) or sizes has every unit stored; another tile has not. (A fake compiler
// writes the objects; UCUTLASS_CACHE points at a temporary cache.)
TEST(RealCompiler, KnowsWhichUnitsTheKernelStoreHolds) {
  const std::string dir = temp_dir("store");
  const char* old = std::getenv("UCUTLASS_CACHE");
  const std::string saved = old ? old : "";
  ::setenv("UCUTLASS_CACHE", (dir + "/cache").c_str(), 1);
  auto fake = std::make_shared<build::FakeCompiler>([](const build::CompileJob& job) {
    build::CompileOutcome o;
    o.ok = fs_write_atomic(job.output_path, "built").ok();
    return o;
  });
  RealCompilerOptions co;
  co.root = dir + "/build";
  co.cutlass_dir = dir;  // never read: the fake compiler does not include anything
  ASSERT_TRUE(fs_write_atomic(dir + "/include/cutlass/version.h", "").ok());
  RealCompiler compiler(co, fake);
  auto cand = [](int m, const std::string& raster, const std::string& tile) {
    search::Candidate c;
    c.program = "ucut 1\nin x : bf16[" + std::to_string(m) + ", 512]\nparam W : bf16[256, 512] = \"w\"\n"
                "out y : bf16[" + std::to_string(m) + ", 256]\nstage y = gemm(x, W.T) {\n  precision bf16\n  tile " +
                tile + "\n  cluster 1x1\n  raster " + raster + "\n  epilogue { y = relu(acc) }\n}\n";
    c.hash = std::to_string(m) + raster + tile;
    c.name = c.hash;
    return c;
  };
  const search::Candidate built = cand(1024, "along_m", "128x128x64");
  const auto units = compiler.units(built);
  ASSERT_EQ(units.size(), 1u) << "one stored kernel unit (the ABI unit is not counted)";
  EXPECT_EQ(units[0].rfind("stage/", 0), 0u) << units[0];
  EXPECT_FALSE(compiler.stored(units[0]));
  auto out = compiler.compile(built);
  ASSERT_TRUE(out.ok) << out.message;
  EXPECT_TRUE(compiler.stored(units[0]));
  EXPECT_EQ(compiler.units(cand(4096, "along_n", "128x128x64")), units) << "sizes and raster are runtime arguments";
  const auto other = compiler.units(cand(1024, "along_m", "128x256x64"));
  ASSERT_EQ(other.size(), 1u);
  EXPECT_NE(other, units);
  EXPECT_FALSE(compiler.stored(other[0]));
  if (old) ::setenv("UCUTLASS_CACHE", saved.c_str(), 1);
  else ::unsetenv("UCUTLASS_CACHE");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ucut::app

namespace ucut::app {
namespace {

// The fake worker (src/eval/testdata/fake_worker.sh), logging to `log` when given.
eval::WorkerOptions fake_worker_options(const std::string& log = "",
                                        std::chrono::milliseconds start_timeout = std::chrono::milliseconds(10000)) {
  eval::WorkerOptions wo;
  wo.argv = {"/bin/sh", std::string(UCUTLASS_SOURCE_DIR) + "/src/eval/testdata/fake_worker.sh"};
  if (!log.empty()) wo.env["FAKE_WORKER_LOG"] = log;
  wo.start_timeout = start_timeout;
  return wo;
}

std::vector<std::string> fake_worker_log(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("baseline", 0) == 0) out.push_back(line);
  return out;
}

// A suite puts torch.compile's baseline off until after the problem's first evaluation (against the
// fake worker: which baselines each request asks for, in order); by default it comes with eager's.
TEST(RealEvaluator, TorchCompilesBaselineCanComeAfterTheFirstEvaluation) {
  const std::string dir = temp_dir("late-baseline");
  for (int after : {0, 1}) {
    const std::string log = dir + "/worker" + std::to_string(after) + ".log";
    GpuWorkers workers({0}, fake_worker_options(log));
    RealEvaluatorOptions eo;
    eo.problem_py = dir + "/p.py";
    eo.compile_baseline_after = after;
    eo.eval.timeout = std::chrono::milliseconds(5000);
    RealEvaluator ev(workers, eo);
    const search::Baselines b = ev.baselines();
    EXPECT_DOUBLE_EQ(b.eager_s, 0.002);
    EXPECT_DOUBLE_EQ(b.compile_s, after ? 0.0 : 0.001);
    // The baseline's time inside the held worker is itemized (the suite's "GPU workers" line).
    const double base_s = workers.usage().baseline_s;
    EXPECT_GT(base_s, 0.0);
    EXPECT_LE(base_s + workers.usage().load_s, workers.usage().busy_s);
    search::Candidate c;
    c.name = c.hash = "c";
    search::CompileOutcome built;
    built.ok = true;
    built.so_path = dir + "/lib_ok.so";
    EXPECT_EQ(ev.evaluate(c, built).status, RunStatus::ok);
    EXPECT_FALSE(ev.late_compile_baseline_s().has_value()) << "after " << after;
    c.hash = "d";
    EXPECT_EQ(ev.evaluate(c, built).status, RunStatus::ok);
    if (after) {
      EXPECT_GT(workers.usage().baseline_s, base_s) << "the late torch.compile baseline is counted too";
      ASSERT_TRUE(ev.late_compile_baseline_s().has_value());
      EXPECT_DOUBLE_EQ(*ev.late_compile_baseline_s(), 0.001);
      EXPECT_EQ(fake_worker_log(log), (std::vector<std::string>{"baseline eager", "baseline compile"}));
    } else {
      EXPECT_FALSE(ev.late_compile_baseline_s().has_value());
      EXPECT_EQ(fake_worker_log(log), (std::vector<std::string>{"baseline eager compile"}));
    }
  }
  std::filesystem::remove_all(dir);
}

// Put off, torch.compile's baseline is still taken at once when the worker's cache holds it (an
// earlier run measured it): nothing is left to measure after the first evaluation.
TEST(RealEvaluator, APutOffBaselineComesFromTheCacheAtOnce) {
  const std::string dir = temp_dir("cached-baseline");
  const std::string log = dir + "/worker.log";
  eval::WorkerOptions wo = fake_worker_options(log);
  wo.env["FAKE_WORKER_CACHED_COMPILE"] = "1";
  GpuWorkers workers({0}, wo);
  RealEvaluatorOptions eo;
  eo.problem_py = dir + "/p.py";
  eo.compile_baseline_after = 1;
  eo.eval.timeout = std::chrono::milliseconds(5000);
  RealEvaluator ev(workers, eo);
  const search::Baselines b = ev.baselines();
  EXPECT_DOUBLE_EQ(b.eager_s, 0.002);
  EXPECT_DOUBLE_EQ(b.compile_s, 0.001);
  search::Candidate c;
  c.name = c.hash = "c";
  search::CompileOutcome built;
  built.ok = true;
  built.so_path = dir + "/lib_ok.so";
  for (const char* h : {"c", "d"}) {
    c.hash = h;
    EXPECT_EQ(ev.evaluate(c, built).status, RunStatus::ok);
  }
  ASSERT_TRUE(ev.late_compile_baseline_s().has_value());
  EXPECT_DOUBLE_EQ(*ev.late_compile_baseline_s(), 0.001);
  EXPECT_EQ(fake_worker_log(log), (std::vector<std::string>{"baseline eager"}));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ucut::app

namespace ucut::app {
namespace {

// One GPU worker, held while callers queue: a problem's first evaluation goes before everything
// else, then a caller whose problem is loaded on the worker, then arrival order.
TEST(GpuWorkers, FirstAttemptsThenTheLoadedProblemThenArrivalOrder) {
  const std::string dir = temp_dir("gpu-turns");
  const auto ms = std::chrono::milliseconds(60000);
  GpuWorkers workers({0}, fake_worker_options("", ms));
  // Waits for a condition the threads below bring about; false after a minute (a worker that never
  // started fails the test instead of hanging it).
  auto wait_for = [](const std::function<bool()>& done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!done()) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  };
  struct Call {
    std::string problem;
    GpuTurn turn;
  };
  auto run = [&](const std::vector<Call>& calls) {
    std::mutex mu;
    std::vector<std::string> order;
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    std::atomic<bool> held{false};
    std::thread holder([&] {
      ASSERT_TRUE(workers.with_worker(dir + "/p0.py", ms, [&](eval::WorkerClient&) {
        held = true;
        released.wait();
      }));
    });
    // Held, not merely loaded: p0 may still be loaded from the run before, with the worker free.
    const bool holding = wait_for([&] { return held.load(); });
    std::vector<std::thread> ts;
    for (size_t i = 0; i < calls.size(); ++i) {
      ts.emplace_back([&, c = calls[i]] {
        ASSERT_TRUE(workers.with_worker(dir + "/" + c.problem + ".py", ms, [&](eval::WorkerClient&) {
          std::lock_guard<std::mutex> lock(mu);
          order.push_back(c.problem);
        }, c.turn));
      });
      EXPECT_TRUE(holding && wait_for([&] { return workers.waiting() >= i + 1; })) << "caller " << i << " never queued";
    }
    release.set_value();
    holder.join();
    for (auto& t : ts) t.join();
    return order;
  };
  // p1 came first, but p0 is loaded on the worker; p2's first attempt goes before both.
  EXPECT_EQ(run({{"p1", GpuTurn::normal}, {"p0", GpuTurn::normal}, {"p2", GpuTurn::first_attempt}}),
            (std::vector<std::string>{"p2", "p1", "p0"}));
  EXPECT_EQ(run({{"p1", GpuTurn::normal}, {"p0", GpuTurn::normal}}), (std::vector<std::string>{"p0", "p1"}));
  EXPECT_EQ(run({{"p3", GpuTurn::normal}, {"p1", GpuTurn::normal}, {"p2", GpuTurn::normal}}),
            (std::vector<std::string>{"p3", "p1", "p2"}));
  // Loads: p0 p2 p1 p0 | (p0 still loaded) p1 | p0 p3 p1 p2; every hold counted as busy.
  const auto use = workers.usage();
  EXPECT_EQ(use.loads, 9);
  EXPECT_EQ(use.kept_loads, 0);
  EXPECT_GT(use.busy_s, 0.0);
  EXPECT_LE(use.load_s, use.busy_s);
  std::filesystem::remove_all(dir);
}

// A load the worker answers from a problem it kept (its answer says "kept") is counted apart.
TEST(GpuWorkers, LoadsOfKeptProblemsAreCountedApart) {
  const auto ms = std::chrono::milliseconds(5000);
  GpuWorkers workers({0}, fake_worker_options());
  for (const char* p : {"/x/kept_a.py", "/x/b.py", "/x/kept_a.py", "/x/kept_a.py"})
    ASSERT_TRUE(workers.with_worker(p, ms, [](eval::WorkerClient&) {}));
  const auto use = workers.usage();
  EXPECT_EQ(use.loads, 3);  // the last call found kept_a loaded: no request
  EXPECT_EQ(use.kept_loads, 2);
  EXPECT_LE(use.kept_load_s, use.load_s);
}

}  // namespace
}  // namespace ucut::app

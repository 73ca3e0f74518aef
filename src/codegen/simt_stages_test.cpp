// Tests of the non-GEMM stage emitters (rowwise, reduce, scan, elementwise): emitted code shape,
// user errors, the `auto` plans, golden files (tests/golden/codegen_simt; UCUT_UPDATE_GOLDEN=1
// rewrites them) and, with UCUT_TEST_NVCC=1 (the CTest test `codegen_simt_nvcc`), a real nvcc
// compile of one generated stage per kind under /tmp/ucut-nvcc.lock.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "codegen/functors.h"
#include "codegen/library.h"
#include "codegen/simt_common.h"
#include "codegen/stage_emitter.h"
#include "dsl/dsl.h"
#include "dsl/simt_plan.h"

namespace ucut::codegen {
namespace {

using dsl::DType;

dsl::Tensor T(const std::string& n, DType d, std::vector<int64_t> s,
              dsl::TensorRole r = dsl::TensorRole::in) {
  dsl::Tensor t;
  t.name = n;
  t.dtype = d;
  t.shape = std::move(s);
  t.role = r;
  return t;
}

dsl::Program one_stage(std::vector<dsl::Tensor> ts, decltype(dsl::Stage::body) body) {
  dsl::Program p;
  p.name = "t";
  p.tensors = std::move(ts);
  dsl::Stage st;
  st.name = "s0";
  st.outputs = {"y"};
  st.body = std::move(body);
  p.stages.push_back(st);
  return p;
}

dsl::Program softmax_program(int64_t rows, int64_t cols) {
  dsl::RowwiseStage rs;
  rs.op = "softmax";
  rs.input = "x";
  return one_stage({T("x", DType::f32, {rows, cols}), T("y", DType::f32, {rows, cols}, dsl::TensorRole::out)}, rs);
}

dsl::Program colsum_program() {
  dsl::ReduceStage rs;
  rs.op = "sum";
  rs.inputs = {"x"};
  rs.dims = {0};
  return one_stage({T("x", DType::f32, {16384, 8192}), T("y", DType::f32, {8192}, dsl::TensorRole::out)}, rs);
}

dsl::Program cumsum_program() {
  dsl::ScanStage sc;
  sc.op = "cumsum";
  sc.input = "x";
  sc.exclusive = true;
  sc.reverse = true;
  sc.mask = "m";
  return one_stage({T("x", DType::bf16, {33, 1000}), T("m", DType::boolean, {33, 1000}),
                    T("y", DType::bf16, {33, 1000}, dsl::TensorRole::out)}, sc);
}

dsl::ExprPtr load(const std::string& n, dsl::LoadMode m) {
  auto e = std::make_shared<dsl::Expr>();
  e->kind = dsl::Expr::Kind::load;
  e->name = n;
  e->mode = m;
  return e;
}

dsl::Program elementwise_program() {
  auto add = std::make_shared<dsl::Expr>();
  add->kind = dsl::Expr::Kind::binary;
  add->op = dsl::BinOp::add;
  add->args = {load("x", dsl::LoadMode::full), load("b", dsl::LoadMode::full)};
  auto g = std::make_shared<dsl::Expr>();
  g->kind = dsl::Expr::Kind::unary;
  g->fn = dsl::Fn::leaky_relu;
  g->params = {0.2};
  g->args = {add};
  dsl::ElementwiseStage es;
  dsl::EpilogueStmt s;
  s.kind = dsl::EpilogueStmt::Kind::store;
  s.name = "y";
  s.value = g;
  es.body.stmts = {s};
  return one_stage({T("x", DType::f16, {64, 4096}), T("b", DType::f16, {4096}),
                    T("y", DType::f16, {64, 4096}, dsl::TensorRole::out)}, es);
}

dsl::Program ce_program() {
  dsl::ReduceStage rs;
  rs.op = "cross_entropy";
  rs.inputs = {"x", "t"};
  return one_stage({T("x", DType::f32, {4096, 1000}), T("t", DType::i64, {4096}),
                    T("y", DType::f32, {1}, dsl::TensorRole::out)}, rs);
}

TEST(SimtRowwise, SoftmaxIsOneBlockPerRowHeldInRegisters) {
  auto p = softmax_program(4096, 16384);
  auto c = codegen_emit_rowwise(p, 0);
  ASSERT_TRUE(c.ok()) << c.error().render();
  EXPECT_FALSE(c->needs_cutlass);
  EXPECT_EQ(c->launcher, "ucut_s0_launch");
  EXPECT_EQ(c->workspace_expr, "0");
  EXPECT_EQ(c->config_name, "rowwise_softmax_t512_g512_v4_i8_p1");
  EXPECT_NE(c->definitions.find("rowwise_kernel<ucut_simt::kSoftmax, float, float, float, 512, 512, 4, 8, true"),
            std::string::npos);
}

TEST(SimtRowwise, ShortRowsUseSubWarpsLongRowsStream) {
  auto a = dsl::simt_plan_rowwise(4096, 64, 4, {});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->group, 4);
  EXPECT_TRUE(a->cached);
  auto b = dsl::simt_plan_rowwise(8, 100000, 4, {});
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->cached);
  EXPECT_EQ(b->group, 1024);
  dsl::SimtKnobs k;
  k.passes = 1;
  EXPECT_FALSE(dsl::simt_plan_rowwise(8, 1000000, 4, k).ok());
}

TEST(SimtRowwise, LongRowsGoToAClusterInRowwiseStagesOnly) {
  auto a = dsl::simt_plan_rowwise(8192, 32768, 4, {}, /*cluster_ok=*/true);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->cluster, 4);
  EXPECT_EQ(a->threads, 128);
  EXPECT_EQ(a->items, 16);
  EXPECT_TRUE(a->cached);
  auto b = dsl::simt_plan_rowwise(8192, 32768, 4, {});  // cross-entropy's rows: no cluster
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->cluster, 1);
  EXPECT_EQ(b->threads, 1024);
  // 100 000 floats: 8 blocks of 256 threads keep it in registers instead of two sweeps
  auto c = dsl::simt_plan_rowwise(8, 100000, 4, {}, true);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->cluster, 8);
  EXPECT_TRUE(c->cached);
  EXPECT_LE(c->items * c->vec, 64);  // 64 floats a thread at <= 512 threads
  auto d = dsl::simt_plan_rowwise(64, 16384, 4, {}, true);  // fits one 512-thread block
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->cluster, 1);
  dsl::SimtKnobs k;
  k.threads = 1024;
  auto e = dsl::simt_plan_rowwise(8192, 32768, 4, k, true);  // threads set: no automatic cluster
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->cluster, 1);
}

// Parts of more than 2048 vectors a block (a 128256-entry vocabulary over 8 blocks) move 8 bytes
// an access in 512 threads (runs M-O); an explicit vector width is kept; clusters of 16 only by hand.
TEST(SimtRowwise, VeryLongRowsUseEightByteVectorsInAClusterOfEight) {
  auto a = dsl::simt_plan_rowwise(2048, 128256, 4, {}, true);
  ASSERT_TRUE(a.ok()) << a.error().render();
  EXPECT_EQ(a->cluster, 8);
  EXPECT_EQ(a->vec, 2);
  EXPECT_EQ(a->threads, 512);
  EXPECT_TRUE(a->cached);
  EXPECT_LE(a->items * a->vec, 32);
  dsl::SimtKnobs k;
  k.vector_width = 4;
  auto b = dsl::simt_plan_rowwise(2048, 128256, 4, k, true);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->vec, 4);
  EXPECT_EQ(b->cluster, 8);
  dsl::SimtKnobs c16;
  c16.cluster = 16;
  auto c = dsl::simt_plan_rowwise(2048, 131072, 4, c16, true);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->cluster, 16);
  c16.cluster = 32;
  EXPECT_FALSE(dsl::simt_plan_rowwise(2048, 131072, 4, c16, true).ok());
}

// A cluster splits a column reduction's rows (splits = cluster, no workspace); a row reduction or
// a cluster over 8 is refused with the reason.
TEST(SimtReduce, ClusterSplitsColumnReductionsOnly) {
  dsl::SimtKnobs k;
  k.cluster = 4;
  auto a = dsl::simt_plan_reduce(/*inner=*/false, 16384, 16384, 16384, 4, k);
  ASSERT_TRUE(a.ok()) << a.error().render();
  EXPECT_EQ(a->cluster, 4);
  EXPECT_EQ(a->splits, 4);
  EXPECT_EQ(a->r_chunk, 4096);
  auto b = dsl::simt_plan_reduce(/*inner=*/true, 16384, 16384, 16384, 4, k);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("column reductions"), std::string::npos);
  k.cluster = 16;
  auto c = dsl::simt_plan_reduce(false, 16384, 16384, 16384, 4, k);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("column reduction's cluster"), std::string::npos);
}

// Column reductions default to 512 threads and 8-byte accesses (two fp32, four bf16; run Q);
// an explicit vector width or thread count is kept.
TEST(SimtReduce, ColumnReductionsUseEightByteAccessesIn512Threads) {
  auto a = dsl::simt_plan_reduce(/*inner=*/false, 16384, 16384, 16384, 4, {});
  ASSERT_TRUE(a.ok()) << a.error().render();
  EXPECT_EQ(a->threads, 512);
  EXPECT_EQ(a->vec, 2);
  auto h = dsl::simt_plan_reduce(false, 16384, 16384, 16384, 2, {});
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->vec, 4);
  dsl::SimtKnobs k;
  k.vector_width = 4;
  k.threads = 1024;
  auto b = dsl::simt_plan_reduce(false, 16384, 16384, 16384, 4, k);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->vec, 4);
  EXPECT_EQ(b->threads, 1024);
  auto r = dsl::simt_plan_reduce(/*inner=*/true, 16384, 16384, 16384, 4, {});  // rows keep 16 bytes
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->vec, 4);
}

// Elementwise: one block per threads * items_per_thread consecutive vectors (4 by default; run T);
// by default 128 threads and 8-byte accesses of fp32, 16-byte of 16-bit types (run U).
TEST(SimtElementwise, OneBlockPerChunkOfVectors) {
  auto a = dsl::simt_plan_elementwise(int64_t{16384} * 16384, 16384, 4, {});
  ASSERT_TRUE(a.ok()) << a.error().render();
  EXPECT_EQ(a->threads, 128);
  EXPECT_EQ(a->vec, 2);
  EXPECT_EQ(a->unroll, 4);
  EXPECT_EQ(a->blocks, int64_t{16384} * 16384 / 2 / (128 * 4));
  auto h = dsl::simt_plan_elementwise(int64_t{16384} * 16384, 16384, 2, {});
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->vec, 8);
  dsl::SimtKnobs k;
  k.items_per_thread = 8;
  k.threads = 128;
  auto b = dsl::simt_plan_elementwise(1000, 1000, 4, k);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->unroll, 8);
  EXPECT_EQ(b->blocks, 1);  // 250 vectors, 1024 a block
  k.items_per_thread = 3;
  auto c = dsl::simt_plan_elementwise(1000, 1000, 4, k);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("items per thread 3"), std::string::npos);
}

TEST(SimtRowwise, ClusterLaunchIsEmitted) {
  auto p = softmax_program(8192, 32768);
  auto c = codegen_emit_rowwise(p, 0);
  ASSERT_TRUE(c.ok()) << c.error().render();
  EXPECT_EQ(c->config_name, "rowwise_softmax_t128_g128_v4_i16_p1_c4");
  EXPECT_NE(c->definitions.find("ucut_simt::launch_clustered("), std::string::npos);
  EXPECT_NE(c->definitions.find("4, 32768LL, 128, args.stream"), std::string::npos) << c->definitions;
}

// Every program the checker accepts gets a launch plan from the code generator: a grid of SIMT
// knob settings over stages of every kind, each either refused by the checker (with a
// diagnostic) or emitted.
TEST(SimtChecker, CheckedKnobsAlwaysEmit) {
  const std::vector<std::pair<std::string, std::string>> stages = {
      {"in x : f32[512, 32768]\nout y : f32[512, 32768]\n", "stage y = rowwise log_softmax(x) {\n"},
      {"in x : f16[1024, 4096]\nout y : f16[1024, 4096]\n", "stage y = rowwise layer_norm(x) {\n"},
      {"in x : f32[8, 64, 32, 32]\nout y : f32[8, 64, 32, 32]\n", "stage y = rowwise group_norm(x, groups=8) {\n"},
      {"in x : f32[4096, 96]\nout y : f32[4096]\n", "stage y = rowwise max(x) {\n"},
      {"in x : f32[4096, 1000]\nin t : i64[4096]\nout y : f32[]\n",
       "stage y = reduce cross_entropy(x, t) {\n"},
      {"in x : f32[4096, 1024]\nout y : f32[1024]\n", "stage y = reduce sum(x, dims=[0]) {\n"},
      {"in x : bf16[64, 4096, 8]\nout y : f32[64, 8]\n", "stage y = reduce max(x, dims=[1]) {\n"},
      {"in x : f32[4096, 1024]\nout y : f32[4096]\n", "stage y = reduce mean(x, dims=[1]) {\n"},
      {"in x : f32[256, 4096]\nout y : f32[256, 4096]\n", "stage y = scan cumsum(x, dim=1) {\n"},
      {"in x : f32[256, 1024]\nout y : f16[256, 1024]\n", "stage y = elementwise {\n"},
  };
  const std::vector<std::string> threads = {"auto", "64", "256", "1024"}, rpb = {"auto", "1", "2", "32"},
                                 vec = {"auto", "2", "4", "8"}, items = {"auto", "2", "16"},
                                 passes = {"auto", "1", "2"}, cluster = {"auto", "2", "8"};
  int checked = 0, refused = 0;
  for (const auto& [decls, head] : stages) {
    const bool rowwise = head.find("rowwise") != std::string::npos;
    const bool rows = rowwise || head.find("reduce") != std::string::npos;
    const bool ew = head.find("elementwise") != std::string::npos;
    for (const auto& th : threads)
      for (const auto& r : rows ? rpb : std::vector<std::string>{"auto"})
        for (const auto& v : vec)
          for (const auto& it : ew ? std::vector<std::string>{"auto"} : items)
            for (const auto& ps : rows ? passes : std::vector<std::string>{"auto"})
              for (const auto& cl : rowwise ? cluster : std::vector<std::string>{"auto"}) {
                std::string text = "ucut 1\n" + decls + head + "  threads " + th + "\n  vector_width " + v + "\n";
                if (!ew) text += "  items_per_thread " + it + "\n";
                if (rows) text += "  rows_per_block " + r + "\n  passes " + ps + "\n";
                if (rowwise) text += "  cluster " + cl + "\n";
                text += ew ? "  body {\n    y = relu(x)\n  }\n}\n" : "}\n";
                auto res = dsl::dsl_compile({"grid.ucut", text});
                if (!res.program) {
                  ++refused;
                  continue;
                }
                ++checked;
                auto code = codegen_emit_stage(*res.program, 0);
                ASSERT_TRUE(code.ok()) << text << "\n" << code.error().render();
              }
  }
  EXPECT_GT(checked, 100);  // the grid holds both kinds
  EXPECT_GT(refused, 100);
}

TEST(SimtRowwise, RejectsBadInput) {
  auto p = softmax_program(8, 100);
  std::get<dsl::RowwiseStage>(p.stages[0].body).op = "softmx";
  auto c = codegen_emit_rowwise(p, 0);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("unknown rowwise op 'softmx'"), std::string::npos);
  EXPECT_NE(c.error().hint.find("softmax"), std::string::npos);
  auto q = softmax_program(8, 100);
  q.tensors[1].shape = {8};
  EXPECT_FALSE(codegen_emit_rowwise(q, 0).ok());
  auto r = softmax_program(8, 100);
  std::get<dsl::RowwiseStage>(r.stages[0].body).knobs.vector_width = 3;
  auto e = codegen_emit_rowwise(r, 0);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("vector width 3"), std::string::npos);
}

TEST(SimtReduce, ColumnSumSplitsAcrossBlocks) {
  auto p = colsum_program();
  auto c = codegen_emit_reduce(p, 0);
  ASSERT_TRUE(c.ok()) << c.error().render();
  EXPECT_NE(c->definitions.find("reduce_outer_kernel<ucut_simt::kRedSum"), std::string::npos);
  EXPECT_NE(c->definitions.find("reduce_finalize_kernel"), std::string::npos);
  EXPECT_NE(c->workspace_expr, "0");
}

TEST(SimtReduce, CrossEntropyUsesTheRowKernelAndWorkspace) {
  auto p = ce_program();
  auto c = codegen_emit_reduce(p, 0);
  ASSERT_TRUE(c.ok()) << c.error().render();
  EXPECT_EQ(c->workspace_expr, "size_t(4096) * 2 * sizeof(float)");
  EXPECT_NE(c->definitions.find("kCrossEntropyRow"), std::string::npos);
  auto q = ce_program();
  q.tensors[1].dtype = DType::i32;
  auto e = codegen_emit_reduce(q, 0);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("must be i64"), std::string::npos);
}

// A loss's reduction setting reaches the kernel: mean scales by 1/elements, sum by 1, batchmean
// by 1/rows (reduction=sum was computed as a mean until run I's loss_kl_div exposed it).
TEST(SimtReduce, LossReductionSettingSetsTheScale) {
  auto scale_of = [](const std::string& reduction) {
    dsl::ReduceStage rs;
    rs.op = "kl_div";
    rs.inputs = {"x", "t"};
    rs.reduction = reduction;
    auto p = one_stage({T("x", DType::f32, {64, 128}), T("t", DType::f32, {64, 128}),
                        T("y", DType::f32, {1}, dsl::TensorRole::out)}, rs);
    auto c = codegen_emit_reduce(p, 0);
    EXPECT_TRUE(c.ok()) << c.error().render();
    const std::string d = c.ok() ? c->definitions : "";
    const size_t at = d.find("p.scale = ");
    return at == std::string::npos ? std::string() : d.substr(at + 10, d.find(';', at) - at - 10);
  };
  EXPECT_EQ(scale_of("sum"), "1.0f");
  EXPECT_EQ(scale_of("batchmean"), "0.015625f");   // 1/64
  EXPECT_EQ(scale_of("mean"), "0.000122070312f");  // 1/8192
}

TEST(SimtReduce, MergesNonContiguousDims) {
  dsl::ReduceStage rs;
  rs.op = "mean";
  rs.inputs = {"x"};
  rs.dims = {0, 2};
  auto p = one_stage({T("x", DType::f32, {16, 64, 49}), T("y", DType::f32, {64}, dsl::TensorRole::out)}, rs);
  auto c = codegen_emit_reduce(p, 0);
  ASSERT_TRUE(c.ok()) << c.error().render();
  EXPECT_NE(c->definitions.find("reduce_inner_kernel<ucut_simt::kRedSum, ucut_simt::kNoLoss, float, float, 128, 1, false"),
            std::string::npos);
  EXPECT_NE(c->definitions.find("p.red = ucut_simt::Groups{1, {16LL}, {3136LL}}"), std::string::npos);
  std::get<dsl::ReduceStage>(p.stages[0].body).dims = {0, 5};
  EXPECT_FALSE(codegen_emit_reduce(p, 0).ok());
}

TEST(SimtScan, ReverseExclusiveMaskedRow) {
  auto p = cumsum_program();
  auto c = codegen_emit_scan(p, 0);
  ASSERT_TRUE(c.ok()) << c.error().render();
  EXPECT_NE(c->definitions.find("scan_row_kernel<ucut_simt::kCumsum, __nv_bfloat16, bool, __nv_bfloat16"),
            std::string::npos);
  EXPECT_NE(c->definitions.find("true, true>"), std::string::npos);
}

TEST(SimtElementwise, BroadcastBiasIsAVectorLoad) {
  auto p = elementwise_program();
  auto c = codegen_emit_elementwise(p, 0);
  ASSERT_TRUE(c.ok()) << c.error().render();
  EXPECT_NE(c->definitions.find("ucut_fn_leaky_relu("), std::string::npos);
  EXPECT_NE(c->definitions.find("load_vec<__half, 8>(static_cast<const __half*>(p.t1), ((i / 1LL) % 4096LL) * 1LL"),
            std::string::npos);
  auto q = elementwise_program();
  q.tensors[1].shape = {4095};
  auto e = codegen_emit_elementwise(q, 0);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("does not broadcast"), std::string::npos);
}

TEST(SimtFunctors, EveryFunctionHasADeviceBody) {
  const std::string s = codegen_functors_source() + codegen_rounding_source();
#define UCUT_FN(id, name, arity, nparams, defaults, formula) \
  EXPECT_NE(s.find("float ucut_fn_" name "("), std::string::npos) << name;
#include "dsl/functions.def"
#undef UCUT_FN
  EXPECT_EQ(codegen_float_literal(0.5), "0.5f");
  EXPECT_EQ(codegen_float_literal(2), "2.0f");
}

// ---- golden files and the nvcc compile ------------------------------------------------------

std::string golden_dir() { return std::string(UCUTLASS_SOURCE_DIR) + "/tests/golden/codegen_simt"; }

// A golden case's program, or a test failure naming it (and nothing to emit).
std::optional<dsl::Program> case_program(const std::string& file, const std::string& text, const char* what) {
  auto res = dsl::dsl_compile({file, text});
  if (!res.program) ADD_FAILURE() << what << " program refused";
  return std::move(res.program);
}

std::vector<std::pair<std::string, Result<StageCode>>> golden_cases() {
  std::vector<std::pair<std::string, Result<StageCode>>> v;
  v.emplace_back("rowwise_softmax", codegen_emit_rowwise(softmax_program(4096, 16384), 0));
  {
    // a 32 Ki-column layer norm split across a cluster of blocks (two cluster all-reduces)
    auto p = softmax_program(8192, 32768);
    std::get<dsl::RowwiseStage>(p.stages[0].body).op = "layer_norm";
    v.emplace_back("rowwise_layer_norm_cluster", codegen_emit_rowwise(p, 0));
  }
  {
    // GroupNorm(32, 256) of [16, 256, 128, 128]: rows of (sample, group), 131072 elements a
    // row split across a cluster of 8, per-channel weight and bias
    auto res = case_program(
        "group_norm.ucut",
        "ucut 1\nin x : f32[16, 256, 128, 128]\nin w : f32[256]\nin b : f32[256]\n"
        "out y : f32[16, 256, 128, 128]\nstage y = rowwise group_norm(x, groups=32, weight=w, bias=b) {\n}\n",
        "group_norm");
    if (res) v.emplace_back("rowwise_group_norm", codegen_emit_rowwise(*res, 0));
  }
  {
    // a cluster of 16 (sm_90's non-portable size): the launcher allows it once per kernel
    auto p = softmax_program(2048, 131072);
    auto& k = std::get<dsl::RowwiseStage>(p.stages[0].body).knobs;
    k.cluster = 16;
    k.threads = 128;
    v.emplace_back("rowwise_softmax_cluster16", codegen_emit_rowwise(p, 0));
  }
  {
    // rows of 65,535 floats (kb1_l2_norm): scalar vectors, split across a cluster of 4 in parts of
    // 16,384, the last one 16,383: a cluster needs no equal parts
    auto res = case_program(
        "l2_odd.ucut",
        "ucut 1\nin x : f32[256, 65535]\nout y : f32[256, 65535]\n"
        "stage y = rowwise l2_normalize(x, eps=0) {\n  threads 1024\n  cluster 4\n}\n",
        "uneven cluster");
    if (res) v.emplace_back("rowwise_l2_normalize_uneven_cluster", codegen_emit_rowwise(*res, 0));
  }
  {
    // the ops over several inputs: the streaming multi-input kernel, an epilogue on the row value
    auto res = case_program(
        "cosine.ucut",
        "ucut 1\nin x : f32[4096, 8192]\nin y : f32[4096, 8192]\nout c : f32[4096]\n"
        "stage c = rowwise cosine_similarity(x, y) {\n  epilogue { c = 1 - acc }\n}\n",
        "cosine_similarity");
    if (res) v.emplace_back("rowwise_cosine_similarity", codegen_emit_rowwise(*res, 0));
    auto tri = case_program(
        "triplet.ucut",
        "ucut 1\nin a : bf16[1000, 768]\nin p : bf16[1000, 768]\nin n : bf16[1000, 768]\nout r : f32[1000]\n"
        "stage r = rowwise triplet_margin(a, p, n, margin=0.5) {\n}\n",
        "triplet_margin");
    if (tri) v.emplace_back("rowwise_triplet_margin", codegen_emit_rowwise(*tri, 0));
  }
  v.emplace_back("reduce_col_sum", codegen_emit_reduce(colsum_program(), 0));
  {
    // the reduced rows split across a cluster of 4 blocks, combined in distributed shared memory
    auto p = colsum_program();
    auto& k = std::get<dsl::ReduceStage>(p.stages[0].body).knobs;
    k.cluster = 4;
    k.threads = 256;
    v.emplace_back("reduce_col_sum_cluster", codegen_emit_reduce(p, 0));
  }
  v.emplace_back("reduce_cross_entropy", codegen_emit_reduce(ce_program(), 0));
  {
    // the column kernel's pair states: online (max, sum-exp), and a value with its index
    auto res = case_program(
        "columns.ucut",
        "ucut 1\nin x : f32[16384, 8192]\nout l : f32[8192]\nout v : f32[8192]\nout i : i64[8192]\n"
        "stage l = reduce logsumexp(x, dims=[0])\nstage (v, i) = reduce max(x, dims=[0]) { threads 256 }\n",
        "column logsumexp/max");
    if (res) {
      v.emplace_back("reduce_col_logsumexp", codegen_emit_reduce(*res, 0));
      v.emplace_back("reduce_col_max_indices", codegen_emit_reduce(*res, 1));
    }
  }
  {
    // kb1_argmax_dim's column argmax: 4-byte columns, 16 reduced rows loaded ahead (each thread's
    // index a 32-bit row offset; SimtNvcc checks that it does not spill)
    auto res = case_program(
        "argmax16.ucut",
        "ucut 1\nin x : f32[128, 4096, 4095]\nout i : i64[128, 4095]\n"
        "stage i = reduce argmax(x, dims=[1]) {\n  threads 512\n  vector_width 1\n  items_per_thread 16\n}\n",
        "column argmax");
    if (res) v.emplace_back("reduce_col_argmax_u16", codegen_emit_reduce(*res, 0));
  }
  {
    // a loss whose prologue maps the prediction: kl_div(log(p), q) reading p once
    auto res = case_program(
        "kl_log.ucut",
        "ucut 1\nin p : f32[64, 100]\nin q : f32[64, 100]\nout y : f32[]\n"
        "stage y = reduce kl_div(p, q, reduction=batchmean) {\n  prologue { p = log(acc) }\n}\n",
        "kl_div prologue");
    if (res) v.emplace_back("reduce_kl_div_log_prologue", codegen_emit_reduce(*res, 0));
  }
  v.emplace_back("scan_cumsum_rev_excl_mask", codegen_emit_scan(cumsum_program(), 0));
  {
    // order torch: PyTorch's fp32 row-scan order (16384 rows of 16384: 32-element chunks)
    dsl::ScanStage sc;
    sc.op = "cumsum";
    sc.input = "x";
    sc.reverse = true;
    sc.mask = "m";
    sc.knobs.order = dsl::ScanOrder::torch;
    v.emplace_back("scan_cumsum_torch_rev_mask",
                   codegen_emit_scan(one_stage({T("x", DType::f32, {16384, 16384}), T("m", DType::boolean, {16384, 16384}),
                                                T("y", DType::f32, {16384, 16384}, dsl::TensorRole::out)},
                                               sc),
                                     0));
  }
  {
    // order torch on rows not 16-byte aligned (999 columns): 4-byte copies only
    dsl::ScanStage sc;
    sc.op = "cumsum";
    sc.input = "x";
    sc.exclusive = true;
    sc.knobs.order = dsl::ScanOrder::torch;
    sc.knobs.threads = 128;
    sc.knobs.items_per_thread = 16;
    v.emplace_back("scan_cumsum_torch_excl_odd",
                   codegen_emit_scan(one_stage({T("x", DType::f32, {8192, 999}),
                                                T("y", DType::f32, {8192, 999}, dsl::TensorRole::out)},
                                               sc),
                                     0));
  }
  v.emplace_back("elementwise_leaky_relu_bias", codegen_emit_elementwise(elementwise_program(), 0));
  {
    // PyTorch's roundings of 16-bit intermediates (the lowering of a bf16 or f16 graph)
    auto res = case_program(
        "rounding.ucut",
        "ucut 1\nin g : bf16[4096, 1024]\nin u : bf16[4096, 1024]\nout y : f16[4096, 1024]\n"
        "stage y = elementwise {\n  body {\n    let s = round_bf16(silu(g))\n"
        "    y = round_f16(s * u) + 1\n  }\n}\n",
        "rounding");
    if (res) v.emplace_back("elementwise_rounding_16bit", codegen_emit_elementwise(*res, 0));
  }
  {
    // the element's position: attention's causal mask in a softmax prologue over batched fp32
    // scores (row modulo the matrix's 1024 rows), and a lower triangle in an elementwise body
    auto res = case_program(
        "positions.ucut",
        "ucut 1\nin s : f32[16, 1024, 1024]\nin x : f32[8, 96, 80]\nout p : bf16[16, 1024, 1024]\n"
        "out t : f32[8, 96, 80]\n"
        "stage p = rowwise softmax(s) {\n  prologue { s = where(le(col, row), acc, -inf) }\n}\n"
        "stage t = elementwise {\n  body { t = where(ge(row, col), x, 0) }\n}\n",
        "positions");
    if (res) {
      v.emplace_back("rowwise_softmax_causal", codegen_emit_rowwise(*res, 0));
      v.emplace_back("elementwise_tril", codegen_emit_elementwise(*res, 1));
    }
  }
  {
    // views: minGPT's k head split, [B, H, T, D] of the [B, T, 3C] projections (one vector at a
    // time: stride 1 in the last dim), and a transpose through the permuting form's tiles
    auto res = case_program(
        "views.ucut",
        "ucut 1\nin t0 : f32[16, 1024, 2304]\nin x : f32[96, 80]\nout k : f32[16, 12, 1024, 64]\n"
        "out xt : f32[80, 96]\nout kf : f32[192, 1024, 64]\n"
        "view kv : f32[16, 12, 1024, 64] = t0 strides [2359296, 64, 2304, 1] offset 768\n"
        "view xv : f32[80, 96] = x strides [1, 80]\n"
        "stage k = elementwise { body { k = kv } }\n"
        "stage xt = elementwise { body { xt = 2 * xv } }\n"
        "stage kf = elementwise { body { kf = kv } }\n",
        "views");
    if (res) {
      v.emplace_back("elementwise_view_heads", codegen_emit_elementwise(*res, 0));
      v.emplace_back("elementwise_view_transpose", codegen_emit_elementwise(*res, 1));
      // the same view into a batched GEMM's folded operand [B*H, T, D]: the output's element order
      v.emplace_back("elementwise_view_folded", codegen_emit_elementwise(*res, 2));
    }
  }
  {
    // fused attention: causal bf16 over a batch of heads (Hopper's kernel, the default, and 128-thread
    // blocks of mma.sync); f16 with Lq != Lk, Dv != D, a given scale and 256-thread blocks; f32
    // (3xTF32); grouped-query (8 heads a k/v head); f32 with head dim 96
    auto res = case_program(
        "attention.ucut",
        "ucut 1\nin q : bf16[8, 32, 4096, 128]\nin k : bf16[8, 32, 4096, 128]\nin v : bf16[8, 32, 4096, 128]\n"
        "in q2 : f16[3, 96, 128]\nin k2 : f16[3, 160, 128]\nin v2 : f16[3, 160, 64]\n"
        "in q3 : f32[16, 32, 1024, 128]\nin kg : bf16[8, 4, 4096, 128]\n"
        "out o : bf16[8, 32, 4096, 128]\nout o2 : f16[3, 96, 64]\nout o3 : f32[16, 32, 1024, 128]\n"
        "out og : bf16[8, 32, 4096, 128]\nout om : bf16[8, 32, 4096, 128]\n"
        "in q4 : f32[1024, 512, 96]\nout o4 : f32[1024, 512, 96]\n"
        "stage o = attention(q, k, v, causal=true)\n"
        "stage o2 = attention(q2, k2, v2, scale=0.05) { threads 256 }\n"
        "stage o3 = attention(q3, q3, q3)\n"
        "stage og = attention(q, kg, kg, causal=true)\n"
        "stage om = attention(q, k, v, causal=true) { threads 128 }\n"
        "stage o4 = attention(q4, q4, q4, causal=true, scale=0.102)\n",
        "attention");
    if (res) {
      v.emplace_back("attention_bf16_causal", codegen_emit_attention(*res, 0));
      v.emplace_back("attention_f16_rect", codegen_emit_attention(*res, 1));
      v.emplace_back("attention_f32", codegen_emit_attention(*res, 2));
      v.emplace_back("attention_gqa", codegen_emit_attention(*res, 3));
      v.emplace_back("attention_bf16_causal_mma", codegen_emit_attention(*res, 4));
      // f32 with minGPT's 96-wide heads (causal, 1024 matrices of 512 rows)
      v.emplace_back("attention_f32_d96_causal", codegen_emit_attention(*res, 5));
    }
  }
  {
    // schedules gemv16 / gemv32 (GEMM emitters without CUTLASS): PyTorch's 8192 x 262144 GEMV in 132 chunks
    // writing the output directly, and one in groups of 32 and 7 chunks through the epilogue pass (row vector,
    // scalar, residual, a bf16 output and a column sum)
    auto res = case_program(
        "gemv.ucut",
        "ucut 1\nin a : f32[8192, 262144]\nin x : f32[262144, 1]\nin a2 : f32[1000, 4099]\nin x2 : f32[4099, 1]\n"
        "in bias : f32[1000]\nin r : f32[1000, 1]\nscalar s = 0.5\nout y : f32[8192, 1]\nout y2 : bf16[1000, 1]\n"
        "out tot : f32[1]\n"
        "stage y = gemm(a, x) { schedule gemv16 }\n"
        "stage y2 = gemm(a2, x2) {\n  schedule gemv32\n  split_k 7\n"
        "  epilogue {\n    let z = relu(acc + bias[row]) * s + r\n    y2 = z\n    tot = colsum(z)\n  }\n}\n",
        "gemv");
    if (res) {
      v.emplace_back("gemv_direct", codegen_emit_gemm(*res, 0));
      v.emplace_back("gemv_epilogue", codegen_emit_gemm(*res, 1));
    }
  }
  {
    // f32x3s of A.T @ B (A [K, M], B [K, N], a batch of 3, edges not multiples of the 32 x 32 tile):
    // the split stages copy each operand's TF32 parts into its transpose, K-major for wgmma
    auto res = case_program(
        "split_t.ucut",
        "ucut 1\nin a : f32[3, 200, 1000]\nin b : f32[3, 200, 520]\nout y : f32[3, 1000, 520]\n"
        "stage y = gemm(a.T, b) { precision f32x3s }\n",
        "f32x3s");
    if (res) {
      auto x = codegen_expand_split_gemms(*res);
      if (!x) ADD_FAILURE() << x.error().render();
      if (x) v.emplace_back("elementwise_transpose_split", codegen_emit_elementwise(*x, 1));
    }
  }
  return v;
}

TEST(SimtGolden, EmittedCodeMatchesGoldenFiles) {
  const bool update = std::getenv("UCUT_UPDATE_GOLDEN") != nullptr;
  for (auto& [name, code] : golden_cases()) {
    ASSERT_TRUE(code.ok()) << name << ": " << code.error().render();
    const std::string text = "// config: " + code->config_name + "\n// workspace: " +
                             code->workspace_expr + "\n" + code->definitions;
    const std::string path = golden_dir() + "/" + name + ".cu";
    if (update) {
      std::filesystem::create_directories(golden_dir());
      std::ofstream(path) << text;
      continue;
    }
    std::ifstream in(path);
    ASSERT_TRUE(in.good()) << "missing " << path << " (run with UCUT_UPDATE_GOLDEN=1)";
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), text) << "golden mismatch: " << path;
  }
}

const char* kPrelude = R"(#include <cuda_runtime.h>
namespace ucut_rt {
struct StageArgs {
  void* const* tensors;
  const double* scalars;
  void* workspace;
  size_t workspace_bytes;
  cudaStream_t stream;
};
inline void set_error(const char*, ...) {}
constexpr size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }
}  // namespace ucut_rt
)";

// The SIMT runtime headers stay light: CUB's block reduce and scan headers and cooperative_groups
// cost ~2.5 s and ~1.5 s of every SIMT unit's nvcc (4.2 s -> 1.6 s without them, docs/benchmarks.md,
// "What a candidate compiles"); the headers have their own block reduction, scan and cluster helpers.
TEST(SimtRuntime, HeadersIncludeNeitherCubNorCooperativeGroups) {
  for (const auto& path : simt_runtime_headers()) {
    std::ifstream in(path);
    ASSERT_TRUE(in.good()) << path;
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (line.rfind("#include", 0) != 0) continue;
      EXPECT_EQ(line.find("cub/"), std::string::npos) << path << ":" << n << ": " << line;
      EXPECT_EQ(line.find("cooperative_groups"), std::string::npos) << path << ":" << n << ": " << line;
    }
    EXPECT_GT(n, 10) << path;
  }
}

TEST(SimtNvcc, OneStagePerKindCompiles) {
  if (!std::getenv("UCUT_TEST_NVCC")) GTEST_SKIP() << "set UCUT_TEST_NVCC=1 (CTest label nvcc)";
  if (std::system("command -v nvcc > /dev/null 2>&1") != 0) GTEST_SKIP() << "nvcc not found";
  const std::string dir = std::filesystem::temp_directory_path() / "ucut_simt_nvcc_test";
  std::filesystem::create_directories(dir);
  std::string src, defs;
  std::set<std::string> included;
  for (auto& [name, code] : golden_cases()) {
    ASSERT_TRUE(code.ok()) << name;
    for (const std::string& inc : code->includes)  // the headers the stages name, each once
      if (included.insert(inc).second) src += "#include \"" + inc + "\"\n";
    // rename each case's stage prefix (ucut_s<index>_) so they coexist in one file
    defs += std::regex_replace(code->definitions, std::regex("ucut_s[0-9]+_"), "ucut_" + name + "_");
  }
  std::ofstream(dir + "/stages.cu") << src << kPrelude << codegen_functors_source() << codegen_rounding_source() << defs;
  const std::string cmd = "flock /tmp/ucut-nvcc.lock nvcc -std=c++17 -O3 --expt-relaxed-constexpr -DNDEBUG "
                          "-gencode=arch=compute_90a,code=sm_90a -I " + simt_runtime_include_dir() +
                          " -Xptxas -warn-spills -c " + dir + "/stages.cu -o " + dir + "/stages.o > " + dir +
                          "/nvcc.log 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream log(dir + "/nvcc.log");
  std::stringstream ss;
  ss << log.rdbuf();
  EXPECT_EQ(rc, 0) << ss.str();
  // The column kernel's index reductions (kRedArgMax = 5, kRedArgMin = 6) load 16 rows ahead only
  // because their state fits 64 registers: a spill there is the 272 bytes a 64-bit index cost.
  // (Other kernels spill a few bytes outside their loops: 16-24 bytes in the 8-byte column sums,
  // which ran at 98% of the bandwidth; not checked.)
  std::string line;
  std::istringstream lines(ss.str());
  while (std::getline(lines, line))
    EXPECT_FALSE(line.find("spilled") != std::string::npos &&
                 std::regex_search(line, std::regex("reduce_outer_kernelILi[56]E")))
        << line;
}

}  // namespace
}  // namespace ucut::codegen

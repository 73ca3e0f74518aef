// FLOP and byte counts of the hand-written fixtures in tests/data/problems/, hand-computed here
// (the comment beside each row shows the arithmetic), plus the recompute/validate rules.
#include "sol/cost.h"

#include <gtest/gtest.h>

#include "problem/problem.h"

namespace ucut::sol {
namespace {

std::string fixture(const std::string& name) {
  return std::string(UCUTLASS_SOURCE_DIR) + "/tests/data/problems/" + name + ".json";
}

struct Expected {
  const char* name;
  int64_t tensor_f32, tensor_16, simt, bytes;
};

// fp32 = 4 bytes, bf16 = 2 bytes; "el" = elements.
const Expected kExpected[] = {
    // 2·4096³; a, b, out: 3·4096²·4
    {"gemm_square", 137438953472, 0, 0, 201326592},
    // 2·65536·256·256; (65536·256 + 256·256 + 65536·256)·4
    {"gemm_tall_skinny", 8589934592, 0, 0, 134479872},
    // 2·32·512·512·1024; (2·32·512·1024 + 32·512·512)·4
    {"bmm_batched", 17179869184, 0, 0, 167772160},
    // linear 2·1024·8192·8192 + 1024·8192 (bias); gelu 8·1024·8192;
    // x 33554432 B + W 268435456 B + b 32768 B + out 33554432 B
    {"linear_bias_gelu", 137447342080, 0, 67108864, 335577088},
    // 6·4096·16384; 2·4096·16384·4
    {"softmax_rows", 0, 0, 402653184, 536870912},
    // 8·8192·4096; (2·8192·4096 + 2·4096)·4
    {"layernorm", 0, 0, 268435456, 268468224},
    // 8192·8192; 2·8192²·4
    {"cumsum_rows", 0, 0, 67108864, 536870912},
    // 3·8192·4096; 2·8192·4096·4 + 4 (scalar output)
    {"mse_loss", 0, 0, 100663296, 268435460},
    // 2·8192³ on bf16 data; 3·8192²·2
    {"gemm_bf16", 0, 1099511627776, 0, 402653184},
    // 2·4096·1024·2048 (the transpose is a free view); (2048·4096 + 2048·1024 + 4096·1024)·4
    {"gemm_transposed_a", 17179869184, 0, 0, 58720256},
    // 2·2048·2048·1024 + 2·2048²; (2048² + 2048·1024 + 1024·2048 + 2048²)·4
    {"addmm", 8598323200, 0, 0, 50331648},
    // 2·(16·128·128·128)·(64·3·3); (16·64·128² + 128·64·9 + 128 + 16·128·128²)·4
    {"conv2d_3x3", 38654705664, 0, 0, 201622016},
    // 16384·4096; (16384·4096 + 16384)·4
    {"sum_rows", 0, 0, 67108864, 268500992},
    // linear 2·4096·2048·1024 + 4096·2048; relu 4096·2048 + softmax 6·4096·2048;
    // (4096·1024 + 2048·1024 + 2048 + 4096·2048)·4 (t0, t1 are intermediates: free)
    {"linear_relu_softmax", 17188257792, 0, 58720256, 58728448},
    // 4·8·16·1024·1024·64; 4·(8·16·1024·64)·4
    {"sdpa", 34359738368, 0, 0, 134217728},
    // mul + add, 1 each per element: 2·8192²; x read + out written (x returned unchanged: no write)
    {"scale_shift_passthrough", 0, 0, 134217728, 536870912},
    // 8·32·256·64·64; (2·32·256·64·64 + 4·256)·4 (num_batches_tracked is never read)
    {"batchnorm_eval", 0, 0, 268435456, 268439552},
};

TEST(SolCost, HandComputedFixtures) {
  for (const auto& e : kExpected) {
    SCOPED_TRACE(e.name);
    auto p = problem::problem_load(fixture(e.name));
    ASSERT_TRUE(p.ok()) << p.error().render();
    auto c = sol_problem_cost(*p);
    ASSERT_TRUE(c.ok()) << c.error().render();
    EXPECT_EQ(c->flops_tensor_f32, e.tensor_f32);
    EXPECT_EQ(c->flops_tensor_16, e.tensor_16);
    EXPECT_EQ(c->flops_simt, e.simt);
    EXPECT_EQ(c->min_bytes, e.bytes);
    EXPECT_TRUE(c->notes.empty()) << c->notes.front();  // every fixture's IR count is right
  }
}

TEST(SolCost, PerOpBytesAndViews) {
  auto p = problem::problem_load(fixture("gemm_transposed_a"));
  ASSERT_TRUE(p.ok()) << p.error().render();
  auto c = sol_problem_cost(*p);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->ops.size(), 2u);
  EXPECT_EQ(c->ops[0].bytes, 0);  // transpose is a view
  EXPECT_EQ(c->ops[0].cls, CostClass::simt);
  // matmul alone: t0 (4096·2048) + b (2048·1024) + out (4096·1024), fp32
  EXPECT_EQ(c->ops[1].bytes, (8388608 + 2097152 + 4194304) * 4);
  EXPECT_EQ(c->ops[1].cls, CostClass::tensor_f32);
}

TEST(SolCost, WrongIrFlopsAreReplacedWithANote) {
  auto p = problem::problem_load(fixture("gemm_square"));
  ASSERT_TRUE(p.ok());
  p->ops[0].flops = 12345;
  p->ops[0].flop_class = problem::FlopClass::simt;  // also wrong: matmul is tensor-class
  auto c = sol_problem_cost(*p);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->flops_tensor_f32, 137438953472);
  EXPECT_EQ(c->flops_simt, 0);
  ASSERT_EQ(c->notes.size(), 1u);
  EXPECT_EQ(c->notes[0], "ops[0] (matmul): the IR says 12345 FLOPs, the shapes give 137438953472; using 137438953472");
}

TEST(SolCost, InconsistentMatmulShapesAreRejected) {
  auto p = problem::problem_load(fixture("gemm_tall_skinny"));
  ASSERT_TRUE(p.ok());
  p->tensors[1].shape = {128, 256};  // b's K no longer matches a's 256
  auto c = sol_problem_cost(*p);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message,
            "ops[0] (mm): operands disagree on K: 'a' [65536, 256] has K=256, 'b' [128, 256] has K=128");
}

TEST(SolCost, FlopsThatOverflowAreAnErrorNotAWrappedCount) {
  auto p = problem::problem_load(fixture("conv2d_3x3"));
  ASSERT_TRUE(p.ok());
  p->tensors[1].shape = {128, int64_t(1) << 31, int64_t(1) << 20, 1};  // 2 · out 2^25 · 2^51 = 2^77
  auto c = sol_problem_cost(*p);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, "ops[0] (conv2d): its FLOP count does not fit in 64 bits");
}

TEST(SolCost, TensorBytesCountEveryResidentTensorOnce) {
  // a, b, out of 131072² f32 each: 3 · 68.7 GB, what the GPU must hold to run it at all.
  auto p = problem::problem_load(fixture("gemm_too_large"));
  ASSERT_TRUE(p.ok()) << p.error().render();
  auto c = sol_problem_cost(*p);
  ASSERT_TRUE(c.ok()) << c.error().render();
  EXPECT_EQ(c->tensor_bytes, 3 * int64_t(131072) * 131072 * 4);
}

TEST(SolCost, CausalSdpaHalvesTheFlops) {
  auto p = problem::problem_load(fixture("sdpa"));
  ASSERT_TRUE(p.ok());
  p->ops[0].attrs["is_causal"] = true;
  p->ops[0].flops = 17179869184;
  auto c = sol_problem_cost(*p);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->flops_tensor_f32, 17179869184);
  EXPECT_TRUE(c->notes.empty());
}

TEST(SolCost, OpaqueTensorOpOnHalfDataUsesTheBf16Class) {
  auto p = problem::problem_load(fixture("gemm_bf16"));
  ASSERT_TRUE(p.ok());
  p->ops[0].op = "opaque";  // not recomputed: the IR's count and class are taken as they are
  p->ops[0].flops = 1000;
  auto c = sol_problem_cost(*p);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->flops_tensor_16, 1000);
  EXPECT_EQ(c->ops[0].cls, CostClass::tensor_16);
}

}  // namespace
}  // namespace ucut::sol

// Hardware table sanity: every GPU has every field, lookups and "did you mean" work, and the
// numbers agree with the architecture (FP32 SIMT = SMs · FP32 lanes · 2 FLOP · clock, within the
// datasheets' rounding).
#include "sol/hardware.h"

#include <gtest/gtest.h>

#include <set>

namespace ucut::sol {
namespace {

TEST(SolHardware, EveryGpuHasEveryField) {
  const std::set<std::string> required = {"h100-sxm", "h100-pcie", "h200", "b200", "a100-sxm-80gb", "l40s", "rtx-4090"};
  std::set<std::string> seen;
  for (const auto& hw : hw_table()) {
    SCOPED_TRACE(hw.name);
    seen.insert(hw.name);
    EXPECT_FALSE(hw.arch.empty());
    EXPECT_GT(hw.sms, 0);
    EXPECT_GT(hw.boost_mhz, 0);
    EXPECT_GT(hw.fp32_simt, 0);
    EXPECT_GT(hw.tf32, 0);
    EXPECT_GT(hw.bf16, 0);
    // FP8 tensor cores exist from sm_89 on; A100 (sm_80) has none and says 0.
    if (hw.arch == "sm_80") {
      EXPECT_EQ(hw.fp8, 0);
    } else {
      EXPECT_GT(hw.fp8, 0);
    }
    EXPECT_GT(hw.mem_bw, 0);
    EXPECT_GT(hw.l2_bytes, 0);
    EXPECT_GT(hw.smem_per_sm_bytes, 0);
    EXPECT_GT(hw.source.size(), 20u);
    // Tensor rates rise with lower precision; TF32 is at least half of BF16.
    EXPECT_LE(hw.tf32, hw.bf16);
    EXPECT_NEAR(hw.tf32 / hw.bf16, 0.5, 0.02);
    // FP32 SIMT: 128 FP32 lanes per SM (64 on GA100), 2 FLOP per FMA, at the boost clock
    // (datasheets round; B200's clock is a deviceQuery reading).
    double lanes = hw.arch == "sm_80" ? 64 : 128;
    EXPECT_NEAR(hw.fp32_simt / (hw.sms * lanes * 2 * hw.boost_mhz * 1e6), 1.0, 0.02);
  }
  EXPECT_EQ(seen, required);
}

TEST(SolHardware, LookupByNameAliasAndSpelling) {
  EXPECT_EQ(hw_lookup("h200")->name, "h200");
  EXPECT_EQ(hw_lookup("H100 SXM")->name, "h100-sxm");
  EXPECT_EQ(hw_lookup("h100")->name, "h100-sxm");
  EXPECT_EQ(hw_lookup("A100")->name, "a100-sxm-80gb");
  EXPECT_EQ(hw_lookup("rtx_4090")->name, "rtx-4090");
  EXPECT_DOUBLE_EQ(hw_lookup("h200")->mem_bw, 4.8e12);
  EXPECT_DOUBLE_EQ(hw_lookup("h100-sxm")->tf32, 494.7e12);
}

TEST(SolHardware, UnknownNameSuggestsTheClosest) {
  auto r = hw_lookup("h20");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::not_found);
  EXPECT_EQ(r.error().message, "unknown GPU 'h20'; did you mean 'h200'?");
  EXPECT_EQ(r.error().hint, "known GPUs: h100-sxm, h100-pcie, h200, b200, a100-sxm-80gb, l40s, rtx-4090");
  EXPECT_EQ(hw_lookup("mi300x").error().message, "unknown GPU 'mi300x'");
}

TEST(SolHardware, DeviceNamesMapToRows) {
  EXPECT_EQ(hw_match_device("NVIDIA H200"), "h200");
  EXPECT_EQ(hw_match_device("NVIDIA H100 80GB HBM3"), "h100-sxm");
  EXPECT_EQ(hw_match_device("NVIDIA H100 PCIe"), "h100-pcie");
  EXPECT_EQ(hw_match_device("NVIDIA A100-SXM4-80GB"), "a100-sxm-80gb");
  EXPECT_EQ(hw_match_device("NVIDIA GeForce RTX 4090"), "rtx-4090");
  EXPECT_EQ(hw_match_device("NVIDIA L40S"), "l40s");
  EXPECT_EQ(hw_match_device("NVIDIA B200"), "b200");
  EXPECT_EQ(hw_match_device("NVIDIA H100 NVL"), "");
  EXPECT_EQ(hw_match_device("Tesla T4"), "");
}

}  // namespace
}  // namespace ucut::sol

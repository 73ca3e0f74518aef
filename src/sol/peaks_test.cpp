// Policies and calibration files: names with "did you mean", the calibrate.py JSON (a real H200
// reading, trimmed), rejection of broken files, and the rates each policy uses.
#include "sol/peaks.h"

#include <gtest/gtest.h>

namespace ucut::sol {
namespace {

// What python/ucutlass_torch/calibrate.py printed on an H200 (2026-11-30), details dropped.
const char* kH200 = R"({"device_name": "NVIDIA H200", "sms": 132, "l2_bytes": 62914560,
  "copy_bw": 4224403023024.641, "gemm_bf16": 795281483140119.9, "gemm_fp16": 764382048549502.0,
  "gemm_tf32": 389277117825196.3, "gemm_fp32": 50589511251287.4,
  "measured_at": "2026-11-30T05:12:54+00:00", "torch_version": "2.11.0+cu130"})";

TEST(SolPolicy, Names) {
  EXPECT_EQ(*policy_parse("exact"), Policy::exact);
  EXPECT_EQ(*policy_parse("tf32"), Policy::tf32);
  EXPECT_EQ(*policy_parse("bf16"), Policy::bf16);
  auto r = policy_parse("tf-32");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().render(), "unknown precision policy 'tf-32'; did you mean 'tf32'?\n"
                                "hint: policies are exact, tf32 (default) and bf16 (EVAL-CONTRACT section 3)");
}

TEST(SolCalibration, ParsesCalibratePyOutput) {
  auto c = calibration_parse(kH200, "cal.json");
  ASSERT_TRUE(c.ok()) << c.error().render();
  EXPECT_EQ(c->device_name, "NVIDIA H200");
  EXPECT_DOUBLE_EQ(c->copy_bw, 4224403023024.641);
  EXPECT_DOUBLE_EQ(c->gemm_tf32, 389277117825196.3);
  auto back = calibration_parse(calibration_to_json(*c), "again.json");
  ASSERT_TRUE(back.ok());
  EXPECT_DOUBLE_EQ(back->gemm_fp32, c->gemm_fp32);
}

TEST(SolCalibration, RejectsBrokenFiles) {
  auto r = calibration_parse(R"({"copy_bw": 1e12, "gemm_bf16": 0, "gemm_fp16": 1, "gemm_tf32": 1, "gemm_fp32": 1})",
                             "cal.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cal.json: field 'gemm_bf16' must be a positive number (SI units: B/s or FLOP/s)");
  EXPECT_FALSE(calibration_parse("[]", "cal.json").ok());
  EXPECT_FALSE(calibration_parse("not json", "cal.json").ok());
}

TEST(SolPeaks, PolicyRates) {
  HwSpec h = *hw_lookup("h200");
  Peaks ds = peaks_datasheet(h);
  EXPECT_EQ(ds.origin, "datasheet");
  EXPECT_DOUBLE_EQ(peaks_tensor_f32_rate(ds, Policy::exact), 494.7e12 / 3);
  EXPECT_DOUBLE_EQ(peaks_tensor_f32_rate(ds, Policy::tf32), 494.7e12);
  EXPECT_DOUBLE_EQ(peaks_tensor_f32_rate(ds, Policy::bf16), 989.4e12);
  Peaks cal = peaks_calibrated(h, *calibration_parse(kH200, "cal.json"));
  EXPECT_EQ(cal.origin, "calibrated");
  EXPECT_DOUBLE_EQ(cal.mem_bw, 4224403023024.641);
  EXPECT_DOUBLE_EQ(cal.bf16, 795281483140119.9);  // the better of bf16 and fp16
  EXPECT_DOUBLE_EQ(cal.fp32_simt, 50589511251287.4);
  EXPECT_DOUBLE_EQ(peaks_tensor_f32_rate(cal, Policy::exact), 389277117825196.3 / 3);
}

// A read-only stream beats a copy: the memory ceiling is the larger of the two; a file without
// read_bw (older calibrations) keeps the copy's.
TEST(SolPeaks, MemoryCeilingIsTheBetterOfCopyAndRead) {
  HwSpec h = *hw_lookup("h200");
  auto c = calibration_parse(kH200, "cal.json");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->read_bw, 0.0);
  c->read_bw = 4.4e12;
  EXPECT_DOUBLE_EQ(peaks_calibrated(h, *c).mem_bw, 4.4e12);
  auto back = calibration_parse(calibration_to_json(*c), "again.json");
  ASSERT_TRUE(back.ok()) << back.error().render();
  EXPECT_DOUBLE_EQ(back->read_bw, 4.4e12);
  c->read_bw = 1e12;  // slower than the copy: the copy stays the ceiling
  EXPECT_DOUBLE_EQ(peaks_calibrated(h, *c).mem_bw, 4224403023024.641);
  auto bad = calibration_parse(R"({"copy_bw": 1e12, "read_bw": -1, "gemm_bf16": 1, "gemm_fp16": 1, "gemm_tf32": 1,
                                   "gemm_fp32": 1})", "cal.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "cal.json: field 'read_bw' must be a positive number (B/s)");
}

}  // namespace
}  // namespace ucut::sol

#include "memory/experience.h"

#include <gtest/gtest.h>

namespace ucut::memory {
namespace {

TEST(Experience, ShapeBucketsAreRoundedLog2) {
  EXPECT_EQ(memory_shape_bucket(4096, 4096, 4096), "m12_n12_k12");
  EXPECT_EQ(memory_shape_bucket(1000, 3000, 64, 8), "b3_m10_n12_k6");  // log2(3000)=11.55 -> 12
  EXPECT_EQ(memory_bucket_distance("m12_n12_k12", "m12_n12_k12"), 0);
  EXPECT_EQ(memory_bucket_distance("m12_n12_k12", "m11_n13_k12"), 2);
  EXPECT_EQ(memory_bucket_distance("b3_m12_n12_k12", "m12_n12_k12"), 4);
}

TEST(Experience, DiffAndLessonNameTheChangedKnobs) {
  nlohmann::json slow = {{"tile", "128x128x64"}, {"cluster", "1x1"}, {"stages", 4}};
  nlohmann::json fast = {{"tile", "128x256x64"}, {"cluster", "2x1"}, {"stages", 4}};
  MemoryKey key{"gemm f32", "m12_n12_k12", "h200", "tf32"};
  Experience e = experience_make(key, "p", "h1", slow, 1.31e-3, "h2", fast, 1e-3);
  EXPECT_NEAR(e.gain, 1.31, 1e-12);
  EXPECT_EQ(e.diff, "- cluster 1x1\n+ cluster 2x1\n- tile 128x128x64\n+ tile 128x256x64\n");
  EXPECT_EQ(e.lesson,
            "cluster 1x1 -> 2x1, tile 128x128x64 -> 128x256x64 beat the slower configuration by "
            "1.31x on gemm f32 m12_n12_k12 (h200, tf32)");
  EXPECT_EQ(e.move(), (nlohmann::json{{"cluster", "2x1"}, {"tile", "128x256x64"}}));
}

TEST(Experience, UsefulnessPrefersMeasuredHelpOverRawGain) {
  Experience big, helpful;
  big.gain = 3.0;
  helpful.gain = 1.1;
  helpful.helps = 3;
  helpful.uses = 3;
  EXPECT_GT(experience_usefulness(helpful), experience_usefulness(big));
  Experience useless = big;
  useless.uses = 40;  // tried 40 times, never helped
  EXPECT_LT(experience_usefulness(useless), experience_usefulness(big));
}

TEST(Experience, JsonRoundTrip) {
  MemoryKey key{"c", "m1_n1_k1", "h200", "tf32"};
  Experience e = experience_make(key, "p", "a", {{"x", 1}}, 2, "b", {{"x", 2}}, 1);
  e.id = 7;
  e.helps = 2;
  Experience back = experience_from_json(experience_to_json(e));
  EXPECT_EQ(experience_to_json(back), experience_to_json(e));
  Prior p;
  p.key = key;
  p.config = {{"x", 2}};
  p.speedup = 2.5;
  EXPECT_EQ(prior_to_json(prior_from_json(prior_to_json(p))), prior_to_json(p));
}

}  // namespace
}  // namespace ucut::memory

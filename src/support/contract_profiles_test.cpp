#include "support/contract_profiles.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace ucut {
namespace {

// The built table is the JSON file as it is now (a stale generation would differ).
TEST(ContractProfiles, AreTheSharedDefinition) {
  std::ifstream in(std::string(UCUTLASS_SOURCE_DIR) + "/python/ucutlass_torch/contract_profiles.json");
  ASSERT_TRUE(in);
  auto doc = nlohmann::json::parse(in);
  const auto& built = contract_profiles();
  ASSERT_EQ(built.size(), doc["profiles"].size());
  for (size_t i = 0; i < built.size(); ++i) {
    const auto& j = doc["profiles"][i];
    EXPECT_EQ(built[i].name, j["name"]);
    EXPECT_EQ(built[i].describe, j["describe"]);
    EXPECT_DOUBLE_EQ(built[i].f16.atol, j["f16"][0].get<double>());
    EXPECT_DOUBLE_EQ(built[i].bf16.rtol, j["bf16"][1].get<double>());
    EXPECT_DOUBLE_EQ(built[i].other.atol, j["other"][0].get<double>());
    EXPECT_DOUBLE_EQ(built[i].other.rtol, j["other"][1].get<double>());
    EXPECT_EQ(built[i].float64_pass, j.value("float64_pass", false));
  }
}

// docs/eval-contract.md §1: 1e-4 for fp32 and 1e-2 for 16-bit by default, 1e-2 everywhere in kb-v01.
TEST(ContractProfiles, SayWhatTheContractSays) {
  ASSERT_EQ(contract_profile_names(), (std::vector<std::string>{"default", "kb-v01"}));
  const ContractProfile* d = contract_profile("default");
  const ContractProfile* kb = contract_profile("kb-v01");
  ASSERT_TRUE(d && kb);
  EXPECT_DOUBLE_EQ(d->other.rtol, 1e-4);
  EXPECT_DOUBLE_EQ(d->bf16.atol, 1e-2);
  EXPECT_DOUBLE_EQ(kb->other.atol, 1e-2);
  EXPECT_EQ(contract_profile("kb-v02"), nullptr);
  // The reference-class pass is the default profile's; kb-v01 stays plain elementwise allclose.
  EXPECT_TRUE(d->float64_pass);
  EXPECT_FALSE(kb->float64_pass);
  EXPECT_NE(contract_profile_text(*d).find("reference-class pass"), std::string::npos);
  EXPECT_NE(contract_profile_text(*kb).find("elementwise only"), std::string::npos);
}

}  // namespace
}  // namespace ucut

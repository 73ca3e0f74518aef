#include "support/contract_profiles.h"

namespace ucut {

const std::vector<ContractProfile>& contract_profiles() {
  static const std::vector<ContractProfile> profiles = {
#define UCUT_PROFILE(name, describe, f16a, f16r, bf16a, bf16r, oa, or_, f64) \
  ContractProfile{name, describe, {f16a, f16r}, {bf16a, bf16r}, {oa, or_}, f64},
#include "support/contract_profiles.inc"
#undef UCUT_PROFILE
  };
  return profiles;
}

const ContractProfile* contract_profile(const std::string& name) {
  for (const auto& p : contract_profiles())
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<std::string> contract_profile_names() {
  std::vector<std::string> names;
  for (const auto& p : contract_profiles()) names.push_back(p.name);
  return names;
}

std::string contract_profile_text(const ContractProfile& p) {
  return p.describe + (p.float64_pass ? "; or no further from the model in float64 than the fp32 reference "
                                        "(reference-class pass)"
                                      : "; elementwise only");
}

}  // namespace ucut

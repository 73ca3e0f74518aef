// The evaluation contract's tolerance profiles (docs/eval-contract.md §1): `default` and `kb-v01`.
// Their one definition is python/ucutlass_torch/contract_profiles.json, which the Python check
// reads and from which the build generates this module's table; nothing else spells a tolerance.
#pragma once

#include <string>
#include <vector>

namespace ucut {

struct Tolerance {
  double atol = 0, rtol = 0;
};

struct ContractProfile {
  std::string name;
  std::string describe;  // one line for reports
  Tolerance f16, bf16, other;  // other: every other floating dtype (fp32, fp64)
  // The reference-class pass (docs/eval-contract.md §1): a trial failing the elementwise check
  // still passes when, for every output, the kernel is no further from the model evaluated in
  // float64 than the fp32 reference is. `default` has it; `kb-v01` stays plain elementwise.
  bool float64_pass = false;
};

// Every profile, `default` first.
const std::vector<ContractProfile>& contract_profiles();

// The profile called `name`; nullptr when there is none.
const ContractProfile* contract_profile(const std::string& name);

// The profiles' names, in order, for option checks and messages.
std::vector<std::string> contract_profile_names();

// What a profile accepts, in one line for help texts and reports: its tolerances, then whether a
// trial may pass by float64 (the reference-class pass) or only elementwise.
std::string contract_profile_text(const ContractProfile& p);

}  // namespace ucut

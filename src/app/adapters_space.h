// RealSpace: the search's SearchSpace (interfaces.h) over src/space for one lowered program.
// A search candidate is one configuration per stage: each stage's valid configurations are
// enumerated and ranked once (space_valid + space_rank); a program candidate picks one per
// stage, and its predicted time is the sum of the stages' estimates. The ranked list varies one
// stage at a time around the best choice of every other stage, so a multi-stage program's list
// holds the alternatives of the stage that matters first. Neighbours change one knob of one
// stage (space_neighbors); the precision ladder moves every GEMM stage to the rung, keeping the
// tile where that rung has it. A stage the space cannot configure keeps the lowered knobs.
//
// Config JSON (memory priors, experiences, reports): the knobs of the primary stage (the one
// with the largest estimate) flat, {"precision": "tf32", "tile": "128x256x32", "cluster": "2x1",
// "stages": "auto", "schedule": "cooperative", ...}; other stages' knobs as "<stage>.<knob>".
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "dsl/program.h"
#include "search/interfaces.h"
#include "sol/hardware.h"
#include "space/space.h"
#include "support/result.h"

namespace ucut::app {

// One stage's configurations, ranked (empty `ranked`: the stage keeps its lowered knobs).
struct StageChoices {
  int stage = 0;
  std::string name;                             // the stage's name in the program ("s0")
  std::vector<space::RankedConfig> ranked;   // valid, ranked: (rung, t_est, name)
  std::map<std::string, size_t> by_name;
  std::string note;                             // why the stage is not searched, when it is not
};

// The knobs of one stage configuration as flat JSON (see the file comment).
nlohmann::json stage_config_json(const space::StageConfig& c);

class RealSpace final : public search::SearchSpace {
 public:
  // Enumerates and ranks every stage of `base` (the lowered program). Fails only when no stage
  // has a configuration and the program is not compilable as lowered either (never today).
  static Result<std::unique_ptr<RealSpace>> create(const dsl::Program& base, const sol::HwSpec& hw,
                                                   const space::SpaceOptions& options);

  std::vector<search::Candidate> ranked(int k, int min_rung = 0) override;
  std::vector<search::Candidate> neighbors(const search::Candidate& c) override;
  std::vector<search::Candidate> neighbors_measured(const search::Candidate& c,
                                                    const search::StageTimes& measured) override;
  std::optional<search::Candidate> at_rung(const search::Candidate& c, int rung) override;
  std::optional<search::Candidate> from_config(const nlohmann::json& config) override;
  std::optional<int> summation_order_rung() override;
  std::optional<search::Candidate> reference_order(const search::Candidate& c) override;
  bool in_reference_order(const search::Candidate& c) override;
  bool has_reference_order() override;
  // The SM80-API GEMMs (3xTF32 `f32x3`, FP32 SIMT `f32`) sum each output over K in one chain, in
  // K order, whatever the tile, stages, swizzle or alignment (the warp tile spans the block's K:
  // no sliced K); only split_k (K in pieces) and the epilogue's math mode change the values. Such
  // a stage's class is (precision, split_k, math). A scan's `order torch` plans are one class
  // whatever their block and segments, its fp64 plans another (each rounds the exact prefix
  // once); every other stage is its own configuration.
  std::string summation_class(const search::Candidate& c) override;
  std::vector<search::Candidate> descents(const search::Candidate& c, int rung) override;
  std::string rung_signature(const search::Candidate& c) override;

  const dsl::Program& base() const { return base_; }
  const std::vector<StageChoices>& stages() const { return stages_; }
  // The stage whose best estimate is largest (the flat keys of a config); -1 when none is searched.
  int primary_stage() const { return primary_; }
  // Valid configurations over all stages (the size of the space the search walks).
  size_t valid_count() const;

 private:
  using Choice = std::vector<int>;  // per stage: index into stages_[s].ranked, -1 = lowered knobs
  RealSpace() = default;
  search::Candidate make(const Choice& ch);
  // The candidates of `found` (predicted time, choice) fastest first, each with `origin`.
  std::vector<search::Candidate> make_fastest_first(std::vector<std::pair<double, Choice>> found, const char* origin);
  std::vector<search::Candidate> make_each(const std::vector<Choice>& order, const char* origin);
  int rung_of(const Choice& ch) const;
  // Stage `s`'s configuration on `rung` for one now at `cur` (at_rung, descents): -1 where it has none.
  int pick_on_rung(size_t s, const space::StageConfig& cur, int rung) const;
  double predicted(const Choice& ch) const;
  std::optional<Choice> choice_of(const search::Candidate& c);
  // c's choice with every stage that has `order torch` plans moved to its best-ranked one;
  // nullopt when nothing moves (reference_order, in_reference_order).
  std::optional<Choice> reference_choice(const search::Candidate& c);
  Choice best_choice() const;
  // The first ranked index of stage s whose config holds every key of `want`; nullopt if none.
  std::optional<int> match(size_t s, const nlohmann::json& want) const;

  dsl::Program base_;
  space::SpaceOptions options_;
  std::vector<StageChoices> stages_;
  int primary_ = -1;
  std::mutex mu_;                             // by_hash_ (read by several threads)
  std::map<std::string, Choice> by_hash_;
};

}  // namespace ucut::app

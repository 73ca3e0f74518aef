#include "app/adapters_space.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "codegen/library.h"
#include "dsl/dsl.h"
#include "dsl/names.h"
#include "dsl/window_rules.h"
#include "support/hash.h"

namespace ucut::app {

namespace {
// A scan plan in PyTorch's own fp32 row-scan order (`order torch`).
bool in_torch_order(const space::StageConfig& c) { return !c.is_gemm && c.simt.order == dsl::ScanOrder::torch; }
}  // namespace

nlohmann::json stage_config_json(const space::StageConfig& c) {
  nlohmann::json j = nlohmann::json::object();
  auto num = [](const std::optional<int>& v) -> nlohmann::json {
    if (v) return *v;
    return "auto";
  };
  if (c.is_gemm) {
    const dsl::GemmKnobs& k = c.gemm;
    j["precision"] = dsl::dsl_precision_str(k.precision);
    j["tile"] = k.tile ? fmt::format("{}x{}x{}", k.tile->m, k.tile->n, k.tile->k) : std::string("auto");
    j["cluster"] = k.cluster ? fmt::format("{}x{}", k.cluster->m, k.cluster->n) : std::string("auto");
    j["stages"] = num(k.stages);
    j["schedule"] = dsl::dsl_schedule_str(k.schedule);
    j["scheduler"] = dsl::dsl_scheduler_str(k.scheduler);
    j["split_k"] = num(k.split_k);
    j["raster"] = dsl::dsl_raster_str(k.raster);
    j["swizzle"] = num(k.swizzle);
    if (k.math != dsl::MathMode::auto_) j["math"] = dsl::dsl_math_str(k.math);
  } else {
    if (c.simt.threads) j["threads"] = *c.simt.threads;
    if (c.simt.rows_per_block) j["rows_per_block"] = *c.simt.rows_per_block;
    if (c.simt.vector_width) j["vector_width"] = *c.simt.vector_width;
    if (c.simt.cluster) j["cluster"] = *c.simt.cluster;
    if (c.simt.items_per_thread) j["items_per_thread"] = *c.simt.items_per_thread;
    if (c.simt.order != dsl::ScanOrder::auto_) j["order"] = dsl::dsl_scan_order_str(c.simt.order);
  }
  return j;
}

Result<std::unique_ptr<RealSpace>> RealSpace::create(const dsl::Program& base, const sol::HwSpec& hw,
                                                     const space::SpaceOptions& options) {
  std::unique_ptr<RealSpace> s(new RealSpace());
  s->base_ = base;
  s->options_ = options;
  if (hw.sms > 0) s->options_.sms = hw.sms;  // the gemv schedules' chunk count
  double worst = -1;
  for (int si = 0; si < static_cast<int>(base.stages.size()); ++si) {
    StageChoices sc;
    sc.stage = si;
    sc.name = base.stages[static_cast<size_t>(si)].name;
    auto valid = space::space_valid(base, si, s->options_);
    if (!valid) {
      sc.note = valid.error().message;
    } else if (valid->empty()) {
      sc.note = "no valid configuration: the stage keeps the lowered (auto) knobs";
    } else {
      sc.ranked = space::space_rank(base, *valid, hw);
      for (size_t i = 0; i < sc.ranked.size(); ++i) sc.by_name.emplace(sc.ranked[i].config.name, i);
      if (sc.ranked.front().t_est > worst) {
        worst = sc.ranked.front().t_est;
        s->primary_ = si;
      }
    }
    s->stages_.push_back(std::move(sc));
  }
  return s;
}

size_t RealSpace::valid_count() const {
  size_t n = 0;
  for (const auto& s : stages_) n += s.ranked.size();
  return n;
}

RealSpace::Choice RealSpace::best_choice() const {
  Choice ch;
  for (const auto& s : stages_) ch.push_back(s.ranked.empty() ? -1 : 0);
  return ch;
}

// A program's rung is its least precise GEMM stage's: a stage whose ladder starts higher (an
// N-contiguous B has no tf32, so only 3xTF32 at rung 1) does not hide a tf32 stage beside it,
// which the precision floor must still be able to lift (attention: q @ k^T in tf32, p @ v in
// 3xTF32). Programs without GEMM stages are at rung 0.
int RealSpace::rung_of(const Choice& ch) const {
  int r = -1;
  for (size_t s = 0; s < stages_.size(); ++s) {
    if (ch[s] < 0) continue;
    const auto& c = stages_[s].ranked[static_cast<size_t>(ch[s])].config;
    if (c.is_gemm) r = r < 0 ? c.rung : std::min(r, c.rung);
  }
  return std::max(r, 0);
}

double RealSpace::predicted(const Choice& ch) const {
  double t = 0;
  for (size_t s = 0; s < stages_.size(); ++s)
    if (ch[s] >= 0) t += stages_[s].ranked[static_cast<size_t>(ch[s])].t_est;
  return t;
}

search::Candidate RealSpace::make(const Choice& ch) {
  dsl::Program p = base_;
  std::string name;
  nlohmann::json config = nlohmann::json::object();
  for (size_t s = 0; s < stages_.size(); ++s) {
    std::string part;
    if (ch[s] >= 0) {
      const space::StageConfig& c = stages_[s].ranked[static_cast<size_t>(ch[s])].config;
      p = space::space_apply(p, c);
      part = c.name;
      nlohmann::json cj = stage_config_json(c);
      for (auto it = cj.begin(); it != cj.end(); ++it) {
        if (static_cast<int>(s) == primary_) config[it.key()] = *it;
        else config[stages_[s].name + "." + it.key()] = *it;
      }
    } else {
      part = stages_[s].name + "_lowered";
    }
    name += (name.empty() ? "" : "+") + part;
  }
  search::Candidate c;
  c.name = name;
  c.program = dsl::dsl_print(p);
  c.hash = sha256_hex(c.program);  // dsl_hash(p), without printing the program a second time
  c.ast = std::make_shared<const dsl::Program>(std::move(p));
  c.config = std::move(config);
  c.rung = rung_of(ch);
  c.predicted_s = predicted(ch);
  c.origin = "rank";
  std::lock_guard<std::mutex> lock(mu_);
  by_hash_.emplace(c.hash, ch);
  return c;
}

std::optional<RealSpace::Choice> RealSpace::choice_of(const search::Candidate& c) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = by_hash_.find(c.hash); it != by_hash_.end()) return it->second;
  }
  // A candidate this space did not make (a journal from an older run): rebuild it from its config.
  auto r = from_config(c.config);
  if (!r) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = by_hash_.find(r->hash); it != by_hash_.end()) return it->second;
  return std::nullopt;
}

std::vector<search::Candidate> RealSpace::ranked(int k, int min_rung) {
  // Vary one stage at a time around the best choice of the others; the best choice itself first.
  // A GEMM stage offers only its configurations from min_rung up (all of them where it has none
  // there: 16-bit data has one rung); other stages offer all of theirs.
  std::vector<bool> floored(stages_.size(), false);  // the stage has GEMM configurations from min_rung up
  for (size_t s = 0; s < stages_.size(); ++s)
    floored[s] = std::any_of(stages_[s].ranked.begin(), stages_[s].ranked.end(), [&](const auto& o) {
      return o.config.is_gemm && o.config.rung >= min_rung;
    });
  auto offered = [&](size_t s, size_t i) {
    const auto& c = stages_[s].ranked[i].config;
    return !floored[s] || !c.is_gemm || c.rung >= min_rung;
  };
  Choice best = best_choice();
  for (size_t s = 0; s < stages_.size(); ++s)
    for (size_t i = 0; best[s] >= 0 && i < stages_[s].ranked.size(); ++i)
      if (offered(s, i)) {
        best[s] = static_cast<int>(i);
        break;
      }
  std::vector<std::tuple<int, double, Choice>> all;
  std::set<Choice> seen;
  auto add = [&](const Choice& ch) {
    if (seen.insert(ch).second) all.emplace_back(rung_of(ch), predicted(ch), ch);
  };
  add(best);
  const size_t per_stage = static_cast<size_t>(std::max(k, 1)) * 2;
  for (size_t s = 0; s < stages_.size(); ++s)
    for (size_t i = 0, taken = 0; i < stages_[s].ranked.size() && taken + 1 < per_stage; ++i) {
      if (!offered(s, i) || static_cast<int>(i) == best[s]) continue;
      ++taken;
      Choice ch = best;
      ch[s] = static_cast<int>(i);
      add(ch);
    }
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    if (std::get<0>(a) != std::get<0>(b)) return std::get<0>(a) < std::get<0>(b);
    if (std::get<1>(a) != std::get<1>(b)) return std::get<1>(a) < std::get<1>(b);
    return std::get<2>(a) < std::get<2>(b);
  });
  std::vector<search::Candidate> out;
  for (size_t i = 0; i < all.size() && static_cast<int>(i) < k; ++i) out.push_back(make(std::get<2>(all[i])));
  return out;
}

std::vector<search::Candidate> RealSpace::neighbors(const search::Candidate& c) {
  return neighbors_measured(c, {});
}

std::vector<search::Candidate> RealSpace::neighbors_measured(const search::Candidate& c,
                                                             const search::StageTimes& measured) {
  auto ch = choice_of(c);
  if (!ch) return {};
  const int rung = rung_of(*ch);
  // Each stage's measured seconds beyond what the model predicts for its configuration: the
  // library's stages of that name and its expansions (an f32x3s GEMM `s0` runs as `s0_p1`,
  // `s0_p2`, `s0_epi`, ...). The model's ranking put every stage where it predicts best, so its
  // one-step neighbours are predicted slower; where it is most wrong is where a step may still
  // gain: the stages that take the most time over their prediction are stepped first.
  std::vector<double> miss(stages_.size(), 0);
  if (!measured.empty())
    for (size_t s = 0; s < stages_.size(); ++s) {
      if ((*ch)[s] < 0) continue;
      double sum = 0;
      bool any = false;
      for (const auto& t : measured)
        if (codegen::codegen_stage_runs_as(stages_[s].name, t.stage)) {
          sum += t.ms * 1e-3;
          any = true;
        }
      if (any) miss[s] = std::max(0.0, sum - stages_[s].ranked[static_cast<size_t>((*ch)[s])].t_est);
    }
  std::vector<std::tuple<double, double, Choice>> found;  // (-miss of the stage stepped, predicted, choice)
  std::set<Choice> seen{*ch};
  for (size_t s = 0; s < stages_.size(); ++s) {
    if ((*ch)[s] < 0) continue;
    const auto& cur = stages_[s].ranked[static_cast<size_t>((*ch)[s])].config;
    for (const auto& n : space::space_neighbors(base_, cur, options_)) {
      auto it = stages_[s].by_name.find(n.name);
      if (it == stages_[s].by_name.end()) continue;
      Choice next = *ch;
      next[s] = static_cast<int>(it->second);
      if (rung_of(next) != rung || !seen.insert(next).second) continue;
      found.emplace_back(-miss[s], predicted(next), next);
    }
  }
  std::stable_sort(found.begin(), found.end());
  std::vector<Choice> order;
  for (auto& [m, t, next] : found) order.push_back(std::move(next));
  return make_each(order, "neighbor");
}

std::vector<search::Candidate> RealSpace::make_fastest_first(std::vector<std::pair<double, Choice>> found,
                                                             const char* origin) {
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second < b.second;
  });
  std::vector<Choice> order;
  for (auto& [t, next] : found) order.push_back(std::move(next));
  return make_each(order, origin);
}

std::vector<search::Candidate> RealSpace::make_each(const std::vector<Choice>& order, const char* origin) {
  std::vector<search::Candidate> out;
  for (const auto& next : order) {
    search::Candidate n = make(next);
    n.origin = origin;
    out.push_back(std::move(n));
  }
  return out;
}

std::string RealSpace::summation_class(const search::Candidate& c) {
  auto ch = choice_of(c);
  if (!ch) return c.hash;
  std::string key;
  for (size_t s = 0; s < stages_.size(); ++s) {
    key += (s ? ";" : "");
    if ((*ch)[s] < 0) {
      key += stages_[s].name + ":lowered";
      continue;
    }
    const space::StageConfig& sc = stages_[s].ranked[static_cast<size_t>((*ch)[s])].config;
    const auto& k = sc.gemm;
    const auto& body = base_.stages.at(static_cast<size_t>(sc.stage)).body;
    const auto* window = std::get_if<dsl::WindowStage>(&body);
    if (sc.is_gemm && (k.precision == dsl::Precision::f32 || k.precision == dsl::Precision::f32x3))
      // (schedules gemv16 / gemv32 add in their own orders: "s0:f32:gemv16:k132:auto")
      key += fmt::format("{}:{}{}:k{}:{}", stages_[s].name, dsl::dsl_precision_str(k.precision),
                         dsl::is_gemv(k.schedule) ? std::string(":") + dsl::dsl_schedule_str(k.schedule)
                                                  : std::string(),
                         k.split_k ? std::to_string(*k.split_k) : std::string("auto"), dsl::dsl_math_str(k.math));
    else if (in_torch_order(sc))
      key += stages_[s].name + ":torch";  // PyTorch's order, whatever the block and the segments
    else if (!sc.is_gemm && std::holds_alternative<dsl::ElementwiseStage>(body))
      // each output element is the same expression of its own loads, whatever the block, the
      // vector width, the items a thread or the permuting tile: no configuration changes a value
      // (run CN's six TF32 conv mismatches each spent 7 more attempts on layout copies' knobs)
      key += stages_[s].name + ":elementwise";
    else if (!sc.is_gemm && window && dsl::window_max_taps(*window) < dsl::kWindowWarpTaps)
      // a thread sums each output's taps in the window's order whatever the block and the items
      // (a window a warp may reduce, dsl/window_rules.h, keeps its configurations apart)
      key += stages_[s].name + ":window";
    else if (!sc.is_gemm && std::holds_alternative<dsl::ScanStage>(body))
      // fp64 scans round the exact prefix once: two plans differ only where their double sums,
      // carried in other groupings, fall on opposite sides of an fp32 rounding boundary
      key += stages_[s].name + ":fp64";
    else
      key += stages_[s].name + ":" + sc.name;
  }
  return key;
}

std::optional<int> RealSpace::summation_order_rung() {
  // The f32 SIMT rung, when every GEMM stage has configurations there.
  std::optional<int> rung;
  for (const auto& s : stages_) {
    bool gemm = false;
    std::optional<int> here;
    for (const auto& r : s.ranked) {
      if (!r.config.is_gemm) continue;
      gemm = true;
      if (r.config.gemm.precision == dsl::Precision::f32) {
        here = r.config.rung;
        break;
      }
    }
    if (!gemm) continue;
    if (!here || (rung && *rung != *here)) return std::nullopt;
    rung = here;
  }
  return rung;
}

std::optional<RealSpace::Choice> RealSpace::reference_choice(const search::Candidate& c) {
  auto ch = choice_of(c);
  if (!ch) return std::nullopt;
  bool moved = false;
  for (size_t s = 0; s < stages_.size(); ++s) {
    const auto& list = stages_[s].ranked;
    if ((*ch)[s] >= 0 && in_torch_order(list[static_cast<size_t>((*ch)[s])].config)) continue;
    for (size_t i = 0; i < list.size(); ++i)
      if (in_torch_order(list[i].config)) {
        (*ch)[s] = static_cast<int>(i);  // the best ranked of them
        moved = true;
        break;
      }
  }
  if (!moved) return std::nullopt;
  return ch;
}

std::optional<search::Candidate> RealSpace::reference_order(const search::Candidate& c) {
  auto ch = reference_choice(c);
  if (!ch) return std::nullopt;
  return make(*ch);
}

bool RealSpace::in_reference_order(const search::Candidate& c) {
  return has_reference_order() && !reference_choice(c);
}

bool RealSpace::has_reference_order() {
  for (const auto& s : stages_)
    for (const auto& r : s.ranked)
      if (in_torch_order(r.config)) return true;
  return false;
}

int RealSpace::pick_on_rung(size_t s, const space::StageConfig& cur, int rung) const {
  // The same tile on the rung where it has one, else the rung's best-ranked (the list is in (rung,
  // estimate) order); on the FP32 SIMT rung, K in one piece first: split-K would break the
  // one-FMA-chain order that makes the rung pass where the fp32 reference's rounding fails the
  // others.
  const auto& list = stages_[s].ranked;
  int best = -1, best_score = -1;
  for (size_t i = 0; i < list.size(); ++i) {
    const auto& o = list[i].config;
    if (o.rung != rung) continue;
    bool same_tile = o.gemm.tile && cur.gemm.tile && o.gemm.tile->m == cur.gemm.tile->m &&
                     o.gemm.tile->n == cur.gemm.tile->n;
    bool one_chain = o.gemm.precision == dsl::Precision::f32 && o.gemm.split_k.value_or(1) == 1;
    int score = (one_chain ? 2 : 0) + (same_tile ? 1 : 0);
    if (score > best_score) {
      best = static_cast<int>(i);
      best_score = score;
    }
  }
  return best;
}

std::optional<search::Candidate> RealSpace::at_rung(const search::Candidate& c, int rung) {
  auto ch = choice_of(c);
  if (!ch) return std::nullopt;
  if (rung_of(*ch) == rung) return make(*ch);
  Choice next = *ch;
  for (size_t s = 0; s < stages_.size(); ++s) {
    if (next[s] < 0) continue;
    const auto& list = stages_[s].ranked;
    const auto& cur = list[static_cast<size_t>(next[s])].config;
    if (!cur.is_gemm || cur.rung == rung) continue;
    // A stage without configurations at the rung (f32x3s where K is not a multiple of 4) takes the
    // nearest rung above it, so the program as a whole lands on the requested one.
    int target = rung;
    if (cur.rung < rung) {
      target = -1;
      for (const auto& r : list)
        if (r.config.is_gemm && r.config.rung >= rung && (target < 0 || r.config.rung < target))
          target = r.config.rung;
    }
    const int best = pick_on_rung(s, cur, target);
    if (best < 0) continue;  // this stage has no such rung (e.g. 16-bit data: one precision)
    next[s] = best;
  }
  if (rung_of(next) != rung) return std::nullopt;
  search::Candidate out = make(next);
  out.origin = c.origin;
  return out;
}

std::vector<search::Candidate> RealSpace::descents(const search::Candidate& c, int rung) {
  auto ch = choice_of(c);
  if (!ch) return {};
  int above = 0;  // GEMM stages above the rung
  for (size_t s = 0; s < stages_.size(); ++s)
    if ((*ch)[s] >= 0) {
      const auto& cur = stages_[s].ranked[static_cast<size_t>((*ch)[s])].config;
      above += cur.is_gemm && cur.rung > rung;
    }
  if (above < 2) return {};
  const double now = predicted(*ch);
  std::vector<std::pair<double, Choice>> found;
  for (size_t s = 0; s < stages_.size(); ++s) {
    if ((*ch)[s] < 0) continue;
    const auto& list = stages_[s].ranked;
    const auto& cur = list[static_cast<size_t>((*ch)[s])].config;
    if (!cur.is_gemm || cur.rung <= rung) continue;
    const int pick = pick_on_rung(s, cur, rung);
    if (pick < 0) continue;
    Choice next = *ch;
    next[s] = pick;
    // More precision never costs accuracy: every other GEMM stage takes its fastest configuration
    // on its own rung or above (after a floor lifted all of them to f32x3s, p @ v runs faster
    // on mma.sync's f32x3 one rung up while q @ k^T descends to TF32).
    for (size_t o = 0; o < stages_.size(); ++o) {
      if (o == s || next[o] < 0) continue;
      const auto& olist = stages_[o].ranked;
      const auto& ocur = olist[static_cast<size_t>(next[o])].config;
      if (!ocur.is_gemm) continue;
      for (size_t i = 0; i < olist.size(); ++i)
        if (olist[i].config.is_gemm && olist[i].config.rung >= ocur.rung &&
            olist[i].t_est < olist[static_cast<size_t>(next[o])].t_est)
          next[o] = static_cast<int>(i);
    }
    const double t = predicted(next);
    if (t < now) found.emplace_back(t, next);  // fastest first: the most time saved
  }
  return make_fastest_first(std::move(found), "descent");
}

std::string RealSpace::rung_signature(const search::Candidate& c) {
  auto ch = choice_of(c);
  if (!ch) return c.hash;
  std::string sig;
  for (size_t s = 0; s < stages_.size(); ++s) {
    if ((*ch)[s] < 0) continue;
    const auto& cur = stages_[s].ranked[static_cast<size_t>((*ch)[s])].config;
    if (cur.is_gemm) sig += (sig.empty() ? "" : ",") + std::to_string(cur.rung);
  }
  return sig;
}

std::optional<int> RealSpace::match(size_t s, const nlohmann::json& want) const {
  const auto& list = stages_[s].ranked;
  for (size_t i = 0; i < list.size(); ++i) {
    nlohmann::json have = stage_config_json(list[i].config);
    bool all = true;
    for (auto it = want.begin(); it != want.end() && all; ++it)
      all = have.contains(it.key()) && have[it.key()] == *it;
    if (all) return static_cast<int>(i);
  }
  return std::nullopt;
}

std::optional<search::Candidate> RealSpace::from_config(const nlohmann::json& config) {
  if (!config.is_object() || config.empty()) return std::nullopt;
  std::vector<nlohmann::json> want(stages_.size(), nlohmann::json::object());
  for (auto it = config.begin(); it != config.end(); ++it) {
    const std::string& key = it.key();
    size_t dot = key.find('.');
    if (dot == std::string::npos) {
      if (primary_ < 0) return std::nullopt;
      want[static_cast<size_t>(primary_)][key] = *it;
      continue;
    }
    std::string stage = key.substr(0, dot);
    bool found = false;
    for (size_t s = 0; s < stages_.size(); ++s)
      if (stages_[s].name == stage) {
        want[s][key.substr(dot + 1)] = *it;
        found = true;
      }
    if (!found) return std::nullopt;  // remembered from a program with other stages
  }
  Choice ch = best_choice();
  for (size_t s = 0; s < stages_.size(); ++s) {
    if (want[s].empty()) continue;
    if (stages_[s].ranked.empty()) return std::nullopt;
    auto i = match(s, want[s]);
    if (!i) return std::nullopt;
    ch[s] = *i;
  }
  return make(ch);
}

}  // namespace ucut::app

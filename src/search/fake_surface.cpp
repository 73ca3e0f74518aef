#include "search/fake_surface.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "support/hash.h"

namespace ucut::search {

namespace {
constexpr int kM[] = {64, 128, 256};
constexpr int kN[] = {64, 128, 256};
constexpr int kK[] = {32, 64, 128};
constexpr int kC[] = {1, 2};
constexpr int kS[] = {2, 3, 4, 5};
constexpr const char* kRung[] = {"tf32", "f32x3", "f32"};
constexpr double kRungCost[] = {1.0, 2.6, 6.0};

template <size_t N>
int index_of(const int (&vals)[N], int v) {
  for (size_t i = 0; i < N; ++i)
    if (vals[i] == v) return static_cast<int>(i);
  return -1;
}

struct Knobs {
  int mi, ni, ki, ci, si, rung;
};

std::optional<Knobs> knobs_of(const nlohmann::json& cfg) {
  if (!cfg.is_object()) return std::nullopt;
  int m = 0, n = 0, k = 0, c = 0;
  std::string tile = cfg.value("tile", ""), cluster = cfg.value("cluster", "");
  if (std::sscanf(tile.c_str(), "%dx%dx%d", &m, &n, &k) != 3) return std::nullopt;
  if (std::sscanf(cluster.c_str(), "%dx1", &c) != 1) return std::nullopt;
  Knobs kn{index_of(kM, m), index_of(kN, n), index_of(kK, k), index_of(kC, c),
           index_of(kS, cfg.value("stages", 0)), -1};
  std::string prec = cfg.value("precision", "tf32");
  for (int r = 0; r < 3; ++r)
    if (prec == kRung[r]) kn.rung = r;
  if (kn.mi < 0 || kn.ni < 0 || kn.ki < 0 || kn.ci < 0 || kn.si < 0 || kn.rung < 0)
    return std::nullopt;
  // A validity rule, like the real space's fits_smem: the biggest tiles with deep pipelines
  // do not fit in shared memory.
  if (kM[kn.mi] * kN[kn.ni] >= 256 * 256 && kK[kn.ki] == 128 && kS[kn.si] >= 4) return std::nullopt;
  return kn;
}
}  // namespace

Candidate FakeSpace::make(int mi, int ni, int ki, int ci, int si, int rung) const {
  Candidate c;
  c.config = {{"tile", fmt::format("{}x{}x{}", kM[mi], kN[ni], kK[ki])},
              {"cluster", fmt::format("{}x1", kC[ci])},
              {"stages", kS[si]},
              {"precision", kRung[rung]}};
  c.name = fmt::format("{}_{}x{}x{}_c{}x1_s{}", kRung[rung], kM[mi], kN[ni], kK[ki], kC[ci], kS[si]);
  c.program = fmt::format("# synthetic program for {}\n{}\n", spec_.problem, c.name);
  c.hash = sha256_hex(c.program);
  c.rung = rung;
  c.predicted_s = predicted(mi, ni, ki, ci, si, rung);
  return c;
}

double FakeSpace::predicted(int mi, int ni, int ki, int ci, int si, int rung) const {
  // The analytic model's optimum is `rank_shift` steps off in n and k; it ignores stages.
  int bn = std::clamp(index_of(kN, spec_.best_n) - spec_.rank_shift, 0, 2);
  int bk = std::clamp(index_of(kK, spec_.best_k) + spec_.rank_shift, 0, 2);
  double d = std::pow(mi - index_of(kM, spec_.best_m), 2) + std::pow(ni - bn, 2) +
             std::pow(ki - bk, 2) + 0.5 * std::pow(ci - index_of(kC, spec_.best_cluster), 2) +
             0.01 * si;
  const double cost = static_cast<size_t>(rung) < spec_.predicted_rung_cost.size()
                         ? spec_.predicted_rung_cost[static_cast<size_t>(rung)]
                         : kRungCost[rung];
  return spec_.t_opt * (1 + 0.2 * d) * cost;
}

double FakeSpace::true_time(const Candidate& c) const {
  auto k = knobs_of(c.config);
  if (!k) return 1.0;
  double d = std::pow(k->mi - index_of(kM, spec_.best_m), 2) +
             std::pow(k->ni - index_of(kN, spec_.best_n), 2) +
             std::pow(k->ki - index_of(kK, spec_.best_k), 2) +
             0.5 * std::pow(k->ci - index_of(kC, spec_.best_cluster), 2) +
             0.3 * std::pow(k->si - index_of(kS, spec_.best_stages), 2);
  const double rung = static_cast<size_t>(k->rung) < spec_.rung_cost.size() ? spec_.rung_cost[static_cast<size_t>(k->rung)]
                                                                              : kRungCost[k->rung];
  return spec_.t_opt * (1 + 0.15 * d) * rung;
}

std::vector<Candidate> FakeSpace::ranked(int k, int min_rung) {
  int rung = std::clamp(min_rung, 0, 2);
  while (rung < 2 && spec_.missing_rungs.count(rung)) ++rung;
  std::vector<Candidate> all;
  for (int mi = 0; mi < 3; ++mi)
    for (int ni = 0; ni < 3; ++ni)
      for (int ki = 0; ki < 3; ++ki)
        for (int ci = 0; ci < 2; ++ci)
          for (int si = 0; si < 4; ++si) {
            Candidate c = make(mi, ni, ki, ci, si, rung);
            if (knobs_of(c.config)) all.push_back(std::move(c));
          }
  std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.predicted_s, a.name) < std::tie(b.predicted_s, b.name);
  });
  if (static_cast<int>(all.size()) > k) all.resize(k);
  return all;
}

std::vector<Candidate> FakeSpace::neighbors(const Candidate& c) {
  std::vector<Candidate> out;
  auto k = knobs_of(c.config);
  if (!k) return out;
  int v[5] = {k->mi, k->ni, k->ki, k->ci, k->si};
  const int sizes[5] = {3, 3, 3, 2, 4};
  for (int knob = 0; knob < 5; ++knob)
    for (int d : {-1, 1}) {
      int w[5] = {v[0], v[1], v[2], v[3], v[4]};
      w[knob] += d;
      if (w[knob] < 0 || w[knob] >= sizes[knob]) continue;
      Candidate n = make(w[0], w[1], w[2], w[3], w[4], k->rung);
      if (knobs_of(n.config)) out.push_back(std::move(n));
    }
  std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.predicted_s, a.name) < std::tie(b.predicted_s, b.name);
  });
  return out;
}

std::optional<Candidate> FakeSpace::at_rung(const Candidate& c, int rung) {
  if (rung < 0 || rung > 2 || spec_.missing_rungs.count(rung)) return std::nullopt;
  auto k = knobs_of(c.config);
  if (!k) return std::nullopt;
  if (rung == spec_.order_rung && spec_.lift_to_first_order) k->si = 0;
  return make(k->mi, k->ni, k->ki, k->ci, k->si, rung);
}

std::optional<Candidate> FakeSpace::reference_order(const Candidate& c) {
  const int si = index_of(kS, spec_.reference_order_stages);
  auto k = knobs_of(c.config);
  if (si < 0 || !k || k->si == si) return std::nullopt;
  return make(k->mi, k->ni, k->ki, k->ci, si, k->rung);
}

std::optional<Candidate> FakeSpace::from_config(const nlohmann::json& config) {
  auto k = knobs_of(config);
  if (!k) return std::nullopt;
  return make(k->mi, k->ni, k->ki, k->ci, k->si, k->rung);
}

std::string FakeSpace::summation_class(const Candidate& c) {
  auto k = knobs_of(c.config);
  if (!k || k->rung != spec_.order_rung || !spec_.order_classes) return c.hash;
  return fmt::format("{}:s{}", kRung[k->rung], kS[k->si]);
}

CompileOutcome FakeCompiler::compile(const Candidate& c) {
  ++calls;
  CompileOutcome o;
  o.seconds = 45;
  auto it = spec_.fail.find(c.name);
  if (it != spec_.fail.end() && it->second == RunStatus::compile_error) {
    o.message = "error: static assertion failed (synthetic)";
    return o;
  }
  o.ok = true;
  o.so_path = "/fake/" + c.hash.substr(0, 12) + ".so";
  o.cu_path = "/fake/" + c.hash.substr(0, 12) + ".cu";
  return o;
}

Baselines FakeEvaluator::baselines() {
  ++baseline_calls;
  return Baselines{space_.spec().t_eager, space_.spec().t_compile_torch};
}

EvalOutcome FakeEvaluator::evaluate(const Candidate& c, const CompileOutcome&) {
  ++calls;
  if (clock_) clock_->advance(space_.spec().eval_seconds);
  EvalOutcome e;
  e.gpu_seconds = 0.5;
  e.gpu_phases = {{"candidate", 0.125}, {"checks", 0.25}, {"reference", 0.125}};
  auto it = space_.spec().fail.find(c.name);
  if (it != space_.spec().fail.end() && it->second != RunStatus::compile_error) {
    e.status = it->second;
    e.message = fmt::format("injected {}", run_status_name(it->second));
    return e;
  }
  const bool in_order = c.config.value("stages", 0) == space_.spec().reference_order_stages;
  if (space_.spec().reference_limited &&
      (space_.spec().summation_order_rung < 0 || c.rung < space_.spec().summation_order_rung) &&
      (!in_order || space_.spec().reference_order_fails)) {
    e.status = RunStatus::mismatch;
    e.reference_limited = true;
    e.rounding_mismatch = true;
    e.message = "synthetic: within tolerance of float64, the fp32 reference is not";
    return e;
  }
  if (c.rung == space_.spec().order_rung && space_.spec().order_mismatch_stages.count(c.config.value("stages", 0))) {
    e.status = RunStatus::mismatch;
    e.rounding_mismatch = true;
    e.reference_limited = space_.spec().order_mismatch_reference_limited;
    e.max_abs_err = 2e-4;
    e.message = "synthetic: this summation order rounds 2e-4 away from the reference";
    return e;
  }
  if (space_.spec().tf32_mismatch && c.rung == 0) {
    e.status = RunStatus::mismatch;
    e.rounding_mismatch = true;
    e.max_abs_err = 3e-3;
    e.message = "max abs error 3e-3 > tolerance 1e-4 (synthetic TF32 error)";
    return e;
  }
  e.status = RunStatus::ok;
  e.time_s = space_.true_time(c);
  return e;
}

}  // namespace ucut::search

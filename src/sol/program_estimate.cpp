// sol_program_estimate: the per-stage floor of a checked μCUTLASS program. What a stage reads,
// its FLOPs and the rate they run at come from its kind's entry (sol/kinds/).
#include "sol/program_estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "dsl/names.h"
#include "sol/format.h"
#include "sol/kinds/kinds.h"

namespace ucut::sol {

namespace {

using namespace ucut::dsl;

// FLOPs per element of an epilogue function, by the Problem IR's convention (docs/problem-ir.md).
int fn_cost(Fn fn) {
  static const std::map<std::string, int> costs = {
      {"exp", 4},  {"log", 4},      {"sqrt", 4},      {"rsqrt", 4},       {"tanh", 4},
      {"sigmoid", 4}, {"gelu", 8},  {"gelu_tanh", 8}, {"silu", 5},        {"mish", 10},
      {"softplus", 6}, {"elu", 5},  {"selu", 5},      {"hardswish", 3},   {"hardsigmoid", 3},
      {"softsign", 2}};
  static const char* names[] = {
#define UCUT_FN(id, name, arity, nparams, defaults, formula) name,
#include "dsl/functions.def"
#undef UCUT_FN
  };
  auto it = costs.find(names[static_cast<int>(fn)]);
  return it == costs.end() ? 1 : it->second;
}

int expr_cost(const ExprPtr& e) {
  if (!e) return 0;
  int c = 0;
  switch (e->kind) {
    case Expr::Kind::unary: c = fn_cost(e->fn); break;
    case Expr::Kind::call: c = fn_cost(e->fn); break;
    case Expr::Kind::binary: c = 1; break;
    default: break;
  }
  for (const auto& a : e->args) c += expr_cost(a);
  return c;
}

}  // namespace

int sol_epilogue_cost(const Epilogue& ep) {
  int c = 0;
  for (const auto& s : ep.stmts) c += expr_cost(s.value) + (s.kind == EpilogueStmt::Kind::reduce ? 1 : 0);
  return c;
}

namespace {

void expr_loads(const ExprPtr& e, std::vector<std::string>& out) {
  if (!e) return;
  if (e->kind == Expr::Kind::load) out.push_back(e->name);
  for (const auto& a : e->args) expr_loads(a, out);
}

}  // namespace

void sol_epilogue_loads(const Epilogue& ep, std::vector<std::string>& out) {
  for (const auto& s : ep.stmts) expr_loads(s.value, out);
}

// FLOPs per element of a row-wise / reduce stage op (same convention as the Problem IR).
int sol_row_op_cost(const std::string& op) {
  static const std::map<std::string, int> costs = {
      {"softmax", 6},    {"log_softmax", 6}, {"logsumexp", 6}, {"layer_norm", 8}, {"rms_norm", 5},
      {"group_norm", 8}, {"batch_norm", 8},  {"instance_norm", 8}, {"var", 3},     {"std", 3},
      {"mse", 3},        {"l1", 3},          {"huber", 3},     {"smooth_l1", 3},  {"kl", 3},
      {"hinge", 3},      {"cross_entropy", 8}, {"cosine_similarity", 3}, {"triplet_margin", 3}};
  auto it = costs.find(op);
  return it == costs.end() ? 1 : it->second;
}


SolRate sol_gemm_rate(const Peaks& pk, Precision prec, bool half_data, Policy policy) {
  switch (prec) {
    case Precision::f16:
    case Precision::bf16: return {dsl::dsl_precision_str(prec), pk.bf16};
    case Precision::tf32:
    case Precision::tf32m: return {dsl::dsl_precision_str(prec), pk.tf32};
    case Precision::f32x3: return {"f32x3", pk.tf32 / 3.0};
    case Precision::f32x3s: return {"f32x3s", pk.tf32 / 3.0};
    case Precision::f32x3k: return {"f32x3k", pk.tf32 / 3.0};
    case Precision::f32x3w: return {"f32x3w", pk.tf32 / 3.0};
    case Precision::bf16x3: return {"bf16x3", pk.bf16 / 3.0};
    case Precision::f32: return {"f32", pk.fp32_simt};
    case Precision::auto_: break;
  }
  if (half_data) return {"auto->bf16", pk.bf16};
  return {fmt::format("auto->{}", policy_name(policy)), peaks_tensor_f32_rate(pk, policy)};
}

int64_t sol_numel_of(const Program& prog, const std::string& name) {
  const Tensor* t = prog.find_tensor(name);
  return t ? t->numel() : 0;
}

ProgramEstimate sol_program_estimate(const HwSpec& hw, const Program& prog, Policy policy,
                                     const std::optional<Calibration>& calibration) {
  Peaks pk = calibration ? peaks_calibrated(hw, *calibration) : peaks_datasheet(hw);
  ProgramEstimate est;
  est.program = prog.name;
  est.gpu = hw.name;
  est.policy = policy;
  est.origin = pk.origin;
  est.mem_bw = pk.mem_bw;
  est.policy_f32_rate = peaks_tensor_f32_rate(pk, policy);

  for (const Tensor& t : prog.tensors)
    if (t.role == TensorRole::tmp) est.tmp_sizes.emplace_back(t.name, t.numel() * dtype_bytes(t.dtype));

  for (const Stage& st : prog.stages) {
    StageLine line;
    line.name = st.name;
    SolStageWork work{{}, {"simt", pk.fp32_simt}, 0};
    const SolStageKind& kind = sol_stage_kind(dsl_stage_kind_of(st));
    line.kind = dsl_stage_kind_word(kind.id);
    kind.work({pk, prog, policy, st.outputs.empty() ? 0 : sol_numel_of(prog, st.outputs[0])}, st, work);
    const std::vector<std::string>& reads = work.reads;
    const SolRate& rate = work.rate;
    line.flops = work.flops;
    line.precision = rate.name;
    line.rate = rate.rate;
    std::set<std::string> seen;
    for (const auto& r : reads) {
      if (!seen.insert(r).second) continue;
      const Tensor* t = prog.find_tensor(r);
      if (!t) continue;
      int64_t b = t->numel() * dtype_bytes(t->dtype);
      line.bytes_read += b;
      if (t->role == TensorRole::tmp) {
        line.tmp_bytes += b;
        line.reads_tmp.push_back(r);
      }
    }
    for (const auto& o : st.outputs) {
      const Tensor* t = prog.find_tensor(o);
      if (!t) continue;
      int64_t b = t->numel() * dtype_bytes(t->dtype);
      line.bytes_written += b;
      if (t->role == TensorRole::tmp) {
        line.tmp_bytes += b;
        line.writes_tmp.push_back(o);
      }
    }
    line.t_compute = rate.rate > 0 ? double(line.flops) / rate.rate : 0;
    line.t_mem = pk.mem_bw > 0 ? double(line.bytes_read + line.bytes_written) / pk.mem_bw : 0;
    line.t_floor = std::max(line.t_compute, line.t_mem);
    est.bytes_total += line.bytes_read + line.bytes_written;
    est.tmp_bytes += line.tmp_bytes;
    est.t_floor += line.t_floor;
    est.stages.push_back(std::move(line));
  }
  return est;
}

std::string sol_program_explain(const ProgramEstimate& est, double problem_t_sol) {
  std::string head = fmt::format("problem SOL {}, this program's floor {}", fmt_time(problem_t_sol), fmt_time(est.t_floor));
  if (est.t_floor <= problem_t_sol * 1.02)
    return head + ": the program can reach the problem's speed of light";

  // Candidate reasons, each with the time it costs; the largest is named.
  double t_tmp = est.mem_bw > 0 ? double(est.tmp_bytes) / est.mem_bw : 0;
  const StageLine* slow = nullptr;
  double t_prec = 0;
  for (const auto& s : est.stages) {
    if (s.rate <= 0 || s.rate >= est.policy_f32_rate || s.kind.find("gemm") == std::string::npos) continue;
    double extra = double(s.flops) / s.rate - double(s.flops) / est.policy_f32_rate;
    if (extra > t_prec) {
      t_prec = extra;
      slow = &s;
    }
  }
  // GEMM work beyond the problem's: e.g. an f32x3s stage runs as three TF32 GEMMs (its split
  // stages appear as intermediates), so its products alone can exceed the problem's SOL.
  double t_gemm = 0;
  int n_gemm = 0;
  for (const auto& s : est.stages)
    if (s.kind.find("gemm") != std::string::npos) {
      t_gemm += s.t_compute;
      ++n_gemm;
    }
  const double t_gemm_excess = t_gemm - problem_t_sol;
  if (n_gemm > 1 && t_gemm_excess > t_tmp && t_gemm_excess > t_prec)
    return fmt::format("{} because its {} GEMM stages need {} of tensor-core time at their rates", head, n_gemm,
                       fmt_time(t_gemm));
  if (t_tmp > 0 && t_tmp >= t_prec) {
    // Name the largest intermediate and the first stage that reads it back.
    std::string tensor;
    int64_t size = -1;
    for (const auto& [name, bytes] : est.tmp_sizes)
      if (bytes > size) {
        size = bytes;
        tensor = name;
      }
    const StageLine* reader = nullptr;
    for (const auto& s : est.stages)
      if (!reader && std::find(s.reads_tmp.begin(), s.reads_tmp.end(), tensor) != s.reads_tmp.end()) reader = &s;
    std::string traffic = fmt::format("{} of intermediate traffic, {} at {}", fmt_bytes(double(est.tmp_bytes)),
                                      fmt_time(t_tmp), fmt_bw(est.mem_bw));
    if (reader)
      return fmt::format("{} because stage {} re-reads the {} intermediate {} ({})", head, reader->name,
                         fmt_bytes(double(size)), tensor, traffic);
    return fmt::format("{} because intermediates are written to memory ({})", head, traffic);
  }
  if (slow)
    return fmt::format("{} because stage {} computes at {} ({}) where the {} policy allows {}", head, slow->name,
                       slow->precision, fmt_rate(slow->rate), policy_name(est.policy), fmt_rate(est.policy_f32_rate));
  return head + " because its stages run one after another (each stage's own roofline adds up)";
}

std::string sol_program_render(const ProgramEstimate& est, double problem_t_sol) {
  std::string out = fmt::format("program {} on {} ({} peaks, policy {}):\n", est.program, est.gpu, est.origin,
                                policy_name(est.policy));
  for (const auto& s : est.stages) {
    out += fmt::format("  {:<6} {:<12} {:<12} {:>14} {:>12} read {:>12} written  floor {} ({}-bound)", s.name, s.kind,
                       s.precision, fmt_flops(double(s.flops)), fmt_bytes(double(s.bytes_read)),
                       fmt_bytes(double(s.bytes_written)), fmt_time(s.t_floor),
                       s.t_compute > s.t_mem ? "compute" : "memory");
    if (!s.reads_tmp.empty() || !s.writes_tmp.empty()) {
      std::string tmp;
      for (const auto& r : s.reads_tmp) tmp += (tmp.empty() ? "" : ", ") + std::string("reads ") + r;
      for (const auto& w : s.writes_tmp) tmp += (tmp.empty() ? "" : ", ") + std::string("writes ") + w;
      out += "  [" + tmp + "]";
    }
    out += "\n";
  }
  out += sol_program_explain(est, problem_t_sol) + "\n";
  return out;
}

nlohmann::ordered_json sol_program_json(const ProgramEstimate& est, double problem_t_sol) {
  nlohmann::ordered_json j;
  j["program"] = est.program;
  j["gpu"] = est.gpu;
  j["policy"] = policy_name(est.policy);
  j["origin"] = est.origin;
  j["t_floor_s"] = est.t_floor;
  j["problem_t_sol_s"] = problem_t_sol;
  j["floor_over_sol"] = problem_t_sol > 0 ? est.t_floor / problem_t_sol : 0.0;
  j["bytes_total"] = est.bytes_total;
  j["tmp_bytes"] = est.tmp_bytes;
  j["stages"] = nlohmann::ordered_json::array();
  for (const auto& s : est.stages)
    j["stages"].push_back({{"name", s.name}, {"kind", s.kind}, {"precision", s.precision}, {"flops", s.flops},
                           {"rate_flops_per_s", s.rate}, {"bytes_read", s.bytes_read},
                           {"bytes_written", s.bytes_written}, {"tmp_bytes", s.tmp_bytes},
                           {"reads_tmp", s.reads_tmp}, {"writes_tmp", s.writes_tmp}, {"t_compute_s", s.t_compute},
                           {"t_mem_s", s.t_mem}, {"t_floor_s", s.t_floor}});
  j["explanation"] = sol_program_explain(est, problem_t_sol);
  return j;
}

}  // namespace ucut::sol

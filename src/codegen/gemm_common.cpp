// GEMM plan resolution and CUTLASS names (see gemm_common.h), and codegen_emit_gemm's dispatch.
#include "codegen/gemm_common.h"

#include "support/diagnostics.h"
#include "support/hash.h"

namespace ucut::codegen {

const char* cutlass_element(dsl::DType t) {
  switch (t) {
    case dsl::DType::f16: return "cutlass::half_t";
    case dsl::DType::bf16: return "cutlass::bfloat16_t";
    default: return "float";
  }
}

int tensor_index(const dsl::Program& p, const std::string& name) {
  for (size_t i = 0; i < p.tensors.size(); ++i)
    if (p.tensors[i].name == name) return static_cast<int>(i);
  UCUT_CHECK(false, "tensor '" + name + "' is not declared (the checker resolves names)");
  return -1;
}

Result<GemmPlan> gemm_plan(const dsl::Program& p, int stage_index, const dsl::GemmStage& s,
                           const std::string& out_name, const std::string& ns) {
  GemmPlan g;
  g.stage = &s;
  g.ns = ns;
  g.a = p.find_tensor(s.a.tensor);
  g.b = p.find_tensor(s.b.tensor);
  g.out = p.find_tensor(out_name);
  if (!g.a || !g.b || !g.out)
    return make_error(ErrorCode::internal, "stage " + std::to_string(stage_index) +
                      ": a GEMM tensor is not declared (the checker should have said so)");
  auto violations = dsl::gemm_rules_check(p, s, *g.out);
  if (!violations.empty()) {
    const auto& v = violations.front();
    return make_error(ErrorCode::invalid_input,
                      "GEMM stage " + std::to_string(stage_index) + " breaks rule " + v.rule + " (" +
                          v.knob + "): " + v.message,
                      v.hint);
  }
  g.knobs = dsl::gemm_resolve_auto(p, s, *g.out);
  g.stages_auto = !s.knobs.stages.has_value();
  g.m = s.m;
  g.n = s.n;
  g.k = s.k;
  g.l = s.batch;
  if (s.batch > 1 && g.b->shape.size() == 2) {  // a shared 2-D B: fold the batch into M
    g.folded = true;
    g.m = s.m * s.batch;
    g.l = 1;
  }
  g.config_name = dsl::gemm_config_name(g.knobs, g.stages_auto);
  return g;
}

Result<StageCode> codegen_emit_gemm(const dsl::Program& p, int i) {
  const auto& stage = p.stages.at(i);
  const auto* s = std::get_if<dsl::GemmStage>(&stage.body);
  if (!s) return make_error(ErrorCode::internal, "codegen_emit_gemm called on a non-GEMM stage");
  if (stage.outputs.empty()) return make_error(ErrorCode::internal, "GEMM stage without an output");
  auto plan = gemm_plan(p, i, *s, stage.outputs[0], "ucut_s" + std::to_string(i));
  if (!plan) return plan.error();
  if (dsl::is_gemv(plan->knobs.schedule)) return gemm_emit_gemv(p, *plan);
  if (dsl::gemm_family(plan->knobs.precision) == dsl::GemmFamily::sm80) return gemm_emit_sm80(p, *plan);
  return gemm_emit_sm90(p, *plan);
}

std::string unit_cached_launcher(const UnitLauncher& l) {
  const std::string& T = l.op_type;
  const std::string& m = l.member;
  std::string d = l.comment;
  d += "struct Entry {\n  bool ready = false;\n  int device = -1;\n  " + l.args_type + " key;\n  " + T + " " + m +
       ";\n  typename " + T + "::Arguments args;\n};\nconstexpr int kEntries = 4;\n\n";
  d += "int run(const " + l.args_type + R"(& a, cudaStream_t stream) {
  static std::mutex mu;
  static Entry entries[kEntries];
  static int next = 0;
  std::lock_guard<std::mutex> lock(mu);
  int device = 0;
  cudaGetDevice(&device);
  Entry* c = nullptr;
  for (auto& e : entries)
    if (e.ready && e.device == device && std::memcmp(&e.key, &a, sizeof a) == 0) c = &e;
  if (c == nullptr) {
    c = &entries[next];
    next = (next + 1) % kEntries;
    c->ready = false;
    c->args = make_arguments(a);
    cutlass::Status st = c->)" + m + R"(.can_implement(c->args);
    if (st != cutlass::Status::kSuccess) {
      ucut_rt::set_error()" + l.rejected + R"();
      return 2;
    }
    size_t need = )" + T + R"(::get_workspace_size(c->args);
    if (need > a.workspace_bytes) {
      ucut_rt::set_error("%s: needs %zu workspace bytes, got %llu", a.name, need, a.workspace_bytes);
      return 5;
    }
    st = c->)" + m + R"(.initialize(c->args, a.workspace, stream);
    if (st != cutlass::Status::kSuccess) {
      ucut_rt::set_error("%s: initialize failed: %s", a.name, cutlassGetStatusString(st));
      return 3;
    }
    c->device = device;
    std::memcpy(&c->key, &a, sizeof a);
    c->ready = true;
  })";
  d += l.on_reuse.empty() ? "" : " else {\n" + l.on_reuse + "  }";
  d += "\n  cutlass::Status st = c->" + m + R"(.run(stream);
  cudaError_t e = cudaGetLastError();
  if (st != cutlass::Status::kSuccess || e != cudaSuccess) {
    ucut_rt::set_error("%s: launch failed: %s / %s", a.name, cutlassGetStatusString(st), cudaGetErrorString(e));
    return 4;
  }
  return 0;
}
}  // namespace )" + l.ns + "\n\n";
  d += "extern \"C\" int " + l.ns + "_run(const " + l.args_type + "* a, cudaStream_t stream) { return " + l.ns +
       "::run(*a, stream); }\n";
  d += "extern \"C\" size_t " + l.ns + "_workspace(const " + l.args_type + "* a) {\n  return " + l.ns + "::" + T +
       "::get_workspace_size(" + l.ns + "::make_arguments(*a));\n}\n";
  return d;
}

std::string unit_declarations(const std::string& unit_name, const std::string& args_type) {
  return "extern \"C\" int " + unit_name + "_run(const " + args_type + "* a, cudaStream_t stream);\n" +
         "extern \"C\" size_t " + unit_name + "_workspace(const " + args_type + "* a);\n";
}

void unit_publish(StageCode& code, std::string text, const std::string& ns) {
  code.unit_name = "ucut_k" + sha256_hex(text).substr(0, 16);
  for (size_t pos; (pos = text.find(ns)) != std::string::npos;) text.replace(pos, ns.size(), code.unit_name);
  code.unit = std::move(text);
}

}  // namespace ucut::codegen

// The kernel zoo's forms and units (see warmup.h).
#include "app/warmup.h"

#include <array>
#include <set>

#include <mutex>

#include "app/adapters_space.h"
#include "app/pipeline.h"
#include "build/program_build.h"
#include "support/parallel.h"
#include "dsl/dsl.h"
#include "space/space.h"

namespace ucut::app {

namespace {

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size()) s.replace(pos, from.size(), to);
}

}  // namespace

std::vector<ZooForm> warmup_zoo_forms() {
  struct Epi {
    const char* name;
    const char* body;   // the epilogue, `y` the output
    const char* decls;  // what it reads besides x and W (types: @T@ data, @O@ output)
  };
  static const Epi epilogues[] = {
      {"acc", "y = acc", ""},
      {"bias", "y = acc + b[col]", "param b : @T@[@N@] = \"b\"\n"},
      {"bias_relu", "y = relu(acc + b[col])", "param b : @T@[@N@] = \"b\"\n"},
      {"bias_gelu", "y = gelu(acc + b[col])", "param b : @T@[@N@] = \"b\"\n"},
      {"bias_gelu_tanh", "y = gelu_tanh(acc + b[col])", "param b : @T@[@N@] = \"b\"\n"},
      {"bias_silu", "y = silu(acc + b[col])", "param b : @T@[@N@] = \"b\"\n"},
      {"bias_sigmoid", "y = sigmoid(acc + b[col])", "param b : @T@[@N@] = \"b\"\n"},
      {"bias_tanh", "y = tanh(acc + b[col])", "param b : @T@[@N@] = \"b\"\n"},
      {"scale", "y = alpha * acc", "scalar alpha = 1\n"},
      {"residual", "y = acc + r", "in r : @O@[@M@, @N@]\n"},
  };
  struct Math {
    const char* name;
    const char* data;       // operand dtype
    const char* precision;
    bool n_major;           // also B as [K, N] (x @ W): wgmma reads 16-bit operands in either layout
    bool epilogue_free;     // the unit holds no epilogue (sm80-API GEMMs: the epilogue pass is in
                            // the binding), so one epilogue stands for all
  };
  static const Math maths[] = {{"bf16", "bf16", "bf16", true, false},
                               {"f16", "f16", "f16", true, false},
                               {"tf32", "f32", "tf32", false, false},
                               {"f32x3s", "f32", "f32x3s", false, false},
                               // the fp32-faithful mma.sync GEMMs and FP32 SIMT: either B layout
                               {"f32x3", "f32", "f32x3", true, true},
                               {"tf32m", "f32", "tf32m", true, true},
                               {"f32", "f32", "f32", true, true}};
  std::vector<ZooForm> out;
  for (const auto& m : maths)
    for (bool n_major : {false, true}) {
      if (n_major && !m.n_major) continue;
      for (const auto& e : epilogues) {
        if (m.epilogue_free && std::string(e.name) != "acc") continue;
        std::string text = "ucut 1\nname zoo\nin x : @T@[@M@, @K@]\n";
        text += n_major ? "param W : @T@[@K@, @N@] = \"w\"\n" : "param W : @T@[@N@, @K@] = \"w\"\n";
        text += e.decls;
        text += "out y : @O@[@M@, @N@]\nstage y = gemm(x, " + std::string(n_major ? "W" : "W.T") +
                ") {\n  precision " + m.precision + "\n  epilogue { " + e.body + " }\n}\n";
        replace_all(text, "@T@", m.data);
        replace_all(text, "@O@", m.data);
        out.push_back({std::string(m.name) + (n_major ? "_nn_" : "_nt_") + e.name, text});
      }
    }
  return out;
}

std::vector<std::array<int64_t, 3>> warmup_zoo_shapes() {
  // A large square GEMM, a KernelBench-style Linear (a small batch over wide features), and a
  // wide, shallow one: the shapes pick which tiles, clusters and schedules rank first.
  return {{4096, 4096, 4096}, {128, 4096, 4096}, {2048, 8192, 1024}};
}

Result<std::vector<ZooUnit>> warmup_zoo_units(const ZooOptions& o, const sol::HwSpec& hw) {
  int top = o.top;
  if (top <= 0) {
    if (o.tier == "v1") top = 4;
    else if (o.tier == "full") top = 12;
    else
      return make_error(ErrorCode::invalid_input, "unknown zoo tier '" + o.tier + "'", "use --tier v1 or --tier full");
  }
  std::vector<ZooUnit> out;
  std::set<std::string> seen;
  for (const auto& form : warmup_zoo_forms())
    for (const auto& shape : warmup_zoo_shapes()) {
      std::string text = form.program;
      replace_all(text, "@M@", std::to_string(shape[0]));
      replace_all(text, "@N@", std::to_string(shape[1]));
      replace_all(text, "@K@", std::to_string(shape[2]));
      auto checked = dsl::dsl_compile({form.name + ".ucut", text});
      if (!checked.program)
        return make_error(ErrorCode::internal, "zoo form '" + form.name + "' does not check:\n" +
                                                   diag_render_all({form.name + ".ucut", text}, checked.diagnostics));
      const dsl::Program& p = *checked.program;
      space::SpaceOptions so;
      so.keep_precision = true;
      so.sms = hw.sms;
      auto valid = space::space_valid(p, 0, so);
      if (!valid) return valid.error();
      int taken = 0;
      std::set<std::string> here;  // this form and shape's distinct units
      for (const auto& r : space::space_rank(p, *valid, hw)) {
        if (taken >= top) break;
        const dsl::Program candidate = space::space_apply(p, r.config);
        auto req = build::program_build_request(candidate, "ucutlass warmup", dsl::dsl_hash(candidate), "", "");
        if (!req) continue;  // a configuration code generation refuses is not a zoo entry
        bool any = false;
        for (const auto& u : req->request.units) {
          if (!u.stored || !here.insert(u.name).second) continue;
          any = true;
          if (seen.insert(u.name).second) out.push_back({u, form.name, r.config.name});
        }
        taken += any ? 1 : 0;
      }
    }
  return out;
}

std::vector<ZooUnit> warmup_union(std::vector<std::vector<ZooUnit>> lists) {
  std::vector<ZooUnit> out;
  std::set<std::string> seen;
  for (auto& list : lists)
    for (auto& u : list)
      if (seen.insert(u.unit.name).second) out.push_back(std::move(u));
  return out;
}

Result<std::vector<ZooUnit>> warmup_suite_units(
    const SuiteZooOptions& o,
    const std::function<void(const std::string& problem, int units, const std::string& error)>& on_problem) {
  std::vector<std::vector<ZooUnit>> per(o.files.size());
  std::mutex mu;
  parallel_for(o.files.size(), static_cast<size_t>(std::max(1, o.parallel)), [&](size_t i, size_t) {
    const std::string name = pipeline_problem_name(o.files[i]);
    std::string error;
    PrepareOptions po;
    po.policy = o.policy;
    po.gpu = o.gpu;
    po.out_dir = o.out_dir;
    po.reuse_extraction = true;
    auto p = pipeline_prepare(o.files[i], po);
    if (!p) error = p.error().message;
    std::unique_ptr<RealSpace> space;
    if (p) {
      space::SpaceOptions so;
      so.policy = p->policy;
      so.sms = p->hw.sms;
      auto s = RealSpace::create(p->lowered.program, p->hw, so);
      if (!s) error = s.error().message;
      else space = std::move(*s);
    }
    if (space) {
      PlanOptions plan;
      plan.top = o.top;
      plan.profile = o.profile;
      plan.codegen = false;
      for (const auto& c : pipeline_plan(*p, *space, plan).top) {
        if (!c.cand.ast) continue;
        auto req = build::program_build_request(*c.cand.ast, "ucutlass warmup", c.cand.hash, "", "");
        if (!req) continue;
        for (const auto& u : req->request.units)
          if (u.stored) per[i].push_back({u, name, c.cand.name});
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    if (on_problem) on_problem(name, static_cast<int>(per[i].size()), error);
  });
  return warmup_union(std::move(per));
}

}  // namespace ucut::app

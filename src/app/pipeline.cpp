#include "app/pipeline.h"

#include "search/builtin_strategy.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <variant>

#include "build/builder.h"
#include "dsl/names.h"
#include "dsl/gemm_rules.h"
#include "eval/sol_link.h"
#include "app/adapters_build.h"
#include "space/precision.h"
#include "sol/cost.h"
#include "sol/format.h"
#include "sol/report_render.h"
#include "support/contract_profiles.h"
#include "support/fs.h"
#include "support/hash.h"
#include "support/paths.h"
#include "support/python.h"
#include "support/subprocess.h"

namespace ucut::app {

namespace {

std::string tail(const std::string& text, size_t n) {
  return text.size() > n ? "..." + text.substr(text.size() - n) : text;
}

}  // namespace

std::string pipeline_problem_name(const std::string& path) {
  return std::filesystem::path(path).stem().string();
}

memory::MemoryKey pipeline_memory_key(const dsl::Program& program, const std::string& gpu, sol::Policy policy) {
  std::string kinds, dtype = "f32", bucket;
  for (const auto& st : program.stages) {
    const std::string kind = dsl::dsl_stage_kind(st);
    kinds += (kinds.empty() ? "" : "+") + kind;
    if (const auto* g = std::get_if<dsl::GemmStage>(&st.body); g && bucket.empty()) {
      bucket = memory::memory_shape_bucket(g->m, g->n, g->k, g->batch);
      if (const dsl::Tensor* a = program.find_tensor(g->a.tensor)) dtype = dsl::dtype_name(a->dtype);
    }
  }
  if (bucket.empty() && !program.stages.empty()) {
    // No GEMM: bucket the first stage's output by its two last extents.
    const dsl::Tensor* t = program.find_tensor(program.stages.front().outputs.at(0));
    int64_t rows = 1, cols = 1;
    if (t && !t->shape.empty()) {
      cols = t->shape.back();
      for (size_t i = 0; i + 1 < t->shape.size(); ++i) rows *= t->shape[i];
      dtype = dsl::dtype_name(t->dtype);
    }
    bucket = memory::memory_shape_bucket(std::max<int64_t>(rows, 1), std::max<int64_t>(cols, 1), 1);
  }
  return {kinds + " " + dtype, bucket, gpu, sol::policy_name(policy)};
}

std::string pipeline_extraction_key(const std::string& problem_py_text) {
  static const std::string extractor = [] {
    std::vector<std::string> files;
    std::error_code ec;
    const std::filesystem::path dir = std::filesystem::path(paths_python_dir()) / "ucutlass_torch";
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
      if (e.path().extension() == ".py" || e.path().extension() == ".json") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    std::string all = python_interpreter() + "\n";
    for (const auto& f : files) {
      auto text = fs_read(f);
      all += f + "\n" + (text ? *text : std::string()) + "\n";
    }
    return sha256_hex(all);
  }();
  return sha256_hex(problem_py_text) + " " + extractor;
}

Result<PreparedProblem> pipeline_prepare(const std::string& path, const PrepareOptions& o) {
  PreparedProblem p;
  p.source = path;
  p.name = pipeline_problem_name(path);
  p.policy = o.policy;
  auto hw = sol::hw_lookup(o.gpu);
  if (!hw) return hw.error();
  p.hw = *hw;
  if (!fs_exists(path))
    return make_error(ErrorCode::not_found, path + ": no such file",
                      "pass a KernelBench-format problem .py (or a problem.json from 'ucutlass extract')");
  const std::string dir = o.out_dir + "/" + p.name;
  if (auto st = fs_mkdirs(dir); !st) return st.error();
  if (path.ends_with(".json")) {
    p.problem_json = path;
  } else if (path.ends_with(".py")) {
    p.problem_py = std::filesystem::absolute(path).string();
    p.problem_json = dir + "/problem.json";
    auto text = fs_read(p.problem_py);
    if (!text) return make_error(text.error().code, path + ": " + text.error().message);
    const std::string key = pipeline_extraction_key(*text), key_file = p.problem_json + ".key";
    auto old_key = fs_read(key_file);
    if (o.reuse_extraction && fs_exists(p.problem_json) && old_key && *old_key == key) {
      p.notes.push_back("extraction: problem.json reused (the same file and extractor as when it was written)");
    } else {
      std::filesystem::remove(key_file);  // no stale key beside a problem.json being rewritten
      if (auto st = eval::run_extractor(p.problem_py, p.problem_json, o.extract_timeout_s); !st)
        return make_error(st.error().code, path + ": " + st.error().message, st.error().hint);
      (void)fs_write_atomic(key_file, key);  // a missing key only costs the next resume an extraction
    }
  } else {
    return make_error(ErrorCode::invalid_input, path + ": not a problem file",
                      "pass a KernelBench-format .py file or a problem.json");
  }
  auto ir = problem::problem_load(p.problem_json);
  if (!ir) return ir.error();
  p.ir = std::move(*ir);
  auto sol = sol::sol_problem_report(p.ir, p.hw, p.policy, {}, &p.notes);
  if (!sol) return make_error(sol.error().code, path + ": " + sol.error().message, sol.error().hint);
  p.sol = std::move(*sol);
  // A problem the GPU cannot hold is neither searched nor planned: no configuration could run.
  if (const std::string over = sol::sol_memory_overflow(p.sol); !over.empty())
    return make_error(ErrorCode::unsupported, path + ": " + over,
                      "use smaller sizes in get_inputs() / get_init_inputs(), or name a GPU with more memory (--gpu)");
  lower::LowerOptions lo;
  lo.policy = p.policy;
  lo.gpu = p.hw.name;
  lo.label = path;  // the lowering's errors name the file the user gave
  auto lowered = lower::lower_problem(p.ir, lo);
  if (!lowered) return lowered.error();
  p.lowered = std::move(*lowered);
  for (const auto& n : p.lowered.notes) p.notes.push_back("lowering: " + n);
  if (!p.lowered.torch_ops.empty()) {
    double torch_share = 0;
    auto cost = sol::sol_problem_cost(p.ir);  // computed before (sol_problem_report), so it is there
    for (const auto& s : cost ? sol::sol_op_shares(p.hw, *cost, p.policy) : std::vector<sol::OpShare>{})
      if (std::find(p.lowered.torch_ops.begin(), p.lowered.torch_ops.end(), s.id) != p.lowered.torch_ops.end())
        torch_share += s.share;
    p.kernel_share = 1 - torch_share;
    p.notes.push_back(fmt::format("torch stages: {} operation{} run in PyTorch ({:.1f}% of the problem's work by "
                                  "per-op rooflines); the kernel stages do {:.1f}%",
                                  p.lowered.torch_ops.size(), p.lowered.torch_ops.size() == 1 ? "" : "s",
                                  100 * torch_share, 100 * p.kernel_share));
  }
  p.key = pipeline_memory_key(p.lowered.program, p.hw.name, o.policy);
  return p;
}

space::Tf32Bound pipeline_tf32_bound(const PreparedProblem& p, const std::string& profile) {
  return space::space_tf32_bound(p.lowered.program, p.policy, space::space_profile_rtol_f32(profile));
}

int pipeline_reference_class_probe_floor(const space::Tf32Bound& bound) {
  if (!bound.fails) return 0;
  // the bf16x3 rung, where the ladder holds it, sits between TF32 (0) and 3xTF32 (2)
  return space::space_offers_bf16x3() && bound.bf16x3_fails ? 2 : 1;
}

int pipeline_start_rung(const space::Tf32Bound& bound, search::SearchSpace& space) {
  if (bound.faithful_fails)
    if (auto order = space.summation_order_rung()) return *order;
  return pipeline_reference_class_probe_floor(bound);
}

int pipeline_reference_class_probe(const space::Tf32Bound& bound, search::SearchSpace& space, const std::string& profile) {
  const ContractProfile* cp = contract_profile(profile);
  if (!bound.faithful_fails || !cp || !cp->float64_pass) return -1;
  const int start = pipeline_start_rung(bound, space);
  return start > 0 ? start - 1 : -1;
}

double pipeline_sol_contract(const sol::SolReport& sol, const space::Tf32Bound& tf32) {
  if (tf32.faithful_fails && sol.fp32_simt.t_sol > 0) return sol.fp32_simt.t_sol;
  // bf16x3 meets the tolerance: three bf16 products per fp32 product, at the bf16 tensor cores' rate
  if (tf32.fails && !tf32.bf16x3_fails && space::space_offers_bf16x3())
    if (const sol::SolBound* bf16 = sol.reference_for(sol::Policy::bf16))
      return sol::sol_scale_tensor_f32(*bf16, 3.0).t_sol;
  if (tf32.fails)
    if (const sol::SolBound* exact = sol.reference_for(sol::Policy::exact)) return exact->t_sol;
  return sol.reference().t_sol;
}

std::shared_ptr<build::Compiler> pipeline_plan_compiler(const PlanOptions& o) {
  if (!o.compile) return nullptr;
  return o.compiler ? o.compiler : std::shared_ptr<build::Compiler>(build::build_nvcc_compiler());
}

Plan pipeline_plan(const PreparedProblem& p, RealSpace& space, const PlanOptions& o) {
  Plan plan;
  plan.valid = space.valid_count();
  for (const auto& s : space.stages())
    if (!s.note.empty()) plan.notes.push_back("stage " + s.name + ": " + s.note);
  // The same diverse opening the built-in strategy measures first (builtin_strategy.h).
  // The TF32 rounding bound (space/precision.h): the search starts one rung up, so the plan
  // shows and compiles what it would measure first.
  const space::Tf32Bound bound = pipeline_tf32_bound(p, o.profile);
  if (bound.fails || bound.faithful_fails) {
    plan.precision_note = bound.reason;
    plan.notes.push_back("precision: " + bound.reason);
  }
  const int floor = pipeline_start_rung(bound, space);
  const auto floor_ranked = space.ranked(std::max(o.top, 1) * 16, floor);
  search::BuiltinOptions bo;
  search::RungOpening rungs = search::rung_opening(space, floor, floor_ranked, bo);
  std::vector<search::Candidate> ranked = std::move(rungs.faster);
  for (auto& c : search::diverse_top_k(floor_ranked, std::max(o.top, 1)))
    if (static_cast<int>(ranked.size()) < std::max(o.top, 1)) ranked.push_back(std::move(c));
  // A rung above in a near tie comes second, as the search measures it.
  if (rungs.tie)
    ranked.insert(ranked.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(1, ranked.size())), std::move(*rungs.tie));
  // The reference-class probe comes second, and the probes it chains to after it, as the search
  // measures them (BuiltinOptions::probe_rung, probe_floor).
  auto at = static_cast<std::ptrdiff_t>(std::min<size_t>(1, ranked.size()));
  for (auto& c : search::probe_opening(space, pipeline_reference_class_probe(bound, space, o.profile), floor,
                                       pipeline_reference_class_probe_floor(bound)))
    ranked.insert(ranked.begin() + at++, std::move(c));
  if (ranked.size() > static_cast<size_t>(std::max(o.top, 1))) ranked.resize(static_cast<size_t>(std::max(o.top, 1)));
  for (size_t i = 0; i < ranked.size(); ++i) plan.top.push_back({static_cast<int>(i) + 1, ranked[i], std::nullopt});
  if (!o.codegen) return plan;
  std::shared_ptr<build::Compiler> nvcc = pipeline_plan_compiler(o);
  RealCompilerOptions co;
  co.root = o.build_root;
  co.emit_only = !o.compile;
  co.use_cache = o.use_cache;
  co.input_name = p.source;
  RealCompiler compiler(co, nvcc);
  // Emit in order; compile up to the build pool's width at once (nvcc ~3.5 GB a job).
  const size_t width = o.compile ? static_cast<size_t>(build::build_default_jobs()) : 1;
  for (size_t i = 0; i < plan.top.size(); i += width) {
    std::vector<std::future<search::CompileOutcome>> jobs;
    for (size_t j = i; j < plan.top.size() && j < i + width; ++j) {
      search::Candidate c = plan.top[j].cand;
      jobs.push_back(std::async(std::launch::async, [&compiler, c] { return compiler.compile(c); }));
    }
    for (size_t j = 0; j < jobs.size(); ++j) plan.top[i + j].built = jobs[j].get();
  }
  return plan;
}

Result<std::vector<std::string>> pipeline_write_outputs(const PreparedProblem& p, const Outputs& out,
                                                        std::vector<std::string>& notes) {
  std::vector<std::string> files;
  if (auto st = fs_mkdirs(out.dir); !st) return st.error();
  auto write = [&](const std::string& name, const std::string& text) -> Status {
    auto st = fs_write_atomic(out.dir + "/" + name, text);
    if (st) files.push_back(name);
    return st;
  };
  if (auto st = write("lowered.ucut", p.lowered.text); !st) return st.error();
  // model_new.py through `python -m ucutlass_torch.export` with these arguments.
  auto export_model = [&](std::vector<std::string> args) {
    if (p.problem_py.empty()) {
      notes.push_back("model_new.py not written: it needs the problem .py");
      return;
    }
    ProcessSpec ps;
    ps.argv = {python_interpreter(), "-m", "ucutlass_torch.export", "--problem", p.problem_py, "-o",
               out.dir + "/model_new.py"};
    ps.argv.insert(ps.argv.end(), args.begin(), args.end());
    ps.env_set = python_env();
    ps.timeout = std::chrono::milliseconds(120000);
    auto r = subprocess_run(ps);
    if (r && r->success()) files.push_back("model_new.py");
    else notes.push_back("model_new.py not written: " + (r ? tail(r->err, 800) : r.error().render()));
  };
  bool so = false;
  if (out.best) {
    if (auto st = write("best.ucut", out.best->program); !st) return st.error();
    auto copy = [&](const std::string& from, const std::string& name) {
      if (from.empty()) return false;
      std::error_code ec;
      std::filesystem::copy_file(from, out.dir + "/" + name, std::filesystem::copy_options::overwrite_existing, ec);
      if (ec) {
        notes.push_back(name + " not written: " + from + ": " + ec.message());
        return false;
      }
      files.push_back(name);
      return true;
    };
    copy(out.cu_path, "best.cu");
    so = copy(out.so_path, "best.so");
  }
  if (!out.fallback_reason.empty()) {
    export_model({"--fallback", out.fallback_reason});
    return files;
  }
  if (!out.best || !out.export_model) return files;
  if (!so) {
    notes.push_back("model_new.py not written: it needs best.so");
    return files;
  }
  std::vector<std::string> args = {"--so", std::filesystem::absolute(out.dir + "/best.so").string(), "--program",
                                   std::filesystem::absolute(out.dir + "/best.ucut").string()};
  // The reference's output shapes, which ModelNew returns, from the Problem IR already extracted.
  if (!p.problem_json.empty() && fs_exists(p.problem_json)) args.insert(args.end(), {"--problem-json", p.problem_json});
  export_model(args);
  return files;
}

nlohmann::json pipeline_report_json(const PreparedProblem& p, const RealSpace* space, const Plan* plan,
                                    const std::vector<std::string>& files, const std::vector<std::string>& notes) {
  nlohmann::json j;
  j["source"] = p.source;
  j["problem_json"] = p.problem_json;
  j["sol"] = sol::sol_report_json(p.sol, p.hw);
  j["memory_key"] = {{"class", p.key.cls}, {"bucket", p.key.bucket}, {"gpu", p.key.gpu}, {"policy", p.key.policy}};
  j["lowering"] = {{"stages", p.lowered.program.stages.size()}, {"notes", p.lowered.notes},
                   {"torch_ops", p.lowered.torch_ops}, {"kernel_share", p.kernel_share}};
  if (space) {
    nlohmann::json stages = nlohmann::json::array();
    for (const auto& s : space->stages())
      stages.push_back({{"stage", s.name}, {"valid", s.ranked.size()}, {"note", s.note},
                        {"best", s.ranked.empty() ? std::string() : s.ranked.front().config.name},
                        {"best_t_est_s", s.ranked.empty() ? 0.0 : s.ranked.front().t_est}});
    j["space"] = {{"valid", space->valid_count()}, {"stages", stages}};
  }
  if (plan) {
    nlohmann::json top = nlohmann::json::array();
    for (const auto& c : plan->top) {
      nlohmann::json e = {{"rank", c.rank}, {"name", c.cand.name}, {"hash", c.cand.hash}, {"rung", c.cand.rung},
                          {"predicted_s", c.cand.predicted_s}, {"config", c.cand.config}};
      if (c.built)
        e["build"] = {{"ok", c.built->ok}, {"cu", c.built->cu_path}, {"so", c.built->so_path},
                      {"message", c.built->message}, {"seconds", c.built->seconds}, {"cache_hit", c.built->cached}};
      top.push_back(std::move(e));
    }
    j["plan"] = {{"ranked", top}, {"notes", plan->notes}};
  }
  j["files"] = files;
  j["notes"] = notes;
  return j;
}

std::string pipeline_report_markdown(const PreparedProblem& p, const RealSpace* space, const Plan* plan,
                                     const std::vector<std::string>& files, const std::vector<std::string>& notes) {
  std::string s;
  const sol::SolBound& b = p.sol.reference();
  s += fmt::format("\n## Speed of light ({}, policy {}, {} peaks)\n\n", p.hw.name, sol::policy_name(p.policy),
                   b.origin);
  s += fmt::format("t_SOL {} ({}-bound): compute {}, memory {}; {} of tensor-core work, {} minimum traffic\n",
                   sol::fmt_time(b.t_sol), b.compute_bound ? "compute" : "memory", sol::fmt_time(b.t_compute),
                   sol::fmt_time(b.t_mem), sol::fmt_flops(static_cast<double>(p.sol.flops_tensor_f32 + p.sol.flops_tensor_16)),
                   sol::fmt_bytes(static_cast<double>(p.sol.min_bytes)));
  s += fmt::format("\n## Lowering\n\n{} stage{} (lowered.ucut); memory class `{}`, bucket `{}`\n",
                   p.lowered.program.stages.size(), p.lowered.program.stages.size() == 1 ? "" : "s", p.key.cls,
                   p.key.bucket);
  for (const auto& n : p.lowered.notes) s += "- " + n + "\n";
  if (!p.lowered.torch_ops.empty())
    s += fmt::format("- torch stages (PyTorch runs {} operation{}): the kernel stages do {:.1f}% of the problem's work "
                     "by per-op rooflines\n",
                     p.lowered.torch_ops.size(), p.lowered.torch_ops.size() == 1 ? "" : "s", 100 * p.kernel_share);
  if (space) {
    s += fmt::format("\n## Search space\n\n{} valid configurations\n\n", space->valid_count());
    // Where the TF32 rounding bound fails, the plan below starts a rung up: say so beside the
    // stage's rung-0 best, or the two lists seem to disagree.
    const bool skips_tf32 = plan && !plan->precision_note.empty();
    for (const auto& st : space->stages()) {
      std::string best;
      if (!st.ranked.empty()) {
        const auto& c = st.ranked.front().config;
        best = ", best-ranked on its first precision rung `" + c.name + "`";
        if (skips_tf32 && c.is_gemm && (c.gemm.precision == dsl::Precision::tf32 || c.gemm.precision == dsl::Precision::tf32m)) best += ", which the TF32 bound skips";
      }
      s += fmt::format("- stage {}: {} valid{}{}\n", st.name, st.ranked.size(), best,
                       st.note.empty() ? "" : " (" + st.note + ")");
    }
  }
  if (plan) {
    s += "\n## Plan: the ranked candidates (predicted, not measured)\n\n";
    s += "| rank | candidate | rung | predicted ms | build |\n|---|---|---|---|---|\n";
    for (const auto& c : plan->top) {
      std::string build = "not emitted";
      if (c.built)
        build = !c.built->ok ? "failed: " + c.built->message.substr(0, c.built->message.find('\n'))
                : !c.built->so_path.empty() ? (c.built->cached ? "built (cache)" : fmt::format("built in {:.0f} s", c.built->seconds))
                                            : "emitted (.cu)";
      s += fmt::format("| {} | `{}` | {} | {:.4g} | {} |\n", c.rank, c.cand.name, c.cand.rung,
                       c.cand.predicted_s * 1e3, build);
    }
    for (const auto& n : plan->notes) s += "\n- " + n;
    s += "\n";
  }
  if (!files.empty()) {
    s += "\n## Files\n\n";
    for (const auto& f : files) s += "- " + f + "\n";
  }
  if (!notes.empty()) {
    s += "\n## Notes\n\n";
    for (const auto& n : notes) s += "- " + n + "\n";
  }
  return s;
}

Status pipeline_write_report(const std::string& dir, const RunReport& r, const nlohmann::json& extra_json,
                             const std::string& extra_md) {
  if (auto st = fs_mkdirs(dir); !st) return st;
  nlohmann::json j = run_report_json(r);
  for (auto it = extra_json.begin(); it != extra_json.end(); ++it) j[it.key()] = *it;
  if (auto st = fs_write_atomic(dir + "/report.json", j.dump(2) + "\n"); !st) return st;
  // A search on the analytic model (a strategy planning without a GPU) has attempts to show.
  if (r.measured || !r.state.attempts.empty())
    return fs_write_atomic(dir + "/report.md", run_report_markdown(r) + extra_md);
  // A plan has no baselines, attempts or stop reason: say so instead of printing zeros.
  std::string md = fmt::format("# ucutlass optimize: {} (plan)\n\n**{}.** The candidates below are ranked by the "
                               "analytic model; no time in this report was measured.\n\n",
                               r.problem, r.note.empty() ? "Nothing was measured" : r.note);
  md += fmt::format("- contract: policy `{}`, profile `{}`; GPU {}\n", sol::policy_name(r.policy), r.profile, r.gpu);
  md += run_report_sol_line(r);
  md += "- next: run the same command on a machine with an NVIDIA GPU to search and measure\n";
  return fs_write_atomic(dir + "/report.md", md + extra_md);
}

}  // namespace ucut::app

#include "agent/prompts.h"

#include <fmt/format.h>

#include <algorithm>

namespace ucut::agent {

namespace {

struct KnowledgeExample {
  const char* name;
  const char* text;
};
#include "agent/knowledge.inc"

std::string cap(const std::string& s, size_t n, const char* what) {
  if (s.size() <= n) return s;
  return s.substr(0, n) + fmt::format("\n[... {} cut at {} of {} characters]\n", what, n, s.size());
}

std::string ms(double s) { return fmt::format("{:.4g} ms", s * 1e3); }

std::string program_block(const ProgramBrief& p, double eager_s, double t_sol, bool measured) {
  // No time yet is said as such, never as "measured 0 ms".
  std::string out = p.time_s <= 0 ? fmt::format("`{}`: not timed yet", p.name)
                                  : fmt::format("`{}`: {} {}", p.name,
                                                measured ? "measured" : "estimated (analytic model, not measured)",
                                                ms(p.time_s));
  if (eager_s > 0 && p.time_s > 0) out += fmt::format(", {:.2f}x PyTorch eager", eager_s / p.time_s);
  if (t_sol > 0 && p.time_s > 0) out += fmt::format(", {:.0f}% of the speed of light", 100 * t_sol / p.time_s);
  out += "\n```ucut\n" + p.text + (p.text.ends_with("\n") ? "" : "\n") + "```\n";
  if (!p.floor.empty()) out += "Program floor (what this structure can reach at best):\n" + p.floor + "\n";
  if (!p.stages.empty()) out += "Measured per stage (CUDA events between stages): " + p.stages + "\n";
  return out;
}

}  // namespace

std::string language_core() { return kLanguageCore; }
std::string language_full() { return kLanguageFull; }

std::vector<std::string> example_names() {
  std::vector<std::string> out;
  for (const auto& e : kExamples) out.push_back(e.name);
  return out;
}

std::optional<std::string> example_text(const std::string& name) {
  for (const auto& e : kExamples)
    if (name == e.name) return std::string(e.text);
  return std::nullopt;
}

long long token_estimate(const std::string& text) { return static_cast<long long>((text.size() + 3) / 4); }

std::vector<PromptPart> prompt_parts(const PromptInputs& in) {
  std::vector<PromptPart> parts;
  const ProblemBrief& pb = in.problem;
  std::string examples;
  for (const auto& n : example_names()) examples += (examples.empty() ? "" : ", ") + n;
  std::string system = fmt::format(
      "You are a GPU kernel engineer. You write programs in the μCUTLASS language; ucutlass compiles them to "
      "CUTLASS kernels for an NVIDIA {} (Hopper, sm_90a), checks every output against the PyTorch reference "
      "under the `{}` tolerance profile and times them. Your goal: the fastest program that stays correct.\n"
      "Rules:\n"
      "- Keep the interface: every `in`, `param` and `out` declaration exactly as in the current program "
      "(names, dtypes, shapes, order). `tmp` tensors, stages and knobs are yours to change.\n"
      "- Keep each stage's `precision` line as it is: ucutlass moves it along the precision ladder (tf32, "
      "3xTF32, FP32) as the tolerance requires, and tiles must suit that precision.\n"
      "- Reply with a few sentences of reasoning (the first sentence says what you changed and why it should "
      "be faster), then exactly one whole program in a ```ucut fenced block.\n"
      "- If you need the full language reference or an example, reply with only the line `REQUEST reference` "
      "or `REQUEST example NAME` (examples: {}).\n\n{}",
      pb.gpu.empty() ? "H200" : pb.gpu, pb.profile, examples, language_core());
  parts.push_back({"system", system});

  std::string problem = "## Problem `" + pb.name + "`\n";
  if (!pb.source.empty()) problem += "PyTorch source (the reference):\n```python\n" + cap(pb.source, 6000, "source") + "```\n";
  if (!pb.ir.empty()) problem += "Extracted Problem IR:\n```json\n" + cap(pb.ir, 4000, "IR") + "\n```\n";
  parts.push_back({"problem", problem});

  std::string sol = "## Speed of light\n";
  if (pb.t_sol > 0) sol += "Problem SOL " + ms(pb.t_sol);
  if (pb.t_sol_contract > pb.t_sol * (1 + 1e-9)) sol += "; at the precision the tolerance leaves: " + ms(pb.t_sol_contract);
  if (pb.eager_s > 0) sol += fmt::format("; PyTorch eager {} (ceiling {:.2f}x)", ms(pb.eager_s),
                                         pb.eager_s / std::max(pb.t_sol_contract, pb.t_sol));
  sol += "\n";
  if (!pb.precision.empty()) sol += "Precision: " + pb.precision + "\n";
  if (!pb.sol.empty()) sol += "```\n" + cap(pb.sol, 3000, "SOL report") + "```\n";
  parts.push_back({"sol", sol});

  const double t_ref = pb.t_sol_contract > 0 ? pb.t_sol_contract : pb.t_sol;
  if (in.current)
    parts.push_back({"current", "## Current program (improve this one)\n" +
                                    program_block(*in.current, pb.eager_s, t_ref, in.measured)});
  if (in.best && (!in.current || in.best->text != in.current->text))
    parts.push_back({"best", "## Best program so far\n" + program_block(*in.best, pb.eager_s, t_ref, in.measured)});

  if (!in.recent.empty()) {
    std::string a = "## Recent attempts (oldest first)\n";
    for (const auto& r : in.recent) {
      a += fmt::format("- #{} `{}` ({}{}): {}", r.index, r.name, r.origin, r.idea.empty() ? "" : ": " + cap(r.idea, 160, "idea"),
                       r.status == "ok" ? ms(r.time_s) : r.status);
      if (!r.detail.empty() && r.status != "ok") a += "\n  " + cap(r.detail, 600, "message");
      a += "\n";
    }
    parts.push_back({"attempts", a});
  }
  if (!in.lessons.empty()) {
    std::string l = "## Lessons from earlier problems (optimization memory)\n";
    for (const auto& s : in.lessons) l += "- " + cap(s, 300, "lesson") + "\n";
    parts.push_back({"lessons", l});
  }
  parts.push_back({"task", "## Task\n" + in.task + "\n"});
  return parts;
}

std::vector<ChatMessage> prompt_messages(const std::vector<PromptPart>& parts) {
  std::vector<ChatMessage> out;
  std::string user;
  for (const auto& p : parts) {
    if (p.name == "system") out.push_back({"system", p.text});
    else user += (user.empty() ? "" : "\n") + p.text;
  }
  out.push_back({"user", user});
  return out;
}

std::string task_propose() {
  return "Write a faster program than the current one. Think about where its time goes against the speed of "
         "light (memory traffic of intermediates, unfused epilogues, tile and cluster shapes, pipeline stages, "
         "split-K for long K, the schedule) and change what matters most. Reply as the rules say.";
}

std::string task_analyze(int max_ideas) {
  return fmt::format(
      "Analyze where the current program loses time against the speed of light and nominate up to {} "
      "optimizations. Reply with only a JSON array, best first: "
      "[{{\"idea\": \"what to change, concretely\", \"expected_gain\": 1.3, \"cost\": 1}}] where expected_gain is "
      "the speed-up you expect (>= 1) and cost 1 (a knob), 2 (restructure a stage) or 3 (new stages).",
      max_ideas);
}

std::string task_implement(const std::string& idea) {
  return "Implement this optimization on the current program: " + idea + "\nReply as the rules say.";
}

std::string task_summarize(const ProgramBrief& slow, const ProgramBrief& fast) {
  return fmt::format(
      "Program `{}` took {}; program `{}` took {}. In one sentence of at most 40 words, say why the second is "
      "faster, as a lesson for similar problems. Reply with only that sentence.\nSlower:\n```ucut\n{}```\n"
      "Faster:\n```ucut\n{}```",
      slow.name, ms(slow.time_s), fast.name, ms(fast.time_s), slow.text, fast.text);
}

std::string task_repair(const std::string& problem_found) {
  return problem_found + "\nFix it and reply with the whole corrected program in a ```ucut fenced block.";
}

}  // namespace ucut::agent

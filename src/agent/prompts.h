// What the LLM agent sends a model (docs/agent.md "What it sends"). A prompt is a list of named
// parts, so their sizes can be reported (`ucutlass prompt`, docs/agent.md "Prompt size"):
//   system      the role, the rules (keep the interface, one program per reply, leave precision to
//               the ladder) and the language's core reference (docs/language.md's core, <= 2.5k tokens);
//   problem     the KernelBench source and the extracted Problem IR (both capped);
//   sol         the speed-of-light report: bound, bottleneck, headroom, the precision the
//               tolerance leaves;
//   current     the program to improve (a beam parent) with its measured time and program floor;
//   best        the best program so far when it is not the current one;
//   attempts    the recent attempts with their results and diagnostics;
//   lessons     experiences retrieved from the optimization memory (slow -> fast, with the reason);
//   task        what to do now (propose, analyze, implement one idea, summarize).
// The full reference and the examples are sent only when the model asks for them (a reply line
// `REQUEST reference` or `REQUEST example NAME`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/llm_client.h"

namespace ucut::agent {

// The language reference as built into the binary (from docs/language.md and examples/).
std::string language_core();
std::string language_full();
std::vector<std::string> example_names();
std::optional<std::string> example_text(const std::string& name);

// ceil(characters / 4): the approximation scripts/count-tokens uses (over-counts dense code a little).
long long token_estimate(const std::string& text);

struct ProblemBrief {
  std::string name;
  std::string gpu;             // the hardware row ("h200")
  std::string profile;         // the contract's tolerance profile
  std::string source;          // the problem's Python source ("" for a problem.json)
  std::string ir;              // the Problem IR, compact JSON
  std::string sol;             // sol_report_text
  std::string precision;       // what the tolerance leaves (space/precision.h's reason), "" when TF32 passes
  double t_sol = 0;            // the policy's bound, seconds
  double t_sol_contract = 0;   // at the precision the tolerance leaves
  double eager_s = 0;          // PyTorch eager (0: not measured)
};

struct ProgramBrief {
  std::string name;            // the configuration's name
  std::string text;            // the program
  double time_s = 0;           // measured (or estimated when planning)
  std::string floor;           // the program-level floor (sol_program_render)
  std::string stages;          // measured per stage (Attempt::stage_ms), one line; "" when not profiled
};

struct AttemptBrief {
  int index = 0;               // 1-based
  std::string name, origin, idea;
  std::string status;          // ok, compile_error, mismatch, ...
  double time_s = 0;
  std::string detail;          // the result's message, first lines
};

struct PromptInputs {
  ProblemBrief problem;
  bool measured = true;        // false: times are the analytic model's estimates
  std::optional<ProgramBrief> current;
  std::optional<ProgramBrief> best;
  std::vector<AttemptBrief> recent;
  std::vector<std::string> lessons;
  std::string task;
};

struct PromptPart {
  std::string name;
  std::string text;
};

std::vector<PromptPart> prompt_parts(const PromptInputs& in);
// The system part as the system message, every other part joined into one user message.
std::vector<ChatMessage> prompt_messages(const std::vector<PromptPart>& parts);

// The task texts.
std::string task_propose();
std::string task_analyze(int max_ideas);
std::string task_implement(const std::string& idea);
std::string task_summarize(const ProgramBrief& slow, const ProgramBrief& fast);
// What goes back after a reply without a usable program (diagnostics with their fix hints).
std::string task_repair(const std::string& problem_found);

}  // namespace ucut::agent

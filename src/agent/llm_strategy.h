// The LLM kernel agent as a search Strategy (search/strategy.h), beside the built-in search: the
// driver, budgets, compile gate, evaluator, journal, memory and reports serve both unchanged.
// docs/agent.md describes it for users; the loop, after μCUTLASS and AccelOpt:
//   Measure     the base program's best-ranked configuration (and a memory seed) is proposed
//               first, without the model, so every prompt shows a measured program;
//   iteration   B parents (the beam: the B fastest correct programs so far), N proposals:
//     flat          each proposal is one request: "improve this program" with the SOL report, the
//                   recent attempts and the memory's lessons -> a program;
//     orchestrated  one Analyze/Nominate request lists optimizations with expected gain and cost,
//                   Triage orders them by gain per cost, one Implement request per idea;
//   repair      a reply without a usable program (no program, check diagnostics, a changed
//               interface, a program already tried) goes back with the reason, at most `repairs`
//               times; a `REQUEST reference|example` reply is answered with the document;
//   results     the session compiles and evaluates each proposal; the iteration ends when every
//               proposal's result is in, and the beam keeps the B fastest;
//   Summarize   a proposal that becomes the new best yields a lesson (orchestrated: the model's
//               one-sentence summary; flat: the first sentence of its reasoning), stored in the
//               memory with the slow -> fast pair.
// Hybrid (`--strategy hybrid`): the model changes structure, the built-in ranking and neighbour
// moves tune the knobs of every program it writes (`tune` configurations each).
// The precision ladder is the search's, not the model's: programs are ranked at the current
// floor, and a mismatch no candidate at that rung has passed raises it (as the built-in search).
// Every exchange goes through the LlmClient (recorded to a cassette by the factory) and is logged
// to <out>/<problem>/agent.jsonl; no failure of the model or the endpoint throws: it becomes a
// note, a repair or the end of proposals (what was measured stays).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/llm_client.h"
#include "agent/prompts.h"
#include "agent/reply.h"
#include "agent/settings.h"
#include "dsl/program.h"
#include "app/adapters_space.h"
#include "search/strategy.h"
#include "sol/hardware.h"

namespace ucut::agent {

// What the strategy knows of its problem.
struct AgentProblem {
  dsl::Program base;             // the lowered program: the interface every proposal keeps
  ProblemBrief brief;
  sol::HwSpec hw;
  sol::Policy policy = sol::Policy::tf32;
  bool measured = true;          // false: times are the analytic model's estimates
  int start_rung = 0;            // the precision floor to start at
  std::vector<search::Candidate> seeds;  // memory priors valid here, best first
  std::vector<std::string> lessons;      // memory experiences, as lines for the prompt
  std::string log_path;          // agent.jsonl ("" : no log)
};

class LlmStrategy final : public search::Strategy {
 public:
  LlmStrategy(search::SearchSpace& space, AgentProblem problem, AgentSettings settings,
              std::unique_ptr<LlmClient> client);
  std::string name() const override { return settings_.hybrid ? "hybrid" : "llm"; }
  std::optional<search::Candidate> propose(const search::SearchState& state) override;
  void observe(const search::Attempt& attempt, const search::SearchState& state) override;
  bool still_wanted(const search::Candidate& c, const search::SearchState& state) const override;
  search::LlmUsage usage() const override { return usage_; }
  std::vector<search::StrategyLesson> lessons() const override { return lessons_; }
  std::vector<std::string> notes() const override;

  int floor_rung() const { return floor_; }
  int iteration() const { return iteration_; }

 private:
  // One request through the client, counted and logged; nullopt when the budget is spent or the
  // endpoint failed for good (then stopped_ says why).
  std::optional<ChatReply> send(std::vector<ChatMessage> messages, const std::string& purpose);
  PromptInputs inputs(const search::SearchState& state, const std::string& parent_text, const std::string& task);
  // Asks for one program built on `parent_text`; the candidates it yields (queued) or none.
  bool ask_program(const search::SearchState& state, const std::string& parent_text, const std::string& idea);
  // The candidates of one accepted program: its own space ranked at the floor (hybrid: `tune` of them).
  std::vector<search::Candidate> candidates_of(const dsl::Program& p, const std::string& origin);
  void nominate(const search::SearchState& state, const std::string& parent_text);
  void new_iteration(const search::SearchState& state);
  ProgramBrief brief_of(const search::Attempt& a) const;
  std::string floor_text(const std::string& program_text) const;
  void log(nlohmann::json entry);
  bool fresh(const search::Candidate& c, const search::SearchState& state) const;

  search::SearchSpace& space_;
  AgentProblem problem_;
  AgentSettings settings_;
  std::unique_ptr<LlmClient> client_;
  search::LlmUsage usage_;
  std::vector<search::StrategyLesson> lessons_;
  std::deque<search::Candidate> queue_;
  // Proposed, result not yet observed (mutable: a candidate still_wanted() refuses is dropped by the
  // session unevaluated, so it leaves this set there).
  mutable std::set<std::string> outstanding_;
  std::vector<std::string> beam_;                   // parent program texts
  std::vector<Idea> ideas_;                         // this iteration's triaged ideas (orchestrated)
  std::map<std::string, std::string> idea_by_hash_;  // what the model said it changed
  std::map<std::string, size_t> space_by_hash_;     // candidate hash -> its program's space
  std::vector<std::unique_ptr<app::RealSpace>> spaces_;
  bool seeded_ = false;
  int iteration_ = 0;
  int issued_ = 0;                                  // proposals asked for in this iteration
  int failed_in_a_row_ = 0;
  int floor_ = 0;
  int exchanges_ = 0, repairs_ = 0, unusable_ = 0;
  std::string stopped_;                             // why the model is asked no more ("" : it is)
  std::string last_reasoning_;
};

}  // namespace ucut::agent

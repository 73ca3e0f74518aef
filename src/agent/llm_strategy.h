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
//   repair      a reply without a usable program (empty, too large, no program, check diagnostics,
//               a changed interface, a program already tried) goes back with the reason, at most
//               `repairs` times, quoting the reply capped (reply_quote); a `REQUEST
//               reference|example` reply is answered with the document;
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
// note, a repair or the end of proposals (what was measured stays). A request is sent only when
// its prompt (estimated) fits what is left of the token budgets. How the session ended (the
// model never or no longer reached, a strict replay's divergence) is kept as an AgentOutcome,
// which the command reports on stderr and turns into its exit code (docs/cli.md).
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
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
  // Said as it happens (the endpoint failing for good); null: nothing is said.
  std::function<void(const std::string& line)> notice;
};

// How one problem's conversation with the model went, for the command's last lines and its exit
// code (docs/cli.md, docs/agent.md "Failures").
struct AgentOutcome {
  std::string problem;
  bool replay = false;
  int requests = 0;                  // requests sent
  int replies = 0;                   // requests answered with a reply (usable or not)
  int programs = 0;                  // replies whose program was queued
  std::optional<Error> failure;      // the endpoint's (or the cassette's) failure that ended the asking
  std::optional<Error> divergence;   // a strict replay's first divergence from its cassette
  std::string stopped;               // why the model was asked no more ("" : it was not stopped)
  // The model was asked and never answered, or no longer answers.
  bool never_reached() const { return failure && replies == 0; }
  bool no_longer_reached() const { return failure && replies > 0; }
};

// The outcome as it stands, shared with whoever reports it after the run (the strategy may be
// gone by then); guarded, since a suite's sessions run on several threads.
struct AgentOutcomeSlot {
  mutable std::mutex mu;
  AgentOutcome value;
  AgentOutcome get() const {
    std::lock_guard<std::mutex> lock(mu);
    return value;
  }
};

// The program-level floor the prompts show beside a program (sol_program_render; "" when the
// text does not check).
std::string agent_program_floor(const sol::HwSpec& hw, sol::Policy policy, double t_sol, const std::string& program_text);
// A profiled attempt's stage times as one prompt line ("t0 gemm 1.2 ms, y elementwise 0.3 ms").
std::string agent_stage_times(const search::StageTimes& t);

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
  AgentOutcome outcome() const { return outcome_->get(); }
  std::shared_ptr<const AgentOutcomeSlot> outcome_slot() const { return outcome_; }

 private:
  // One request through the client, counted and logged; nullopt when its prompt does not fit what
  // is left of a token budget or the endpoint failed for good (then stopped_ says why).
  std::optional<ChatReply> send(std::vector<ChatMessage> messages, const std::string& purpose);
  // Stops asking the model, for `why`; an endpoint failure also goes into the outcome.
  void stop(const std::string& why, const std::optional<Error>& failure = std::nullopt);
  void publish();
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
  int replies_ = 0, programs_ = 0;
  int empty_ = 0, empty_at_length_ = 0;             // empty replies; those cut by max_tokens
  std::optional<Error> failure_;                    // the endpoint failure that stopped the asking
  std::shared_ptr<AgentOutcomeSlot> outcome_ = std::make_shared<AgentOutcomeSlot>();
  std::string stopped_;                             // why the model is asked no more ("" : it is)
  std::string last_reasoning_;
};

}  // namespace ucut::agent

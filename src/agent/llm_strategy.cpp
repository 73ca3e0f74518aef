#include "agent/llm_strategy.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>

#include "dsl/dsl.h"
#include "sol/program_estimate.h"
#include "support/diagnostics.h"

namespace ucut::agent {

namespace {

// The tokens of every LLM strategy in this process: the suite's budget (AgentSettings::suite_tokens).
std::atomic<long long> g_suite_tokens{0};

std::string first_lines(const std::string& s, size_t max_chars) {
  return s.size() <= max_chars ? s : s.substr(0, max_chars) + " ...";
}

}  // namespace

LlmStrategy::LlmStrategy(search::SearchSpace& space, AgentProblem problem, AgentSettings settings,
                         std::unique_ptr<LlmClient> client)
    : space_(space), problem_(std::move(problem)), settings_(std::move(settings)), client_(std::move(client)) {
  floor_ = problem_.start_rung;
  publish();
}

void LlmStrategy::publish() {
  AgentOutcome o;
  o.problem = problem_.brief.name;
  o.replay = !settings_.replay.empty();
  o.requests = exchanges_;
  o.replies = replies_;
  o.programs = programs_;
  o.failure = failure_;
  o.divergence = client_->divergence();
  o.stopped = stopped_;
  std::lock_guard<std::mutex> lock(outcome_->mu);
  outcome_->value = std::move(o);
}

void LlmStrategy::stop(const std::string& why, const std::optional<Error>& failure) {
  if (!stopped_.empty()) return;
  stopped_ = why;
  failure_ = failure;
  publish();
  if (failure && problem_.notice)
    problem_.notice(fmt::format("llm: {}: {}: {}; the search goes on without the model", problem_.brief.name,
                                !settings_.replay.empty() ? "the replay stopped"
                                : replies_ == 0          ? "the model was never reached"
                                                         : "the model is no longer reached",
                                failure->message));
}

void LlmStrategy::log(nlohmann::json entry) {
  if (problem_.log_path.empty()) return;
  if (FILE* f = std::fopen(problem_.log_path.c_str(), "a")) {
    std::fprintf(f, "%s\n", entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    std::fclose(f);
  }
}

bool LlmStrategy::fresh(const search::Candidate& c, const search::SearchState& state) const {
  return !c.hash.empty() && !state.proposed.count(c.hash) && !outstanding_.count(c.hash);
}

bool LlmStrategy::still_wanted(const search::Candidate& c, const search::SearchState&) const {
  // Below a raised precision floor: its lifted twin is queued instead (observe).
  const bool wanted = c.rung >= floor_;
  if (!wanted) outstanding_.erase(c.hash);
  return wanted;
}

std::vector<std::string> LlmStrategy::notes() const {
  std::vector<std::string> out;
  out.push_back(fmt::format("{} agent ({}{}): {} request{}, {} repair{}, {} unusable repl{}, {} tokens in / {} out{}",
                            name(), settings_.mode, settings_.replay.empty() ? "" : ", replayed from a cassette",
                            exchanges_, exchanges_ == 1 ? "" : "s", repairs_, repairs_ == 1 ? "" : "s", unusable_,
                            unusable_ == 1 ? "y" : "ies", usage_.tokens_in, usage_.tokens_out,
                            usage_.cost_usd > 0 ? fmt::format(", ${:.4f}", usage_.cost_usd) : ""));
  if (empty_ > 0)
    out.push_back(fmt::format("{} empty repl{}{}", empty_, empty_ == 1 ? "y" : "ies",
                              empty_at_length_ > 0
                                  ? fmt::format(" ({} cut by the reply's token limit: raise --llm-max-tokens, now {})",
                                                empty_at_length_, settings_.max_tokens)
                                  : std::string()));
  if (!stopped_.empty())
    out.push_back((failure_ && replies_ == 0 ? "the model was never reached, so it proposed nothing; asked no more: "
                                             : "the model was asked no more: ") +
                  stopped_);
  return out;
}

std::optional<ChatReply> LlmStrategy::send(std::vector<ChatMessage> messages, const std::string& purpose) {
  if (!stopped_.empty()) return std::nullopt;
  // The prompt counts against the budgets before it is sent: a repair quoting a long reply, or a
  // first prompt larger than the budget, is not sent and billed past it.
  long long prompt = 0;
  for (const auto& m : messages) prompt += token_estimate(m.content);
  const long long mine = usage_.tokens_in + usage_.tokens_out;
  if (settings_.problem_tokens > 0 && mine + prompt > settings_.problem_tokens) {
    stop(fmt::format("the problem's token budget ({}) {}: {} tokens spent, the next request ({}) is ~{} tokens in",
                     settings_.problem_tokens, mine >= settings_.problem_tokens ? "is spent" : "would be exceeded",
                     mine, purpose, prompt));
    return std::nullopt;
  }
  const long long suite = g_suite_tokens.load();
  if (settings_.suite_tokens > 0 && suite + prompt > settings_.suite_tokens) {
    stop(fmt::format("the suite's token budget ({}) {}: {} tokens spent, the next request ({}) is ~{} tokens in",
                     settings_.suite_tokens, suite >= settings_.suite_tokens ? "is spent" : "would be exceeded", suite,
                     purpose, prompt));
    return std::nullopt;
  }
  ChatRequest req;
  req.messages = std::move(messages);
  req.temperature = settings_.temperature;
  req.max_tokens = settings_.max_tokens;
  req.purpose = purpose;
  auto r = client_->chat(req);
  ++exchanges_;
  ++usage_.requests;
  // What the request spent, answered or not (a failed request the endpoint answered still spent).
  const ChatSpend spent = r ? ChatSpend{r->tokens_in, r->tokens_out, r->tokens_estimated} : client_->last_spend();
  usage_.tokens_in += spent.tokens_in;
  usage_.tokens_out += spent.tokens_out;
  g_suite_tokens += spent.tokens_in + spent.tokens_out;
  usage_.cost_usd = (static_cast<double>(usage_.tokens_in) * settings_.price_in +
                     static_cast<double>(usage_.tokens_out) * settings_.price_out) / 1e6;
  nlohmann::json entry = {{"n", exchanges_}, {"iteration", iteration_}, {"purpose", purpose},
                          {"tokens_in", spent.tokens_in}, {"tokens_out", spent.tokens_out}};
  if (!r) {
    entry["error"] = r.error().render();
    log(entry);
    // The client retried what can be retried: the endpoint is gone for this problem.
    stop("the LLM endpoint failed: " + r.error().render(), r.error());
    return std::nullopt;
  }
  ++replies_;
  entry["finish_reason"] = r->finish_reason;
  entry["reply_chars"] = r->content.size();
  log(entry);
  publish();
  return std::move(*r);
}

std::string agent_program_floor(const sol::HwSpec& hw, sol::Policy policy, double t_sol, const std::string& program_text) {
  auto checked = dsl::dsl_compile(SourceFile{"program.ucut", program_text});
  if (!checked.program) return "";
  auto est = sol::sol_program_estimate(hw, *checked.program, policy);
  return sol::sol_program_render(est, t_sol);
}

std::string LlmStrategy::floor_text(const std::string& program_text) const {
  return agent_program_floor(problem_.hw, problem_.policy, problem_.brief.t_sol, program_text);
}

ProgramBrief LlmStrategy::brief_of(const search::Attempt& a) const {
  return ProgramBrief{a.cand.name, a.cand.program, a.time_s, floor_text(a.cand.program), agent_stage_times(a.stage_ms)};
}

std::string agent_stage_times(const search::StageTimes& t) {
  std::string out;
  for (const auto& s : t) out += fmt::format("{}{} {} {:.4g} ms", out.empty() ? "" : ", ", s.stage, s.kind, s.ms);
  return out;
}

PromptInputs LlmStrategy::inputs(const search::SearchState& state, const std::string& parent_text,
                                 const std::string& task) {
  PromptInputs in;
  in.problem = problem_.brief;
  if (state.baselines.eager_s > 0) in.problem.eager_s = state.baselines.eager_s;
  in.measured = problem_.measured;
  const search::Attempt* parent = nullptr;
  for (const auto& a : state.attempts)
    if (a.status == RunStatus::ok && a.cand.program == parent_text && (!parent || a.time_s < parent->time_s))
      parent = &a;
  if (parent) in.current = brief_of(*parent);
  else in.current = ProgramBrief{"lowered", parent_text, 0, floor_text(parent_text)};
  if (const search::Attempt* b = state.best_attempt()) in.best = brief_of(*b);
  const size_t n = state.attempts.size();
  for (size_t i = n > static_cast<size_t>(settings_.recent) ? n - settings_.recent : 0; i < n; ++i) {
    const auto& a = state.attempts[i];
    AttemptBrief ab;
    ab.index = a.index + 1;
    ab.name = a.cand.name;
    ab.origin = a.cand.origin;
    if (auto it = idea_by_hash_.find(a.cand.hash); it != idea_by_hash_.end()) ab.idea = it->second;
    ab.status = run_status_name(a.status);
    ab.time_s = a.time_s;
    ab.detail = a.message;  // prompt_parts caps it
    in.recent.push_back(std::move(ab));
  }
  if (settings_.memory)
    for (size_t i = 0; i < problem_.lessons.size() && static_cast<int>(i) < settings_.experiences; ++i)
      in.lessons.push_back(problem_.lessons[i]);
  in.task = task;
  return in;
}

std::vector<search::Candidate> LlmStrategy::candidates_of(const dsl::Program& p, const std::string& origin) {
  space::SpaceOptions so;
  so.policy = problem_.policy;
  so.keep_explicit = true;
  auto sp = app::RealSpace::create(p, problem_.hw, so);
  if (!sp) return {};
  auto ranked = (*sp)->ranked(settings_.hybrid ? settings_.tune : 1, floor_);
  const size_t index = spaces_.size();
  spaces_.push_back(std::move(*sp));
  for (auto& c : ranked) {
    c.origin = settings_.hybrid && &c != &ranked.front() ? "hybrid" : origin;
    // The configuration name says how the program is configured, not what it computes: a model's
    // program gets its program hash's first hex digits too, so reports tell rewrites apart.
    c.name += "~" + c.hash.substr(0, 6);
    space_by_hash_[c.hash] = index;
  }
  return ranked;
}

bool LlmStrategy::ask_program(const search::SearchState& state, const std::string& parent_text, const std::string& idea) {
  const std::string task = idea.empty() ? task_propose() : task_implement(idea);
  auto messages = prompt_messages(prompt_parts(inputs(state, parent_text, task)));
  const std::string origin = idea.empty() ? "llm" : "llm-plan";
  int repairs_left = settings_.repairs, requests_left = 2;
  std::string purpose = idea.empty() ? "propose" : "implement";
  while (true) {
    auto reply = send(messages, purpose);
    if (!reply) return false;
    const std::string& content = reply->content;
    ExtractedReply ex = reply_extract(content);
    std::string problem_found;
    const bool empty = content.find_first_not_of(" \t\r\n") == std::string::npos;
    if (empty) {
      ++empty_;
      if (reply->finish_reason == "length") ++empty_at_length_;
    }
    if (!ex.program && ex.request && requests_left-- > 0) {
      std::string doc;
      if (*ex.request == "reference") doc = language_full();
      else if (auto e = example_text(ex.request->substr(8))) doc = "```ucut\n" + *e + "```";
      else {
        std::string names;
        for (const auto& n : example_names()) names += (names.empty() ? "" : ", ") + n;
        doc = "There is no example '" + ex.request->substr(8) + "'. Examples: " + names + ".";
      }
      messages.push_back({"assistant", reply_quote(content, ex)});
      messages.push_back({"user", doc + "\n\nNow reply as the rules say: reasoning, then one whole program."});
      purpose = "request";
      log({{"n", exchanges_}, {"outcome", "request"}, {"request", *ex.request}});
      continue;
    }
    auto accepted = reply_accept(ex, problem_.base);
    if (accepted) {
      auto cands = candidates_of(*accepted, origin);
      std::vector<search::Candidate> fresh_ones;
      for (auto& c : cands)
        if (fresh(c, state)) fresh_ones.push_back(std::move(c));
      if (!fresh_ones.empty()) {
        const std::string why = idea.empty() ? first_sentence(ex.reasoning) : idea;
        for (auto& c : fresh_ones) {
          idea_by_hash_[c.hash] = why;
          queue_.push_back(std::move(c));
        }
        log({{"n", exchanges_}, {"outcome", "program"}, {"candidates", fresh_ones.size()}, {"idea", why}});
        failed_in_a_row_ = 0;
        ++programs_;
        publish();
        return true;
      }
      problem_found = cands.empty() ? "Your program has no configuration the space can rank (no stage it can "
                                      "configure at the current precision)."
                                    : "That program was already tried (see the attempts); write a different one.";
    } else if (empty && reply->finish_reason == "length") {
      problem_found = fmt::format("Your reply was empty: it reached the reply's limit of {} tokens before any "
                                  "answer. Reason briefly, then write the program.",
                                  settings_.max_tokens);
    } else {
      problem_found = accepted.error().message;
      if (!accepted.error().hint.empty()) problem_found += "\nHint: " + accepted.error().hint;
    }
    ++unusable_;
    log({{"n", exchanges_}, {"outcome", "unusable"}, {"why", first_lines(problem_found, 2000)}});
    if (repairs_left-- <= 0) {
      ++failed_in_a_row_;
      return false;
    }
    ++repairs_;
    // Quoted capped: a runaway reply is not re-sent (and billed) in every repair. An empty one
    // is stood in for, so the conversation still alternates (some servers' templates insist).
    messages.push_back({"assistant", empty ? std::string("[empty reply]") : reply_quote(content, ex)});
    messages.push_back({"user", task_repair(problem_found)});
    purpose = "repair";
  }
}

void LlmStrategy::nominate(const search::SearchState& state, const std::string& parent_text) {
  auto messages = prompt_messages(prompt_parts(inputs(state, parent_text, task_analyze(settings_.proposals))));
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto reply = send(messages, "analyze");
    if (!reply) return;
    auto ideas = reply_ideas(reply->content, settings_.proposals);
    if (ideas) {
      ideas_ = std::move(*ideas);
      nlohmann::json list = nlohmann::json::array();
      for (const auto& i : ideas_) list.push_back({{"idea", i.idea}, {"gain", i.gain}, {"cost", i.cost}});
      log({{"n", exchanges_}, {"outcome", "ideas"}, {"ideas", list}});
      return;
    }
    ++unusable_;
    const std::string& content = reply->content;
    const bool empty = content.find_first_not_of(" \t\r\n") == std::string::npos;
    if (empty) ++empty_;
    messages.push_back({"assistant", empty ? std::string("[empty reply]") : reply_quote(content, reply_extract(content))});
    messages.push_back({"user", (empty ? std::string("Your reply was empty. ") : std::string()) + ideas.error().message +
                                    " " + ideas.error().hint});
  }
}

void LlmStrategy::new_iteration(const search::SearchState& state) {
  ++iteration_;
  issued_ = 0;
  ideas_.clear();
  // The beam: the B fastest correct programs so far (distinct texts).
  std::vector<const search::Attempt*> ok;
  for (const auto& a : state.attempts)
    if (a.status == RunStatus::ok) ok.push_back(&a);
  std::stable_sort(ok.begin(), ok.end(), [](const auto* a, const auto* b) { return a->time_s < b->time_s; });
  beam_.clear();
  for (const auto* a : ok) {
    if (std::find(beam_.begin(), beam_.end(), a->cand.program) != beam_.end()) continue;
    beam_.push_back(a->cand.program);
    if (static_cast<int>(beam_.size()) >= settings_.beam) break;
  }
  if (beam_.empty()) beam_.push_back(dsl::dsl_print(problem_.base));
}

std::optional<search::Candidate> LlmStrategy::propose(const search::SearchState& state) {
  // Bounded: each pass either returns, waits (nullopt) or spends a request.
  for (int pass = 0; pass < 4 * (settings_.proposals + 2); ++pass) {
    while (!queue_.empty()) {
      search::Candidate c = std::move(queue_.front());
      queue_.pop_front();
      if (!fresh(c, state)) continue;
      outstanding_.insert(c.hash);
      return c;
    }
    if (!seeded_) {
      seeded_ = true;
      // Measure first: a remembered winner and the lowered program's best-ranked configuration.
      if (!problem_.seeds.empty()) {
        search::Candidate s = problem_.seeds.front();
        if (s.rung >= floor_) queue_.push_back(std::move(s));
      }
      for (auto& c : space_.ranked(1, floor_)) queue_.push_back(std::move(c));
      continue;
    }
    if (!stopped_.empty()) return std::nullopt;
    if (issued_ >= settings_.proposals || iteration_ == 0) {
      if (!outstanding_.empty()) return std::nullopt;  // the iteration's results first
      new_iteration(state);
    }
    // One iteration's worth of proposals (N, at least 2) in a row without a usable program, each
    // with its repairs: the next iteration's prompts would differ only in the attempts listed.
    if (failed_in_a_row_ >= std::max(2, settings_.proposals)) {
      stop(fmt::format("{} proposals in a row gave no usable program (the limit is max(2, --proposals))",
                       failed_in_a_row_));
      return std::nullopt;
    }
    std::string idea;
    std::string parent = beam_[static_cast<size_t>(issued_) % beam_.size()];
    if (settings_.mode == "orchestrated") {
      if (issued_ == 0 && ideas_.empty()) nominate(state, beam_.front());
      if (!stopped_.empty()) return std::nullopt;
      if (!ideas_.empty()) {
        idea = ideas_[static_cast<size_t>(issued_) % ideas_.size()].idea;
        parent = beam_.front();
      }
    }
    ++issued_;
    ask_program(state, parent, idea);
  }
  return std::nullopt;
}

void LlmStrategy::observe(const search::Attempt& a, const search::SearchState& state) {
  outstanding_.erase(a.cand.hash);
  // The precision ladder: a mismatch at the floor that nothing at that rung has passed raises it,
  // and the failed program is tried again one rung up.
  if (a.status == RunStatus::mismatch && !a.reference_limited && a.cand.rung >= floor_) {
    bool passed_here = false;
    for (const auto& b : state.attempts)
      passed_here = passed_here || (b.status == RunStatus::ok && b.cand.rung == a.cand.rung);
    if (!passed_here) {
      floor_ = a.cand.rung + 1;
      // The failed candidate's own space: a model program's, else the lowered program's.
      const auto own = space_by_hash_.find(a.cand.hash);
      search::SearchSpace& sp = own != space_by_hash_.end() ? *spaces_[own->second] : space_;
      if (auto lifted = sp.at_rung(a.cand, floor_)) {
        lifted->origin = "precision";
        if (own != space_by_hash_.end()) space_by_hash_[lifted->hash] = own->second;
        if (auto it = idea_by_hash_.find(a.cand.hash); it != idea_by_hash_.end()) idea_by_hash_[lifted->hash] = it->second;
        queue_.push_front(std::move(*lifted));
      }
    }
  }
  if (!a.improved || a.status != RunStatus::ok) return;
  // The new best: hybrid tunes its knobs further (one-knob neighbours in its program's space).
  if (settings_.hybrid)
    if (auto it = space_by_hash_.find(a.cand.hash); it != space_by_hash_.end()) {
      int added = 0;
      for (auto& n : spaces_[it->second]->neighbors(a.cand)) {
        if (!fresh(n, state) || added >= 2) continue;
        n.origin = "hybrid";
        space_by_hash_[n.hash] = it->second;
        queue_.push_back(std::move(n));
        ++added;
      }
    }
  // Summarize: why the model's program beat the previous best (a lesson for the memory).
  const search::Attempt* prev = nullptr;
  for (const auto& b : state.attempts)
    if (b.index < a.index && b.status == RunStatus::ok && (!prev || b.time_s < prev->time_s)) prev = &b;
  auto idea = idea_by_hash_.find(a.cand.hash);
  if (!prev || idea == idea_by_hash_.end() || a.cand.origin == "rank") return;
  std::string text = idea->second;
  if (settings_.mode == "orchestrated" && stopped_.empty()) {
    PromptInputs in = inputs(state, a.cand.program, task_summarize(brief_of(*prev), brief_of(a)));
    auto reply = send(prompt_messages(prompt_parts(in)), "summarize");
    if (reply && !reply->content.empty()) text = first_sentence(reply->content, 300);
  }
  if (!text.empty())
    lessons_.push_back({prev->cand.hash, a.cand.hash,
                        fmt::format("{} ({:.2f}x faster; written by the LLM agent)", text, prev->time_s / a.time_s)});
}

}  // namespace ucut::agent

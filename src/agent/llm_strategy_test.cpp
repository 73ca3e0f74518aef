// The agent's loop with a scripted model (no HTTP): what it proposes, what it sends, how it repairs,
// nominates, learns and stops. The end-to-end runs over HTTP are in llm_client_test.cpp (client)
// and tests/agent (the CLI against the loopback fake server, and the cassette replay).
#include "agent/llm_strategy.h"

#include <gtest/gtest.h>

#include "agent/fake_openai_server.h"
#include "agent/register.h"
#include "dsl/dsl.h"
#include "support/diagnostics.h"

namespace ucut::agent {
namespace {

const char* kBase = R"(ucut 1
name addmm
in x : f32[512, 1024]
param c : f32[2048] = "c"
param w : f32[2048, 1024] = "w"
out out0 : f32[512, 2048]
stage out0 = gemm(x, w.T) {
  epilogue {
    let t1 = 2 * acc + 0.5 * c[col]
    out0 = relu(t1)
  }
}
)";

// The same computation written differently (a different program, the same interface).
const char* kRewrite = R"(ucut 1
in x : f32[512, 1024]
param c : f32[2048] = "c"
param w : f32[2048, 1024] = "w"
out out0 : f32[512, 2048]
stage out0 = gemm(x, w.T) {
  epilogue {
    out0 = relu(2 * acc + 0.5 * c[col])
  }
}
)";

std::string fenced(const std::string& why, const std::string& program) {
  return why + "\n\n```ucut\n" + program + "```\n";
}

class ScriptedClient final : public LlmClient {
 public:
  explicit ScriptedClient(std::vector<Result<ChatReply>> replies) : replies_(std::move(replies)) {}
  Result<ChatReply> chat(const ChatRequest& r) override {
    requests->push_back(r);
    if (replies_.empty()) return make_error(ErrorCode::subprocess, "script ended");
    auto out = replies_.front();
    replies_.erase(replies_.begin());
    return out;
  }
  std::string describe() const override { return "scripted"; }
  ChatSpend last_spend() const override { return failure_spend; }
  std::optional<Error> divergence() const override { return diverged; }
  std::shared_ptr<std::vector<ChatRequest>> requests = std::make_shared<std::vector<ChatRequest>>();
  ChatSpend failure_spend;          // what a scripted failure spent
  std::optional<Error> diverged;    // as a strict replay reports it

 private:
  std::vector<Result<ChatReply>> replies_;
};

Result<ChatReply> reply(const std::string& content, long long in = 100, long long out = 50) {
  ChatReply r;
  r.content = content;
  r.tokens_in = in;
  r.tokens_out = out;
  r.finish_reason = "stop";
  return r;
}

struct Rig {
  dsl::Program base;
  sol::HwSpec hw;
  std::unique_ptr<app::RealSpace> space;
  std::unique_ptr<LlmStrategy> strategy;
  std::shared_ptr<std::vector<ChatRequest>> requests;
  search::SearchState state;

  Rig(std::vector<Result<ChatReply>> replies, AgentSettings settings = {}, ChatSpend failure_spend = {},
      std::optional<Error> diverged = std::nullopt, std::unique_ptr<LlmClient> real_client = nullptr) {
    auto checked = dsl::dsl_compile(SourceFile{"addmm.ucut", kBase});
    EXPECT_TRUE(checked.program.has_value()) << diag_render_all(SourceFile{"addmm.ucut", kBase}, checked.diagnostics);
    base = *checked.program;
    hw = *sol::hw_lookup("h200");
    space::SpaceOptions so;
    auto created = app::RealSpace::create(base, hw, so);
    EXPECT_TRUE(created);
    space = std::move(created.value());
    AgentProblem p;
    p.base = base;
    p.brief.name = "addmm";
    p.brief.gpu = "h200";
    p.brief.profile = "default";
    p.brief.source = "class Model(nn.Module): ...";
    p.brief.t_sol = 10e-6;
    p.hw = hw;
    p.lessons = {"tile 128x128x32 -> 128x256x32 beat the slower configuration by 1.30x [gemm f32 m9_n11_k10]"};
    p.notice = [this](const std::string& line) { notices.push_back(line); };
    auto client = std::make_unique<ScriptedClient>(std::move(replies));
    client->failure_spend = failure_spend;
    client->diverged = std::move(diverged);
    requests = client->requests;
    if (real_client)
      strategy = std::make_unique<LlmStrategy>(*space, std::move(p), settings, std::move(real_client));
    else
      strategy = std::make_unique<LlmStrategy>(*space, std::move(p), settings, std::move(client));
  }
  std::vector<std::string> notices;

  // Proposes one candidate (the session's step) and records it as proposed.
  std::optional<search::Candidate> propose() {
    auto c = strategy->propose(state);
    if (c) state.proposed.insert(c->hash);
    return c;
  }
  // Records a result as the session would.
  void result(const search::Candidate& c, RunStatus st, double t = 0) {
    search::Attempt a;
    a.index = static_cast<int>(state.attempts.size());
    a.cand = c;
    a.status = st;
    a.time_s = t;
    if (st == RunStatus::ok && (!state.best || t < state.attempts[*state.best].time_s)) {
      a.improved = true;
      state.best = a.index;
    }
    state.attempts.push_back(a);
    strategy->observe(state.attempts.back(), state);
  }
  std::string last_user() const { return requests->back().messages.back().content; }
};

// A profiled attempt's stage times, as the prompt's "Measured per stage" line gives them.
TEST(LlmStrategy, StageTimesAreOnePromptLine) {
  EXPECT_EQ(agent_stage_times({{"t0", "gemm", "g", 1.25}, {"y", "elementwise", "e", 0.5}}),
            "t0 gemm 1.25 ms, y elementwise 0.5 ms");
  EXPECT_EQ(agent_stage_times({}), "");
}

TEST(LlmStrategy, MeasuresTheLoweredProgramBeforeAskingTheModel) {
  Rig rig({reply(fenced("Fold the let into the store.", kRewrite))});
  auto first = rig.propose();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->origin, "rank");
  EXPECT_TRUE(rig.requests->empty());
  EXPECT_FALSE(rig.propose());  // waits for the measurement
  EXPECT_TRUE(rig.requests->empty());
  rig.result(*first, RunStatus::ok, 20e-6);
  auto second = rig.propose();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->origin, "llm");
  EXPECT_NE(second->hash, first->hash);
  ASSERT_EQ(rig.requests->size(), 1u);
  const auto& msgs = rig.requests->front().messages;
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0].role, "system");
  EXPECT_NE(msgs[0].content.find("Core reference"), std::string::npos);  // the language's core
  EXPECT_NE(msgs[1].content.find("Current program"), std::string::npos);
  EXPECT_NE(msgs[1].content.find("measured 0.02 ms"), std::string::npos);
  EXPECT_NE(msgs[1].content.find("Lessons from earlier problems"), std::string::npos);
  EXPECT_NE(msgs[1].content.find("Speed of light"), std::string::npos);
  EXPECT_EQ(rig.strategy->usage().tokens_in, 100);
  EXPECT_EQ(rig.strategy->usage().requests, 1);
}

TEST(LlmStrategy, RepairsWithTheCheckersDiagnosticsAndGivesUpAfterTheBudget) {
  std::string broken = kRewrite;
  broken.replace(broken.find("relu("), 5, "relux(");
  Rig rig({reply("I would make it faster."), reply(fenced("Fixed.", broken)), reply(fenced("Now right.", kRewrite))});
  auto seed = rig.propose();
  rig.result(*seed, RunStatus::ok, 20e-6);
  auto c = rig.propose();
  ASSERT_TRUE(c);
  ASSERT_EQ(rig.requests->size(), 3u);
  const auto& third = (*rig.requests)[2].messages;
  EXPECT_NE(third[third.size() - 3].content.find("holds no program"), std::string::npos);
  EXPECT_NE(third.back().content.find("does not check"), std::string::npos);
  EXPECT_NE(third.back().content.find("relux"), std::string::npos);
  EXPECT_EQ((*rig.requests)[2].purpose, "repair");
  auto notes = rig.strategy->notes();
  EXPECT_NE(notes.front().find("2 repairs"), std::string::npos);
}

TEST(LlmStrategy, AChangedInterfaceIsSentBackNotProposed) {
  std::string other = kRewrite;
  other.replace(other.find("f32[512, 1024]"), 14, "f32[512, 1023]");
  AgentSettings s;
  s.repairs = 0;
  s.proposals = 1;
  Rig rig({reply(fenced("Shrink.", other)), reply(fenced("Again.", other))}, s);
  auto seed = rig.propose();
  rig.result(*seed, RunStatus::ok, 20e-6);
  EXPECT_FALSE(rig.propose());
  ASSERT_GE(rig.requests->size(), 1u);
  EXPECT_EQ(rig.strategy->notes().front().find("0 repairs") != std::string::npos, true);
}

TEST(LlmStrategy, AFailedEndpointEndsTheProposalsAndSaysWhy) {
  Rig rig({Result<ChatReply>(make_error(ErrorCode::timeout, "http://127.0.0.1:9/v1: timed out after 3 tries"))});
  auto seed = rig.propose();
  rig.result(*seed, RunStatus::ok, 20e-6);
  EXPECT_FALSE(rig.propose());
  EXPECT_FALSE(rig.propose());
  EXPECT_EQ(rig.requests->size(), 1u);  // not asked again
  auto notes = rig.strategy->notes();
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[1].find("timed out"), std::string::npos);
}

TEST(LlmStrategy, ServesTheFullReferenceWhenTheModelAsksForIt) {
  Rig rig({reply("REQUEST reference"), reply(fenced("With the reference.", kRewrite))});
  auto seed = rig.propose();
  rig.result(*seed, RunStatus::ok, 20e-6);
  ASSERT_TRUE(rig.propose());
  ASSERT_EQ(rig.requests->size(), 2u);
  EXPECT_NE((*rig.requests)[1].messages.back().content.find("The μCUTLASS language"), std::string::npos);
  EXPECT_EQ((*rig.requests)[1].purpose, "request");
}

TEST(LlmStrategy, OrchestratedModeNominatesTriagesAndImplementsIdeas) {
  AgentSettings s;
  s.mode = "orchestrated";
  s.proposals = 2;
  const std::string ideas =
      R"(Here: [{"idea": "fuse the epilogue into one expression", "expected_gain": 1.1, "cost": 1},
                {"idea": "use a wider tile", "expected_gain": 1.5, "cost": 1}])";
  Rig rig({reply(ideas), reply(fenced("Wider tile.", kRewrite)), reply(fenced("Same.", kBase))}, s);
  auto seed = rig.propose();
  rig.result(*seed, RunStatus::ok, 20e-6);
  auto c = rig.propose();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->origin, "llm-plan");
  ASSERT_GE(rig.requests->size(), 2u);
  EXPECT_EQ((*rig.requests)[0].purpose, "analyze");
  // Triage: the larger expected gain per cost goes first.
  EXPECT_NE((*rig.requests)[1].messages.back().content.find("use a wider tile"), std::string::npos);
}

TEST(LlmStrategy, ANewBestFromTheModelBecomesALessonForTheMemory) {
  Rig rig({reply(fenced("Folding the let saves a register.", kRewrite))});
  auto seed = rig.propose();
  rig.result(*seed, RunStatus::ok, 20e-6);
  auto c = rig.propose();
  ASSERT_TRUE(c);
  rig.result(*c, RunStatus::ok, 10e-6);
  auto lessons = rig.strategy->lessons();
  ASSERT_EQ(lessons.size(), 1u);
  EXPECT_EQ(lessons[0].slow_hash, seed->hash);
  EXPECT_EQ(lessons[0].fast_hash, c->hash);
  EXPECT_NE(lessons[0].text.find("Folding the let saves a register."), std::string::npos);
  EXPECT_NE(lessons[0].text.find("2.00x"), std::string::npos);
}

TEST(LlmStrategy, AMismatchRaisesThePrecisionFloorAndRetriesTheProgramOneRungUp) {
  Rig rig({reply(fenced("Try.", kRewrite))});
  auto seed = rig.propose();
  ASSERT_EQ(seed->rung, 0);
  rig.result(*seed, RunStatus::mismatch);
  EXPECT_EQ(rig.strategy->floor_rung(), 1);
  auto lifted = rig.propose();
  ASSERT_TRUE(lifted);
  EXPECT_EQ(lifted->origin, "precision");
  EXPECT_EQ(lifted->rung, 1);
  EXPECT_TRUE(rig.requests->empty());
}

TEST(LlmStrategy, HybridTunesTheKnobsOfEachProgramTheModelWrites) {
  AgentSettings s;
  s.hybrid = true;
  s.tune = 3;
  Rig rig({reply(fenced("Rewrite.", kRewrite))}, s);
  auto seed = rig.propose();
  rig.result(*seed, RunStatus::ok, 20e-6);
  std::set<std::string> hashes;
  int from_model = 0;
  for (int i = 0; i < 3; ++i) {
    auto c = rig.propose();
    ASSERT_TRUE(c);
    hashes.insert(c->hash);
    from_model += c->origin == "llm" ? 1 : 0;
  }
  EXPECT_EQ(hashes.size(), 3u);
  EXPECT_EQ(from_model, 1);
  EXPECT_EQ(rig.requests->size(), 1u);  // one program, three configurations
  EXPECT_EQ(rig.strategy->name(), "hybrid");
}

TEST(LlmStrategy, StopsAskingOnceTheTokenBudgetIsSpent) {
  AgentSettings s;
  s.problem_tokens = 8000;  // the first prompt (~3,500 tokens) fits, nothing after 7,990 spent does
  s.proposals = 4;
  Rig rig({reply(fenced("One.", kRewrite), 7900, 90), reply(fenced("Two.", kBase))}, s);
  auto seed = rig.propose();
  rig.result(*seed, RunStatus::ok, 20e-6);
  ASSERT_TRUE(rig.propose());
  EXPECT_FALSE(rig.propose());
  EXPECT_EQ(rig.requests->size(), 1u);
  EXPECT_NE(rig.strategy->notes().back().find("token budget"), std::string::npos);
}

TEST(LlmStrategy, ARequestIsSentOnlyWhenItsPromptFitsTheBudget) {
  // The prompt counts before it is sent: a budget smaller than the first prompt sends nothing.
  AgentSettings s;
  s.problem_tokens = 1000;
  Rig rig({reply(fenced("One.", kRewrite))}, s);
  auto seed = rig.propose();
  rig.result(*seed, RunStatus::ok, 20e-6);
  EXPECT_FALSE(rig.propose());
  EXPECT_TRUE(rig.requests->empty());
  const std::string why = rig.strategy->notes().back();
  EXPECT_NE(why.find("token budget (1000) would be exceeded: 0 tokens spent, the next request (propose) is ~"),
            std::string::npos)
      << why;
  EXPECT_EQ(rig.strategy->outcome().requests, 0);
  EXPECT_FALSE(rig.strategy->outcome().failure);
}

TEST(LlmStrategy, AnEmptyReplyOverHttpIsRepairedNotTheEndOfTheConversation) {
  // The endpoint's empty completion used to be an error that stopped the model for the problem.
  FakeReply empty;
  empty.finish_reason = "length";
  FakeReply good;
  good.content = fenced("Fold the let.", kRewrite);
  FakeOpenAiServer server({empty, good});
  ASSERT_NE(server.port(), 0) << server.error();
  OpenAiOptions o;
  o.base_url = server.base_url();
  o.model = "m";
  o.max_retries = 0;
  AgentSettings s;
  s.max_tokens = 512;
  Rig rig({}, s, {}, std::nullopt, openai_client(o, http_client_curl()));
  auto seed = rig.propose();
  rig.result(*seed, RunStatus::ok, 20e-6);
  auto c = rig.propose();
  ASSERT_TRUE(c) << rig.strategy->notes().back();
  EXPECT_EQ(c->origin, "llm");
  const auto sent = server.requests();
  ASSERT_EQ(sent.size(), 2u);
  const auto& msgs = sent[1]["messages"];
  ASSERT_GE(msgs.size(), 4u);
  EXPECT_EQ(msgs[msgs.size() - 2]["role"], "assistant");
  EXPECT_EQ(msgs[msgs.size() - 2]["content"], "[empty reply]");
  EXPECT_NE(msgs.back()["content"].get<std::string>().find("Your reply was empty: it reached the reply's limit of 512 tokens"),
            std::string::npos);
  const auto notes = rig.strategy->notes();
  EXPECT_NE(notes[1].find("1 empty reply (1 cut by the reply's token limit: raise --llm-max-tokens, now 512)"),
            std::string::npos)
      << notes[1];
  EXPECT_EQ(rig.strategy->outcome().replies, 2);
  EXPECT_EQ(rig.strategy->outcome().programs, 1);
}

TEST(LlmStrategy, ATooLargeReplyIsSaidToBeAndNotQuotedWholeInTheRepair) {
  // A 300 KB reply was quoted (cut at 256 KB) in every repair, its reason "holds no program".
  std::string huge;
  while (huge.size() < 300 * 1024) huge += "Let me think about the tile shapes once more, carefully.\n";
  Rig rig({reply(huge), reply(fenced("Short now.", kRewrite))});
  auto seed = rig.propose();
  rig.result(*seed, RunStatus::ok, 20e-6);
  ASSERT_TRUE(rig.propose());
  ASSERT_EQ(rig.requests->size(), 2u);
  const auto& repair = (*rig.requests)[1].messages;
  size_t chars = 0;
  for (const auto& m : repair) chars += m.content.size();
  const size_t first_prompt = (*rig.requests)[0].messages[0].content.size() + (*rig.requests)[0].messages[1].content.size();
  EXPECT_LE(chars, first_prompt + kMaxQuotedReplyChars + 2000);
  EXPECT_NE(repair.back().content.find("Your reply was too large"), std::string::npos) << repair.back().content;
  EXPECT_NE(repair[repair.size() - 2].content.find("left out"), std::string::npos);
}

TEST(LlmStrategy, AFailedRequestTheEndpointAnsweredCountsItsTokens) {
  Rig rig({Result<ChatReply>(make_error(ErrorCode::invalid_input, "the reply is malformed"))}, {},
          ChatSpend{1200, 30, false});
  auto seed = rig.propose();
  rig.result(*seed, RunStatus::ok, 20e-6);
  EXPECT_FALSE(rig.propose());
  EXPECT_EQ(rig.strategy->usage().tokens_in, 1200);
  EXPECT_EQ(rig.strategy->usage().tokens_out, 30);
  EXPECT_EQ(rig.strategy->usage().requests, 1);
}

TEST(LlmStrategy, StopsAfterOneIterationsWorthOfProposalsWithoutAProgram) {
  // The limit is max(2, N) proposals in a row (docs/agent.md "Stop"), each with its repairs.
  for (int n : {1, 3}) {
    AgentSettings s;
    s.proposals = n;
    s.repairs = 0;
    Rig rig({reply("I would rather talk."), reply("Still talking."), reply("More talk."), reply("Talk.")}, s);
    auto seed = rig.propose();
    rig.result(*seed, RunStatus::ok, 20e-6);
    EXPECT_FALSE(rig.propose());
    EXPECT_EQ(static_cast<int>(rig.requests->size()), std::max(2, n)) << "N = " << n;
    EXPECT_NE(rig.strategy->notes().back().find("proposals in a row gave no usable program"), std::string::npos);
  }
}

TEST(LlmStrategy, TheOutcomeSaysWhetherTheModelWasNeverOrNoLongerReached) {
  {
    Rig rig({Result<ChatReply>(make_error(ErrorCode::io, "connection refused", "is the server running?"))});
    auto seed = rig.propose();
    rig.result(*seed, RunStatus::ok, 20e-6);
    EXPECT_FALSE(rig.propose());
    const AgentOutcome o = rig.strategy->outcome();
    EXPECT_TRUE(o.never_reached());
    EXPECT_EQ(o.requests, 1);
    EXPECT_EQ(o.failure->message, "connection refused");
    ASSERT_EQ(rig.notices.size(), 1u);
    EXPECT_NE(rig.notices[0].find("the model was never reached"), std::string::npos) << rig.notices[0];
    EXPECT_NE(rig.strategy->notes().back().find("the model was never reached, so it proposed nothing"), std::string::npos);
  }
  {
    AgentSettings s;
    s.proposals = 4;
    Rig rig({reply(fenced("One.", kRewrite)), Result<ChatReply>(make_error(ErrorCode::io, "HTTP 503"))}, s);
    auto seed = rig.propose();
    rig.result(*seed, RunStatus::ok, 20e-6);
    ASSERT_TRUE(rig.propose());
    EXPECT_FALSE(rig.propose());
    const AgentOutcome o = rig.strategy->outcome();
    EXPECT_TRUE(o.no_longer_reached());
    EXPECT_EQ(o.replies, 1);
    EXPECT_EQ(o.programs, 1);
  }
  {
    Error d = make_error(ErrorCode::invalid_input, "replay diverged at exchange 0 (purpose propose)");
    Rig rig({Result<ChatReply>(d)}, {}, {}, d);
    auto seed = rig.propose();
    rig.result(*seed, RunStatus::ok, 20e-6);
    EXPECT_FALSE(rig.propose());
    ASSERT_TRUE(rig.strategy->outcome().divergence);
    EXPECT_EQ(rig.strategy->outcome().divergence->message, d.message);
  }
}

TEST(AgentCheck, SettingsAreCheckedBeforeAnyRequest) {
  AgentSettings s;
  s.url = "https://llm.example.com/v1";
  s.model = "m";
  s.key_env = "UCUT_SURELY_UNSET_KEY_VAR";
  ::unsetenv("UCUT_SURELY_UNSET_KEY_VAR");
  auto st = agent_check(s);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("UCUT_SURELY_UNSET_KEY_VAR is not set"), std::string::npos);
  s.key_env.clear();
  s.timeout_s = 0;
  ASSERT_FALSE(agent_check(s));
  s.timeout_s = 30;
  s.replay = "/nonexistent/cassette.jsonl";
  auto missing = agent_check(s);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::not_found);
}

}  // namespace
}  // namespace ucut::agent

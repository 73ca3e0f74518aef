// The agent's loop with a scripted model (no HTTP): what it proposes, what it sends, how it repairs,
// nominates, learns and stops. The end-to-end runs over HTTP are in llm_client_test.cpp (client)
// and tests/agent (the CLI against the loopback fake server, and the cassette replay).
#include "agent/llm_strategy.h"

#include <gtest/gtest.h>

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
  std::shared_ptr<std::vector<ChatRequest>> requests = std::make_shared<std::vector<ChatRequest>>();

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

  Rig(std::vector<Result<ChatReply>> replies, AgentSettings settings = {}) {
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
    auto client = std::make_unique<ScriptedClient>(std::move(replies));
    requests = client->requests;
    strategy = std::make_unique<LlmStrategy>(*space, std::move(p), settings, std::move(client));
  }

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
  s.problem_tokens = 100;
  s.proposals = 4;
  Rig rig({reply(fenced("One.", kRewrite), 90, 20), reply(fenced("Two.", kBase))}, s);
  auto seed = rig.propose();
  rig.result(*seed, RunStatus::ok, 20e-6);
  ASSERT_TRUE(rig.propose());
  EXPECT_FALSE(rig.propose());
  EXPECT_EQ(rig.requests->size(), 1u);
  EXPECT_NE(rig.strategy->notes().back().find("token budget"), std::string::npos);
}

}  // namespace
}  // namespace ucut::agent

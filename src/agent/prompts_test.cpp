#include "agent/prompts.h"

#include <gtest/gtest.h>

#include "agent/settings.h"

namespace ucut::agent {
namespace {

TEST(Prompts, TheCoreReferenceIsBuiltInAndWithinItsBudget) {
  const std::string core = language_core();
  EXPECT_NE(core.find("## Core reference"), std::string::npos);
  EXPECT_EQ(core.find("core:end"), std::string::npos);
  EXPECT_LE(token_estimate(core), 2550);  // docs/language.md's promise
  EXPECT_GT(language_full().size(), core.size());
  auto names = example_names();
  ASSERT_FALSE(names.empty());
  EXPECT_TRUE(example_text("softmax"));
  EXPECT_NE(example_text("softmax")->find("ucut 1"), std::string::npos);
  EXPECT_FALSE(example_text("no_such_example"));
}

TEST(Prompts, PartsAreNamedAndOnlyPresentWhenThereIsSomethingToSay) {
  PromptInputs in;
  in.problem.name = "p";
  in.problem.source = std::string(10000, 's');
  in.problem.t_sol = 1e-3;
  in.task = task_propose();
  auto parts = prompt_parts(in);
  std::vector<std::string> names;
  for (const auto& p : parts) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"system", "problem", "sol", "task"}));
  EXPECT_NE(parts[1].text.find("source cut at 6000"), std::string::npos);  // capped
  in.current = ProgramBrief{"cfg", "ucut 1\n", 2e-3, ""};
  in.problem.eager_s = 4e-3;
  in.recent.push_back({1, "cfg", "llm", "fuse it", "mismatch", 0, "max abs error 0.3"});
  in.lessons.push_back("a lesson");
  parts = prompt_parts(in);
  names.clear();
  for (const auto& p : parts) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"system", "problem", "sol", "current", "attempts", "lessons", "task"}));
  EXPECT_NE(parts[3].text.find("2.00x PyTorch eager"), std::string::npos);
  EXPECT_NE(parts[4].text.find("max abs error 0.3"), std::string::npos);
  auto msgs = prompt_messages(parts);
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0].role, "system");
  EXPECT_NE(msgs[1].content.find("## Task"), std::string::npos);
}

TEST(AgentSettings, RoundTripAndRefuseNonsense) {
  AgentSettings s;
  s.mode = "orchestrated";
  s.beam = 3;
  s.price_in = 0.5;
  auto back = agent_settings_from_json(agent_settings_to_json(s));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->mode, "orchestrated");
  EXPECT_EQ(back->beam, 3);
  EXPECT_DOUBLE_EQ(back->price_in, 0.5);
  EXPECT_FALSE(agent_settings_from_json({{"mode", "magic"}}));
  EXPECT_FALSE(agent_settings_from_json({{"beam", 0}}));
  EXPECT_FALSE(agent_settings_from_json({{"beam", "two"}}));
}

TEST(AgentSettings, EveryNumberIsHeldToItsRangeInTheOptionsWords) {
  // Zero and negative timeouts used to mean "no timeout"; negative prices were taken.
  EXPECT_FALSE(agent_settings_from_json({{"timeout_s", 0}}));
  EXPECT_FALSE(agent_settings_from_json({{"timeout_s", -5}}));
  EXPECT_FALSE(agent_settings_from_json({{"price_in", -1}}));
  EXPECT_FALSE(agent_settings_from_json({{"price_out", -0.5}}));
  EXPECT_FALSE(agent_settings_from_json({{"temperature", 2.5}}));
  EXPECT_FALSE(agent_settings_from_json({{"retries", -1}}));
  EXPECT_FALSE(agent_settings_from_json({{"problem_tokens", -1}}));
  EXPECT_FALSE(agent_settings_from_json({{"retry_after_max_s", -1}}));
  EXPECT_TRUE(agent_settings_from_json({{"retry_after_max_s", 0}, {"repairs", 0}, {"price_in", 0}}));
  AgentSettings s;
  s.proposals = 0;
  auto st = agent_settings_check(s);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, "--proposals must be a whole number >= 1, not 0");
  const AgentSettingRule* timeout = agent_setting_rule("--llm-timeout");
  ASSERT_NE(timeout, nullptr);
  EXPECT_EQ(agent_setting_violation(*timeout, 0), "must be more than 0 seconds (there is no 'no timeout'), not 0");
  EXPECT_EQ(agent_setting_violation(*timeout, 0.5), "");
  EXPECT_EQ(agent_setting_violation(*agent_setting_rule("--beam"), 1.5), "must be a whole number >= 1, not 1.5");
  EXPECT_EQ(agent_setting_rule("--llm"), nullptr);
}

TEST(Prompts, AProgramNotTimedYetIsNotSaidToBeMeasured) {
  PromptInputs in;
  in.problem.name = "p";
  in.current = ProgramBrief{"lowered", "ucut 1\n", 0, ""};
  in.task = task_propose();
  std::string all;
  for (const auto& part : prompt_parts(in)) all += part.text;
  EXPECT_EQ(all.find("measured 0 ms"), std::string::npos);
  EXPECT_NE(all.find("`lowered`: not timed yet"), std::string::npos);
  in.measured = false;
  in.current->time_s = 2e-5;
  all.clear();
  for (const auto& part : prompt_parts(in)) all += part.text;
  EXPECT_NE(all.find("estimated (analytic model, not measured) 0.02 ms"), std::string::npos);
  EXPECT_EQ(all.find("Measured per stage"), std::string::npos);  // not profiled: no line
  // a profiled parent: where its time went, one line after the program
  in.measured = true;
  in.current->stages = "t0 gemm 1.25 ms, y elementwise 0.5 ms";  // agent_stage_times (llm_strategy_test)
  all.clear();
  for (const auto& part : prompt_parts(in)) all += part.text;
  EXPECT_NE(all.find("Measured per stage (CUDA events between stages): t0 gemm 1.25 ms, y elementwise 0.5 ms\n"),
            std::string::npos) << all;
}

}  // namespace
}  // namespace ucut::agent

#include "agent/prompts.h"

#include <gtest/gtest.h>

#include "agent/settings.h"

namespace ucut::agent {
namespace {

TEST(Prompts, TheCoreReferenceIsBuiltInAndWithinItsBudget) {
  const std::string core = language_core();
  EXPECT_NE(core.find("## Core reference"), std::string::npos);
  EXPECT_EQ(core.find("core:end"), std::string::npos);
  EXPECT_LE(token_estimate(core), 2500);  // docs/language.md's promise
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

}  // namespace
}  // namespace ucut::agent

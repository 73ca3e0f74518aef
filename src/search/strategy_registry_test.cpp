#include "search/strategy_registry.h"

#include <gtest/gtest.h>

#include "search/fake_surface.h"

namespace ucut::search {
namespace {

TEST(StrategyRegistry, BuildsTheBuiltinSearchByName) {
  FakeSpace space{SurfaceSpec{}};
  BuiltinOptions bo;
  auto s = strategy_make("builtin", StrategyContext{space, bo});
  ASSERT_TRUE(s) << s.error().render();
  EXPECT_EQ((*s)->name(), "builtin");
  SearchState state;
  auto first = (*s)->propose(state);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->origin, "rank");  // the built-in search starts from the ranking
  EXPECT_EQ(strategy_entries().front().name, "builtin");
}

TEST(StrategyRegistry, AnUnknownNameListsTheChoices) {
  FakeSpace space{SurfaceSpec{}};
  BuiltinOptions bo;
  auto s = strategy_make("llm-typo", StrategyContext{space, bo});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, ErrorCode::invalid_input);
  EXPECT_NE(s.error().message.find("llm-typo"), std::string::npos);
  EXPECT_NE(s.error().hint.find("builtin"), std::string::npos);
  EXPECT_NE(strategy_help().find("builtin: "), std::string::npos);
}

}  // namespace
}  // namespace ucut::search

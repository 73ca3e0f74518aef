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

// A strategy registered from outside the module (as src/agent/ registers the LLM agent) is built by
// name like the built-in one, and registering the same name again replaces it.
class NamedStrategy final : public Strategy {
 public:
  explicit NamedStrategy(std::string n) : n_(std::move(n)) {}
  std::string name() const override { return n_; }
  std::optional<Candidate> propose(const SearchState&) override { return std::nullopt; }
  void observe(const Attempt&, const SearchState&) override {}

 private:
  std::string n_;
};

TEST(StrategyRegistry, StrategiesRegisteredAtStartUpAreBuiltByName) {
  auto make = [](std::string tag) {
    return [tag](const StrategyContext&) -> Result<std::unique_ptr<Strategy>> {
      return std::unique_ptr<Strategy>(std::make_unique<NamedStrategy>(tag));
    };
  };
  strategy_register({"registry-test", "a test strategy", make("first")});
  strategy_register({"registry-test", "a test strategy", make("second")});
  FakeSpace space{SurfaceSpec{}};
  BuiltinOptions bo;
  auto s = strategy_make("registry-test", StrategyContext{space, bo});
  ASSERT_TRUE(s) << s.error().render();
  EXPECT_EQ((*s)->name(), "second");
  int count = 0;
  for (const auto& n : strategy_names()) count += n == "registry-test";
  EXPECT_EQ(count, 1);
  EXPECT_EQ(strategy_names().front(), "builtin");
}

}  // namespace
}  // namespace ucut::search

// The stage-kind registry is complete: every kind of dsl/stage_kinds.def has an entry, for itself,
// with every member filled, in each layer's table (dsl, sol, space, codegen). A missing entry file
// already fails to link (each table names `<layer>_kind_<id>` for every row); this test catches an
// entry registered under the wrong kind or left with an empty member. It lives in app, the first
// module that sees all four layers.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "codegen/kinds/kinds.h"
#include "dsl/kinds/kinds.h"
#include "dsl/names.h"
#include "sol/kinds/kinds.h"
#include "space/kinds/kinds.h"

namespace ucut {
namespace {

using dsl::StageKind;

TEST(StageKinds, EveryKindHasAFullEntryInEveryTable) {
  ASSERT_EQ(dsl::dsl_stage_kind_list().size(), dsl::kStageKindCount);
  for (StageKind k : dsl::dsl_stage_kind_list()) {
    SCOPED_TRACE(dsl::dsl_stage_kind_word(k));
    const dsl::DslStageKind& d = dsl::dsl_kind(k);
    EXPECT_EQ(d.id, k);
    EXPECT_TRUE(d.knobs && d.check && d.print && d.interpret && d.plan_refusal);

    const sol::SolStageKind& s = sol::sol_stage_kind(k);
    EXPECT_EQ(s.id, k);
    EXPECT_TRUE(s.work);

    const space::SpaceStageKind& sp = space::space_stage_kind(k);
    EXPECT_EQ(sp.id, k);
    EXPECT_TRUE(sp.enumerate && sp.io && sp.validate && sp.rank && sp.apply && sp.name && sp.reduction_reads);

    const codegen::CodegenStageKind& c = codegen::codegen_stage_kind(k);
    EXPECT_EQ(c.id, k);
    EXPECT_TRUE(c.emit);
  }
}

TEST(StageKinds, WordsAreUniqueAndParseBack) {
  std::set<std::string> seen;
  for (StageKind k : dsl::dsl_stage_kind_list()) {
    const std::string w = dsl::dsl_stage_kind_word(k);
    EXPECT_TRUE(seen.insert(w).second) << w;
    ASSERT_TRUE(dsl::dsl_stage_kind_parse(w).has_value()) << w;
    EXPECT_EQ(*dsl::dsl_stage_kind_parse(w), k);
    EXPECT_EQ(dsl::dsl_stage_kinds().at(dsl::dsl_stage_kind_index(k)), w);
  }
  EXPECT_FALSE(dsl::dsl_stage_kind_parse("conv_nope").has_value());
}

}  // namespace
}  // namespace ucut

#include "agent/reply.h"

#include <gtest/gtest.h>

#include "dsl/dsl.h"
#include "support/diagnostics.h"

namespace ucut::agent {
namespace {

const char* kProgram = "ucut 1\nin x : f32[64, 128]\nout y : f32[64, 128]\nstage y = rowwise softmax(x)\n";

dsl::Program base() { return *dsl::dsl_compile(SourceFile{"base.ucut", kProgram}).program; }

TEST(ReplyExtract, TakesTheLastFencedBlockThatHoldsAProgram) {
  std::string r = "Draft:\n```ucut\nucut 1\nin a : f32[1]\n```\nOn reflection, better:\n```\n" + std::string(kProgram) +
                  "```\nDone.";
  auto ex = reply_extract(r);
  ASSERT_TRUE(ex.program);
  EXPECT_EQ(*ex.program, kProgram);
  EXPECT_TRUE(ex.fenced);
  EXPECT_FALSE(ex.truncated);
  EXPECT_NE(ex.reasoning.find("On reflection"), std::string::npos);
  EXPECT_TRUE(reply_accept(ex, base()));
}

TEST(ReplyExtract, ReadsAnUnfencedProgramAndDropsTheProseAfterIt) {
  auto ex = reply_extract("Here it is.\n" + std::string(kProgram) + "This should be faster because it is one pass.\n");
  ASSERT_TRUE(ex.program);
  EXPECT_FALSE(ex.fenced);
  auto p = reply_accept(ex, base());
  ASSERT_TRUE(p) << p.error().render();
  EXPECT_EQ(p->name, base().name);
}

TEST(ReplyExtract, ATruncatedReplySaysSo) {
  auto ex = reply_extract("```ucut\nucut 1\nin x : f32[64, 128]\nout y : f32[64");
  ASSERT_TRUE(ex.program);
  EXPECT_TRUE(ex.truncated);
  auto p = reply_accept(ex, base());
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("cut off"), std::string::npos);
}

TEST(ReplyExtract, EmptyAndProseOnlyRepliesAreUnusableWithTheReason) {
  auto empty = reply_accept(reply_extract("   \n"), base());
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("empty"), std::string::npos);
  auto prose = reply_accept(reply_extract("I cannot help with that."), base());
  ASSERT_FALSE(prose);
  EXPECT_NE(prose.error().message.find("no program"), std::string::npos);
}

TEST(ReplyExtract, RequestsForTheReferenceAndExamples) {
  EXPECT_EQ(*reply_extract("REQUEST reference").request, "reference");
  EXPECT_EQ(*reply_extract("Let me see one.\nrequest example softmax`").request, "example softmax");
  EXPECT_FALSE(reply_extract(kProgram).request);
}

TEST(ReplyExtract, AHostileReplyIsCutAndCannotRenameFilesOrChangeTheInterface) {
  std::string huge(kMaxReplyChars * 2, 'A');
  auto ex = reply_extract(huge);
  EXPECT_FALSE(ex.program);
  EXPECT_LE(ex.reasoning.size(), kMaxReplyChars);
  // The model's name line is ignored (names become file names).
  std::string renamed = "ucut 1\nname evil\nin x : f32[64, 128]\nout y : f32[64, 128]\nstage y = rowwise softmax(x)\n";
  auto p = reply_accept(reply_extract(renamed), base());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->name, base().name);
  std::string widened = "ucut 1\nin x : f32[64, 128]\nin z : f32[4]\nout y : f32[64, 128]\nstage y = rowwise softmax(x)\n";
  auto q = reply_accept(reply_extract(widened), base());
  ASSERT_FALSE(q);
  EXPECT_NE(q.error().message.find("interface"), std::string::npos);
  EXPECT_NE(q.error().message.find("in z"), std::string::npos);
}

TEST(ReplyIdeas, ParsesTheArrayInsideProseAndTriagesByGainPerCost) {
  auto ideas = reply_ideas(R"(Sure. ```json
[{"idea": "a", "expected_gain": 1.2, "cost": 1}, {"idea": "b", "expected_gain": 2.0, "cost": 3},
 {"idea": "c", "expected_gain": 1.5, "cost": 1}, "d"]
``` That is all.)", 3);
  ASSERT_TRUE(ideas) << ideas.error().render();
  ASSERT_EQ(ideas->size(), 3u);
  EXPECT_EQ((*ideas)[0].idea, "c");  // 0.5 per cost
  EXPECT_EQ((*ideas)[1].idea, "b");  // 0.33
  EXPECT_EQ((*ideas)[2].idea, "a");  // 0.2
  EXPECT_FALSE(reply_ideas("no json here", 3));
  EXPECT_FALSE(reply_ideas("[1, 2, 3]", 3));
}

TEST(ReplyText, FirstSentence) {
  EXPECT_EQ(first_sentence("**Fuse** the bias. Then more."), "Fuse the bias.");
  EXPECT_EQ(first_sentence(std::string(500, 'x'), 20).size(), 20u);
}

}  // namespace
}  // namespace ucut::agent

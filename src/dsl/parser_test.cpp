#include "dsl/parser.h"

#include <gtest/gtest.h>

using namespace ucut;
using namespace ucut::dsl;

TEST(Parser, FullGemmStage) {
  auto r = dsl_parse(R"(ucut 1
in x : f32[1024, 8192]
param W : f32[8192, 8192] = "linear.weight"
out y : f32[1024, 8192]
out m : f32[1024]
scalar alpha = -0.5
stage y = gemm(x, W.T) { precision tf32 tile 128x256x32 cluster 2x1 stages auto
  epilogue { let h = acc + b[col]; y = leaky_relu(h * 2.0, 0.1) m = rowmax(h) } })");
  ASSERT_FALSE(r.error) << r.error->message;
  const auto& p = r.program;
  EXPECT_EQ(p.version, 1);
  ASSERT_EQ(p.decls.size(), 4u);
  EXPECT_EQ(p.decls[1].binding->text, "linear.weight");
  EXPECT_EQ(p.decls[0].shape, (std::vector<int64_t>{1024, 8192}));
  ASSERT_EQ(p.scalars.size(), 1u);
  EXPECT_EQ(p.scalars[0].value, -0.5);
  ASSERT_EQ(p.stages.size(), 1u);
  const auto& s = p.stages[0];
  EXPECT_EQ(s.kind.text, "gemm");
  ASSERT_EQ(s.args.size(), 2u);
  EXPECT_TRUE(s.args[1].transposed);
  ASSERT_EQ(s.knobs.size(), 4u);
  EXPECT_EQ(s.knobs[1].dims, (std::vector<int64_t>{128, 256, 32}));
  ASSERT_EQ(s.blocks.size(), 1u);
  ASSERT_EQ(s.blocks[0].stmts.size(), 3u);
  EXPECT_TRUE(s.blocks[0].stmts[0].is_let);
  const AstExpr& y = *s.blocks[0].stmts[1].value;
  EXPECT_EQ(y.kind, AstExpr::Kind::call);
  EXPECT_EQ(y.args.size(), 2u);
  EXPECT_EQ(y.args[0]->kind, AstExpr::Kind::binary);
  EXPECT_EQ(y.args[0]->op, '*');
}

TEST(Parser, PrecedenceAndUnaryMinus) {
  auto r = dsl_parse("ucut 1 stage y = elementwise { body { y = a + b * -c - d } }");
  ASSERT_FALSE(r.error);
  const AstExpr& e = *r.program.stages[0].blocks[0].stmts[0].value;
  // ((a + (b * (-c))) - d)
  ASSERT_EQ(e.op, '-');
  ASSERT_EQ(e.args[0]->op, '+');
  EXPECT_EQ(e.args[0]->args[1]->op, '*');
  EXPECT_EQ(e.args[0]->args[1]->args[1]->kind, AstExpr::Kind::neg);
}

TEST(Parser, NonGemmCallsAndGroups) {
  auto r = dsl_parse(R"(ucut 1
stage y = rowwise layer_norm(x, weight=g, eps=1e-5)
stage s = reduce sum(x, dims=[0, -1])
stage (y0, y1) = grouped_gemm((a0, b0.T), (a1, b1.T))
stage z = elementwise
stage q = scan cumsum(x, exclusive=true))");
  ASSERT_FALSE(r.error) << r.error->message;
  const auto& st = r.program.stages;
  ASSERT_EQ(st.size(), 5u);
  EXPECT_EQ(st[0].op->text, "layer_norm");
  EXPECT_EQ(st[0].args[1].key->text, "weight");
  EXPECT_EQ(st[1].args[1].list, (std::vector<int64_t>{0, -1}));
  EXPECT_TRUE(st[2].tuple_outputs);
  EXPECT_EQ(st[2].args[1].pair[1].name.text, "b1");
  EXPECT_FALSE(st[3].op);  // 'stage' after elementwise starts the next stage
  EXPECT_EQ(st[4].args[1].name.text, "true");
}

TEST(Parser, SyntaxErrorsPointAtTheToken) {
  auto r = dsl_parse("ucut 1\nin x : f32[4, 4\nout y : f32[4]");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->span.begin.line, 3);
  EXPECT_NE(r.error->message.find("expected ']'"), std::string::npos);
  r = dsl_parse("ucut 1\nstage y = gemm(x, W.X)");
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("'T'"), std::string::npos);
  r = dsl_parse("ucut 1\nstge y = gemm(x, W)");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->hint, "did you mean 'stage'?");
}

TEST(Parser, DeepNestingIsAnErrorNotACrash) {
  std::string s = "ucut 1 stage y = elementwise { body { y = ";
  for (int i = 0; i < 5000; ++i) s += "(";
  auto r = dsl_parse(s);
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("too deeply"), std::string::npos);
  std::string m = "ucut 1 stage y = elementwise { body { y = ";
  for (int i = 0; i < 5000; ++i) m += "-";
  r = dsl_parse(m + "x } }");
  ASSERT_TRUE(r.error);
  std::string chain = "ucut 1 stage y = elementwise { body { y = x";
  for (int i = 0; i < 5000; ++i) chain += " * x";
  r = dsl_parse(chain + " } }");
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("too long"), std::string::npos);
}

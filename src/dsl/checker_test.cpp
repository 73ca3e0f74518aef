#include "dsl/dsl.h"

#include <gtest/gtest.h>

using namespace ucut;
using namespace ucut::dsl;

static CheckResult compile(const std::string& text) { return dsl_compile(SourceFile{"t.ucut", text}); }

static const char* kHeader = R"(ucut 1
in    x : f32[1024, 8192]
param W : f32[8192, 8192] = "linear.weight"
param b : f32[8192] = "linear.bias"
out   y : f32[1024, 8192]
)";

TEST(Checker, GemmResolvesDimsAndEpilogue) {
  auto r = compile(std::string(kHeader) + "stage y = gemm(x, W.T) { precision tf32 epilogue { y = gelu(acc + b[col]) } }");
  ASSERT_TRUE(r.program) << diag_render_all({"t.ucut", ""}, r.diagnostics);
  const auto& g = std::get<GemmStage>(r.program->stages[0].body);
  EXPECT_EQ(g.m, 1024);
  EXPECT_EQ(g.n, 8192);
  EXPECT_EQ(g.k, 8192);
  EXPECT_EQ(g.batch, 1);
  EXPECT_EQ(g.knobs.precision, Precision::tf32);
  ASSERT_EQ(g.epilogue.stmts.size(), 1u);
  const Expr& e = *g.epilogue.stmts[0].value;
  EXPECT_EQ(e.kind, Expr::Kind::unary);
  EXPECT_EQ(e.fn, Fn::gelu);
  EXPECT_EQ(e.args[0]->args[1]->mode, LoadMode::col);
  EXPECT_EQ(r.program->name, "t");
}

// f32x3k parses (the last precision word: the word's index is the enum's) and prints back.
TEST(Checker, F32x3kParsesAndPrintsBack) {
  auto r = compile(std::string(kHeader) + "stage y = gemm(x, W) { precision f32x3k }");
  ASSERT_TRUE(r.program) << diag_render_all({"t.ucut", ""}, r.diagnostics);
  EXPECT_EQ(std::get<GemmStage>(r.program->stages[0].body).knobs.precision, Precision::f32x3k);
  EXPECT_NE(dsl_print(*r.program).find("precision f32x3k"), std::string::npos);
}

TEST(Checker, DefaultParamsAreFilledIn) {
  auto r = compile(std::string(kHeader) + "stage y = gemm(x, W.T) { epilogue { y = hardtanh(leaky_relu(acc)) } }");
  ASSERT_TRUE(r.program);
  const Expr& e = *std::get<GemmStage>(r.program->stages[0].body).epilogue.stmts[0].value;
  EXPECT_EQ(e.params, (std::vector<double>{-1, 1}));
  EXPECT_EQ(e.args[0]->params, (std::vector<double>{0.01}));
}

TEST(Checker, RejectsWithHints) {
  struct Case {
    std::string body;
    std::string message_part;
    std::string hint_part;
  } cases[] = {
      {"stage y = gemm(x, W) { precision tf32 }", "K-major", "W.T"},
      {"stage y = gemm(W, x) { precision tf32 }", "inner dimensions", ""},
      {"stage y = gemm(x, W.T) { precison tf32 }", "unknown knob 'precison'", "did you mean 'precision'?"},
      {"stage y = gemm(x, W.T) { precision bf16 }", "needs bf16 operands", "tf32"},
      {"stage y = gemm(x, Wt.T)", "unknown tensor 'Wt'", "did you mean 'W'?"},
      {"stage y = gemm(x, W.T) { epilogue { y = acc + b[row] } }", "[row]", "b[col]"},
      {"stage y = gemm(x, W.T) { epilogue { y = gelo(acc) } }", "unknown function 'gelo'", "'gelu'"},
      {"stage y = gemm(x, W.T) { epilogue { y = clamp(acc) } }", "clamp needs all 2", "clamp(x, p1, p2)"},
      {"stage y = gemm(x, W.T) { schedule pingpang }", "invalid value 'pingpang'", "'pingpong'"},
      {"stage y = gemm(x, W.T) { threads 128 }", "does not apply to gemm", "precision"},
      {"stage y = gem(x, W.T)", "unknown stage kind 'gem'", "'gemm'"},
      {"stage x = gemm(x, W.T)", "declared 'in'", "out or tmp"},
  };
  for (const auto& c : cases) {
    auto r = compile(std::string(kHeader) + c.body);
    EXPECT_FALSE(r.program) << c.body;
    ASSERT_FALSE(r.diagnostics.empty()) << c.body;
    EXPECT_NE(r.diagnostics[0].message.find(c.message_part), std::string::npos)
        << c.body << "\n  got: " << r.diagnostics[0].message;
    EXPECT_NE(r.diagnostics[0].hint.find(c.hint_part), std::string::npos)
        << c.body << "\n  got hint: " << r.diagnostics[0].hint;
  }
}

TEST(Checker, DataFlowOrder) {
  auto r = compile(R"(ucut 1
in x : f32[64, 64]
tmp t : f32[64, 64]
out y : f32[64, 64]
stage y = elementwise { body { y = t * 2 } }
stage t = elementwise { body { t = x + 1 } }
)");
  ASSERT_FALSE(r.program);
  EXPECT_NE(r.diagnostics[0].message.find("read before any stage writes it"), std::string::npos);
  EXPECT_NE(r.diagnostics[0].hint.find("line 6"), std::string::npos);
}

TEST(Checker, NonGemmStagesFillTheIr) {
  auto r = compile(R"(ucut 1
in x : f32[32, 128]
in l : i64[32]
param g : f32[128] = "ln.weight"
out a : f32[32, 128]
out s : f32[128]
out c : f32[32, 128]
out loss : f32[]
stage a = rowwise layer_norm(x, weight=g)
stage s = reduce sum(x, dims=[-2])
stage c = scan cumprod(x, reverse=true)
stage loss = reduce cross_entropy(x, l, reduction=sum)
)");
  ASSERT_TRUE(r.program) << diag_render_all({"t.ucut", ""}, r.diagnostics);
  const auto& st = r.program->stages;
  const auto& rw = std::get<RowwiseStage>(st[0].body);
  EXPECT_EQ(rw.weight, "g");
  EXPECT_EQ(rw.attrs.at("eps"), 1e-5);
  EXPECT_EQ(rw.rows, 32);
  EXPECT_EQ(rw.cols, 128);
  EXPECT_EQ(std::get<ReduceStage>(st[1].body).dims, (std::vector<int>{0}));
  const auto& sc = std::get<ScanStage>(st[2].body);
  EXPECT_EQ(sc.dim, 1);
  EXPECT_TRUE(sc.reverse);
  EXPECT_EQ(std::get<ReduceStage>(st[3].body).reduction, "sum");
}

TEST(Checker, NeverCrashesOnEmptyOrHeaderOnly) {
  EXPECT_FALSE(compile("").program);
  EXPECT_FALSE(compile("ucut 1").program);
  EXPECT_FALSE(compile("ucut 2 in x : f32[1]").program);
}

TEST(Checker, BytesThatAreNotUtf8AreADiagnosticAtTheirPlace) {
  // In a comment, in code, a truncated sequence, an overlong '/' and a surrogate: each is named at
  // its line and column; valid UTF-8 in a comment is fine.
  const std::string body = "out y : f32[4]\nstage y = elementwise { body { y = 1 } }\n";
  for (const auto& [bad, col] : std::vector<std::pair<std::string, int>>{
           {"# caf\xff\n", 6}, {"# \xe2\x82\n", 3}, {"# \xc0\xaf\n", 3}, {"# \xed\xa0\x80\n", 3}}) {
    auto r = compile("ucut 1\n" + bad + body);
    ASSERT_FALSE(r.program) << bad;
    ASSERT_EQ(r.diagnostics.size(), 1u);
    EXPECT_EQ(r.diagnostics[0].span.begin.line, 2) << bad;
    EXPECT_EQ(r.diagnostics[0].span.begin.col, col) << bad;
    EXPECT_EQ(r.diagnostics[0].message.rfind("the file is not valid UTF-8 (byte 0x", 0), 0u);
  }
  EXPECT_TRUE(compile("ucut 1\n# μCUTLASS, 日本 \xf0\x9f\x99\x82\n" + body).program);
}

TEST(Checker, ElementCountsThatOverflowAreRefusedNotWrapped) {
  // 2^32 · (2^32 + 1) wraps to 2^32 in 64 bits; 2^32 · 2^32 wraps to 0. Both are refused.
  for (const char* shape : {"[4294967296, 4294967297]", "[4294967296, 4294967296]", "[1099511627776, 2]"}) {
    auto r = compile(std::string("ucut 1\nin x : f32") + shape + "\nout y : f32" + shape +
                     "\nstage y = elementwise { body { y = x } }\n");
    ASSERT_FALSE(r.program) << shape;
    EXPECT_NE(r.diagnostics[0].message.find("more than a tensor may have (2^40)"), std::string::npos)
        << r.diagnostics[0].message;
  }
}

// A stage may write a view that is its whole tensor in another shape (offset 0, every element):
// the tensor is then written whole and read directly (a depthwise conv's NCHW result read by the
// pointwise conv's GEMM as [N, C, H*W]); a view of part of it is still a slice, read through views.
TEST(Checker, AViewOfTheWholeTensorWritesItWhole) {
  const std::string head = R"(ucut 1
in x : f32[8, 8]
in z : f32[2, 4, 8]
in h : f32[4, 8]
param w : f32[2, 6, 4] = "w"
out y : f32[2, 6, 8]
tmp t : f32[2, 4, 8]
)";
  auto whole = compile(head + "view t2 : f32[8, 8] = t strides [8, 1] offset 0\n"
                              "stage t2 = elementwise { body { t2 = relu(x) } }\n"
                              "stage y = gemm(w, t)\n");
  EXPECT_TRUE(whole.program) << diag_render_all({"t.ucut", ""}, whole.diagnostics);
  auto part = compile(head + "view t2 : f32[4, 8] = t strides [8, 1] offset 0\n"
                             "view t3 : f32[4, 8] = t strides [8, 1] offset 32\n"
                             "stage t2 = elementwise { body { t2 = relu(h) } }\n"
                             "stage t3 = elementwise { body { t3 = relu(h) } }\n"
                             "stage y = gemm(w, t)\n");
  ASSERT_FALSE(part.program);
  EXPECT_NE(diag_render_all({"t.ucut", ""}, part.diagnostics).find("which stages write in slices"), std::string::npos)
      << diag_render_all({"t.ucut", ""}, part.diagnostics);
  auto twice = compile(head + "view t2 : f32[8, 8] = t strides [8, 1] offset 0\n"
                              "stage t2 = elementwise { body { t2 = relu(x) } }\n"
                              "stage t = elementwise { body { t = z } }\n"
                              "stage y = gemm(w, t)\n");
  ASSERT_FALSE(twice.program);
  EXPECT_NE(diag_render_all({"t.ucut", ""}, twice.diagnostics).find("already written"), std::string::npos)
      << diag_render_all({"t.ucut", ""}, twice.diagnostics);
}

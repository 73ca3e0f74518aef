#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "dsl/dsl.h"

using namespace ucut;
using namespace ucut::dsl;

static std::string read(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

static std::vector<std::filesystem::path> examples() {
  std::vector<std::filesystem::path> v;
  for (const auto& e : std::filesystem::directory_iterator(std::string(UCUTLASS_SOURCE_DIR) + "/examples"))
    if (e.path().extension() == ".ucut") v.push_back(e.path());
  std::sort(v.begin(), v.end());
  return v;
}

// Every example checks, and print∘parse is idempotent with a stable hash.
TEST(Printer, ExamplesRoundTrip) {
  auto files = examples();
  ASSERT_GE(files.size(), 10u);
  for (const auto& f : files) {
    SourceFile src{f.string(), read(f)};
    auto r = dsl_compile(src);
    ASSERT_TRUE(r.program) << diag_render_all(src, r.diagnostics);
    std::string once = dsl_print(*r.program);
    auto r2 = dsl_compile(SourceFile{f.string(), once});
    ASSERT_TRUE(r2.program) << once << diag_render_all({f.string(), once}, r2.diagnostics);
    EXPECT_EQ(dsl_print(*r2.program), once) << f;
    EXPECT_EQ(dsl_hash(*r2.program), dsl_hash(*r.program)) << f;
    EXPECT_EQ(dsl_hash(*r.program).size(), 64u);
  }
}

TEST(Printer, ParenthesesOnlyWherePrecedenceNeedsThem) {
  auto r = dsl_compile({"p.ucut", R"(ucut 1
in a : f32[8]
in b : f32[8]
out y : f32[8]
stage y = elementwise { body { y = (a - (b - 1)) * (a + b) / (2 * a) - -3 } })"});
  ASSERT_TRUE(r.program);
  std::string s = dsl_print(*r.program);
  EXPECT_NE(s.find("    y = (a - (b - 1)) * (a + b) / (2 * a) - -3\n"), std::string::npos) << s;
}

TEST(Printer, HashChangesWithTheProgram) {
  const char* base = "ucut 1\nin a : f32[8]\nout y : f32[8]\nstage y = elementwise { body { y = a * 2 } }";
  const char* other = "ucut 1\nin a : f32[8]\nout y : f32[8]\nstage y = elementwise { body { y = a * 3 } }";
  auto r1 = dsl_compile({"p.ucut", base}), r2 = dsl_compile({"p.ucut", other});
  ASSERT_TRUE(r1.program && r2.program);
  EXPECT_NE(dsl_hash(*r1.program), dsl_hash(*r2.program));
  // Layout and comments do not change identity.
  auto r3 = dsl_compile({"p.ucut", "# c\nucut 1\nin a:f32[8] out y:f32[8]\nstage y=elementwise{body{y=a*2.0}}"});
  ASSERT_TRUE(r3.program);
  EXPECT_EQ(dsl_hash(*r1.program), dsl_hash(*r3.program));
}

// docs/language.md holds exactly the generated function table (kept in sync by this test;
// `ucutlass check --functions` prints it).
TEST(Printer, LanguageDocHasTheFunctionTable) {
  std::string doc = read(std::string(UCUTLASS_SOURCE_DIR) + "/docs/language.md");
  EXPECT_NE(doc.find(dsl_function_table_markdown()), std::string::npos)
      << "regenerate the table with: ucutlass check --functions";
}

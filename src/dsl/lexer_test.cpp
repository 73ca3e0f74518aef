#include "dsl/lexer.h"

#include <gtest/gtest.h>

using namespace ucut;
using namespace ucut::dsl;

static std::vector<Token> lex(const std::string& s) {
  std::vector<Token> t;
  Diagnostic d;
  EXPECT_TRUE(dsl_lex(s, t, d)) << d.message;
  return t;
}

TEST(Lexer, DimsNumbersNamesAndComments) {
  auto t = lex("tile 128x256x32 # comment\n eps 1e-5 x.T \"a.b\" 2.5");
  ASSERT_EQ(t.size(), 10u);
  EXPECT_EQ(t[0].kind, Tok::ident);
  EXPECT_EQ(t[1].kind, Tok::dims);
  EXPECT_EQ(t[1].text, "128x256x32");
  EXPECT_EQ(t[2].text, "eps");
  EXPECT_EQ(t[2].span.begin.line, 2);
  EXPECT_EQ(t[2].span.begin.col, 2);
  EXPECT_EQ(t[3].kind, Tok::number);
  EXPECT_EQ(t[3].text, "1e-5");
  EXPECT_EQ(t[5].text, ".");
  EXPECT_EQ(t[7].kind, Tok::string);
  EXPECT_EQ(t[7].text, "a.b");
  EXPECT_EQ(t[8].text, "2.5");
  EXPECT_EQ(t[9].kind, Tok::eof);
}

TEST(Lexer, IdentifierWithDigitsIsNotDims) {
  auto t = lex("f32x3 b0");
  EXPECT_EQ(t[0].kind, Tok::ident);
  EXPECT_EQ(t[0].text, "f32x3");
  EXPECT_EQ(t[1].text, "b0");
}

TEST(Lexer, ErrorsHaveSpans) {
  std::vector<Token> t;
  Diagnostic d;
  EXPECT_FALSE(dsl_lex("in x @", t, d));
  EXPECT_EQ(d.span.begin.col, 6);
  EXPECT_NE(d.message.find("'@'"), std::string::npos);
  EXPECT_FALSE(dsl_lex("param W = \"abc", t, d));
  EXPECT_NE(d.message.find("unterminated"), std::string::npos);
  EXPECT_FALSE(dsl_lex("tile 12ab", t, d));
  EXPECT_FALSE(dsl_lex("x = \xce\xbc", t, d));
  EXPECT_NE(d.message.find("\\xce"), std::string::npos);
}

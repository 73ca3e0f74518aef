#include "agent/reply.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include <nlohmann/json.hpp>

#include "dsl/dsl.h"
#include "dsl/gemm_rules.h"
#include "support/diagnostics.h"

namespace ucut::agent {

namespace {

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::string line;
  std::istringstream in(s);
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(line);
  }
  return out;
}

std::string ltrim(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

// A line that opens a program: `ucut 1` (comments and whitespace before are fine).
bool opens_program(const std::string& line) {
  std::string t = ltrim(line);
  if (t.rfind("ucut", 0) != 0) return false;
  t = ltrim(t.substr(4));
  return !t.empty() && t[0] == '1' && (t.size() == 1 || !std::isdigit(static_cast<unsigned char>(t[1])));
}

std::string join(const std::vector<std::string>& lines, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to && i < lines.size(); ++i) out += lines[i] + "\n";
  return out;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string tensor_text(const dsl::Tensor& t) {
  static const char* roles[] = {"in", "param", "out", "tmp"};
  std::string shape;
  for (size_t i = 0; i < t.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape[i]);
  std::string s = fmt::format("{} {}: {}[{}]", roles[static_cast<int>(t.role)], t.name, dsl::dtype_name(t.dtype), shape);
  if (!t.binding.empty()) s += " = \"" + t.binding + "\"";
  return s;
}

std::vector<const dsl::Tensor*> interface_of(const dsl::Program& p) {
  std::vector<const dsl::Tensor*> out;
  for (const auto& t : p.tensors)
    if (t.role != dsl::TensorRole::tmp) out.push_back(&t);
  return out;
}

}  // namespace

ExtractedReply reply_extract(const std::string& reply_in) {
  ExtractedReply out;
  out.chars = reply_in.size();
  out.too_large = reply_in.size() > kMaxReplyChars;
  const std::string reply = reply_in.size() > kMaxReplyChars ? reply_in.substr(0, kMaxReplyChars) : reply_in;
  const auto lines = split_lines(reply);
  // Fenced blocks: the last one that holds a program wins (models often draft, then answer).
  struct Block {
    size_t open, close;  // line indices; close == lines.size() when never closed
  };
  std::optional<Block> chosen;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (ltrim(lines[i]).rfind("```", 0) != 0) continue;
    size_t j = i + 1;
    while (j < lines.size() && ltrim(lines[j]).rfind("```", 0) != 0) ++j;
    bool has_program = false;
    for (size_t k = i + 1; k < j; ++k) has_program = has_program || opens_program(lines[k]);
    if (has_program) chosen = Block{i, j};
    i = j;  // past the closing fence (or the end)
  }
  if (chosen) {
    size_t start = chosen->open + 1;
    while (start < chosen->close && !opens_program(lines[start])) ++start;
    out.program = join(lines, start, chosen->close);
    out.fenced = true;
    out.truncated = chosen->close >= lines.size();
    out.reasoning = join(lines, 0, chosen->open);
    return out;
  }
  for (size_t i = lines.size(); i-- > 0;) {
    if (!opens_program(lines[i])) continue;
    out.program = join(lines, i, lines.size());
    out.reasoning = join(lines, 0, i);
    return out;
  }
  for (const auto& l : lines) {
    std::string t = ltrim(l);
    if (lower(t).rfind("request ", 0) != 0) continue;
    std::string what = ltrim(t.substr(8));
    while (!what.empty() && (std::isspace(static_cast<unsigned char>(what.back())) || what.back() == '`')) what.pop_back();
    if (lower(what) == "reference") out.request = "reference";
    else if (lower(what).rfind("example ", 0) == 0) out.request = "example " + ltrim(what.substr(8));
    if (out.request) break;
  }
  out.reasoning = reply;
  return out;
}

std::string interface_difference(const dsl::Program& base, const dsl::Program& p) {
  const auto a = interface_of(base), b = interface_of(p);
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    if (i >= b.size())
      return "the declaration `" + tensor_text(*a[i]) + "` is missing from your program";
    if (i >= a.size())
      return "your program declares `" + tensor_text(*b[i]) + "`, which the problem does not have (use `tmp` for "
             "intermediates)";
    if (tensor_text(*a[i]) != tensor_text(*b[i]))
      return "declaration " + std::to_string(i + 1) + " must be `" + tensor_text(*a[i]) + "`; your program has `" +
             tensor_text(*b[i]) + "`";
  }
  if (base.scalars.size() != p.scalars.size())
    return fmt::format("the program must declare the {} scalar(s) of the current program, in order", base.scalars.size());
  for (size_t i = 0; i < base.scalars.size(); ++i)
    if (base.scalars[i].name != p.scalars[i].name || base.scalars[i].default_value != p.scalars[i].default_value)
      return fmt::format("scalar {} must be `scalar {} = {}`", i + 1, base.scalars[i].name, base.scalars[i].default_value);
  return "";
}

std::string reply_quote(const std::string& reply, const ExtractedReply& ex) {
  if (reply.size() <= kMaxQuotedReplyChars) return reply;
  if (ex.program && !ex.too_large && ex.program->size() + 200 <= kMaxQuotedReplyChars)
    return fmt::format("[... {} characters of reasoning left out ...]\n```ucut\n{}```\n", ex.reasoning.size(),
                       *ex.program);
  const size_t keep = kMaxQuotedReplyChars / 2;
  return fmt::format("{}\n[... the rest of this {}-character reply left out ...]\n", reply.substr(0, keep),
                     reply.size());
}

Result<dsl::Program> reply_accept(const ExtractedReply& reply, const dsl::Program& base) {
  if (reply.too_large)
    return make_error(ErrorCode::invalid_input,
                      fmt::format("Your reply was too large: {} characters, more than the {} read. Reply with a few "
                                  "sentences of reasoning and one whole program, nothing else.",
                                  reply.chars, kMaxReplyChars));
  if (!reply.program)
    return make_error(ErrorCode::invalid_input,
                      reply.reasoning.find_first_not_of(" \t\r\n") == std::string::npos
                          ? "Your reply was empty."
                          : "Your reply holds no program (no ```ucut block with a `ucut 1` line).");
  const std::string truncated =
      reply.truncated ? " Your reply was cut off before the block closed: write a shorter program, without commentary "
                        "inside it."
                      : "";
  auto lines = split_lines(*reply.program);
  // Unfenced: prose may follow the program; drop trailing lines until it checks (bounded).
  const size_t tries = reply.fenced ? 1 : std::min<size_t>(lines.size(), 40);
  std::string first_diagnostics;
  for (size_t drop = 0; drop < tries; ++drop) {
    SourceFile src{"reply.ucut", join(lines, 0, lines.size() - drop)};
    auto checked = dsl::dsl_compile(src);
    if (!checked.program) {
      if (drop == 0) first_diagnostics = diag_render_all(src, checked.diagnostics);
      continue;
    }
    dsl::Program p = std::move(*checked.program);
    if (std::string diff = interface_difference(base, p); !diff.empty())
      return make_error(ErrorCode::invalid_input, "Your program changes the problem's interface: " + diff + ".",
                        "keep every in/param/out declaration and scalar exactly as in the current program");
    p.name = base.name;
    return p;
  }
  return make_error(ErrorCode::invalid_input, "Your program does not check:\n" + first_diagnostics + truncated,
                    "fix the errors the checker names (its hints say how)");
}

std::string first_sentence(const std::string& text, size_t max_chars) {
  std::string s;
  for (char c : text) {
    if (c == '*' || c == '#' || c == '`') continue;
    s += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  }
  s = ltrim(s);
  size_t end = s.size();
  for (size_t i = 0; i + 1 < s.size(); ++i)
    if ((s[i] == '.' || s[i] == '!' || s[i] == '?') && s[i + 1] == ' ') {
      end = i + 1;
      break;
    }
  s = s.substr(0, end);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  if (s.size() > max_chars) s = s.substr(0, max_chars - 3) + "...";
  return s;
}

Result<std::vector<Idea>> reply_ideas(const std::string& reply_in, int max) {
  const std::string reply = reply_in.size() > kMaxReplyChars ? reply_in.substr(0, kMaxReplyChars) : reply_in;
  // The outermost [...] that parses as a JSON array of objects.
  nlohmann::json arr;
  for (size_t open = reply.find('['); open != std::string::npos && arr.is_null(); open = reply.find('[', open + 1)) {
    for (size_t close = reply.rfind(']'); close != std::string::npos && close > open; close = reply.rfind(']', close - 1)) {
      auto j = nlohmann::json::parse(reply.substr(open, close - open + 1), nullptr, false);
      if (!j.is_discarded() && j.is_array()) {
        arr = std::move(j);
        break;
      }
      if (close == 0) break;
    }
  }
  if (!arr.is_array() || arr.empty())
    return make_error(ErrorCode::invalid_input, "Your reply holds no JSON array of ideas.",
                      "reply with only [{\"idea\": ..., \"expected_gain\": ..., \"cost\": ...}]");
  std::vector<Idea> ideas;
  for (const auto& e : arr) {
    Idea i;
    if (e.is_string()) i.idea = e.get<std::string>();
    else if (e.is_object() && e.contains("idea") && e["idea"].is_string()) {
      i.idea = e["idea"].get<std::string>();
      if (e.contains("expected_gain") && e["expected_gain"].is_number()) i.gain = e["expected_gain"].get<double>();
      if (e.contains("cost") && e["cost"].is_number()) i.cost = std::clamp(e["cost"].get<int>(), 1, 3);
    }
    if (i.idea.empty()) continue;
    if (i.idea.size() > 600) i.idea = i.idea.substr(0, 600);
    if (!(i.gain >= 1) || i.gain > 100) i.gain = 1;
    ideas.push_back(std::move(i));
  }
  if (ideas.empty())
    return make_error(ErrorCode::invalid_input, "Your JSON array holds no usable idea (each needs an \"idea\" string).");
  // Triage: expected gain per unit of cost, stable (the model's order breaks ties).
  std::stable_sort(ideas.begin(), ideas.end(),
                   [](const Idea& a, const Idea& b) { return (a.gain - 1) / a.cost > (b.gain - 1) / b.cost; });
  if (max > 0 && static_cast<int>(ideas.size()) > max) ideas.resize(static_cast<size_t>(max));
  return ideas;
}

}  // namespace ucut::agent

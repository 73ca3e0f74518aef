// Reading a model's reply (docs/agent.md "Replies"): models answer in free text, so the program is
// found robustly (the last ```ucut or ``` block that holds `ucut 1`, an unterminated block of a
// truncated reply, or unfenced text from a `ucut 1` line), then checked like any program
// (dsl_compile) and held to the problem's interface: every in/param/out declaration and scalar of
// the current program, in order. Every way a reply can be unusable (empty, no program, a program
// that does not check, a changed interface, a hostile or enormous text) is an Error whose message
// goes back to the model as a repair request; nothing here throws.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dsl/program.h"
#include "support/result.h"

namespace ucut::agent {

// Replies longer than this are too large: cut before parsing (a runaway or hostile reply) and
// refused, with the reason, as a repair.
inline constexpr size_t kMaxReplyChars = 256 * 1024;
// What a repair request quotes of an unusable reply, at most: a program with its reasoning fits
// (our largest lowered programs are ~5,000 characters), a runaway reply is not re-sent (and
// billed) in every repair.
inline constexpr size_t kMaxQuotedReplyChars = 16 * 1024;

struct ExtractedReply {
  size_t chars = 0;                    // the reply's length
  bool too_large = false;              // longer than kMaxReplyChars (only its start was read)
  std::optional<std::string> program;  // the program text found
  bool fenced = false;                 // found in a fenced block
  bool truncated = false;              // the block was never closed (the reply was cut off)
  std::string reasoning;               // the text before the program
  std::optional<std::string> request;  // `REQUEST reference` -> "reference"; `REQUEST example x` -> "example x"
};

ExtractedReply reply_extract(const std::string& reply);

// The reply as a repair request quotes it back to the model: whole when it fits
// kMaxQuotedReplyChars; else the program found in it without the reasoning, or else its start,
// with a line saying what was left out.
std::string reply_quote(const std::string& reply, const ExtractedReply& ex);

// The checked program, named as `base` (the name decides file names; the model's is ignored).
// Errors (invalid_input) carry the checker's diagnostics or the interface difference, in words a
// model can act on; a reply too large is refused as such. An unfenced program is retried without
// its trailing lines (prose after it).
Result<dsl::Program> reply_accept(const ExtractedReply& reply, const dsl::Program& base);

// The interface difference between `base` and `p` ("" when they agree): in/param/out tensors
// (name, role, dtype, shape, binding) and scalars, in order.
std::string interface_difference(const dsl::Program& base, const dsl::Program& p);

// The first sentence of `text` (markdown markers dropped), at most `max_chars`.
std::string first_sentence(const std::string& text, size_t max_chars = 240);

// One nominated optimization (the orchestrated mode's Analyze/Nominate step).
struct Idea {
  std::string idea;
  double gain = 1;   // the expected speed-up
  int cost = 2;      // 1 knob, 2 restructure, 3 new stages
};
// The JSON array of a nomination reply (found inside free text or a fence); at most `max` ideas,
// ordered by triage: expected gain per unit of cost, best first.
Result<std::vector<Idea>> reply_ideas(const std::string& reply, int max);

}  // namespace ucut::agent

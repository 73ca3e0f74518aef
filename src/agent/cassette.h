// Record and replay of an LLM session, so an agent run can be repeated exactly without a server
// (for tests, for bug reports, and to compare ucutlass versions on the same model answers).
//
// A cassette is a JSONL file, one line per exchange, in the order the requests were made:
//   {"n": 0, "purpose": "propose", "request_hash": "<sha-256 hex>", "messages": [{"role", "content"}...],
//    "reply": {"content", "tokens_in", "tokens_out", "tokens_estimated", "finish_reason", "tries"}}
// or, when the exchange failed, "error": {"code", "message", "hint", "tokens_in", "tokens_out",
// "tokens_estimated"} in place of "reply" (the tokens the failed request still spent).
// request_hash is the SHA-256 of the canonical JSON (sorted keys, compact) of
// {messages, temperature, max_tokens}: what decides the answer. purpose is journaled, not hashed.
//
// The recorder replaces an existing file at its first exchange and flushes after every line, so a
// killed run keeps everything it recorded. The messages are ours, but they still pass through
// redact() with the key when one is given, so a cassette can be attached to a bug report.
#pragma once

#include <memory>
#include <string>

#include "agent/llm_client.h"
#include "support/result.h"

namespace ucut::agent {

// The hash a cassette records for `r`.
std::string cassette_request_hash(const ChatRequest& r);

// Passes every request to `inner` and appends the exchange (reply or error) to `path`. A cassette
// that cannot be written fails the request with an io error naming the path: a recording that
// silently misses exchanges would not replay.
std::unique_ptr<LlmClient> recording_client(std::unique_ptr<LlmClient> inner, std::string path,
                                            std::string secret = "");

// Whether a cassette can be written at `path` (its folder made if need be; nothing left behind
// and an existing file unchanged): an io error naming the path otherwise. Checked before the
// first request, so a billed request is never lost to a path that cannot take it.
Status cassette_check_writable(const std::string& path);

// Serves the recorded replies in order. When strict, request i must have the recorded
// request_hash, else an invalid_input error "replay diverged at exchange i (purpose P): ..."
// (also kept as divergence(), as is asking past the end of a strict replay);
// when not, the replies are served in order whatever was asked (a replay that only needs the same
// model answers, e.g. after a prompt wording change). Past the end, an error saying how many
// exchanges the cassette holds; a recorded error comes back as that error. A missing or malformed
// file is an error naming the path (and the line).
Result<std::unique_ptr<LlmClient>> replay_client(const std::string& path, bool strict = true);

}  // namespace ucut::agent

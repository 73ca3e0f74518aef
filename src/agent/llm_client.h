// The LLM agent's model client: chat completions from an OpenAI-compatible server (OpenAI itself,
// vLLM, SGLang, llama.cpp, Ollama's /v1, ...). The agent sees only the LlmClient interface, so a
// session can be recorded to a cassette and replayed without a server (cassette.h), and tests can
// script the server (fake_openai_server.h).
//
// What the OpenAI client does for the agent: it retries what is worth retrying (429, 5xx,
// transport errors, timeouts) with exponential backoff or the server's Retry-After (capped, and
// said: every wait is announced with its length), fails at once on the other 4xx, checks the reply
// is a completion, reports token counts (estimated when the server sends no usage; a request the
// server answered but that failed still counts what it spent), and keeps the API key out of
// everything it returns: errors, replies and describe() all pass through redact(). An empty
// completion is a reply, not an error: the agent sends it back as a repair (docs/agent.md).
// The key goes over plain http:// only to a loopback host, unless allow_insecure says otherwise.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/http.h"
#include "support/result.h"

namespace ucut::agent {

struct ChatMessage {
  std::string role;     // system, user, assistant
  std::string content;
};

struct ChatRequest {
  std::vector<ChatMessage> messages;
  double temperature = 0.2;
  int max_tokens = 4096;
  // "propose", "repair", "analyze", "summarize": journaled in the cassette, not sent.
  std::string purpose;
};

struct ChatReply {
  std::string content;
  long long tokens_in = 0, tokens_out = 0;
  bool tokens_estimated = false;  // the server sent no usage: ceil(characters / 4) each way
  std::string finish_reason;      // stop, length, ...
  int tries = 1;                  // requests sent, retries included
  double seconds = 0;             // wall time, backoff sleeps included
};

// Tokens one chat() call spent, whatever its result.
struct ChatSpend {
  long long tokens_in = 0, tokens_out = 0;
  bool estimated = false;
};

class LlmClient {
 public:
  virtual ~LlmClient() = default;
  virtual Result<ChatReply> chat(const ChatRequest& r) = 0;
  // "model M at URL": for logs and reports; never the key.
  virtual std::string describe() const = 0;
  // What the last chat() spent: a reply's own counts, and for a failure what the endpoint spent
  // before it (a 2xx body that is malformed, a stream cut short: the prompt was read and text
  // generated), estimated as ceil(characters / 4) where it reported none. Zero before the first
  // call and for failures nothing answered. One caller at a time (the agent asks one question at
  // a time per client).
  virtual ChatSpend last_spend() const { return {}; }
  // A strict replay's first divergence from its cassette (cassette.h); nullopt for every other
  // client and while the replay agrees.
  virtual std::optional<Error> divergence() const { return std::nullopt; }
};

struct OpenAiOptions {
  // e.g. http://127.0.0.1:8000/v1; "/chat/completions" is appended, and a URL already ending in
  // /chat/completions is used as is.
  std::string base_url;
  std::string model;
  std::string api_key;       // may be empty (local servers): then no Authorization header
  // Where the key comes from when api_key is empty: "" reads $OPENAI_API_KEY if it is set; a
  // variable named here must be set (openai_options_resolve refuses it unset, and never falls
  // back to OPENAI_API_KEY: a misspelt name must not send another key to another server).
  std::string key_env;
  bool allow_insecure = false;  // send the key over plain http:// to a host that is not loopback
  int max_retries = 4;       // retries after the first try
  double backoff_s = 1.0;    // sleep before retry i: backoff_s * 2^i, capped at backoff_max_s,
  double backoff_max_s = 30; // or the server's Retry-After when it sends one,
  double retry_after_max_s = 60;  // capped at this (a server asking for an hour gets a minute)
  double timeout_s = 300;    // per request
  bool stream = false;       // ask for server-sent events (long generations behind proxies)
  uint64_t seed = 0;         // sent as "seed" when nonzero
  std::function<void(double seconds)> sleep;  // null: real sleep; tests pass a recorder
  // Said before every wait ("llm: URL: HTTP 429 ...; waiting 60 s before retry 1 of 4 ..."); null:
  // a line on stderr.
  std::function<void(const std::string& line)> notify;
};

// Every occurrence of `secret` in `text` replaced by "***" (text unchanged when secret is empty).
std::string redact(const std::string& text, const std::string& secret);

// Fills unset fields from the environment: base_url from OPENAI_BASE_URL (else an invalid_input
// error naming --llm and OPENAI_BASE_URL), api_key from key_env (an error naming the variable
// when it is named and unset or empty) or else OPENAI_API_KEY, model from UCUTLASS_LLM_MODEL or
// OPENAI_MODEL (else an error naming --model). A key bound for http:// to a host that is not
// loopback is an error naming --llm-allow-insecure unless allow_insecure. Nothing is sent.
Result<OpenAiOptions> openai_options_resolve(OpenAiOptions o);

// Whether the URL's host is loopback: 127.0.0.0/8, ::1 or localhost (any case).
bool url_host_is_loopback(const std::string& url);
// The URL's host ("" when it has none), without port, brackets or user info.
std::string url_host(const std::string& url);

// The client for a resolved endpoint; `http` is normally http_client_curl().
std::unique_ptr<LlmClient> openai_client(OpenAiOptions o, std::unique_ptr<HttpClient> http);

}  // namespace ucut::agent

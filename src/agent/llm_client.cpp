#include "agent/llm_client.h"

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>

#include <arpa/inet.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ucut::agent {

using nlohmann::json;

std::string redact(const std::string& text, const std::string& secret) {
  if (secret.empty()) return text;
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (true) {
    size_t hit = text.find(secret, pos);
    if (hit == std::string::npos) break;
    out.append(text, pos, hit - pos);
    out += "***";
    pos = hit + secret.size();
  }
  out.append(text, pos, std::string::npos);
  return out;
}

namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

long long estimate_tokens(size_t chars) { return static_cast<long long>((chars + 3) / 4); }

const char* status_reason(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
  }
}

std::string endpoint_of(const std::string& base_url) {
  std::string url = base_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  const std::string suffix = "/chat/completions";
  if (url.size() >= suffix.size() && url.compare(url.size() - suffix.size(), suffix.size(), suffix) == 0) return url;
  return url + suffix;
}

// Whether the server keeps failing in a way a later try may not: 429, 5xx, transport errors.
bool retryable(const HttpResponse& r) { return r.status == 0 || r.status == 429 || r.status >= 500; }

// Retry-After in seconds: delta-seconds ("3", "1.5") or an HTTP date (RFC 9110's IMF-fixdate,
// "Wed, 21 Oct 2015 07:28:00 GMT": the seconds from now, 0 when it has passed); garbage gives -1
// (use the backoff). Not capped here: the caller caps it and says so.
double retry_after_seconds(const std::string& v) {
  if (v.empty()) return -1;
  char* end = nullptr;
  double s = std::strtod(v.c_str(), &end);
  if (end != v.c_str() && *end == '\0') return std::isfinite(s) && s >= 0 ? s : -1;
  std::tm tm{};
  const char* rest = ::strptime(v.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!rest || *rest != '\0') return -1;
  const std::time_t when = ::timegm(&tm);
  if (when == static_cast<std::time_t>(-1)) return -1;
  return std::max(0.0, std::difftime(when, std::time(nullptr)));
}

// What a failed try was, in a few words: "HTTP 429 Too Many Requests", "timed out", "connection refused".
std::string try_outcome(const HttpResponse& r) {
  if (r.status != 0) {
    const char* reason = status_reason(r.status);
    return fmt::format("HTTP {}{}{}", r.status, *reason ? " " : "", reason);
  }
  if (r.timed_out) return "timed out";
  return r.error.empty() ? std::string("no response") : r.error;
}

// The server's own words from an error body ({"error": {"message": ...}}), else the body's start.
std::string server_message(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.contains("error")) {
    const json& e = j["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
    if (e.is_string()) return e.get<std::string>();
  }
  return body;
}

std::string excerpt(const std::string& text, size_t max_chars = 200) {
  if (text.size() <= max_chars) return text;
  return text.substr(0, max_chars) + "...";
}

// What one try produced: the completion's parts, or why the body was unusable.
struct Parsed {
  std::string content;
  std::string finish_reason;
  long long prompt_tokens = -1, completion_tokens = -1;
  std::string problem;  // non-empty: the body was malformed; says what was wrong
};

void read_usage(const json& usage, Parsed& p) {
  if (!usage.is_object()) return;
  if (usage.contains("prompt_tokens") && usage["prompt_tokens"].is_number_integer())
    p.prompt_tokens = usage["prompt_tokens"].get<long long>();
  if (usage.contains("completion_tokens") && usage["completion_tokens"].is_number_integer())
    p.completion_tokens = usage["completion_tokens"].get<long long>();
}

Parsed parse_completion(const std::string& body) {
  Parsed p;
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    p.problem = "the reply is not a JSON object";
    return p;
  }
  // Usage first: a body that is otherwise unusable still says what the request spent.
  if (j.contains("usage")) read_usage(j["usage"], p);
  if (j.contains("error") && !j["error"].is_null()) {
    p.problem = "the server answered with an error: " + server_message(body);
    return p;
  }
  if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) {
    p.problem = "the reply has no choices";
    return p;
  }
  const json& c = j["choices"][0];
  if (c.is_object() && c.contains("finish_reason") && c["finish_reason"].is_string())
    p.finish_reason = c["finish_reason"].get<std::string>();
  if (!c.is_object() || !c.contains("message") || !c["message"].is_object()) {
    p.problem = "the reply's first choice has no message";
    return p;
  }
  const json& m = c["message"];
  if (m.contains("content") && m["content"].is_string()) p.content = m["content"].get<std::string>();
  return p;
}

// Server-sent events: "data: {chunk}" lines, "data: [DONE]" at the end. Fed as bytes arrive.
class SseParser {
 public:
  void feed(const std::string& bytes) {
    fed_ = true;
    buf_ += bytes;
    size_t nl;
    while ((nl = buf_.find('\n')) != std::string::npos) {
      std::string line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      handle(line);
    }
  }
  void finish() {
    if (!buf_.empty()) {
      std::string line;
      line.swap(buf_);
      handle(line);
    }
    if (p_.problem.empty() && !done_ && p_.finish_reason.empty())
      p_.problem = "the event stream ended before the reply was complete (no finish_reason, no [DONE])";
  }
  bool fed() const { return fed_; }
  const Parsed& parsed() const { return p_; }

 private:
  void handle(const std::string& line) {
    if (done_ || !p_.problem.empty()) return;
    if (line.rfind("data:", 0) != 0) return;  // comments (": keep-alive"), event:, id:, blank
    std::string payload = line.substr(5);
    while (!payload.empty() && payload.front() == ' ') payload.erase(0, 1);
    if (payload == "[DONE]") {
      done_ = true;
      return;
    }
    json j = json::parse(payload, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      p_.problem = "an event in the stream is not a JSON object: " + excerpt(payload);
      return;
    }
    if (j.contains("error") && !j["error"].is_null()) {
      p_.problem = "the server sent an error in the stream: " + server_message(payload);
      return;
    }
    if (j.contains("choices") && j["choices"].is_array() && !j["choices"].empty()) {
      const json& c = j["choices"][0];
      if (c.is_object()) {
        if (c.contains("delta") && c["delta"].is_object() && c["delta"].contains("content") &&
            c["delta"]["content"].is_string())
          p_.content += c["delta"]["content"].get<std::string>();
        if (c.contains("finish_reason") && c["finish_reason"].is_string())
          p_.finish_reason = c["finish_reason"].get<std::string>();
      }
    }
    if (j.contains("usage")) read_usage(j["usage"], p_);
  }

  std::string buf_;
  Parsed p_;
  bool done_ = false;
  bool fed_ = false;
};

class OpenAiClient : public LlmClient {
 public:
  OpenAiClient(OpenAiOptions o, std::unique_ptr<HttpClient> http)
      : o_(std::move(o)), http_(std::move(http)), url_(endpoint_of(o_.base_url)) {}

  std::string describe() const override { return redact("model " + o_.model + " at " + url_, o_.api_key); }

  Result<ChatReply> chat(const ChatRequest& r) override {
    auto t0 = std::chrono::steady_clock::now();
    json messages = json::array();
    size_t prompt_chars = 0;
    for (const auto& m : r.messages) {
      messages.push_back({{"role", m.role}, {"content", m.content}});
      prompt_chars += m.content.size();
    }
    json body = {{"model", o_.model},
                 {"messages", std::move(messages)},
                 {"temperature", r.temperature},
                 {"max_tokens", r.max_tokens}};
    if (o_.seed != 0) body["seed"] = o_.seed;
    if (o_.stream) {
      body["stream"] = true;
      body["stream_options"] = {{"include_usage", true}};
    }

    HttpRequest req;
    req.url = url_;
    req.headers.emplace_back("Content-Type", "application/json");
    if (o_.stream) req.headers.emplace_back("Accept", "text/event-stream");
    if (!o_.api_key.empty()) req.headers.emplace_back("Authorization", "Bearer " + o_.api_key);
    req.body = body.dump();
    req.timeout_s = o_.timeout_s;

    const int max_tries = std::max(0, o_.max_retries) + 1;
    HttpResponse resp;
    int tries = 0;
    spent_ = {};
    for (int i = 0; i < max_tries; ++i) {
      if (i > 0) wait_before_retry(i, max_tries - 1, resp);
      ++tries;
      SseParser sse;
      if (o_.stream) req.on_chunk = [&sse](const std::string& chunk) { sse.feed(chunk); };
      resp = http_->post(req);
      if (resp.status >= 200 && resp.status < 300) return reply_from(resp, sse, prompt_chars, tries, t0);
      // A stream cut short was read and partly answered: the server spent those tokens.
      if (resp.status == 0 && o_.stream && sse.fed()) {
        const Parsed& p = sse.parsed();
        add_spend(p.prompt_tokens, p.completion_tokens, prompt_chars, p.content.size());
      }
      if (!retryable(resp)) break;
    }
    return failure(resp, tries);
  }

  ChatSpend last_spend() const override { return spent_; }

 private:
  // Sleeps before retry `i` (1-based) of `retries`: the server's Retry-After, capped at
  // retry_after_max_s, else the exponential backoff; says how long and why first.
  void wait_before_retry(int i, int retries, const HttpResponse& last) const {
    const double asked = retry_after_seconds(last.retry_after);
    double s = std::min(o_.backoff_max_s, o_.backoff_s * std::pow(2.0, i - 1));
    std::string why;
    if (asked >= 0) {
      s = std::min(asked, std::max(0.0, o_.retry_after_max_s));
      why = asked > s ? fmt::format(" (the server asked for {:.0f} s in Retry-After; capped by --llm-retry-after-max)", asked)
                      : std::string(" (the server's Retry-After)");
    }
    const std::string line = fmt::format("llm: {}: {}; waiting {:.3g} s before retry {} of {}{}", url_,
                                         try_outcome(last), s, i, retries, why);
    if (o_.notify) o_.notify(redact(line, o_.api_key));
    else std::fprintf(stderr, "%s\n", redact(line, o_.api_key).c_str());
    sleep_s(s);
  }

  // Adds what one answered try spent: the server's counts where it sent them, else estimates.
  void add_spend(long long prompt_tokens, long long completion_tokens, size_t prompt_chars, size_t reply_chars) {
    spent_.tokens_in += prompt_tokens >= 0 ? prompt_tokens : estimate_tokens(prompt_chars);
    spent_.tokens_out += completion_tokens >= 0 ? completion_tokens : estimate_tokens(reply_chars);
    spent_.estimated = spent_.estimated || prompt_tokens < 0 || completion_tokens < 0;
  }

  void sleep_s(double s) const {
    if (s <= 0) return;
    if (o_.sleep) {
      o_.sleep(s);
      return;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(s));
  }

  Error err(ErrorCode code, const std::string& message, const std::string& hint) const {
    return make_error(code, redact(message, o_.api_key), redact(hint, o_.api_key));
  }

  Result<ChatReply> reply_from(const HttpResponse& resp, SseParser& sse, size_t prompt_chars, int tries,
                               std::chrono::steady_clock::time_point t0) {
    Parsed p;
    // A server that ignores "stream" answers with a plain completion; read it as one.
    size_t first = resp.body.find_first_not_of(" \t\r\n");
    bool plain = first != std::string::npos && resp.body[first] == '{';
    if (o_.stream && !plain) {
      if (!sse.fed()) sse.feed(resp.body);
      sse.finish();
      p = sse.parsed();
    } else {
      p = parse_completion(resp.body);
    }
    // The server answered: what it spent counts, usable or not.
    add_spend(p.prompt_tokens, p.completion_tokens, prompt_chars,
              p.problem.empty() ? p.content.size() : resp.body.size());
    const std::string where = "the reply from " + url_;
    const std::string body_start = excerpt(redact(resp.body, o_.api_key));
    if (!p.problem.empty())
      return err(ErrorCode::invalid_input, where + " is malformed: " + p.problem + "; the body starts: " + body_start,
                 "is the server OpenAI-compatible? --llm should name its /v1 endpoint");
    // An empty completion (finish_reason says why) is the model's answer, not the endpoint's
    // failure: the agent sends it back as a repair request.
    ChatReply out;
    out.content = redact(p.content, o_.api_key);
    out.finish_reason = redact(p.finish_reason, o_.api_key);
    out.tokens_in = spent_.tokens_in;
    out.tokens_out = spent_.tokens_out;
    out.tokens_estimated = spent_.estimated;
    out.tries = tries;
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
  }

  Error failure(const HttpResponse& resp, int tries) const {
    std::string head = "LLM request to " + url_ + " failed";
    if (tries > 1) head += fmt::format(" after {} tries", tries);
    if (resp.status == 0) {
      if (resp.timed_out)
        return err(ErrorCode::timeout,
                   fmt::format("LLM request to {} timed out after {}s{}", url_, o_.timeout_s,
                               tries > 1 ? fmt::format(" ({} tries)", tries) : std::string()),
                   fmt::format("raise --llm-timeout (now {}s), or ask for fewer tokens", o_.timeout_s));
      std::string what = resp.error.empty() ? std::string("no response") : resp.error;
      std::string hint = "is the server running at " + url_ + "?";
      if (!resp.connect_failed) hint += " (it closed the connection without a complete reply; check its logs)";
      return err(ErrorCode::io, head + ": " + what, hint);
    }
    const char* reason = status_reason(resp.status);
    std::string status = fmt::format("HTTP {}{}{}", resp.status, *reason ? " " : "", reason);
    std::string said = excerpt(redact(server_message(resp.body), o_.api_key));
    std::string message = head + ": " + status + (said.empty() ? std::string() : ": " + said);
    if (resp.status == 429)
      return err(ErrorCode::io, message, "the server is rate-limiting; wait a while, or raise --llm-retries");
    if (resp.status >= 500)
      return err(ErrorCode::io, message, "the server keeps failing; check its logs, or raise --llm-retries");
    std::string hint;
    if (resp.status >= 300 && resp.status < 400)
      return err(ErrorCode::invalid_input, message,
                 "the server redirects, and redirects are not followed (they would resend the key); pass the "
                 "final URL to --llm");
    const std::string key_var = o_.key_env.empty() ? std::string("OPENAI_API_KEY") : o_.key_env;
    switch (resp.status) {
      case 401:
        hint = o_.api_key.empty() ? "the server wants an API key and none was sent: set " + key_var
                                  : "the server rejected the key: set " + key_var + " to a key this server accepts";
        break;
      case 403: hint = "the key may not use this model or endpoint; check " + key_var + " and --model"; break;
      case 404:
        hint = "check --llm (usually the server's /v1 URL) and --model (is '" + o_.model + "' served there?)";
        break;
      case 400:
      case 413:
      case 422:
        hint = "the server rejected the request; check --model and that the prompt and --llm-max-tokens fit "
               "the model's context";
        break;
      default: hint = "check --llm and --model"; break;
    }
    return err(ErrorCode::invalid_input, message, hint);
  }

  OpenAiOptions o_;
  std::unique_ptr<HttpClient> http_;
  std::string url_;
  ChatSpend spent_;
};

}  // namespace

std::string url_host(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return "";
  std::string authority = url.substr(scheme + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  if (size_t at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    return close == std::string::npos ? "" : authority.substr(1, close - 1);
  }
  return authority.substr(0, authority.find(':'));
}

bool url_host_is_loopback(const std::string& url) {
  std::string host = url_host(url);
  for (auto& c : host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (host == "localhost" || host == "localhost.") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;  // 127.0.0.0/8
  in6_addr v6{};
  if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

Result<OpenAiOptions> openai_options_resolve(OpenAiOptions o) {
  if (o.base_url.empty()) o.base_url = env_or_empty("OPENAI_BASE_URL");
  if (o.base_url.empty())
    return make_error(ErrorCode::invalid_input, "no LLM endpoint: pass --llm URL or set OPENAI_BASE_URL",
                      "e.g. --llm http://127.0.0.1:8000/v1 for a local vLLM server, or "
                      "OPENAI_BASE_URL=https://api.openai.com/v1");
  const bool http = o.base_url.rfind("http://", 0) == 0;
  if ((!http && o.base_url.rfind("https://", 0) != 0) || url_host(o.base_url).empty())
    return make_error(ErrorCode::invalid_input, "the LLM endpoint '" + o.base_url + "' is not an http(s) URL with a host",
                      "pass --llm http://HOST:PORT/v1 (or set OPENAI_BASE_URL)");
  std::string key_from = "OPENAI_API_KEY";
  if (o.api_key.empty() && !o.key_env.empty()) {
    // A variable the user named must hold the key: falling back to OPENAI_API_KEY would send that
    // key (meant for another server, perhaps) wherever --llm points.
    const char* v = std::getenv(o.key_env.c_str());
    if (!v || !*v)
      return make_error(ErrorCode::invalid_input,
                        fmt::format("--llm-key-env {}: the variable {} is {}; nothing was sent, and nothing falls "
                                    "back to OPENAI_API_KEY",
                                    o.key_env, o.key_env, v ? "empty" : "not set"),
                        fmt::format("export {}=<the key> (is the name spelt right?), or leave out --llm-key-env to "
                                    "read $OPENAI_API_KEY",
                                    o.key_env));
    o.api_key = v;
    key_from = o.key_env;
  } else if (o.api_key.empty()) {
    o.api_key = env_or_empty("OPENAI_API_KEY");
  }
  if (http && !o.api_key.empty() && !o.allow_insecure && !url_host_is_loopback(o.base_url))
    return make_error(ErrorCode::invalid_input,
                      fmt::format("refusing to send the API key (${}) over plain http:// to '{}', which is not a "
                                  "loopback host: anyone on the way could read it",
                                  key_from, url_host(o.base_url)),
                      "use the server's https:// URL, or pass --llm-allow-insecure if the network is yours (the "
                      "key then travels unencrypted)");
  if (o.model.empty()) o.model = env_or_empty("UCUTLASS_LLM_MODEL");
  if (o.model.empty()) o.model = env_or_empty("OPENAI_MODEL");
  if (o.model.empty())
    return make_error(ErrorCode::invalid_input, "no LLM model named: pass --model NAME",
                      "or set UCUTLASS_LLM_MODEL (or OPENAI_MODEL); the server's /v1/models lists what it serves");
  if (o.max_retries < 0) o.max_retries = 0;
  return o;
}

std::unique_ptr<LlmClient> openai_client(OpenAiOptions o, std::unique_ptr<HttpClient> http) {
  return std::make_unique<OpenAiClient>(std::move(o), std::move(http));
}

}  // namespace ucut::agent

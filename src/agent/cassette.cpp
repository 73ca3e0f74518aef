#include "agent/cassette.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/fs.h"
#include "support/hash.h"

namespace ucut::agent {

using nlohmann::json;

namespace {

constexpr ErrorCode kAllCodes[] = {ErrorCode::invalid_input, ErrorCode::not_found, ErrorCode::unsupported,
                                   ErrorCode::io,            ErrorCode::subprocess, ErrorCode::timeout,
                                   ErrorCode::internal};

std::optional<ErrorCode> error_code_from(const std::string& name) {
  for (ErrorCode c : kAllCodes)
    if (name == error_code_name(c)) return c;
  return std::nullopt;
}

json messages_json(const ChatRequest& r, const std::string& secret) {
  json a = json::array();
  for (const auto& m : r.messages) a.push_back({{"role", redact(m.role, secret)}, {"content", redact(m.content, secret)}});
  return a;
}

class RecordingClient : public LlmClient {
 public:
  RecordingClient(std::unique_ptr<LlmClient> inner, std::string path, std::string secret)
      : inner_(std::move(inner)), path_(std::move(path)), secret_(std::move(secret)) {}

  std::string describe() const override {
    return redact(inner_->describe() + " (recording to " + path_ + ")", secret_);
  }
  ChatSpend last_spend() const override { return inner_->last_spend(); }
  std::optional<Error> divergence() const override { return inner_->divergence(); }

  Result<ChatReply> chat(const ChatRequest& r) override {
    Result<ChatReply> res = inner_->chat(r);
    json line = {{"purpose", r.purpose}, {"request_hash", cassette_request_hash(r)},
                 {"messages", messages_json(r, secret_)}};
    if (res) {
      const ChatReply& c = *res;
      line["reply"] = {{"content", redact(c.content, secret_)},
                       {"tokens_in", c.tokens_in},
                       {"tokens_out", c.tokens_out},
                       {"tokens_estimated", c.tokens_estimated},
                       {"finish_reason", redact(c.finish_reason, secret_)},
                       {"tries", c.tries}};
    } else {
      const Error& e = res.error();
      const ChatSpend spent = inner_->last_spend();
      line["error"] = {{"code", error_code_name(e.code)},
                       {"message", redact(e.message, secret_)},
                       {"hint", redact(e.hint, secret_)},
                       {"tokens_in", spent.tokens_in},
                       {"tokens_out", spent.tokens_out},
                       {"tokens_estimated", spent.estimated}};
    }
    Status st = append(line);
    if (!st) return st.error();
    return res;
  }

 private:
  Status append(json& line) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!out_.is_open()) {
      std::filesystem::path p(path_);
      if (p.has_parent_path()) {
        Status st = fs_mkdirs(p.parent_path().string());
        if (!st) return st.error();
      }
      out_.open(path_, std::ios::binary | std::ios::trunc);
      if (!out_)
        return make_error(ErrorCode::io, "cannot write the LLM cassette '" + path_ + "': " + std::strerror(errno),
                          "check the folder exists and is writable, or record elsewhere");
    }
    line["n"] = n_++;
    out_ << line.dump() << '\n';
    out_.flush();
    if (!out_) return make_error(ErrorCode::io, "writing the LLM cassette '" + path_ + "' failed (disk full?)");
    return ok_status();
  }

  std::unique_ptr<LlmClient> inner_;
  std::string path_;
  std::string secret_;
  std::mutex mu_;
  std::ofstream out_;
  long long n_ = 0;
};

struct Exchange {
  std::string purpose;
  std::string request_hash;
  bool failed = false;
  ChatReply reply;
  Error error;
  ChatSpend spent;  // a reply's tokens, or what the failed request spent
};

class ReplayClient : public LlmClient {
 public:
  ReplayClient(std::string path, std::vector<Exchange> exchanges, bool strict)
      : path_(std::move(path)), exchanges_(std::move(exchanges)), strict_(strict) {}

  std::string describe() const override { return (strict_ ? "strict replay of " : "replay of ") + path_; }
  ChatSpend last_spend() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return spent_;
  }
  std::optional<Error> divergence() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return divergence_;
  }

  Result<ChatReply> chat(const ChatRequest& r) override {
    std::lock_guard<std::mutex> lock(mu_);
    spent_ = {};
    size_t i = next_;
    if (i >= exchanges_.size()) {
      Error e = make_error(ErrorCode::invalid_input,
                           fmt::format("replay of '{}': the cassette holds only {} exchanges, and exchange {} "
                                       "(purpose {}) was asked for",
                                       path_, exchanges_.size(), i, r.purpose.empty() ? "-" : r.purpose),
                           "the run asks the model more than the recorded one did (other settings or a "
                           "changed ucutlass?); record the session again");
      // Strict: a run that asks more than the recording did has diverged from it.
      if (strict_ && !divergence_) divergence_ = e;
      return e;
    }
    const Exchange& x = exchanges_[i];
    if (strict_ && cassette_request_hash(r) != x.request_hash) {
      std::string purpose = r.purpose.empty() ? std::string("-") : r.purpose;
      if (x.purpose != r.purpose) purpose += ", recorded: " + (x.purpose.empty() ? std::string("-") : x.purpose);
      Error e = make_error(ErrorCode::invalid_input,
                           fmt::format("replay diverged at exchange {} (purpose {}): the request differs from the "
                                       "one recorded in '{}'",
                                       i, purpose, path_),
                           "the prompts changed since the recording (another problem, other settings or a changed "
                           "ucutlass); replay with the recording's settings, or record the session again");
      if (!divergence_) divergence_ = e;
      return e;
    }
    ++next_;
    spent_ = x.spent;
    if (x.failed) return x.error;
    ChatReply out = x.reply;
    out.seconds = 0;
    return out;
  }

 private:
  std::string path_;
  std::vector<Exchange> exchanges_;
  bool strict_;
  mutable std::mutex mu_;
  size_t next_ = 0;
  ChatSpend spent_;
  std::optional<Error> divergence_;
};

Result<Exchange> parse_exchange(const json& j) {
  if (!j.is_object()) return make_error(ErrorCode::invalid_input, "not a JSON object");
  Exchange x;
  if (j.contains("purpose") && j["purpose"].is_string()) x.purpose = j["purpose"].get<std::string>();
  if (!j.contains("request_hash") || !j["request_hash"].is_string())
    return make_error(ErrorCode::invalid_input, "no request_hash");
  x.request_hash = j["request_hash"].get<std::string>();
  if (j.contains("reply") && j["reply"].is_object()) {
    const json& r = j["reply"];
    if (!r.contains("content") || !r["content"].is_string())
      return make_error(ErrorCode::invalid_input, "the reply has no content");
    x.reply.content = r["content"].get<std::string>();
    x.reply.tokens_in = r.value("tokens_in", 0LL);
    x.reply.tokens_out = r.value("tokens_out", 0LL);
    x.reply.tokens_estimated = r.value("tokens_estimated", false);
    x.reply.finish_reason = r.value("finish_reason", std::string());
    x.reply.tries = r.value("tries", 1);
    x.spent = {x.reply.tokens_in, x.reply.tokens_out, x.reply.tokens_estimated};
    return x;
  }
  if (j.contains("error") && j["error"].is_object()) {
    const json& e = j["error"];
    std::string code = e.value("code", std::string("internal"));
    auto c = error_code_from(code);
    if (!c) return make_error(ErrorCode::invalid_input, "unknown error code '" + code + "'");
    x.failed = true;
    x.error = make_error(*c, e.value("message", std::string()), e.value("hint", std::string()));
    x.spent = {e.value("tokens_in", 0LL), e.value("tokens_out", 0LL), e.value("tokens_estimated", false)};
    return x;
  }
  return make_error(ErrorCode::invalid_input, "neither a reply nor an error");
}

}  // namespace

std::string cassette_request_hash(const ChatRequest& r) {
  json messages = json::array();
  for (const auto& m : r.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  // nlohmann::json keeps object keys sorted, so dump() is canonical for the same values.
  json canon = {{"messages", std::move(messages)}, {"temperature", r.temperature}, {"max_tokens", r.max_tokens}};
  return sha256_hex(canon.dump());
}

std::unique_ptr<LlmClient> recording_client(std::unique_ptr<LlmClient> inner, std::string path, std::string secret) {
  return std::make_unique<RecordingClient>(std::move(inner), std::move(path), std::move(secret));
}

Status cassette_check_writable(const std::string& path) {
  const auto fail = [&path](const std::string& why) {
    return make_error(ErrorCode::io, "cannot write the LLM cassette '" + path + "': " + why,
                      "record somewhere writable with --record FILE; nothing was sent to the model");
  };
  std::filesystem::path p(path);
  if (p.has_parent_path())
    if (Status st = fs_mkdirs(p.parent_path().string()); !st) return fail(st.error().message);
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) return fail("it is a folder");
  const bool existed = std::filesystem::exists(p, ec);
  {
    // Append mode: an existing cassette is neither truncated nor changed by the check.
    std::ofstream probe(path, std::ios::binary | std::ios::app);
    if (!probe) return fail(std::strerror(errno));
  }
  if (!existed) std::filesystem::remove(p, ec);
  return ok_status();
}

Result<std::unique_ptr<LlmClient>> replay_client(const std::string& path, bool strict) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return make_error(fs_exists(path) ? ErrorCode::io : ErrorCode::not_found,
                      "cannot read the LLM cassette '" + path + "': " + std::strerror(errno),
                      "check the path; a cassette is written by a run with recording on");
  std::vector<Exchange> exchanges;
  std::string text;
  int line_no = 0;
  while (std::getline(in, text)) {
    ++line_no;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.find_first_not_of(" \t") == std::string::npos) continue;
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded())
      return make_error(ErrorCode::invalid_input,
                        fmt::format("{}:{}: not JSON (a cassette holds one JSON object per line)", path, line_no),
                        "the file is damaged or not a cassette; record the session again");
    auto x = parse_exchange(j);
    if (!x)
      return make_error(ErrorCode::invalid_input, fmt::format("{}:{}: {}", path, line_no, x.error().message),
                        "the file is damaged or not a cassette; record the session again");
    exchanges.push_back(std::move(*x));
  }
  return std::unique_ptr<LlmClient>(std::make_unique<ReplayClient>(path, std::move(exchanges), strict));
}

}  // namespace ucut::agent

#include "agent/fake_openai_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "support/fs.h"

namespace ucut::agent {

using nlohmann::json;

namespace {

bool send_all(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return "";
  size_t b = s.find_last_not_of(" \t\r\n");
  return s.substr(a, b - a + 1);
}

const char* reason_of(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

long long ceil_quarter(size_t chars) { return static_cast<long long>((chars + 3) / 4); }

struct Request {
  std::string method;
  std::string path;
  std::string auth;
  std::string body;
};

// One HTTP/1.1 request: headers up to the blank line, then Content-Length bytes of body.
// False when the client went away or sent something unreadable.
bool read_request(int fd, Request& req) {
  std::string buf;
  char tmp[16384];
  size_t header_end = std::string::npos;
  while ((header_end = buf.find("\r\n\r\n")) == std::string::npos) {
    if (buf.size() > (1u << 20)) return false;
    ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buf.append(tmp, static_cast<size_t>(n));
  }
  std::string head = buf.substr(0, header_end);
  std::string rest = buf.substr(header_end + 4);
  size_t eol = head.find("\r\n");
  std::string request_line = head.substr(0, eol);
  size_t sp1 = request_line.find(' ');
  req.method = request_line.substr(0, sp1);
  if (sp1 != std::string::npos) {
    size_t sp2 = request_line.find(' ', sp1 + 1);
    req.path = request_line.substr(sp1 + 1, sp2 == std::string::npos ? std::string::npos : sp2 - sp1 - 1);
  }
  size_t content_length = 0;
  bool expect_continue = false;
  size_t pos = eol == std::string::npos ? head.size() : eol + 2;
  while (pos < head.size()) {
    size_t next = head.find("\r\n", pos);
    if (next == std::string::npos) next = head.size();
    std::string line = head.substr(pos, next - pos);
    pos = next + 2;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = lower(trim(line.substr(0, colon)));
    std::string value = trim(line.substr(colon + 1));
    if (name == "content-length") content_length = static_cast<size_t>(std::strtoull(value.c_str(), nullptr, 10));
    if (name == "authorization") req.auth = value;
    if (name == "expect" && lower(value) == "100-continue") expect_continue = true;
  }
  if (content_length > (256u << 20)) return false;
  if (expect_continue && rest.size() < content_length && !send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n")) return false;
  while (rest.size() < content_length) {
    ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    rest.append(tmp, static_cast<size_t>(n));
  }
  req.body = rest.substr(0, content_length);
  return true;
}

std::string response_head(int status, const std::string& content_type, const FakeReply& r) {
  std::string h = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nConnection: close\r\n", status,
                              reason_of(status), content_type);
  if (!r.retry_after.empty()) h += "Retry-After: " + r.retry_after + "\r\n";
  return h;
}

}  // namespace

FakeOpenAiServer::FakeOpenAiServer(std::vector<FakeReply> script, bool repeat_last,
                                   std::function<void(const json&)> on_request)
    : script_(std::move(script)), repeat_last_(repeat_last), on_request_(std::move(on_request)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) {
    error_ = std::string("socket: ") + std::strerror(errno);
    return;
  }
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 64) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    error_ = std::string("cannot listen on 127.0.0.1: ") + std::strerror(errno);
    ::close(listen_fd_);
    listen_fd_ = -1;
    return;
  }
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

FakeOpenAiServer::~FakeOpenAiServer() {
  stop_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  std::list<Worker> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    workers.swap(workers_);
    // Unblock reads waiting on clients that never finish their request.
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  for (auto& w : workers)
    if (w.thread.joinable()) w.thread.join();
}

int FakeOpenAiServer::port() const { return port_; }
const std::string& FakeOpenAiServer::error() const { return error_; }
std::string FakeOpenAiServer::base_url() const { return fmt::format("http://127.0.0.1:{}/v1", port_); }

std::vector<json> FakeOpenAiServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

std::vector<std::string> FakeOpenAiServer::auth_headers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return auth_;
}

void FakeOpenAiServer::accept_loop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    int n = ::poll(&p, 1, 20);
    if (n <= 0 || !(p.revents & POLLIN)) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    timeval tv{10, 0};  // a client silent for 10 s is given up on
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = workers_.begin(); it != workers_.end();) {
      if (*it->done) {
        it->thread.join();
        it = workers_.erase(it);
      } else {
        ++it;
      }
    }
    open_fds_.insert(fd);
    auto done = std::make_shared<std::atomic<bool>>(false);
    workers_.push_back(Worker{std::thread([this, fd, done] {
                                serve(fd);
                                *done = true;
                              }),
                              done});
  }
}

bool FakeOpenAiServer::sleep_unless_stopped(double seconds) const {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (stop_) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return !stop_;
}

FakeReply FakeOpenAiServer::reply_for(size_t index) const {
  if (index < script_.size()) return script_[index];
  if (repeat_last_ && !script_.empty()) return script_.back();
  FakeReply r;
  r.status = 500;
  r.content = fmt::format("the fake server's script has no reply for request {} (it holds {})", index,
                          script_.size());
  return r;
}

void FakeOpenAiServer::serve(int fd) {
  auto finish = [this, fd] {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_fds_.erase(fd);
    }
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
  };
  Request req;
  if (!read_request(fd, req)) return finish();
  // Only POST .../chat/completions consumes the script; anything else is answered like a real
  // server would, so a client with a wrong URL fails here too.
  const std::string endpoint = "/chat/completions";
  bool right_path = req.path.size() >= endpoint.size() &&
                    req.path.compare(req.path.size() - endpoint.size(), endpoint.size(), endpoint) == 0;
  if (req.method != "POST" || !right_path) {
    int status = req.method != "POST" ? 405 : 404;
    std::string body = json{{"error", {{"message", "the fake server answers POST .../chat/completions only, not " +
                                                       req.method + " " + req.path}}}}
                           .dump();
    send_all(fd, response_head(status, "application/json", FakeReply{}) +
                     fmt::format("Content-Length: {}\r\n\r\n", body.size()) + body);
    return finish();
  }

  json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded()) body = req.body;
  size_t index = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    index = requests_.size();
    requests_.push_back(body);
    auth_.push_back(req.auth);
    if (on_request_) on_request_(body);
  }
  FakeReply r = reply_for(index);
  if (r.delay_s > 0 && !sleep_unless_stopped(r.delay_s)) return finish();
  if (r.drop) return finish();

  std::string model = body.is_object() && body.contains("model") && body["model"].is_string()
                          ? body["model"].get<std::string>()
                          : std::string("fake-model");
  size_t prompt_chars = 0;
  if (body.is_object() && body.contains("messages") && body["messages"].is_array())
    for (const auto& m : body["messages"])
      if (m.is_object() && m.contains("content") && m["content"].is_string())
        prompt_chars += m["content"].get<std::string>().size();
  long long prompt_tokens = r.prompt_tokens >= 0 ? r.prompt_tokens : ceil_quarter(prompt_chars);
  long long completion_tokens = r.completion_tokens >= 0 ? r.completion_tokens : ceil_quarter(r.content.size());
  json usage = {{"prompt_tokens", prompt_tokens},
                {"completion_tokens", completion_tokens},
                {"total_tokens", prompt_tokens + completion_tokens}};
  std::string id = fmt::format("chatcmpl-fake-{}", index);

  if (r.stream && r.status == 200) {
    if (!send_all(fd, response_head(200, "text/event-stream", r) + "Cache-Control: no-cache\r\n\r\n")) return finish();
    auto event = [&](const json& choices, const json* u) {
      json chunk = {{"id", id}, {"object", "chat.completion.chunk"}, {"created", 0}, {"model", model},
                    {"choices", choices}};
      if (u) chunk["usage"] = *u;
      return "data: " + chunk.dump() + "\n\n";
    };
    if (!r.raw_body.empty()) {
      send_all(fd, r.raw_body);
      return finish();
    }
    bool include_usage = body.is_object() && body.contains("stream_options") && body["stream_options"].is_object() &&
                         body["stream_options"].value("include_usage", false);
    std::vector<std::string> events;
    events.push_back(event(json::array({{{"index", 0}, {"delta", {{"role", "assistant"}, {"content", ""}}},
                                         {"finish_reason", nullptr}}}),
                           nullptr));
    size_t piece = std::max<size_t>(4, (r.content.size() + 7) / 8);
    for (size_t off = 0; off < r.content.size(); off += piece)
      events.push_back(event(json::array({{{"index", 0}, {"delta", {{"content", r.content.substr(off, piece)}}},
                                           {"finish_reason", nullptr}}}),
                             nullptr));
    events.push_back(
        event(json::array({{{"index", 0}, {"delta", json::object()}, {"finish_reason", r.finish_reason}}}), nullptr));
    if (include_usage) events.push_back(event(json::array(), &usage));
    events.push_back("data: [DONE]\n\n");
    for (size_t i = 0; i < events.size(); ++i) {
      if (i > 0 && !sleep_unless_stopped(0.005)) break;
      if (!send_all(fd, events[i])) break;
    }
    return finish();
  }

  std::string out;
  if (!r.raw_body.empty()) {
    out = r.raw_body;
  } else if (r.status == 200) {
    json completion = {
        {"id", id},
        {"object", "chat.completion"},
        {"created", 0},
        {"model", model},
        {"choices", json::array({{{"index", 0},
                                  {"message", {{"role", "assistant"}, {"content", r.content}}},
                                  {"finish_reason", r.finish_reason}}})},
        {"usage", usage}};
    out = completion.dump();
  } else {
    std::string message = r.content.empty() ? fmt::format("fake error (HTTP {})", r.status) : r.content;
    out = json{{"error", {{"message", message}, {"type", "fake_error"}, {"code", r.status}}}}.dump();
  }
  send_all(fd, response_head(r.status, "application/json", r) + fmt::format("Content-Length: {}\r\n\r\n", out.size()) +
                   out);
  finish();
}

Result<FakeScript> fake_script_load_full(const std::string& path) {
  auto text = fs_read(path);
  if (!text) return text.error();
  json j = json::parse(*text, nullptr, false);
  if (j.is_discarded())
    return make_error(ErrorCode::invalid_input, "the fake LLM script '" + path + "' is not JSON",
                      R"(expected {"replies": [{"content": "..."}, ...], "repeat_last": true})");
  FakeScript s;
  const json* replies = &j;
  if (j.is_object()) {
    for (const auto& [key, _] : j.items())
      if (key != "replies" && key != "repeat_last")
        return make_error(ErrorCode::invalid_input, "the fake LLM script '" + path + "' has an unknown key '" + key + "'",
                          "the keys are replies and repeat_last");
    if (!j.contains("replies"))
      return make_error(ErrorCode::invalid_input, "the fake LLM script '" + path + "' has no \"replies\"");
    replies = &j["replies"];
    if (j.contains("repeat_last")) {
      if (!j["repeat_last"].is_boolean())
        return make_error(ErrorCode::invalid_input, "the fake LLM script '" + path + "': repeat_last must be true or false");
      s.repeat_last = j["repeat_last"].get<bool>();
    }
  }
  if (!replies->is_array())
    return make_error(ErrorCode::invalid_input, "the fake LLM script '" + path + "': replies must be an array");
  for (size_t i = 0; i < replies->size(); ++i) {
    const json& e = (*replies)[i];
    auto bad = [&](const std::string& what) {
      return make_error(ErrorCode::invalid_input, fmt::format("the fake LLM script '{}': reply {}: {}", path, i, what));
    };
    if (!e.is_object()) return bad("not an object");
    FakeReply r;
    for (const auto& [key, v] : e.items()) {
      if (key == "status" && v.is_number_integer()) r.status = v.get<int>();
      else if (key == "content" && v.is_string()) r.content = v.get<std::string>();
      else if (key == "raw_body" && v.is_string()) r.raw_body = v.get<std::string>();
      else if (key == "delay_s" && v.is_number()) r.delay_s = v.get<double>();
      else if (key == "stream" && v.is_boolean()) r.stream = v.get<bool>();
      else if (key == "drop" && v.is_boolean()) r.drop = v.get<bool>();
      else if (key == "retry_after" && (v.is_string() || v.is_number()))
        r.retry_after = v.is_string() ? v.get<std::string>() : v.dump();
      else if (key == "prompt_tokens" && v.is_number_integer()) r.prompt_tokens = v.get<long long>();
      else if (key == "completion_tokens" && v.is_number_integer()) r.completion_tokens = v.get<long long>();
      else if (key == "finish_reason" && v.is_string()) r.finish_reason = v.get<std::string>();
      else return bad("unknown key or wrong type: '" + key + "'");
    }
    s.replies.push_back(std::move(r));
  }
  return s;
}

Result<std::vector<FakeReply>> fake_script_load(const std::string& path) {
  auto s = fake_script_load_full(path);
  if (!s) return s.error();
  return std::move(s->replies);
}

}  // namespace ucut::agent

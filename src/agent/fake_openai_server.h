// A fake OpenAI-compatible chat server on loopback, for tests of the LLM client and of whole
// agent runs (tests/tools/fake_llm_main.cpp wraps it in a program). It answers POSTs with a
// script of replies, one per request in arrival order: a completion, an HTTP error, a malformed
// body, a slow answer (to trigger timeouts), a server-sent-event stream, or a dropped
// connection. It records every request body and Authorization header so tests can check what
// the client sent.
//
// Plain POSIX sockets: it binds 127.0.0.1 on a port the kernel chooses, accepts on one thread and
// answers each connection on its own thread (so concurrent clients are served concurrently), and
// closes the connection after every reply (no keep-alive to get wrong).
#pragma once

#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/result.h"

namespace ucut::agent {

struct FakeReply {
  int status = 200;
  std::string content;        // the assistant message
  std::string raw_body;       // when non-empty, sent verbatim instead of a chat completion JSON
  double delay_s = 0;         // sleep before answering (timeouts)
  bool stream = false;        // answer as SSE chunks: several small chunks with small sleeps between
  bool drop = false;          // close the connection without answering
  std::string retry_after;    // sent as Retry-After when non-empty
  long long prompt_tokens = -1, completion_tokens = -1;  // -1: ceil(characters / 4)
  std::string finish_reason = "stop";
};

struct FakeScript {
  std::vector<FakeReply> replies;
  bool repeat_last = true;
};

class FakeOpenAiServer {
 public:
  // Replies past the script's end repeat the last one when repeat_last, else answer 500.
  // on_request, when set, sees every request body (as JSON; a body that is not JSON comes as a
  // string) before it is answered; it runs on a connection thread.
  explicit FakeOpenAiServer(std::vector<FakeReply> script, bool repeat_last = true,
                            std::function<void(const nlohmann::json&)> on_request = {});
  ~FakeOpenAiServer();  // stops accepting, cuts short any delay, joins every thread
  FakeOpenAiServer(const FakeOpenAiServer&) = delete;
  FakeOpenAiServer& operator=(const FakeOpenAiServer&) = delete;

  int port() const;              // 0: the server could not start (see error())
  const std::string& error() const;
  std::string base_url() const;  // http://127.0.0.1:PORT/v1
  std::vector<nlohmann::json> requests() const;    // bodies received, in arrival order
  std::vector<std::string> auth_headers() const;   // Authorization values ("" when absent), same order

 private:
  void accept_loop();
  void serve(int fd);
  FakeReply reply_for(size_t index) const;
  bool sleep_unless_stopped(double seconds) const;

  std::vector<FakeReply> script_;
  bool repeat_last_;
  std::function<void(const nlohmann::json&)> on_request_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::string error_;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  mutable std::mutex mu_;
  std::vector<nlohmann::json> requests_;
  std::vector<std::string> auth_;
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::list<Worker> workers_;  // finished ones are joined by the accept loop
  std::set<int> open_fds_;     // connections being served: the destructor cuts short their reads
};

// A script from a JSON file: {"replies": [{"status", "content", "raw_body", "delay_s", "stream",
// "drop", "retry_after", "prompt_tokens", "completion_tokens", "finish_reason"}, ...],
// "repeat_last": true} (a bare array of replies also works). Unknown keys are errors, so a typo
// does not silently change the test.
Result<FakeScript> fake_script_load_full(const std::string& path);
// The replies alone.
Result<std::vector<FakeReply>> fake_script_load(const std::string& path);

}  // namespace ucut::agent

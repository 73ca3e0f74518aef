// The one HTTP call the LLM agent makes: a POST with a JSON body to an OpenAI-compatible server.
// It sits behind a small interface so the client's retry and parsing logic can be tested with a
// scripted fake and so nothing above this file depends on libcurl. The real implementation uses
// a libcurl easy handle per request (no shared state between concurrent requests), installs no
// signal handlers, follows no redirects (a redirect would resend the API key to another host) and
// honours the connect and total timeouts.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ucut::agent {

struct HttpRequest {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // name, value
  std::string body;
  double timeout_s = 300;         // the whole exchange, streaming included
  double connect_timeout_s = 10;
  // When set, body chunks are passed as they arrive (streaming); the body is still collected
  // in HttpResponse::body, so an error reply can be reported either way.
  std::function<void(const std::string& chunk)> on_chunk;
};

struct HttpResponse {
  int status = 0;            // 0: no HTTP response (transport error; see error)
  std::string body;
  std::string error;         // transport error text; empty when the exchange completed
  bool timed_out = false;    // the transport error was a timeout
  bool connect_failed = false;  // the transport error was a failed connect (nothing listening)
  std::string retry_after;   // the Retry-After header, if any
  double seconds = 0;        // wall time of the exchange
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  virtual HttpResponse post(const HttpRequest& r) = 0;
};

// libcurl behind HttpClient. Safe to use from several threads (a handle per request;
// curl_global_init runs once).
std::unique_ptr<HttpClient> http_client_curl();

}  // namespace ucut::agent

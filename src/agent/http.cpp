#include "agent/http.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <mutex>

namespace ucut::agent {
namespace {

std::once_flag g_curl_init;

struct Transfer {
  const HttpRequest* req = nullptr;
  HttpResponse* resp = nullptr;
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t len = size * n;
  std::string chunk(data, len);
  t->resp->body += chunk;
  if (t->req->on_chunk) t->req->on_chunk(chunk);
  return len;
}

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t len = size * n;
  std::string line(data, len);
  // A status line starts a new response (after a 100 Continue, say): forget earlier headers.
  if (line.rfind("HTTP/", 0) == 0) t->resp->retry_after.clear();
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (name == "retry-after") t->resp->retry_after = trim(line.substr(colon + 1));
  }
  return len;
}

// Loopback servers are never reached through a proxy, whatever http_proxy says; the user's
// no_proxy list is kept for everything else.
std::string no_proxy_list() {
  std::string list = "127.0.0.1,localhost,::1";
  for (const char* name : {"no_proxy", "NO_PROXY"}) {
    const char* v = std::getenv(name);
    if (v && *v) {
      list = std::string(v) + "," + list;
      break;
    }
  }
  return list;
}

class CurlClient : public HttpClient {
 public:
  HttpResponse post(const HttpRequest& r) override {
    std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    HttpResponse resp;
    auto t0 = std::chrono::steady_clock::now();
    CURL* h = curl_easy_init();
    if (!h) {
      resp.error = "cannot create a libcurl handle";
      return resp;
    }
    Transfer t{&r, &resp};
    char errbuf[CURL_ERROR_SIZE] = {0};
    curl_slist* headers = nullptr;
    for (const auto& [name, value] : r.headers) headers = curl_slist_append(headers, (name + ": " + value).c_str());
    // No "Expect: 100-continue" round trip before large bodies.
    headers = curl_slist_append(headers, "Expect:");
    std::string no_proxy = no_proxy_list();

    curl_easy_setopt(h, CURLOPT_URL, r.url.c_str());
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, r.body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_NOPROXY, no_proxy.c_str());
    long timeout_ms = r.timeout_s > 0 ? std::max(1L, static_cast<long>(r.timeout_s * 1000)) : 0L;
    long connect_ms = r.connect_timeout_s > 0 ? std::max(1L, static_cast<long>(r.connect_timeout_s * 1000)) : 0L;
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);

    CURLcode rc = curl_easy_perform(h);
    if (rc == CURLE_OK) {
      long code = 0;
      curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
      resp.status = static_cast<int>(code);
    } else {
      // A transfer cut short is no response, even when a status line had arrived: the body
      // would be partial.
      resp.status = 0;
      resp.error = errbuf[0] ? std::string(errbuf) : std::string(curl_easy_strerror(rc));
      resp.timed_out = rc == CURLE_OPERATION_TIMEDOUT;
      resp.connect_failed = rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST;
    }
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);
    resp.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return resp;
  }
};

}  // namespace

std::unique_ptr<HttpClient> http_client_curl() { return std::make_unique<CurlClient>(); }

}  // namespace ucut::agent

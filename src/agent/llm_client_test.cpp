// Tests of the OpenAI client, the cassette and the fake server, against the fake server on
// 127.0.0.1 (no other network). Backoff sleeps go to a recorder, so retries cost no time.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agent/cassette.h"
#include "agent/fake_openai_server.h"
#include "agent/http.h"
#include "agent/llm_client.h"

namespace ucut::agent {
namespace {

using nlohmann::json;

struct Sleeps {
  std::vector<double> seconds;
  std::vector<std::string> said;  // what the client announced before each wait
};

OpenAiOptions options_for(const FakeOpenAiServer& server, Sleeps* sleeps) {
  OpenAiOptions o;
  o.base_url = server.base_url();
  o.model = "test-model";
  o.backoff_s = 1.0;
  o.backoff_max_s = 30;
  o.timeout_s = 10;
  o.sleep = [sleeps](double s) { sleeps->seconds.push_back(s); };
  o.notify = [sleeps](const std::string& line) { sleeps->said.push_back(line); };
  return o;
}

std::unique_ptr<LlmClient> client_for(const FakeOpenAiServer& server, Sleeps* sleeps,
                                      void (*tweak)(OpenAiOptions&) = nullptr) {
  OpenAiOptions o = options_for(server, sleeps);
  if (tweak) tweak(o);
  return openai_client(o, http_client_curl());
}

ChatRequest request(const std::string& user, const std::string& purpose = "propose") {
  ChatRequest r;
  r.messages = {{"system", "You write kernels."}, {"user", user}};
  r.purpose = purpose;
  return r;
}

FakeReply ok_reply(const std::string& content) {
  FakeReply r;
  r.content = content;
  return r;
}

FakeReply status_reply(int status, const std::string& retry_after = "") {
  FakeReply r;
  r.status = status;
  r.retry_after = retry_after;
  return r;
}

std::filesystem::path temp_root() {
  return std::filesystem::temp_directory_path() / ("ucut-llm-test-" + std::to_string(::getpid()));
}

std::string temp_path(const std::string& name) {
  std::filesystem::create_directories(temp_root());
  return (temp_root() / name).string();
}

// This process's temporary folder goes when the tests end.
struct RemoveTempRoot : ::testing::Environment {
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(temp_root(), ec);
  }
};
[[maybe_unused]] const auto* const kRemoveTempRoot = ::testing::AddGlobalTestEnvironment(new RemoveTempRoot);

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string l;
  while (std::getline(in, l))
    if (!l.empty()) lines.push_back(l);
  return lines;
}

// A port nothing listens on: bound then closed, never listened.
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

// An HttpClient that answers from a list and keeps the requests, for what the fake server cannot
// show: the exact URL, and bodies split at every byte.
class ScriptedHttp : public HttpClient {
 public:
  explicit ScriptedHttp(std::vector<HttpResponse> replies, size_t chunk = 0) : replies_(std::move(replies)), chunk_(chunk) {}
  HttpResponse post(const HttpRequest& r) override {
    seen.push_back(r);
    HttpResponse resp = replies_.at(std::min(next_++, replies_.size() - 1));
    if (r.on_chunk && chunk_ > 0)
      for (size_t off = 0; off < resp.body.size(); off += chunk_) r.on_chunk(resp.body.substr(off, chunk_));
    return resp;
  }
  std::vector<HttpRequest> seen;

 private:
  std::vector<HttpResponse> replies_;
  size_t next_ = 0;
  size_t chunk_;
};

TEST(LlmClient, PlainReplyWithTokenCounts) {
  FakeReply r = ok_reply("kernel matmul { }");
  r.prompt_tokens = 123;
  r.completion_tokens = 45;
  FakeOpenAiServer server({r});
  ASSERT_GT(server.port(), 0) << server.error();
  Sleeps sleeps;
  auto client = client_for(server, &sleeps);
  ChatRequest req = request("make it fast");
  req.temperature = 0.7;
  req.max_tokens = 100;
  auto reply = client->chat(req);
  ASSERT_TRUE(reply) << reply.error().render();
  EXPECT_EQ(reply->content, "kernel matmul { }");
  EXPECT_EQ(reply->tokens_in, 123);
  EXPECT_EQ(reply->tokens_out, 45);
  EXPECT_FALSE(reply->tokens_estimated);
  EXPECT_EQ(reply->finish_reason, "stop");
  EXPECT_EQ(reply->tries, 1);
  EXPECT_TRUE(sleeps.seconds.empty());

  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  const json& body = reqs[0];
  EXPECT_EQ(body["model"], "test-model");
  EXPECT_DOUBLE_EQ(body["temperature"].get<double>(), 0.7);
  EXPECT_EQ(body["max_tokens"], 100);
  ASSERT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][0]["role"], "system");
  EXPECT_EQ(body["messages"][1]["content"], "make it fast");
  EXPECT_FALSE(body.contains("seed"));
  EXPECT_FALSE(body.contains("stream"));
  EXPECT_FALSE(body.contains("purpose"));
  ASSERT_EQ(server.auth_headers().size(), 1u);
  EXPECT_EQ(server.auth_headers()[0], "");  // no key: no Authorization header
}

TEST(LlmClient, SeedIsSentWhenNonzero) {
  FakeOpenAiServer server({ok_reply("x")});
  Sleeps sleeps;
  auto client = client_for(server, &sleeps, [](OpenAiOptions& o) { o.seed = 42; });
  ASSERT_TRUE(client->chat(request("hi")));
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0]["seed"], 42);
}

TEST(LlmClient, MissingUsageIsEstimated) {
  FakeReply r;
  r.raw_body = R"({"choices":[{"index":0,"message":{"role":"assistant","content":"abcde"},"finish_reason":"stop"}]})";
  FakeOpenAiServer server({r});
  Sleeps sleeps;
  auto client = client_for(server, &sleeps);
  ChatRequest req;
  req.messages = {{"user", "abcdefghi"}};  // 9 characters: 3 tokens
  auto reply = client->chat(req);
  ASSERT_TRUE(reply) << reply.error().render();
  EXPECT_EQ(reply->content, "abcde");
  EXPECT_TRUE(reply->tokens_estimated);
  EXPECT_EQ(reply->tokens_in, 3);
  EXPECT_EQ(reply->tokens_out, 2);
}

TEST(LlmClient, RetryAfter429IsHonoured) {
  FakeOpenAiServer server({status_reply(429, "3"), ok_reply("done")});
  Sleeps sleeps;
  auto client = client_for(server, &sleeps);
  auto reply = client->chat(request("go"));
  ASSERT_TRUE(reply) << reply.error().render();
  EXPECT_EQ(reply->content, "done");
  EXPECT_EQ(reply->tries, 2);
  EXPECT_EQ(server.requests().size(), 2u);
  ASSERT_EQ(sleeps.seconds.size(), 1u);
  EXPECT_DOUBLE_EQ(sleeps.seconds[0], 3.0);
}

TEST(LlmClient, RetryAfterIsCappedAndEveryWaitIsSaid) {
  // A server asking for an hour used to get it, silently, on every retry.
  FakeOpenAiServer server({status_reply(429, "3600"), status_reply(503, "3600"), ok_reply("done")});
  Sleeps sleeps;
  auto client = client_for(server, &sleeps);
  auto reply = client->chat(request("go"));
  ASSERT_TRUE(reply) << reply.error().render();
  EXPECT_EQ(sleeps.seconds, (std::vector<double>{60, 60}));
  ASSERT_EQ(sleeps.said.size(), 2u);
  EXPECT_NE(sleeps.said[0].find("HTTP 429 Too Many Requests"), std::string::npos) << sleeps.said[0];
  EXPECT_NE(sleeps.said[0].find("waiting 60 s before retry 1 of 4"), std::string::npos) << sleeps.said[0];
  EXPECT_NE(sleeps.said[0].find("asked for 3600 s"), std::string::npos) << sleeps.said[0];
  EXPECT_NE(sleeps.said[0].find("--llm-retry-after-max"), std::string::npos) << sleeps.said[0];
  EXPECT_NE(sleeps.said[1].find("HTTP 503"), std::string::npos) << sleeps.said[1];

  FakeOpenAiServer other({status_reply(429, "3600"), ok_reply("done")});
  Sleeps capped;
  auto tight = client_for(other, &capped, [](OpenAiOptions& o) { o.retry_after_max_s = 5; });
  ASSERT_TRUE(tight->chat(request("go")));
  EXPECT_EQ(capped.seconds, (std::vector<double>{5}));
}

TEST(LlmClient, RetryAfterAsAnHttpDate) {
  FakeOpenAiServer server({status_reply(429, "Fri, 01 Jan 2100 00:00:00 GMT"),
                           status_reply(429, "Sat, 01 Jan 2000 00:00:00 GMT"), ok_reply("done")});
  Sleeps sleeps;
  auto client = client_for(server, &sleeps);
  ASSERT_TRUE(client->chat(request("go")));
  // 2100 is far away: capped; 2000 has passed: no wait (said all the same).
  EXPECT_EQ(sleeps.seconds, (std::vector<double>{60}));
  ASSERT_EQ(sleeps.said.size(), 2u);
  EXPECT_NE(sleeps.said[1].find("waiting 0 s"), std::string::npos) << sleeps.said[1];
}

TEST(LlmClient, ExponentialBackoffIsCapped) {
  FakeOpenAiServer server({status_reply(503), status_reply(502), status_reply(500), ok_reply("fine")});
  Sleeps sleeps;
  auto client = client_for(server, &sleeps, [](OpenAiOptions& o) {
    o.backoff_s = 0.5;
    o.backoff_max_s = 1.5;
  });
  auto reply = client->chat(request("go"));
  ASSERT_TRUE(reply) << reply.error().render();
  EXPECT_EQ(reply->tries, 4);
  EXPECT_EQ(sleeps.seconds, (std::vector<double>{0.5, 1.0, 1.5}));
}

TEST(LlmClient, ServerErrorsExhaustRetries) {
  FakeOpenAiServer server({status_reply(500)});  // repeated
  Sleeps sleeps;
  auto client = client_for(server, &sleeps, [](OpenAiOptions& o) { o.max_retries = 2; });
  auto reply = client->chat(request("go"));
  ASSERT_FALSE(reply);
  EXPECT_EQ(server.requests().size(), 3u);
  EXPECT_EQ(sleeps.seconds.size(), 2u);
  const std::string& m = reply.error().message;
  EXPECT_NE(m.find("HTTP 500"), std::string::npos) << m;
  EXPECT_NE(m.find("after 3 tries"), std::string::npos) << m;
  EXPECT_NE(m.find(server.base_url() + "/chat/completions"), std::string::npos) << m;
  EXPECT_NE(reply.error().hint.find("--llm-retries"), std::string::npos);
}

TEST(LlmClient, UnauthorizedFailsAtOnceWithHint) {
  FakeOpenAiServer server({status_reply(401), ok_reply("never")});
  Sleeps sleeps;
  auto client = client_for(server, &sleeps);
  auto reply = client->chat(request("go"));
  ASSERT_FALSE(reply);
  EXPECT_EQ(server.requests().size(), 1u);
  EXPECT_TRUE(sleeps.seconds.empty());
  EXPECT_EQ(reply.error().code, ErrorCode::invalid_input);
  EXPECT_NE(reply.error().message.find("HTTP 401"), std::string::npos) << reply.error().message;
  EXPECT_NE(reply.error().hint.find("set OPENAI_API_KEY"), std::string::npos) << reply.error().hint;
}

TEST(LlmClient, MalformedBodyIsAnError) {
  FakeReply html;
  html.raw_body = "<html>gateway says hello</html>" + std::string(500, 'x');
  FakeReply no_choices;
  no_choices.raw_body = R"({"object":"chat.completion","choices":[]})";
  FakeOpenAiServer server({html, no_choices}, false);
  Sleeps sleeps;
  auto client = client_for(server, &sleeps);

  auto a = client->chat(request("go"));
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().code, ErrorCode::invalid_input);
  EXPECT_NE(a.error().message.find("not a JSON object"), std::string::npos) << a.error().message;
  EXPECT_NE(a.error().message.find("<html>gateway"), std::string::npos) << a.error().message;
  EXPECT_EQ(a.error().message.find(std::string(200, 'x')), std::string::npos) << "more than 200 characters of body";

  auto b = client->chat(request("go"));
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("no choices"), std::string::npos) << b.error().message;
  EXPECT_EQ(server.requests().size(), 2u);  // malformed bodies are not retried
}

TEST(LlmClient, EmptyContentIsAReplyNotAnEndpointFailure) {
  // An empty completion is the model's answer: the agent repairs it (docs/agent.md); as an error
  // it ended the whole conversation with the model.
  FakeReply r = ok_reply("");
  r.finish_reason = "length";
  r.prompt_tokens = 40;
  r.completion_tokens = 4096;
  FakeOpenAiServer server({r});
  Sleeps sleeps;
  auto client = client_for(server, &sleeps);
  auto reply = client->chat(request("go"));
  ASSERT_TRUE(reply) << reply.error().render();
  EXPECT_EQ(reply->content, "");
  EXPECT_EQ(reply->finish_reason, "length");
  EXPECT_EQ(reply->tokens_in, 40);
  EXPECT_EQ(reply->tokens_out, 4096);
}

TEST(LlmClient, AnAnsweredRequestThatFailsStillCountsItsTokens) {
  std::vector<HttpResponse> replies(2);
  replies[0].status = 200;
  replies[0].body = R"({"object": "chat.completion", "choices": [], "usage": {"prompt_tokens": 1500, "completion_tokens": 70}})";
  replies[1].status = 200;
  replies[1].body = "<html>gateway says hello</html>";
  auto http = std::make_unique<ScriptedHttp>(replies);
  OpenAiOptions o;
  o.base_url = "http://127.0.0.1:1/v1";
  o.model = "m";
  auto client = openai_client(o, std::move(http));
  EXPECT_EQ(client->last_spend().tokens_in, 0);
  auto first = client->chat(request("go"));
  ASSERT_FALSE(first);
  EXPECT_EQ(client->last_spend().tokens_in, 1500);
  EXPECT_EQ(client->last_spend().tokens_out, 70);
  EXPECT_FALSE(client->last_spend().estimated);
  auto second = client->chat(request("go"));
  ASSERT_FALSE(second);
  EXPECT_GT(client->last_spend().tokens_in, 0);  // the prompt was read: estimated
  EXPECT_EQ(client->last_spend().tokens_out, 8);  // ceil(31 / 4)
  EXPECT_TRUE(client->last_spend().estimated);
}

TEST(LlmClient, TimeoutGivesHint) {
  FakeReply slow = ok_reply("too late");
  slow.delay_s = 2;
  FakeOpenAiServer server({slow});
  Sleeps sleeps;
  auto client = client_for(server, &sleeps, [](OpenAiOptions& o) {
    o.timeout_s = 0.5;
    o.max_retries = 0;
  });
  auto t0 = std::chrono::steady_clock::now();
  auto reply = client->chat(request("go"));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(reply);
  EXPECT_LT(took, 1.8);
  EXPECT_EQ(reply.error().code, ErrorCode::timeout);
  EXPECT_NE(reply.error().message.find("timed out"), std::string::npos) << reply.error().message;
  EXPECT_NE(reply.error().hint.find("raise --llm-timeout"), std::string::npos) << reply.error().hint;
}

TEST(LlmClient, DroppedConnection) {
  FakeReply drop;
  drop.drop = true;
  {
    FakeOpenAiServer server({drop});
    Sleeps sleeps;
    auto client = client_for(server, &sleeps, [](OpenAiOptions& o) { o.max_retries = 0; });
    auto reply = client->chat(request("go"));
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().code, ErrorCode::io);
    EXPECT_NE(reply.error().hint.find("is the server running"), std::string::npos) << reply.error().hint;
  }
  {
    FakeOpenAiServer server({drop, ok_reply("second time lucky")});
    Sleeps sleeps;
    auto client = client_for(server, &sleeps, [](OpenAiOptions& o) { o.max_retries = 1; });
    auto reply = client->chat(request("go"));
    ASSERT_TRUE(reply) << reply.error().render();
    EXPECT_EQ(reply->content, "second time lucky");
    EXPECT_EQ(reply->tries, 2);
  }
}

TEST(LlmClient, StreamingReplyIsAssembled) {
  FakeReply r = ok_reply("kernel k {\n  tile 128x128x32\n  \"quoted\" \\ and unicode \xc3\xa9\n}\n");
  r.stream = true;
  r.prompt_tokens = 77;
  r.completion_tokens = 19;
  FakeOpenAiServer server({r});
  Sleeps sleeps;
  auto client = client_for(server, &sleeps, [](OpenAiOptions& o) { o.stream = true; });
  auto reply = client->chat(request("stream it"));
  ASSERT_TRUE(reply) << reply.error().render();
  EXPECT_EQ(reply->content, r.content);
  EXPECT_EQ(reply->tokens_in, 77);
  EXPECT_EQ(reply->tokens_out, 19);
  EXPECT_FALSE(reply->tokens_estimated);
  EXPECT_EQ(reply->finish_reason, "stop");
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0]["stream"], true);
  EXPECT_EQ(server.requests()[0]["stream_options"]["include_usage"], true);
}

TEST(LlmClient, StreamSplitAtEveryByte) {
  std::string sse =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\r\n\r\n"
      ": keep-alive\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"length\"}]}\n\n"
      "data: [DONE]\n\n";
  HttpResponse resp;
  resp.status = 200;
  resp.body = sse;
  auto http = std::make_unique<ScriptedHttp>(std::vector<HttpResponse>{resp}, 1);
  OpenAiOptions o;
  o.base_url = "http://example.invalid/v1";
  o.model = "m";
  o.stream = true;
  auto client = openai_client(o, std::move(http));
  ChatRequest req;
  req.messages = {{"user", "12345678"}};
  auto reply = client->chat(req);
  ASSERT_TRUE(reply) << reply.error().render();
  EXPECT_EQ(reply->content, "Hello");
  EXPECT_EQ(reply->finish_reason, "length");
  EXPECT_TRUE(reply->tokens_estimated);  // no usage chunk
  EXPECT_EQ(reply->tokens_in, 2);
  EXPECT_EQ(reply->tokens_out, 2);
}

TEST(LlmClient, EndpointUrl) {
  for (auto [base, want] : std::vector<std::pair<std::string, std::string>>{
           {"http://h:1/v1", "http://h:1/v1/chat/completions"},
           {"http://h:1/v1/", "http://h:1/v1/chat/completions"},
           {"http://h:1/v1/chat/completions", "http://h:1/v1/chat/completions"}}) {
    HttpResponse resp;
    resp.status = 200;
    resp.body = R"({"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}]})";
    auto http = std::make_unique<ScriptedHttp>(std::vector<HttpResponse>{resp});
    ScriptedHttp* seen = http.get();
    OpenAiOptions o;
    o.base_url = base;
    o.model = "m";
    auto client = openai_client(o, std::move(http));
    ASSERT_TRUE(client->chat(request("x")));
    ASSERT_EQ(seen->seen.size(), 1u);
    EXPECT_EQ(seen->seen[0].url, want) << base;
    EXPECT_EQ(client->describe(), "model m at " + want);
  }
}

TEST(LlmClient, ApiKeyIsSentButNeverReturned) {
  const std::string key = "sk-test-SECRET-123";
  FakeReply refused;
  refused.status = 401;
  refused.raw_body = R"({"error":{"message":"Incorrect API key provided: sk-test-SECRET-123"}})";
  FakeReply echo = ok_reply("your key is sk-test-SECRET-123, right?");
  FakeOpenAiServer server({refused, echo}, false);
  Sleeps sleeps;
  OpenAiOptions o = options_for(server, &sleeps);
  o.api_key = key;
  auto client = openai_client(o, http_client_curl());

  auto a = client->chat(request("go"));
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().render().find(key), std::string::npos) << a.error().render();
  EXPECT_NE(a.error().message.find("***"), std::string::npos) << a.error().message;

  auto b = client->chat(request("go"));
  ASSERT_TRUE(b) << b.error().render();
  EXPECT_EQ(b->content, "your key is ***, right?");

  EXPECT_EQ(client->describe().find(key), std::string::npos);
  EXPECT_NE(client->describe().find("test-model"), std::string::npos);
  auto auth = server.auth_headers();
  ASSERT_EQ(auth.size(), 2u);
  EXPECT_EQ(auth[0], "Bearer " + key);
}

TEST(LlmClient, ConnectionRefusedAsksIfServerRuns) {
  OpenAiOptions o;
  o.base_url = "http://127.0.0.1:" + std::to_string(free_port()) + "/v1";
  o.model = "m";
  o.max_retries = 1;
  Sleeps sleeps;
  o.sleep = [&sleeps](double s) { sleeps.seconds.push_back(s); };
  auto client = openai_client(o, http_client_curl());
  auto reply = client->chat(request("go"));
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().code, ErrorCode::io);
  EXPECT_NE(reply.error().hint.find("is the server running at " + o.base_url), std::string::npos)
      << reply.error().hint;
  EXPECT_EQ(sleeps.seconds.size(), 1u);  // transport errors are retried
}

TEST(LlmClient, Redact) {
  EXPECT_EQ(redact("a KEY b KEYKEY", "KEY"), "a *** b ******");
  EXPECT_EQ(redact("nothing here", ""), "nothing here");
  EXPECT_EQ(redact("", "KEY"), "");
}

TEST(Cassette, RecordThenReplayGivesIdenticalReplies) {
  std::string path = temp_path("record-replay.jsonl");
  FakeReply second = ok_reply("second answer");
  second.prompt_tokens = 10;
  second.completion_tokens = 3;
  FakeOpenAiServer server({ok_reply("first answer"), second}, false);
  Sleeps sleeps;
  std::vector<ChatReply> recorded;
  {
    auto rec = recording_client(client_for(server, &sleeps), path);
    EXPECT_NE(rec->describe().find(path), std::string::npos);
    for (const char* u : {"one", "two"}) {
      auto r = rec->chat(request(u, u == std::string("one") ? "propose" : "repair"));
      ASSERT_TRUE(r) << r.error().render();
      recorded.push_back(*r);
    }
  }
  auto lines = read_lines(path);
  ASSERT_EQ(lines.size(), 2u);
  json l1 = json::parse(lines[1]);
  EXPECT_EQ(l1["n"], 1);
  EXPECT_EQ(l1["purpose"], "repair");
  EXPECT_EQ(l1["request_hash"].get<std::string>().size(), 64u);
  EXPECT_EQ(l1["messages"][1]["content"], "two");
  EXPECT_EQ(l1["reply"]["content"], "second answer");

  auto replay = replay_client(path);
  ASSERT_TRUE(replay) << replay.error().render();
  for (size_t i = 0; i < 2; ++i) {
    auto r = (*replay)->chat(request(i == 0 ? "one" : "two"));
    ASSERT_TRUE(r) << r.error().render();
    EXPECT_EQ(r->content, recorded[i].content);
    EXPECT_EQ(r->tokens_in, recorded[i].tokens_in);
    EXPECT_EQ(r->tokens_out, recorded[i].tokens_out);
    EXPECT_EQ(r->tokens_estimated, recorded[i].tokens_estimated);
    EXPECT_EQ(r->finish_reason, recorded[i].finish_reason);
  }
  EXPECT_EQ(server.requests().size(), 2u);  // the replay asked no server
}

TEST(Cassette, ChangedRequestDiverges) {
  std::string path = temp_path("diverge.jsonl");
  FakeOpenAiServer server({ok_reply("a")});
  Sleeps sleeps;
  ASSERT_TRUE(recording_client(client_for(server, &sleeps), path)->chat(request("original")));
  auto replay = replay_client(path);
  ASSERT_TRUE(replay);
  auto r = (*replay)->chat(request("edited", "propose"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::invalid_input);
  EXPECT_NE(r.error().message.find("replay diverged at exchange 0 (purpose propose): the request differs from the "
                                   "one recorded"),
            std::string::npos)
      << r.error().message;
  EXPECT_FALSE(r.error().hint.empty());

  // The temperature is part of the request too.
  auto again = replay_client(path);
  ChatRequest warmer = request("original");
  warmer.temperature = 0.9;
  EXPECT_FALSE((*again)->chat(warmer));

  // Not strict: the recorded reply is served whatever was asked.
  auto loose = replay_client(path, false);
  ASSERT_TRUE(loose);
  auto served = (*loose)->chat(request("edited"));
  ASSERT_TRUE(served) << served.error().render();
  EXPECT_EQ(served->content, "a");
  EXPECT_FALSE((*loose)->chat(request("edited")));  // still only one exchange
}

TEST(Cassette, ReplayPastTheEnd) {
  std::string path = temp_path("short.jsonl");
  FakeOpenAiServer server({ok_reply("only")});
  Sleeps sleeps;
  ASSERT_TRUE(recording_client(client_for(server, &sleeps), path)->chat(request("q")));
  auto replay = replay_client(path);
  ASSERT_TRUE(replay);
  ASSERT_TRUE((*replay)->chat(request("q")));
  auto r = (*replay)->chat(request("q"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("the cassette holds only 1 exchanges"), std::string::npos) << r.error().message;
}

TEST(Cassette, AStrictReplayKeepsItsFirstDivergence) {
  std::string path = temp_path("diverge.jsonl");
  FakeOpenAiServer server({ok_reply("one"), ok_reply("two")});
  Sleeps sleeps;
  {
    auto rec = recording_client(client_for(server, &sleeps), path);
    ASSERT_TRUE(rec->chat(request("first")));
    ASSERT_TRUE(rec->chat(request("second")));
    EXPECT_FALSE(rec->divergence());
  }
  auto strict = replay_client(path, true);
  ASSERT_TRUE(strict);
  ASSERT_TRUE((*strict)->chat(request("first")));
  EXPECT_FALSE((*strict)->divergence());
  ASSERT_FALSE((*strict)->chat(request("changed")));
  ASSERT_TRUE((*strict)->divergence());
  EXPECT_NE((*strict)->divergence()->message.find("replay diverged at exchange 1"), std::string::npos);
  auto loose = replay_client(path, false);
  ASSERT_TRUE(loose);
  ASSERT_TRUE((*loose)->chat(request("anything")));
  ASSERT_TRUE((*loose)->chat(request("else")));
  ASSERT_FALSE((*loose)->chat(request("past the end")));
  EXPECT_FALSE((*loose)->divergence());
  // A strict replay asked past its end has diverged too: the recorded run asked less.
  auto strict_end = replay_client(path, true);
  ASSERT_TRUE((*strict_end)->chat(request("first")));
  ASSERT_TRUE((*strict_end)->chat(request("second")));
  ASSERT_FALSE((*strict_end)->chat(request("third")));
  ASSERT_TRUE((*strict_end)->divergence());
  EXPECT_NE((*strict_end)->divergence()->message.find("holds only 2 exchanges"), std::string::npos);
}

TEST(Cassette, AFailedRequestsTokensAreRecordedAndReplayed) {
  std::string path = temp_path("spent.jsonl");
  FakeReply malformed;
  malformed.raw_body = R"({"choices": [], "usage": {"prompt_tokens": 900, "completion_tokens": 12}})";
  FakeOpenAiServer server({malformed});
  Sleeps sleeps;
  {
    auto rec = recording_client(client_for(server, &sleeps), path);
    ASSERT_FALSE(rec->chat(request("q")));
    EXPECT_EQ(rec->last_spend().tokens_in, 900);
  }
  auto replay = replay_client(path);
  ASSERT_TRUE(replay) << replay.error().render();
  ASSERT_FALSE((*replay)->chat(request("q")));
  EXPECT_EQ((*replay)->last_spend().tokens_in, 900);
  EXPECT_EQ((*replay)->last_spend().tokens_out, 12);
}

TEST(Cassette, WritabilityIsCheckedWithoutLeavingAnythingBehind) {
  const std::string fresh = temp_path("check/new-cassette.jsonl");
  std::filesystem::remove(fresh);
  ASSERT_TRUE(cassette_check_writable(fresh));
  EXPECT_FALSE(std::filesystem::exists(fresh));
  const std::string existing = temp_path("kept.jsonl");
  {
    std::ofstream out(existing);
    out << "{\"n\": 0}\n";
  }
  ASSERT_TRUE(cassette_check_writable(existing));
  EXPECT_EQ(read_lines(existing), (std::vector<std::string>{"{\"n\": 0}"}));
  const std::string blocker = temp_path("a-file");
  {
    std::ofstream out(blocker);
    out << "x";
  }
  auto st = cassette_check_writable(blocker + "/cassette.jsonl");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, ErrorCode::io);
  EXPECT_NE(st.error().message.find("cannot write the LLM cassette '" + blocker + "/cassette.jsonl'"), std::string::npos)
      << st.error().message;
  EXPECT_FALSE(cassette_check_writable(temp_path("")));  // a folder
}

TEST(Cassette, RecordedErrorIsReplayed) {
  std::string path = temp_path("error.jsonl");
  FakeOpenAiServer server({status_reply(401)});
  Sleeps sleeps;
  Error original;
  {
    auto rec = recording_client(client_for(server, &sleeps), path);
    auto r = rec->chat(request("q"));
    ASSERT_FALSE(r);
    original = r.error();
  }
  auto replay = replay_client(path);
  ASSERT_TRUE(replay) << replay.error().render();
  auto r = (*replay)->chat(request("q"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, original.code);
  EXPECT_EQ(r.error().message, original.message);
  EXPECT_EQ(r.error().hint, original.hint);
}

TEST(Cassette, SecretIsRedactedInTheFile) {
  std::string path = temp_path("secret.jsonl");
  FakeOpenAiServer server({ok_reply("echo: hunter2")});
  Sleeps sleeps;
  ASSERT_TRUE(recording_client(client_for(server, &sleeps), path, "hunter2")->chat(request("my key is hunter2")));
  auto lines = read_lines(path);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].find("hunter2"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("***"), std::string::npos);
}

TEST(Cassette, BadFilesNameThePath) {
  auto missing = replay_client(temp_path("no-such-cassette.jsonl"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::not_found);
  EXPECT_NE(missing.error().message.find("no-such-cassette.jsonl"), std::string::npos);

  std::string path = temp_path("broken.jsonl");
  {
    std::ofstream out(path);
    out << R"({"n":0,"purpose":"propose","request_hash":"ab","reply":{"content":"x"}})" << "\n"
        << "{not json\n";
  }
  auto broken = replay_client(path);
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message.find(path + ":2"), std::string::npos) << broken.error().message;
}

// Sets variables for one test and puts the old values back.
class EnvGuard {
 public:
  explicit EnvGuard(std::vector<std::string> names) : names_(std::move(names)) {
    for (const auto& n : names_) {
      const char* v = std::getenv(n.c_str());
      saved_.push_back(v ? std::optional<std::string>(v) : std::nullopt);
      ::unsetenv(n.c_str());
    }
  }
  ~EnvGuard() {
    for (size_t i = 0; i < names_.size(); ++i) {
      if (saved_[i]) ::setenv(names_[i].c_str(), saved_[i]->c_str(), 1);
      else ::unsetenv(names_[i].c_str());
    }
  }

 private:
  std::vector<std::string> names_;
  std::vector<std::optional<std::string>> saved_;
};

TEST(LlmClient, OptionsFromEnvironment) {
  EnvGuard guard({"OPENAI_BASE_URL", "OPENAI_API_KEY", "UCUTLASS_LLM_MODEL", "OPENAI_MODEL"});

  auto none = openai_options_resolve({});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::invalid_input);
  EXPECT_NE(none.error().render().find("--llm"), std::string::npos);
  EXPECT_NE(none.error().render().find("OPENAI_BASE_URL"), std::string::npos);

  ::setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1", 1);
  auto no_model = openai_options_resolve({});
  ASSERT_FALSE(no_model);
  EXPECT_NE(no_model.error().render().find("--model"), std::string::npos);

  ::setenv("OPENAI_MODEL", "from-openai-model", 1);
  ::setenv("OPENAI_API_KEY", "sk-env", 1);
  auto a = openai_options_resolve({});
  ASSERT_TRUE(a) << a.error().render();
  EXPECT_EQ(a->base_url, "http://127.0.0.1:8000/v1");
  EXPECT_EQ(a->model, "from-openai-model");
  EXPECT_EQ(a->api_key, "sk-env");

  ::setenv("UCUTLASS_LLM_MODEL", "from-ucutlass", 1);
  auto b = openai_options_resolve({});
  ASSERT_TRUE(b);
  EXPECT_EQ(b->model, "from-ucutlass");

  OpenAiOptions given;
  given.base_url = "https://api.example.com/v1";
  given.model = "given";
  given.api_key = "sk-given";
  auto c = openai_options_resolve(given);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->base_url, "https://api.example.com/v1");
  EXPECT_EQ(c->model, "given");
  EXPECT_EQ(c->api_key, "sk-given");

  given.base_url = "127.0.0.1:8000";
  EXPECT_FALSE(openai_options_resolve(given));
}

TEST(LlmClient, ANamedKeyVariableMustBeSetAndNothingFallsBack) {
  EnvGuard guard({"OPENAI_BASE_URL", "OPENAI_API_KEY", "UCUTLASS_LLM_MODEL", "OPENAI_MODEL", "UCUT_TEST_KEY"});
  ::setenv("OPENAI_API_KEY", "sk-the-default-key", 1);
  OpenAiOptions o;
  o.base_url = "https://llm.example.com/v1";
  o.model = "m";
  o.key_env = "UCUT_TEST_KEY";  // named, and not set: the default key must not go to this server
  auto unset = openai_options_resolve(o);
  ASSERT_FALSE(unset);
  EXPECT_EQ(unset.error().code, ErrorCode::invalid_input);
  EXPECT_NE(unset.error().message.find("the variable UCUT_TEST_KEY is not set"), std::string::npos)
      << unset.error().message;
  EXPECT_EQ(unset.error().render().find("sk-the-default-key"), std::string::npos);
  ::setenv("UCUT_TEST_KEY", "", 1);
  auto empty = openai_options_resolve(o);
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("is empty"), std::string::npos) << empty.error().message;
  ::setenv("UCUT_TEST_KEY", "sk-named", 1);
  auto named = openai_options_resolve(o);
  ASSERT_TRUE(named) << named.error().render();
  EXPECT_EQ(named->api_key, "sk-named");
  o.key_env.clear();  // not named: $OPENAI_API_KEY, as before
  auto by_default = openai_options_resolve(o);
  ASSERT_TRUE(by_default);
  EXPECT_EQ(by_default->api_key, "sk-the-default-key");
  ::unsetenv("OPENAI_API_KEY");
  auto none = openai_options_resolve(o);  // a local server needs no key
  ASSERT_TRUE(none);
  EXPECT_EQ(none->api_key, "");
}

TEST(LlmClient, AKeyGoesOverPlainHttpOnlyToLoopbackUnlessAllowed) {
  EnvGuard guard({"OPENAI_BASE_URL", "OPENAI_API_KEY", "UCUTLASS_LLM_MODEL", "OPENAI_MODEL"});
  OpenAiOptions o;
  o.model = "m";
  o.api_key = "sk-secret";
  o.base_url = "http://10.1.2.3:8000/v1";
  auto refused = openai_options_resolve(o);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("over plain http:// to '10.1.2.3'"), std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().hint.find("--llm-allow-insecure"), std::string::npos) << refused.error().hint;
  EXPECT_EQ(refused.error().render().find("sk-secret"), std::string::npos);
  o.allow_insecure = true;
  EXPECT_TRUE(openai_options_resolve(o));
  o.allow_insecure = false;
  for (const char* ok : {"https://10.1.2.3/v1", "http://127.0.0.1:8000/v1", "http://127.9.8.7/v1",
                         "http://localhost:11434/v1", "http://LocalHost/v1", "http://[::1]:8000/v1"}) {
    o.base_url = ok;
    EXPECT_TRUE(openai_options_resolve(o)) << ok;
  }
  o.api_key.clear();  // no key: nothing secret travels
  o.base_url = "http://10.1.2.3:8000/v1";
  EXPECT_TRUE(openai_options_resolve(o));
}

TEST(LlmClient, UrlHosts) {
  EXPECT_EQ(url_host("http://user:pw@Example.com:8080/v1"), "Example.com");
  EXPECT_EQ(url_host("http://[::1]:8000/v1"), "::1");
  EXPECT_EQ(url_host("https://api.openai.com"), "api.openai.com");
  EXPECT_EQ(url_host("http:///v1"), "");
  EXPECT_TRUE(url_host_is_loopback("http://127.0.0.1/v1"));
  EXPECT_TRUE(url_host_is_loopback("http://127.255.0.9:1/v1"));
  EXPECT_TRUE(url_host_is_loopback("http://localhost/v1"));
  EXPECT_TRUE(url_host_is_loopback("http://[::1]/v1"));
  EXPECT_FALSE(url_host_is_loopback("http://128.0.0.1/v1"));
  EXPECT_FALSE(url_host_is_loopback("http://localhost.evil.com/v1"));
  EXPECT_FALSE(url_host_is_loopback("http://127.0.0.1.nip.io/v1"));
  EXPECT_FALSE(url_host_is_loopback("http://[::2]/v1"));
}

TEST(FakeServer, ScriptLoad) {
  std::string path = temp_path("script.json");
  {
    std::ofstream out(path);
    out << R"({"replies": [{"status": 429, "retry_after": 2}, {"content": "hi", "stream": true, "delay_s": 0.1},
                           {"drop": true}], "repeat_last": false})";
  }
  auto s = fake_script_load_full(path);
  ASSERT_TRUE(s) << s.error().render();
  ASSERT_EQ(s->replies.size(), 3u);
  EXPECT_FALSE(s->repeat_last);
  EXPECT_EQ(s->replies[0].status, 429);
  EXPECT_EQ(s->replies[0].retry_after, "2");
  EXPECT_EQ(s->replies[1].content, "hi");
  EXPECT_TRUE(s->replies[1].stream);
  EXPECT_DOUBLE_EQ(s->replies[1].delay_s, 0.1);
  EXPECT_TRUE(s->replies[2].drop);
  auto plain = fake_script_load(path);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->size(), 3u);

  {
    std::ofstream out(path);
    out << R"({"replies": [{"contnet": "typo"}]})";
  }
  auto bad = fake_script_load(path);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("contnet"), std::string::npos) << bad.error().message;
}

TEST(FakeServer, PastTheScriptWithoutRepeatIs500) {
  FakeOpenAiServer server({ok_reply("one")}, false);
  Sleeps sleeps;
  auto client = client_for(server, &sleeps, [](OpenAiOptions& o) { o.max_retries = 0; });
  ASSERT_TRUE(client->chat(request("a")));
  auto r = client->chat(request("b"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("HTTP 500"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace ucut::agent

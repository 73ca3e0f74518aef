// ucutlass-fake-llm: the fake OpenAI-compatible server (src/agent/fake_openai_server.h) as a
// program, for end-to-end tests of `ucutlass` runs that talk to a model:
//
//   ucutlass-fake-llm --script FILE [--port-file FILE] [--log FILE]
//
// It listens on 127.0.0.1 on a free port, writes the port to --port-file once listening (written
// to a temporary and renamed, so a reader never sees a partial number), appends every request
// body as one JSON line to --log (flushed before the request is answered) and runs until SIGTERM
// or SIGINT. The script format is the one fake_script_load reads.
#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>

#include "agent/fake_openai_server.h"
#include "support/fs.h"

namespace {

const char* kUsage =
    "usage: ucutlass-fake-llm --script FILE [--port-file FILE] [--log FILE]\n"
    "  --script FILE     the replies: {\"replies\": [{\"content\": ...}, ...], \"repeat_last\": true}\n"
    "  --port-file FILE  where to write the port once listening\n"
    "  --log FILE        append each request body as one JSON line\n"
    "Serves http://127.0.0.1:PORT/v1 until SIGTERM or SIGINT.\n";

int usage_error(const std::string& what) {
  std::cerr << "ucutlass-fake-llm: " << what << "\n" << kUsage;
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string script_path, port_file, log_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    }
    std::string* target = a == "--script" ? &script_path : a == "--port-file" ? &port_file : a == "--log" ? &log_path : nullptr;
    if (!target) return usage_error("unknown argument '" + a + "'");
    if (i + 1 >= argc) return usage_error(a + " needs a value");
    *target = argv[++i];
  }
  if (script_path.empty()) return usage_error("--script is required");

  auto script = ucut::agent::fake_script_load_full(script_path);
  if (!script) {
    std::cerr << "ucutlass-fake-llm: " << script.error().render() << "\n";
    return 1;
  }

  std::ofstream log;
  if (!log_path.empty()) {
    log.open(log_path, std::ios::app);
    if (!log) {
      std::cerr << "ucutlass-fake-llm: cannot open the log '" << log_path << "': " << std::strerror(errno) << "\n";
      return 1;
    }
  }

  // Block the stop signals before the server starts its threads (they inherit the mask), then
  // wait for one here: no handler runs on an arbitrary thread.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  std::function<void(const nlohmann::json&)> on_request;
  if (log.is_open())
    on_request = [&log](const nlohmann::json& body) {
      log << body.dump() << '\n';
      log.flush();
    };
  ucut::agent::FakeOpenAiServer server(script->replies, script->repeat_last, on_request);
  if (server.port() == 0) {
    std::cerr << "ucutlass-fake-llm: " << server.error() << "\n";
    return 1;
  }
  if (!port_file.empty()) {
    auto st = ucut::fs_write_atomic(port_file, std::to_string(server.port()) + "\n");
    if (!st) {
      std::cerr << "ucutlass-fake-llm: " << st.error().render() << "\n";
      return 1;
    }
  }
  std::cerr << "ucutlass-fake-llm: serving " << server.base_url() << " (" << script->replies.size()
            << " scripted replies)\n";

  int sig = 0;
  sigwait(&stop, &sig);
  std::cerr << "ucutlass-fake-llm: stopping on " << (sig == SIGINT ? "SIGINT" : "SIGTERM") << " after "
            << server.requests().size() << " requests\n";
  return 0;
}

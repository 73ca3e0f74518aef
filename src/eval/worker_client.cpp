#include "eval/worker_client.h"

#include <cstdlib>

#include <fmt/format.h>

#include "support/python.h"

namespace ucut::eval {
namespace {

std::string tail_lines(const std::string& text, size_t max_chars = 2000) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  if (t.size() > max_chars) t = "..." + t.substr(t.size() - max_chars);
  return t;
}

}  // namespace

std::vector<std::string> visible_devices(const std::string& parent) {
  std::vector<std::string> devices;
  std::string item;
  for (char ch : parent + ",") {
    if (ch != ',') {
      item += ch;
    } else if (!item.empty()) {
      devices.push_back(item);
      item.clear();
    }
  }
  return devices;
}

Result<std::string> worker_visible_device(int index, const std::string& parent) {
  if (parent.empty()) return std::to_string(index);
  const std::vector<std::string> devices = visible_devices(parent);
  if (index < 0 || static_cast<size_t>(index) >= devices.size())
    return make_error(ErrorCode::invalid_input,
                      "GPU " + std::to_string(index) + " is not visible: CUDA_VISIBLE_DEVICES=" + parent +
                          " shows " + std::to_string(devices.size()) + " GPU(s)",
                      "use --gpus with indices below " + std::to_string(devices.size()) +
                          " (they count the visible GPUs), or widen CUDA_VISIBLE_DEVICES");
  return devices[static_cast<size_t>(index)];
}

WorkerClient::WorkerClient(WorkerOptions options) : options_(std::move(options)) {}

WorkerClient::~WorkerClient() { shutdown(); }

Status WorkerClient::ensure_started() {
  if (started_ && child_.running()) return ok_status();
  ChildSpec spec;
  spec.argv = options_.argv.empty()
                  ? std::vector<std::string>{python_interpreter(), "-m", "ucutlass_torch.worker"}
                  : options_.argv;
  spec.env_set = python_env();
  for (const auto& [k, v] : options_.env) spec.env_set[k] = v;
  if (options_.gpu) {
    const char* parent = std::getenv("CUDA_VISIBLE_DEVICES");
    auto dev = worker_visible_device(*options_.gpu, parent ? parent : "");
    if (!dev) return dev.error();
    spec.env_set["CUDA_VISIBLE_DEVICES"] = *dev;
  }
  if (auto st = child_.start(spec); !st) return st;
  if (starts_++ > 0) ++restarts_;
  started_ = true;
  auto pong = raw_request({{"cmd", "ping"}}, options_.start_timeout);
  if (!pong) return pong.error();
  if (pong->value("status", "") != "ok")
    return make_error(ErrorCode::subprocess, "the worker failed to start: " + pong->value("error", pong->dump()));
  env_ = pong->value("env", nlohmann::json::object());
  if (env_.value("gpu", "") == "cpu")
    return make_error(ErrorCode::invalid_input,
                      fmt::format("no CUDA GPU: PyTorch in the evaluation worker sees none (torch {}, CUDA build {})",
                                  env_.value("torch", "?"), env_.value("cuda", "").empty() ? "none" : env_.value("cuda", "")),
                      "run on a machine with an NVIDIA GPU and a CUDA build of PyTorch; 'ucutlass optimize --plan' "
                      "ranks and compiles candidates without one");
  if (!problem_path_.empty()) {
    auto loaded = raw_request({{"cmd", "load_problem"}, {"problem", problem_path_}}, options_.start_timeout);
    if (!loaded) return loaded.error();
    if (loaded->value("status", "") != "ok")
      return make_error(ErrorCode::invalid_input, loaded->value("error", "load_problem failed"));
  }
  return ok_status();
}

void WorkerClient::discard(const std::string&) {
  child_.kill();
  started_ = false;
}

Result<nlohmann::json> WorkerClient::raw_request(nlohmann::json req, std::chrono::milliseconds timeout) {
  int id = next_id_++;
  req["id"] = id;
  if (auto st = child_.write_line(req.dump()); !st) {
    std::string line;
    child_.read_line(line, std::chrono::milliseconds(2000));  // collect the exit status
    std::string why = fmt::format("the worker died ({}) before the request was sent", child_.exit_description());
    std::string err = tail_lines(child_.stderr_tail());
    discard(why);
    return make_error(ErrorCode::subprocess, why + (err.empty() ? "" : "; its stderr ends:\n" + err));
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    std::string line;
    ReadEnd end = child_.read_line(line, std::max(left, std::chrono::milliseconds(0)));
    if (end == ReadEnd::timeout) {
      std::string err = tail_lines(child_.stderr_tail(), 800);
      discard("timeout");
      return make_error(ErrorCode::timeout,
                        fmt::format("no response within {:.0f} s; the worker was killed and will be restarted",
                                    timeout.count() / 1000.0),
                        err.empty() ? "" : "worker stderr ends: " + err);
    }
    if (end == ReadEnd::exited) {
      std::string why = fmt::format("the worker died ({})", child_.exit_description());
      std::string err = tail_lines(child_.stderr_tail());
      discard(why);
      return make_error(ErrorCode::subprocess, why + (err.empty() ? "" : "; its stderr ends:\n" + err));
    }
    nlohmann::json resp;
    try {
      resp = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      discard("garbage");
      return make_error(ErrorCode::internal, "the worker wrote a line that is not JSON: " + line.substr(0, 300));
    }
    if (!resp.is_object() || resp.value("id", nlohmann::json()) != nlohmann::json(id)) {
      // A stale response from an earlier, abandoned request cannot happen (we kill on timeout),
      // so a wrong id means the stream is out of step: start over.
      discard("id");
      return make_error(ErrorCode::internal, "the worker answered out of order: " + line.substr(0, 300));
    }
    if (resp.value("fatal", false)) {
      // The worker exits after a fatal response (CUDA context lost); reap it now.
      child_.stop(std::chrono::milliseconds(5000));
      started_ = false;
    }
    return resp;
  }
}

Result<nlohmann::json> WorkerClient::request(nlohmann::json req, std::chrono::milliseconds timeout) {
  if (auto st = ensure_started(); !st) {
    discard("start");
    return st.error();
  }
  return raw_request(std::move(req), timeout);
}

Result<nlohmann::json> WorkerClient::load_problem(const std::string& path, std::chrono::milliseconds timeout) {
  auto r = request({{"cmd", "load_problem"}, {"problem", path}}, timeout);
  if (!r) return r;
  if (r->value("status", "") != "ok")
    return make_error(ErrorCode::invalid_input, r->value("error", "load_problem failed"));
  problem_path_ = path;
  return r->value("problem", nlohmann::json::object());
}

Result<nlohmann::json> WorkerClient::environment() {
  if (auto st = ensure_started(); !st) {
    discard("start");
    return st.error();
  }
  return env_;
}

void WorkerClient::shutdown() {
  if (started_ && child_.running()) {
    (void)raw_request({{"cmd", "shutdown"}}, std::chrono::milliseconds(5000));
    child_.stop(std::chrono::milliseconds(5000));
  }
  child_.kill();
  started_ = false;
}

}  // namespace ucut::eval

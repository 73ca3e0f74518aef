#include "app/ray_executor.h"

#include <fmt/format.h>

#include <chrono>

#include "support/fs.h"
#include "support/python.h"

namespace ucut::app {

namespace {

const char* kB64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string b64_encode(const std::string& in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    out += {kB64[v >> 18], kB64[(v >> 12) & 63], kB64[(v >> 6) & 63], kB64[v & 63]};
  }
  if (i + 1 == in.size()) {
    const uint32_t v = uint8_t(in[i]) << 16;
    out += {kB64[v >> 18], kB64[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    const uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += {kB64[v >> 18], kB64[(v >> 12) & 63], kB64[(v >> 6) & 63], '='};
  }
  return out;
}

std::string b64_decode(const std::string& in) {
  int map[256];
  for (int& m : map) m = -1;
  for (int i = 0; i < 64; ++i) map[static_cast<uint8_t>(kB64[i])] = i;
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const int v = map[static_cast<uint8_t>(c)];
    if (v < 0) continue;  // '=' and whitespace
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  return out;
}

}  // namespace

Result<std::shared_ptr<RayCompiler>> RayCompiler::start(const RayExecutorOptions& options,
                                                        std::shared_ptr<build::Compiler> local) {
  std::shared_ptr<RayCompiler> rc(new RayCompiler());
  rc->local_ = std::move(local);
  rc->opt_ = options;
  eval::ChildSpec spec;
  spec.argv = {python_interpreter(), "-m", "ucutlass_torch.ray_bridge", "--address", options.address};
  spec.env_set = python_env();
  if (auto st = rc->child_.start(spec); !st)
    return make_error(ErrorCode::subprocess, "cannot start the Ray bridge: " + st.error().message,
                      "check UCUTLASS_PYTHON and that ucutlass_torch is importable");
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + options.start_timeout;
  nlohmann::json hello;
  while (std::chrono::steady_clock::now() < deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (rc->child_.read_line(line, left) != eval::ReadEnd::line) break;
    hello = nlohmann::json::parse(line, nullptr, false);
    if (hello.is_object() && hello.contains("ready")) break;  // anything else is Ray's own chatter
  }
  if (!hello.is_object() || !hello.contains("ready")) {
    std::string why = rc->child_.stderr_tail();
    rc->child_.kill();
    return make_error(ErrorCode::subprocess,
                      "the Ray bridge did not connect to " + options.address + " within " +
                          std::to_string(options.start_timeout.count()) + " s" +
                          (why.empty() ? std::string() : ": " + why.substr(why.size() > 1500 ? why.size() - 1500 : 0)),
                      "is the cluster up? `ray start --head` prints its address; or use --executor local");
  }
  if (!hello["ready"].is_boolean() || !hello["ready"].get<bool>()) {
    rc->child_.kill();
    const std::string err =
        hello.contains("error") && hello["error"].is_string() ? hello["error"].get<std::string>() : hello.dump();
    // The environment's either way (exit 3, as --eval-executor ray's): Ray missing, or a cluster
    // that cannot be reached or is not one (the bridge probes the address first: seconds, not
    // ray.init's minutes of retries).
    return make_error(err.find("not installed") != std::string::npos ? ErrorCode::subprocess : ErrorCode::io,
                      "--executor ray: " + err, "check --ray-address (or RAY_ADDRESS), or use --executor local");
  }
  if (hello.contains("nodes") && hello["nodes"].is_number_integer()) rc->nodes_ = hello["nodes"].get<int>();
  if (hello.contains("driver_node") && hello["driver_node"].is_string())
    rc->driver_node_ = hello["driver_node"].get<std::string>();
  if (hello.contains("compile_nodes") && hello["compile_nodes"].is_number_integer())
    rc->compile_nodes_ = hello["compile_nodes"].get<int>();
  rc->reader_ = std::thread([p = rc.get()] { p->read_replies(); });
  return rc;
}

RayCompiler::~RayCompiler() {
  stop_ = true;
  child_.stop(std::chrono::milliseconds(5000));
  if (reader_.joinable()) reader_.join();
}

void RayCompiler::read_replies() {
  std::string line;
  while (!stop_) {
    auto end = child_.read_line(line, std::chrono::milliseconds(500));
    if (end == eval::ReadEnd::timeout) continue;
    if (end == eval::ReadEnd::exited) {
      std::lock_guard<std::mutex> lock(mu_);
      dead_ = true;
      dead_why_ = "the Ray bridge exited (" + child_.exit_description() + "): " + child_.stderr_tail();
      cv_.notify_all();
      return;
    }
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("id") || !j["id"].is_number_integer()) continue;  // not a reply
    std::lock_guard<std::mutex> lock(mu_);
    if (j.contains("node") && j["node"].is_string()) ++by_node_[j["node"].get<std::string>()];
    const int id = j["id"].get<int>();  // before the move: json's operator= takes its argument by value
    replies_[id] = std::move(j);
    cv_.notify_all();
  }
}

std::map<std::string, int> RayCompiler::jobs_by_node() const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_node_;
}

Result<build::CompileOutcome> RayCompiler::compile(const build::CompileJob& job) {
  if (build::build_compiles_aborted())
    return build::CompileOutcome{false, "compiles were stopped (the search ended)", "", 0};
  const auto started = std::chrono::steady_clock::now();
  nlohmann::json req = {{"argv", command(job)}, {"outputs", {job.output_path}},
                        {"timeout_s", 900}, {"inputs", nlohmann::json::object()}};
  std::vector<std::string> inputs;
  if (job.mode == build::CompileJob::Mode::link) inputs = job.objects;
  else inputs = {job.source_path};
  for (const auto& path : inputs) {
    auto data = fs_read(path);
    if (!data) return data.error();
    req["inputs"][path] = b64_encode(*data);
  }
  const int id = next_id_++;
  req["id"] = id;
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    if (auto st = child_.write_line(req.dump()); !st)
      return make_error(ErrorCode::subprocess, "the Ray bridge is gone: " + st.error().message);
  }
  nlohmann::json reply;
  {
    std::unique_lock<std::mutex> lock(mu_);
    const bool got = cv_.wait_for(lock, opt_.job_timeout, [&] { return replies_.count(id) || dead_; });
    if (!replies_.count(id))
      return make_error(got ? ErrorCode::subprocess : ErrorCode::timeout,
                        got ? dead_why_ : fmt::format("no answer from the Ray cluster within {} s", opt_.job_timeout.count()),
                        "check the cluster (`ray status`), or use --executor local");
    reply = std::move(replies_[id]);
    replies_.erase(id);
  }
  if (reply.contains("error"))
    return make_error(ErrorCode::subprocess, "Ray: " + reply["error"].dump(),
                      "check the cluster (`ray status`), or use --executor local");
  if (!reply.contains("rc") || !reply["rc"].is_number_integer() || !reply.contains("outputs") ||
      !reply["outputs"].is_object())
    return make_error(ErrorCode::subprocess, "the Ray bridge sent a malformed reply: " + reply.dump().substr(0, 300));
  build::CompileOutcome out;
  if (reply.contains("log") && reply["log"].is_string()) out.log = reply["log"].get<std::string>();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (reply["rc"].get<int>() != 0) {
    std::string summary = build::build_summarize_log(out.log);
    out.message = job.source_path + ": nvcc failed on a Ray node:\n" + (summary.empty() ? out.log.substr(0, 2000) : summary);
    return out;
  }
  const auto& outs = reply["outputs"];
  if (!outs.contains(job.output_path) || !outs[job.output_path].is_string())
    return make_error(ErrorCode::subprocess, "the Ray job succeeded but returned no " + job.output_path);
  if (auto st = fs_write_atomic(job.output_path, b64_decode(outs[job.output_path].get<std::string>())); !st)
    return st.error();
  if (build::build_log_has_wgmma_serialization(out.log)) {
    out.message = job.source_path + ": " + build::build_summarize_log(out.log);
    return out;
  }
  out.ok = true;
  return out;
}

}  // namespace ucut::app

#include "eval/sol_link.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "problem/problem.h"
#include "sol/cost.h"
#include "sol/estimate.h"
#include "sol/hardware.h"
#include "sol/peaks.h"
#include "support/python.h"
#include "support/subprocess.h"

namespace ucut::eval {

namespace {

// A progress note of the extractor (python/ucutlass_torch/deadline.py NOTE), one whole line.
bool is_progress_note(std::string_view line) {
  return line.find(": note: still extracting after ") != std::string_view::npos;
}

// Shows the extractor's progress notes as they come; the rest of its stderr is the message.
class NoteRelay {
 public:
  void feed(std::string_view chunk) {
    pending_.append(chunk);
    for (size_t nl; (nl = pending_.find('\n')) != std::string::npos; pending_.erase(0, nl + 1)) {
      std::string_view line(pending_.data(), nl + 1);
      if (is_progress_note(line)) std::fwrite(line.data(), 1, line.size(), stderr);
    }
  }

  static std::string without_notes(const std::string& err) {
    std::string out;
    for (size_t pos = 0; pos < err.size();) {
      size_t nl = err.find('\n', pos);
      size_t end = nl == std::string::npos ? err.size() : nl + 1;
      std::string_view line(err.data() + pos, end - pos);
      if (!is_progress_note(line)) out.append(line);
      pos = end;
    }
    return out;
  }

 private:
  std::string pending_;
};

}  // namespace

int extract_timeout_s() {
  const char* v = std::getenv("UCUTLASS_EXTRACT_TIMEOUT");
  int s = v ? std::atoi(v) : 0;
  return s > 0 ? s : 120;
}

Status run_extractor(const std::string& problem_py, const std::string& json_path, int timeout_s) {
  const int limit = timeout_s > 0 ? timeout_s : extract_timeout_s();
  ProcessSpec ps;
  ps.argv = {python_interpreter(), "-m", "ucutlass_torch.extract", problem_py, "-o", json_path, "--timeout",
             std::to_string(limit)};
  ps.env_set = python_env();
  // The extractor stops the problem at the limit and says where; this only catches a Python that
  // never got that far (a hung import of torch).
  ps.timeout = std::chrono::seconds(limit + kExtractBackstopS);
  NoteRelay notes;
  ps.on_err = [&notes](std::string_view chunk) { notes.feed(chunk); };
  auto r = subprocess_run(ps);
  if (!r)
    return make_error(ErrorCode::subprocess, "cannot start the Python extractor: " + r.error().message,
                      "set UCUTLASS_PYTHON to a Python with PyTorch installed, or run scripts/setup");
  if (r->timed_out)
    return make_error(ErrorCode::invalid_input,
                      problem_py + ": extraction did not finish within " + std::to_string(limit) + " s",
                      "check that Model(), get_inputs() and forward() finish on a CPU, or allow more time: "
                      "UCUTLASS_EXTRACT_TIMEOUT=SECONDS");
  if (r->success()) return ok_status();
  std::string msg = NoteRelay::without_notes(r->err.empty() ? r->out : r->err);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  if (msg.size() > 2000) msg = "..." + msg.substr(msg.size() - 2000);
  if (python_lacks_package(msg))
    return make_error(ErrorCode::subprocess, python_interpreter() + " cannot run the extractor:\n" + msg,
                      "set UCUTLASS_PYTHON to a Python with PyTorch, or run scripts/setup");
  if (r->exit_code == 2)  // the environment (no PyTorch, a bad UCUTLASS_EXTRACT_TIMEOUT): explained
    return make_error(ErrorCode::subprocess, "the Python extractor cannot run:\n" + msg);
  // The extractor's message names the line and the fix; add ours only when it did not.
  std::string hint = msg.find("hint:") == std::string::npos
                         ? "fix the problem file, or extract it yourself: " + subprocess_format(ps.argv)
                         : std::string();
  return make_error(ErrorCode::invalid_input, "extracting '" + problem_py + "' failed:\n" + msg, hint);
}

Result<TempProblemJson> extract_problem_json(const std::string& problem_py) {
  char buf[] = "/tmp/ucut-problem-XXXXXX";
  int fd = ::mkstemp(buf);
  if (fd < 0) return make_error(ErrorCode::io, "cannot create a temporary file for the problem IR");
  ::close(fd);
  TempProblemJson out(buf);
  if (auto st = run_extractor(problem_py, out.path()); !st) return st.error();
  return out;
}

TempProblemJson::~TempProblemJson() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

Result<SolLink> sol_for_problem(const std::string& problem_py, const std::string& problem_json,
                                const std::string& gpu_name, sol::Policy policy) {
  std::string match = sol::hw_match_device(gpu_name);
  if (match.empty())
    return make_error(ErrorCode::unsupported, "no hardware table entry for GPU '" + gpu_name + "'",
                      "pass --sol-ms to give t_SOL yourself");
  auto hw = sol::hw_lookup(match);
  if (!hw) return hw.error();
  std::optional<TempProblemJson> tmp;
  std::string json_path = problem_json;
  if (json_path.empty()) {
    auto t = extract_problem_json(problem_py);
    if (!t) return t.error();
    tmp.emplace(std::move(*t));
    json_path = tmp->path();
  }
  auto prob = problem::problem_load(json_path);
  if (!prob) return prob.error();
  std::vector<std::string> notes;
  auto rep = sol::sol_problem_report(*prob, *hw, policy, {}, &notes);
  if (!rep) return rep.error();
  // eval links a record to a bound: a stored calibration it cannot read is an error, not a guess.
  if (!notes.empty()) return make_error(ErrorCode::invalid_input, notes.front(), "fix or remove the calibration file");
  const sol::SolBound& b = rep->reference();
  return SolLink{b.t_sol * 1e3, b.origin, hw->name};
}

}  // namespace ucut::eval

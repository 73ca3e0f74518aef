#include "eval/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace ucut::eval {
namespace {

constexpr size_t kErrTail = 16384;

std::string signal_text(int sig) {
  const char* name = sigabbrev_np(sig);
  return "killed by signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : "");
}

}  // namespace

ChildProcess::~ChildProcess() { kill(); }

Status ChildProcess::start(const ChildSpec& spec) {
  if (spec.argv.empty()) return make_error(ErrorCode::internal, "ChildProcess::start: empty argv");
  kill();
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return make_error(ErrorCode::subprocess, std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return make_error(ErrorCode::subprocess, std::string("pipe: ") + std::strerror(errno));
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    for (int f : {in[0], in[1], out[0], out[1]}) ::close(f);
    return make_error(ErrorCode::subprocess, std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, spec.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);

  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (!spec.env_set.count(kv.substr(0, kv.find('=')))) env_strings.push_back(kv);
  }
  for (const auto& [k, v] : spec.env_set) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    for (int f : {in[1], out[0], err[0]}) ::close(f);
    return make_error(ErrorCode::subprocess, "could not start '" + spec.argv[0] + "': " + std::strerror(rc),
                      "check that it is installed and on PATH (or set UCUTLASS_PYTHON)");
  }
  ::signal(SIGPIPE, SIG_IGN);
  pid_ = pid;
  in_ = in[1];
  out_ = out[0];
  err_ = err[0];
  ::fcntl(out_, F_SETFL, O_NONBLOCK);
  ::fcntl(err_, F_SETFL, O_NONBLOCK);
  out_buf_.clear();
  err_tail_.clear();
  exit_text_.clear();
  return ok_status();
}

Status ChildProcess::write_line(const std::string& line) {
  if (in_ < 0) return make_error(ErrorCode::io, "the worker's stdin is closed");
  std::string data = line + "\n";
  size_t done = 0;
  while (done < data.size()) {
    ssize_t w = ::write(in_, data.data() + done, data.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return make_error(ErrorCode::io, std::string("writing to the worker failed: ") + std::strerror(errno));
    }
    done += static_cast<size_t>(w);
  }
  return ok_status();
}

void ChildProcess::drain(int fd, std::string& into, bool tail_only) {
  char buf[65536];
  for (;;) {
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r > 0) {
      into.append(buf, static_cast<size_t>(r));
      if (tail_only && into.size() > kErrTail) into.erase(0, into.size() - kErrTail);
      continue;
    }
    if (r < 0 && (errno == EINTR)) continue;
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
      ::close(fd);
      if (fd == out_) out_ = -1;
      if (fd == err_) err_ = -1;
    }
    return;
  }
}

ReadEnd ChildProcess::read_line(std::string& line, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto nl = out_buf_.find('\n'); nl != std::string::npos) {
      line = out_buf_.substr(0, nl);
      out_buf_.erase(0, nl + 1);
      return ReadEnd::line;
    }
    if (out_ < 0) {
      if (err_ >= 0) drain(err_, err_tail_, true);
      reap(true);
      return ReadEnd::exited;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return ReadEnd::timeout;
    pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    int n = ::poll(fds, err_ >= 0 ? 2 : 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) return ReadEnd::exited;
    if (err_ >= 0 && fds[1].revents) drain(err_, err_tail_, true);
    if (fds[0].revents) drain(out_, out_buf_, false);
  }
}

void ChildProcess::reap(bool block) {
  if (pid_ <= 0) return;
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid_, &status, block ? 0 : WNOHANG)) < 0 && errno == EINTR) {
  }
  if (r == pid_) {
    if (WIFSIGNALED(status)) exit_text_ = signal_text(WTERMSIG(status));
    else if (WIFEXITED(status)) exit_text_ = "exit code " + std::to_string(WEXITSTATUS(status));
    pid_ = -1;
    if (err_ >= 0) drain(err_, err_tail_, true);  // what it wrote just before exiting
    close_all();
  }
}

void ChildProcess::close_all() {
  for (int* f : {&in_, &out_, &err_}) {
    if (*f >= 0) ::close(*f);
    *f = -1;
  }
}

void ChildProcess::kill() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    if (err_ >= 0) drain(err_, err_tail_, true);
    reap(true);
    if (exit_text_.empty() || exit_text_.rfind("killed", 0) == 0) exit_text_ = "killed by ucutlass";
  }
  close_all();
}

void ChildProcess::stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return;
  if (in_ >= 0) {
    ::close(in_);
    in_ = -1;
  }
  pid_t group = pid_;
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (pid_ > 0 && std::chrono::steady_clock::now() < deadline) {
    reap(false);
    if (pid_ > 0) ::usleep(20000);
  }
  if (pid_ > 0) kill();
  else ::kill(-group, SIGKILL);  // anything the worker started and left behind
}

}  // namespace ucut::eval

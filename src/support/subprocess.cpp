#include "support/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace ucut {
namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};

}  // namespace

std::string subprocess_format(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    bool plain = !a.empty() && a.find_first_not_of(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == std::string::npos;
    if (plain) {
      s += a;
    } else {
      s += '\'';
      for (char c : a) {
        if (c == '\'') s += "'\\''";
        else s += c;
      }
      s += '\'';
    }
  }
  return s;
}

Result<ProcessResult> subprocess_run(const ProcessSpec& spec) {
  if (spec.argv.empty()) return make_error(ErrorCode::internal, "subprocess_run: empty argv");
  Pipe in, out, err;
  if (::pipe2(in.fd, O_CLOEXEC) != 0 || ::pipe2(out.fd, O_CLOEXEC) != 0 ||
      ::pipe2(err.fd, O_CLOEXEC) != 0)
    return make_error(ErrorCode::subprocess, std::string("pipe failed: ") + std::strerror(errno));

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in.fd[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err.fd[1], 2);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, spec.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);

  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    std::string key = kv.substr(0, kv.find('='));
    if (!spec.env_set.count(key)) env_strings.push_back(kv);
  }
  for (const auto& [k, v] : spec.env_set) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  auto start = std::chrono::steady_clock::now();
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    return make_error(ErrorCode::subprocess,
                      "could not start '" + spec.argv[0] + "': " + std::strerror(rc),
                      "check that it is installed and on PATH");
  in.close_end(0);
  out.close_end(1);
  err.close_end(1);

  ProcessResult result;
  size_t written = 0;
  if (spec.stdin_text.empty()) in.close_end(1);
  else ::fcntl(in.fd[1], F_SETFL, O_NONBLOCK);
  ::signal(SIGPIPE, SIG_IGN);

  auto deadline = start + spec.timeout;
  char buf[65536];
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    std::vector<pollfd> fds;
    if (out.fd[0] >= 0) fds.push_back({out.fd[0], POLLIN, 0});
    if (err.fd[0] >= 0) fds.push_back({err.fd[0], POLLIN, 0});
    if (in.fd[1] >= 0) fds.push_back({in.fd[1], POLLOUT, 0});
    int wait_ms = 200;
    if (spec.abort && spec.abort->load()) {
      ::kill(-pid, SIGKILL);
      result.aborted = true;
      break;
    }
    if (spec.timeout.count() > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        ::kill(-pid, SIGKILL);
        result.timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left.count(), 200));
    }
    int n = ::poll(fds.data(), fds.size(), wait_ms);
    if (n < 0 && errno != EINTR) break;
    for (const auto& p : fds) {
      if (!p.revents) continue;
      if (p.fd == in.fd[1]) {
        ssize_t w = ::write(in.fd[1], spec.stdin_text.data() + written, spec.stdin_text.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 || written == spec.stdin_text.size()) in.close_end(1);
        continue;
      }
      ssize_t r = ::read(p.fd, buf, sizeof buf);
      if (r <= 0) {
        if (p.fd == out.fd[0]) out.close_end(0);
        else err.close_end(0);
      } else {
        (p.fd == out.fd[0] ? result.out : result.err).append(buf, static_cast<size_t>(r));
        if (p.fd == err.fd[0] && spec.on_err) spec.on_err(std::string_view(buf, static_cast<size_t>(r)));
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result.timed_out && !result.aborted) {
    if (WIFSIGNALED(status)) {
      result.signaled = true;
      result.signal = WTERMSIG(status);
    } else if (WIFEXITED(status)) {
      result.exit_code = WEXITSTATUS(status);
    }
  }
  return result;
}

}  // namespace ucut

// A long-lived child process with pipes: the evaluation worker. Unlike subprocess_run (run to
// completion), the client writes request lines and reads response lines with a deadline for each,
// keeps the tail of the child's stderr for error messages, and kills the child's whole process
// group when a deadline passes (a hung kernel cannot be interrupted any other way).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "support/result.h"

namespace ucut::eval {

struct ChildSpec {
  std::vector<std::string> argv;               // argv[0] is looked up on PATH
  std::map<std::string, std::string> env_set;  // added to (or replacing in) the environment
  std::string cwd;                             // empty: inherit
};

// Why read_line returned without a line.
enum class ReadEnd { line, timeout, exited };

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts the child in its own process group. Fails only when it cannot be started.
  Status start(const ChildSpec& spec);
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // Writes `line` plus '\n' to the child's stdin. Fails when the child has closed it (exited).
  Status write_line(const std::string& line);
  // Reads one line from stdout (without '\n') within `timeout`; drains stderr meanwhile.
  ReadEnd read_line(std::string& line, std::chrono::milliseconds timeout);

  // SIGKILL to the process group, then reaps. Safe to call twice.
  void kill();
  // Closes stdin and waits up to `grace` for the child to exit, then kills it.
  void stop(std::chrono::milliseconds grace);
  // After the child exited: "exit code N" or "killed by signal N (SIGSEGV)".
  std::string exit_description() const { return exit_text_; }
  // The last few KB the child wrote to stderr.
  std::string stderr_tail() const { return err_tail_; }

 private:
  void drain(int fd, std::string& into, bool tail_only);
  void reap(bool block);
  void close_all();

  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  std::string out_buf_;
  std::string err_tail_;
  std::string exit_text_;
};

}  // namespace ucut::eval

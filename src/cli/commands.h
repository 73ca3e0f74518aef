// The command table of the ucutlass CLI. Every command is one row here and one file
// (cmd_<name>.cpp) that declares its options and returns the function that runs it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/settings.h"
#include "build/compiler.h"
#include "eval/worker_client.h"
#include "sol/peaks.h"
#include "support/result.h"

namespace CLI {
class App;
class Option;
}

namespace ucut {

// The exit codes of every command (docs/cli.md has the table with examples).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;       // the input is wrong or unsupported, or the work failed
inline constexpr int kExitUsage = 2;        // a bad command line, or a named file/store/record is missing
inline constexpr int kExitEnvironment = 3;  // no GPU, nvcc, CUTLASS, Python; a file that cannot be written
inline constexpr int kExitInternal = 4;     // a ucutlass bug

// The exit code an error stands for, by its ErrorCode.
int cli_exit_code(const Error& e);

// Reports an error of `command` on stderr as "ucutlass <command>: error: <message>\nhint: <hint>" and,
// when the command line asked for --json, also as one JSON object on stdout
// ({"ok": false, "error": {"command", "code", "message", "hint", "exit_code"}}). Returns the exit
// code: `exit_code` when given, else cli_exit_code(e).
int cli_fail(const std::string& command, const Error& e, int exit_code = -1);
// The same for a usage error (exit 2) given as message and hint.
int cli_usage(const std::string& command, const std::string& message, const std::string& hint = {});

// What `ucutlass version` and `ucutlass --version` print: the tool, the kernel ABI and the
// folders it uses (support/paths.h).
std::string cli_version_text();

// Called once with the command's CLI11 subcommand: adds the options (with defaults shown and a
// UCUTLASS_* environment mirror where it helps) and returns the function that runs the command
// and gives the process exit code (kExit*).
using CommandRun = std::function<int()>;
using CommandSetup = CommandRun (*)(CLI::App& sub);

struct CommandSpec {
  const char* name;
  const char* summary;
  CommandSetup setup;
};

const std::vector<CommandSpec>& cli_commands();

// Entry point used by main(): parses argv, runs the chosen command, returns the exit code.
int cli_main(int argc, char** argv);

// After building kernels: keeps the cache folder under UCUTLASS_CACHE_MAX, saying on stderr
// what it removed (build/cache_gc.h).
void cli_apply_cache_cap();

// A comma-separated list's items, empty ones dropped (`--match a,b`, `warmup --gpu h100,h200`).
std::vector<std::string> cli_split_commas(const std::string& text);

// Whether a problem file's name, or its name without ".py", matches one of the comma-separated
// shell patterns (empty: all), and a suite folder's problem files (or the one file given) whose
// names match, sorted: `bench DIR --match` and `warmup --suite DIR --match`.
bool cli_name_matches(const std::string& file, const std::string& patterns);
std::vector<std::string> cli_suite_files(const std::string& dir, const std::string& match);

// The --profile option of optimize and bench: the contract's tolerance profile, default or
// kb-v01 (docs/eval-contract.md); any other value is refused at parse time. (eval checks its own
// value, with a message and hint of its own.)
CLI::Option* cli_add_profile_option(CLI::App& sub, std::string& profile);

// The --policy option (env UCUTLASS_POLICY): exact, tf32 or bf16, refused at parse time otherwise;
// cli_policy turns the checked name into the sol::Policy the layers below take.
CLI::Option* cli_add_policy_option(CLI::App& sub, std::string& policy, const std::string& help);
sol::Policy cli_policy(const std::string& checked_name);

// The --max-compiles option of optimize and bench (DriverOptions::max_compiles; 0: no cap).
CLI::Option* cli_add_max_compiles_option(CLI::App& sub, int& max_compiles);

// The --strategy option of optimize and bench (env UCUTLASS_STRATEGY): a name registered in
// search/strategy_registry.h, checked at parse time; "builtin" by default.
CLI::Option* cli_add_strategy_option(CLI::App& sub, std::string& strategy);

// Where kernels compile (--executor local|ray, --ray-address; docs/scale-out.md): nvcc on this
// machine, or tasks on a Ray cluster (app/ray_executor.h). `jobs_by_node` reports, after a
// run, how many compiles each Ray node ran ("" for local).
struct ExecutorArgs {
  std::string executor = "local";
  std::string eval_executor = "local";
  std::string ray_address;
};
// --executor and --ray-address; with `evaluations`, --eval-executor too (warmup compiles only).
void cli_add_executor_options(CLI::App& sub, ExecutorArgs& args, bool evaluations = true);
// Before anything runs: `--executor ray` or `--eval-executor ray` without --ray-address (or
// RAY_ADDRESS) is the command line's error (exit 2), whether or not a compile or an evaluation
// would have reached Ray. Returns 0, or the exit code after reporting the error for `command`.
// The executors' other failures are the environment's (exit 3): a cluster that refuses, does not
// answer or is not a Ray head, or Ray missing.
int cli_check_executor(const std::string& command, const ExecutorArgs& args);
Result<std::shared_ptr<build::Compiler>> cli_executor_compiler(const ExecutorArgs& args);
std::string cli_executor_summary(const std::shared_ptr<build::Compiler>& compiler);
// Where candidates are evaluated (--eval-executor local|ray): this host's GPUs, one worker per
// `--gpus` entry, or GPU workers as Ray actors (python -m ucutlass_torch.ray_eval; one per GPU
// of the cluster that Ray picks: `--gpus N` asks for N of them, `all` for every GPU the
// cluster has). `remote` says the evaluation does not need a GPU on this host.
struct EvalWorkers {
  std::vector<int> gpus;  // -1 entries: the worker's GPU is Ray's choice
  eval::WorkerOptions worker;
  bool remote = false;
};
Result<EvalWorkers> cli_eval_workers(const ExecutorArgs& args, const std::string& gpus_spec);

// The LLM agent's options of optimize and bench (agent/settings.h; docs/agent.md). Every number
// is held to its range as it is read (exit 2, in the option's words).
void cli_add_agent_options(CLI::App& sub, agent::AgentSettings& settings);
// Whether `strategy` is the LLM agent's (llm, hybrid).
bool cli_strategy_uses_agent(const std::string& strategy);
// Before anything runs, for the agent's strategies: its settings (agent::agent_check: endpoint,
// model, key variable, plain-http key, ranges, the replay's cassette; exit 2) and an explicit
// --record path that cannot be written (exit 3). Returns 0, or the exit code after reporting the
// error for `command`.
int cli_check_agent(const std::string& command, const std::string& strategy, const agent::AgentSettings& settings);
// After the run: one line on stderr per problem the agent worked on (requests, replies, programs,
// why it was asked no more), and an error or warning where the model was never or no longer
// reached or a strict replay diverged. Returns the exit code that makes (docs/cli.md): 1 when a
// strict replay diverged; when no problem got a single reply and some endpoint failed, 3 (1 for
// a replay's cassette); else 0.
int cli_report_agent(const std::string& command);

// The conventions every command shares (docs/cli.md): the result store is `--db` (default: the
// store UCUTLASS_STORE names, else the data folder's; no environment mirror of its own, so that a
// simulated run never writes the user's store);
// the output is `-o`: `-o,--output FILE` where it is a file, `-o,--out DIR` where it is a folder.
CLI::Option* cli_add_db_option(CLI::App& sub, std::string& db, const std::string& help);
CLI::Option* cli_add_output_file_option(CLI::App& sub, std::string& path, const std::string& help);
CLI::Option* cli_add_output_dir_option(CLI::App& sub, std::string& dir, const std::string& help);

// eval and baseline measure on a GPU and nothing else. Without one (app::gpu_present(): nvidia-smi
// lists none, or UCUTLASS_NO_GPU is set) they refuse at once, before compiling a program or starting
// a worker, and store nothing: returns 0 with a GPU, else reports the refusal for `command`
// (cli_fail, exit kExitEnvironment) and returns that exit code.
int cli_require_gpu(const char* command);

// The memory store optimize and bench open: --db when given; else, for a simulated run (the
// synthetic model surface), its own OUT/simulated-memory.db, so that model-surface experiences
// never reach the user's memory; else the default store ($UCUTLASS_STORE or the data folder,
// memory/store.h).
std::string cli_memory_path(const std::string& db, bool simulated, const std::string& out);

// Declarations of every command's setup function (defined in cmd_<name>.cpp).
CommandRun cmd_version(CLI::App& sub);
CommandRun cmd_optimize(CLI::App& sub);
CommandRun cmd_bench(CLI::App& sub);
CommandRun cmd_prompt(CLI::App& sub);
CommandRun cmd_memory(CLI::App& sub);
CommandRun cmd_cache(CLI::App& sub);
CommandRun cmd_warmup(CLI::App& sub);
CommandRun cmd_extract(CLI::App& sub);
CommandRun cmd_check(CLI::App& sub);
CommandRun cmd_fmt(CLI::App& sub);
CommandRun cmd_compile(CLI::App& sub);
CommandRun cmd_sol(CLI::App& sub);
CommandRun cmd_lower(CLI::App& sub);
CommandRun cmd_space(CLI::App& sub);
CommandRun cmd_calibrate(CLI::App& sub);
CommandRun cmd_eval(CLI::App& sub);
CommandRun cmd_baseline(CLI::App& sub);
CommandRun cmd_export(CLI::App& sub);

}  // namespace ucut

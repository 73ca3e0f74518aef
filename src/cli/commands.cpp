#include "cli/commands.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "agent/cassette.h"
#include "agent/register.h"
#include "build/cache_gc.h"
#include "memory/store.h"
#include "app/adapters_eval.h"
#include "app/ray_executor.h"
#include "search/strategy_registry.h"
#include "support/contract_profiles.h"
#include "support/diagnostics.h"
#include "support/fs.h"
#include "support/paths.h"
#include "support/python.h"
#include "support/subprocess.h"

namespace ucut {

// The one table of commands. Keep it sorted by the order a user meets them.
const std::vector<CommandSpec>& cli_commands() {
  static const std::vector<CommandSpec> table = {
      {"version", "print the tool, CUTLASS and ABI versions", cmd_version},
      {"extract", "extract the Problem IR (problem.json) of a PyTorch problem file", cmd_extract},
      {"check", "check a μCUTLASS program: diagnostics, or its name, stage count and hash", cmd_check},
      {"fmt", "print a μCUTLASS program in canonical form (--write rewrites the file)", cmd_fmt},
      {"compile", "generate the CUTLASS kernel library (.cu) of a program and build its .so with nvcc", cmd_compile},
      {"sol", "speed-of-light report of a problem: FLOPs, bytes, bound per policy, bottleneck", cmd_sol},
      {"lower", "write the μCUTLASS program (auto knobs) a problem.json lowers to", cmd_lower},
      {"space", "rank the valid configurations of each stage of a program (no GPU needed)", cmd_space},
      {"calibrate", "measure this GPU's copy bandwidth and GEMM ceilings for 'sol' (needs a GPU)", cmd_calibrate},
      {"eval", "check and time kernel candidates for a problem under the evaluation contract (needs a GPU)", cmd_eval},
      {"baseline", "time PyTorch eager and torch.compile on a problem (needs a GPU; cached)", cmd_baseline},
      {"export", "write a KernelBench solution (ModelNew) that runs a compiled kernel library", cmd_export},
      {"optimize", "search for a faster correct kernel for a problem", cmd_optimize},
      {"bench", "optimize a suite and print the headline figures", cmd_bench},
      {"prompt", "print what the LLM agent would send a model first for a problem, with token counts", cmd_prompt},
      {"memory", "inspect, export and import the optimization memory", cmd_memory},
      {"cache", "show or clean the kernel cache (libraries, objects, the kernel store, candidate folders)", cmd_cache},
      {"warmup", "build the kernel zoo into the kernel store (pinned); export or import it as one archive", cmd_warmup},
  };
  return table;
}

// Whether a problem file's name, or its name without ".py", matches one of the comma-separated
// shell patterns (empty: all): `--match gemm_tn_4096x4096x8192` names one problem as the
// report does.
std::vector<std::string> cli_split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= text.size()) {
    size_t e = text.find(',', b);
    if (e == std::string::npos) e = text.size();
    if (e > b) out.push_back(text.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

bool cli_name_matches(const std::string& file, const std::string& patterns) {
  if (patterns.empty()) return true;
  const std::string stem = file.size() > 3 && file.ends_with(".py") ? file.substr(0, file.size() - 3) : file;
  for (const auto& pat : cli_split_commas(patterns))
    if (::fnmatch(pat.c_str(), file.c_str(), 0) == 0 || ::fnmatch(pat.c_str(), stem.c_str(), 0) == 0) return true;
  return false;
}

// The problem files of a suite folder (or the one file given) whose names match, sorted.
std::vector<std::string> cli_suite_files(const std::string& dir, const std::string& match) {
  std::vector<std::string> out;
  std::error_code ec;
  if (std::filesystem::is_regular_file(dir, ec)) return {dir};
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".py" && e.path().filename().string()[0] != '_' &&
        cli_name_matches(e.path().filename().string(), match))
      out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

CLI::Option* cli_add_profile_option(CLI::App& sub, std::string& profile) {
  std::string help = "contract profile:";
  for (const auto& p : contract_profiles()) help += " " + p.name + " (" + contract_profile_text(p) + ")";
  return sub.add_option("--profile", profile, help)
      ->check(CLI::IsMember(contract_profile_names()))
      ->capture_default_str()
      ->envname("UCUTLASS_PROFILE");
}

CLI::Option* cli_add_policy_option(CLI::App& sub, std::string& policy, const std::string& help) {
  // policy_parse's own message: "unknown precision policy 'tf-32'; did you mean 'tf32'?"
  auto known = [](const std::string& v) {
    auto p = sol::policy_parse(v);
    return p ? std::string() : p.error().message;
  };
  return sub.add_option("--policy", policy, help)
      ->check(CLI::Validator(known, "exact|tf32|bf16"))
      ->capture_default_str()
      ->envname("UCUTLASS_POLICY");
}

CLI::Option* cli_add_max_compiles_option(CLI::App& sub, int& max_compiles) {
  return sub.add_option("--max-compiles", max_compiles,
                        "fresh kernel compiles (units not in the store) one problem's search may start; past it only "
                        "candidates built from stored units are tried (0: no cap)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
}

sol::Policy cli_policy(const std::string& checked_name) {
  auto p = sol::policy_parse(checked_name);
  return p ? *p : sol::Policy::tf32;
}

CLI::Option* cli_add_strategy_option(CLI::App& sub, std::string& strategy) {
  return sub.add_option("--strategy", strategy, "what proposes the candidates: " + search::strategy_help())
      ->check(CLI::IsMember(search::strategy_names()))
      ->capture_default_str()
      ->envname("UCUTLASS_STRATEGY");
}

void cli_add_executor_options(CLI::App& sub, ExecutorArgs& args, bool evaluations) {
  sub.add_option("--executor", args.executor, "where kernels compile: local (nvcc here) or ray (a Ray cluster's nodes)")
      ->check(CLI::IsMember({"local", "ray"}))->capture_default_str()->envname("UCUTLASS_EXECUTOR");
  if (evaluations)
    sub.add_option("--eval-executor", args.eval_executor,
                   "where candidates are evaluated: local (this host's GPUs) or ray (GPU workers as Ray actors on the "
                   "cluster's GPU nodes; --gpus N asks for N, all for every GPU of the cluster)")
        ->check(CLI::IsMember({"local", "ray"}))->capture_default_str()->envname("UCUTLASS_EVAL_EXECUTOR");
  sub.add_option("--ray-address", args.ray_address,
                 std::string("the Ray cluster for --executor ray") + (evaluations ? " and --eval-executor ray" : "") +
                     ": host:port of the head, ray://host:10001 (Ray Client), auto (the cluster already running on "
                     "this machine) or local (a throwaway Ray started on this machine for the run)")
      ->envname("RAY_ADDRESS");
}

namespace {

// The executor options' one usage error: Ray chosen, no cluster named.
std::optional<Error> executor_usage(const ExecutorArgs& args) {
  const char* which = args.executor == "ray" ? "--executor ray" : args.eval_executor == "ray" ? "--eval-executor ray" : nullptr;
  if (!which || !args.ray_address.empty()) return std::nullopt;
  return make_error(ErrorCode::invalid_input, std::string(which) + " needs the cluster's address",
                    "pass --ray-address HOST:PORT (or set RAY_ADDRESS); `ray start --head` prints it; "
                    "--ray-address local runs a throwaway Ray on this machine");
}

}  // namespace

int cli_check_executor(const std::string& command, const ExecutorArgs& args) {
  if (auto e = executor_usage(args)) return cli_fail(command, *e, kExitUsage);
  return kExitOk;
}

Result<EvalWorkers> cli_eval_workers(const ExecutorArgs& args, const std::string& gpus_spec) {
  EvalWorkers out;
  if (args.eval_executor != "ray") {
    auto gpus = app::gpus_parse(gpus_spec);
    if (!gpus) return gpus.error();
    out.gpus = *gpus;
    return out;
  }
  if (auto e = executor_usage(args)) return *e;  // cli_check_executor said so already
  out.remote = true;
  out.worker.argv = {python_interpreter(), "-m", "ucutlass_torch.ray_eval", "--address", args.ray_address};
  // Placement on a busy cluster and PyTorch's start on the node take longer than a local worker.
  out.worker.start_timeout = std::chrono::milliseconds(240000);
  const bool all = gpus_spec.empty() || gpus_spec == "all";
  const std::optional<int> asked = app::gpus_count(gpus_spec);
  if (!all && !asked)
    return make_error(ErrorCode::invalid_input,
                      "--gpus " + gpus_spec + " with --eval-executor ray: Ray picks the GPUs, so --gpus is a count",
                      "give --gpus N (N workers, one GPU each, wherever Ray places them) or --gpus all");
  // The cluster is asked first, whatever --gpus says: an unreachable cluster, or one without
  // (enough) GPUs, is refused here rather than by every worker that would wait for a GPU.
  ProcessSpec ps;
  ps.argv = {python_interpreter(), "-m", "ucutlass_torch.ray_eval", "--address", args.ray_address, "--count-gpus"};
  ps.env_set = python_env();
  ps.timeout = std::chrono::milliseconds(180000);
  auto r = subprocess_run(ps);
  if (!r) return r.error();
  auto rtrim = [](std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    return s;
  };
  const std::string text = rtrim(r->out);
  if (!r->success() || text.empty() || text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos) {
    const std::string why = rtrim(r->err.size() > 2000 ? r->err.substr(r->err.size() - 2000) : r->err);
    return make_error(ErrorCode::subprocess, "--eval-executor ray: " + (why.empty() ? "no answer from the Ray cluster at " + args.ray_address : why),
                      "check the address (`ray status` on the head), or use --eval-executor local");
  }
  const int cluster_gpus = std::stoi(text);
  if (cluster_gpus < 1)
    return make_error(ErrorCode::subprocess, "the Ray cluster at " + args.ray_address + " has no GPU",
                      "start GPU nodes with `ray start --address HEAD:PORT` on GPU hosts, or use --eval-executor local");
  const int count = all ? cluster_gpus : *asked;
  if (count > cluster_gpus)
    return make_error(ErrorCode::invalid_input,
                      fmt::format("--gpus {} with --eval-executor ray: the cluster at {} has {} GPU{}", count,
                                  args.ray_address, cluster_gpus, cluster_gpus == 1 ? "" : "s"),
                      fmt::format("ask for at most {} (--gpus all), or add GPU nodes", cluster_gpus));
  out.gpus.assign(static_cast<size_t>(count), -1);
  return out;
}

Result<std::shared_ptr<build::Compiler>> cli_executor_compiler(const ExecutorArgs& args) {
  std::shared_ptr<build::Compiler> local = build::build_nvcc_compiler();
  if (args.executor != "ray") return local;
  if (auto e = executor_usage(args)) return *e;  // cli_check_executor said so already
  app::RayExecutorOptions o;
  o.address = args.ray_address;
  auto rc = app::RayCompiler::start(o, local);
  if (!rc) return rc.error();
  std::fprintf(stderr, "compiles run on the Ray cluster at %s: %d node%s, %d of them build nodes (driver on node %s)\n",
               o.address.c_str(), (*rc)->nodes(), (*rc)->nodes() == 1 ? "" : "s", (*rc)->compile_nodes(),
               (*rc)->driver_node().empty() ? "?" : (*rc)->driver_node().c_str());
  return std::shared_ptr<build::Compiler>(*rc);
}

std::string cli_executor_summary(const std::shared_ptr<build::Compiler>& compiler) {
  auto rc = std::dynamic_pointer_cast<app::RayCompiler>(compiler);
  if (!rc) return "";
  std::string out;
  int total = 0;
  for (const auto& [node, n] : rc->jobs_by_node()) {
    out += (out.empty() ? "" : ", ") + node.substr(0, 12) + ": " + std::to_string(n);
    total += n;
  }
  return "Ray compile jobs: " + std::to_string(total) + (out.empty() ? "" : " (" + out + ")");
}

namespace {

// A numeric agent option checked against its rule (agent/settings.h) as the command line is read:
// "--proposals: must be a whole number >= 1, not 0" (CLI11's PositiveNumber would print its range
// of doubles, 300 digits of it).
CLI::Validator agent_rule(const char* option) {
  const agent::AgentSettingRule* rule = agent::agent_setting_rule(option);
  return CLI::Validator(
      [rule](std::string& v) -> std::string {
        char* end = nullptr;
        const double x = std::strtod(v.c_str(), &end);
        if (v.empty() || end == v.c_str() || *end != '\0') return "must be " + std::string(rule->says) + ", not '" + v + "'";
        return agent::agent_setting_violation(*rule, x);
      },
      rule->whole ? "INT" : "NUMBER");
}

}  // namespace

void cli_add_agent_options(CLI::App& sub, agent::AgentSettings& s) {
  const std::string g = "LLM agent (--strategy llm|hybrid; docs/agent.md)";
  sub.add_option("--llm", s.url, "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
      ->envname("OPENAI_BASE_URL")->group(g);
  sub.add_option("--model", s.model, "model name the endpoint serves")->envname("UCUTLASS_LLM_MODEL")->group(g);
  sub.add_option("--llm-key-env", s.key_env,
                 "environment variable holding the API key (never logged); it must be set. Default: "
                 "$OPENAI_API_KEY when set, else no key")
      ->group(g);
  sub.add_flag("--llm-allow-insecure", s.allow_insecure,
               "send the API key over plain http:// to a host that is not loopback (it travels unencrypted)")
      ->envname("UCUTLASS_LLM_ALLOW_INSECURE")->group(g);
  sub.add_option("--agent-mode", s.mode, "flat (propose, check, compile, evaluate, feedback) or orchestrated "
                 "(analyze, nominate, triage, implement, summarize)")
      ->check(CLI::IsMember({"flat", "orchestrated"}))->capture_default_str()->group(g);
  sub.add_option("--beam", s.beam, "programs kept as parents between iterations")->check(agent_rule("--beam"))
      ->capture_default_str()->group(g);
  sub.add_option("--proposals", s.proposals, "programs asked for per iteration")->check(agent_rule("--proposals"))
      ->capture_default_str()->group(g);
  sub.add_option("--repairs", s.repairs, "times a reply without a usable program goes back with the diagnostics")
      ->check(agent_rule("--repairs"))->capture_default_str()->group(g);
  sub.add_option("--tune", s.tune, "hybrid: configurations measured per program the model writes")
      ->check(agent_rule("--tune"))->capture_default_str()->group(g);
  sub.add_option("--llm-memory", s.memory, "memory lessons in prompts (true/false), to measure their effect")
      ->capture_default_str()->group(g);
  sub.add_option("--llm-tokens", s.problem_tokens, "token budget (in + out) per problem; 0: none")
      ->check(agent_rule("--llm-tokens"))->capture_default_str()->group(g);
  sub.add_option("--llm-suite-tokens", s.suite_tokens, "token budget (in + out) for the whole run; 0: none")
      ->check(agent_rule("--llm-suite-tokens"))->capture_default_str()->group(g);
  sub.add_option("--llm-price-in", s.price_in, "USD per million prompt tokens (the cost column)")
      ->check(agent_rule("--llm-price-in"))->capture_default_str()->group(g);
  sub.add_option("--llm-price-out", s.price_out, "USD per million completion tokens")
      ->check(agent_rule("--llm-price-out"))->capture_default_str()->group(g);
  sub.add_option("--llm-temperature", s.temperature, "sampling temperature (0 to 2)")
      ->check(agent_rule("--llm-temperature"))->capture_default_str()->group(g);
  sub.add_option("--llm-max-tokens", s.max_tokens, "tokens per reply")
      ->check(agent_rule("--llm-max-tokens"))->capture_default_str()->group(g);
  sub.add_option("--llm-timeout", s.timeout_s, "seconds per request (> 0)")
      ->check(agent_rule("--llm-timeout"))->capture_default_str()->group(g);
  sub.add_option("--llm-retries", s.retries, "retries on 429, 5xx and transport errors (with backoff)")
      ->check(agent_rule("--llm-retries"))->capture_default_str()->group(g);
  sub.add_option("--llm-retry-after-max", s.retry_after_max_s,
                 "the longest wait, in seconds, a server's Retry-After gets before a retry (longer asks are cut to it)")
      ->check(agent_rule("--llm-retry-after-max"))->capture_default_str()->envname("UCUTLASS_LLM_RETRY_AFTER_MAX")
      ->group(g);
  sub.add_flag("--llm-stream", s.stream, "stream replies (server-sent events)")->group(g);
  sub.add_option("--replay", s.replay, "replay a recorded session (llm-cassette.jsonl) instead of calling a model")
      ->group(g);
  sub.add_flag("--replay-strict", s.replay_strict,
               "replay: a request that differs from the recording is an error (exit 1, the first divergence on stderr)")
      ->group(g);
  sub.add_option("--record", s.record, "where to record the session (default OUT/<problem>/llm-cassette.jsonl)")
      ->group(g);
}

bool cli_strategy_uses_agent(const std::string& strategy) { return strategy == "llm" || strategy == "hybrid"; }

int cli_check_agent(const std::string& command, const std::string& strategy, const agent::AgentSettings& s) {
  if (!cli_strategy_uses_agent(strategy)) return kExitOk;
  if (auto st = agent::agent_check(s); !st) return cli_fail(command, st.error(), kExitUsage);
  if (s.replay.empty() && !s.record.empty())
    if (auto st = agent::cassette_check_writable(s.record); !st) return cli_fail(command, st.error(), kExitEnvironment);
  return kExitOk;
}

int cli_report_agent(const std::string& command) {
  const std::vector<agent::AgentOutcome> outcomes = agent::agent_outcomes_take();
  const std::string who = "ucutlass " + command;
  bool diverged = false, any_reply = false, any_never = false, never_replay = false;
  for (const auto& o : outcomes) {
    std::string line = fmt::format("llm: {}: {} request{}, {} repl{}, {} program{} from the model", o.problem,
                                   o.requests, o.requests == 1 ? "" : "s", o.replies, o.replies == 1 ? "y" : "ies",
                                   o.programs, o.programs == 1 ? "" : "s");
    if (!o.stopped.empty() && !o.failure) line += "; asked no more: " + o.stopped;
    std::fprintf(stderr, "%s\n", line.c_str());
    any_reply = any_reply || o.replies > 0;
    if (o.divergence) {
      diverged = true;
      std::fprintf(stderr, "%s: error: %s: %s\n", who.c_str(), o.problem.c_str(), o.divergence->render().c_str());
    } else if (o.never_reached()) {
      any_never = true;
      never_replay = never_replay || o.replay;
      std::fprintf(stderr, "%s: error: %s: %s, so it proposed nothing: %s\n", who.c_str(), o.problem.c_str(),
                   o.replay ? "the cassette gave no reply" : "the model was never reached",
                   o.failure->render().c_str());
    } else if (o.no_longer_reached()) {
      std::fprintf(stderr, "%s: %s: %s: %s after %d repl%s: %s\n", who.c_str(), o.replay ? "note" : "warning",
                   o.problem.c_str(), o.replay ? "the replay ended" : "the model was no longer reached", o.replies,
                   o.replies == 1 ? "y" : "ies", o.failure->render().c_str());
    }
  }
  if (diverged) return kExitFailed;
  // No proposal could be had from the model at all: the run's report holds only what the search
  // measured without it. A live endpoint is the machine's (3); a cassette is the input (1).
  if (any_never && !any_reply) return never_replay ? kExitFailed : kExitEnvironment;
  return kExitOk;
}

CLI::Option* cli_add_db_option(CLI::App& sub, std::string& db, const std::string& help) {
  // No environment mirror: UCUTLASS_STORE moves the default store (store_default_path), which a
  // simulated run must not write to (cli_memory_path).
  return sub.add_option("--db", db,
                        help + ": a SQLite file, or a PostgreSQL database a team shares, "
                               "postgresql://user@host[:port]/database or libpq's key=value form (docs/memory.md; "
                               "the password from PGPASSWORD or ~/.pgpass, never shown) (default: $UCUTLASS_STORE, "
                               "else <data folder>/ucutlass.db)");
}

CLI::Option* cli_add_output_file_option(CLI::App& sub, std::string& path, const std::string& help) {
  return sub.add_option("-o,--output", path, help);
}

CLI::Option* cli_add_output_dir_option(CLI::App& sub, std::string& dir, const std::string& help) {
  return sub.add_option("-o,--out", dir, help);
}

int cli_require_gpu(const char* command) {
  if (app::gpu_present()) return kExitOk;
  const char* forced = std::getenv("UCUTLASS_NO_GPU");
  return cli_fail(command,
                  make_error(ErrorCode::unsupported,
                             std::string("no CUDA GPU (") +
                                 (forced && *forced ? "UCUTLASS_NO_GPU is set" : "nvidia-smi lists none") +
                                 "): nothing was measured or stored",
                             "run on a machine with an NVIDIA GPU; 'ucutlass optimize --plan' ranks and compiles "
                             "candidates without one"),
                  kExitEnvironment);
}

std::string cli_memory_path(const std::string& db, bool simulated, const std::string& out) {
  if (!db.empty()) return db;
  return simulated ? out + "/simulated-memory.db" : memory::store_default_path();
}

void cli_apply_cache_cap() {
  const std::string note = build::cache_enforce_cap(fs_cache_dir());
  if (!note.empty()) std::fprintf(stderr, "%s\n", note.c_str());
}

namespace {

// Set by cli_main when the command line holds --json: errors then go to stdout as JSON too.
bool g_json_errors = false;

// The command a command line names (its first word that is one), or "".
std::string named_command(int argc, char** argv, const std::vector<std::string>& names) {
  for (int i = 1; i < argc; ++i)
    for (const auto& n : names)
      if (n == argv[i]) return n;
  return "";
}

// Every spelling of the options of `app` ("--policy", "-o", ...), for "did you mean".
std::vector<std::string> option_spellings(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& l : opt->get_lnames()) out.push_back("--" + l);
    for (const auto& s : opt->get_snames()) out.push_back("-" + s);
  }
  return out;
}

// "'ucutlass sol --help' lists the options", or the commands without one.
std::string help_hint(const std::string& command) {
  return command.empty() ? "'ucutlass --help' lists the commands" : "'ucutlass " + command + " --help' lists the options";
}

// The arguments no option took, in the order they were given, each with what to do instead.
int report_extras(CLI::App& app, const std::string& command) {
  const CLI::App* sub = command.empty() ? &app : app.get_subcommand(command);
  const std::vector<std::string> spellings = option_spellings(*sub);
  std::string message;
  for (const auto& arg : app.remaining(true)) {
    if (!message.empty()) message += "; ";
    if (arg.size() > 1 && arg[0] == '-') {
      const std::string flag = arg.substr(0, arg.find('='));
      const std::string guess = diag_closest(flag, spellings);
      message += "unknown option '" + flag + "'" + (guess.empty() ? "" : " (did you mean '" + guess + "'?)");
    } else {
      message += "unexpected argument '" + arg + "'";
    }
  }
  return cli_usage(command, message, help_hint(command));
}

}  // namespace

int cli_exit_code(const Error& e) {
  switch (e.code) {
    case ErrorCode::invalid_input:
    case ErrorCode::unsupported:
    case ErrorCode::timeout: return kExitFailed;
    case ErrorCode::not_found: return kExitUsage;
    case ErrorCode::io:
    case ErrorCode::subprocess: return kExitEnvironment;
    case ErrorCode::internal: return kExitInternal;
  }
  return kExitInternal;
}

int cli_fail(const std::string& command, const Error& e, int exit_code) {
  const int rc = exit_code >= 0 ? exit_code : cli_exit_code(e);
  const std::string who = command.empty() ? "ucutlass" : "ucutlass " + command;
  std::fprintf(stderr, "%s: error: %s\n", who.c_str(), e.render().c_str());
  if (g_json_errors) {
    const nlohmann::ordered_json j = {
        {"ok", false},
        {"error", {{"command", command}, {"code", error_code_name(e.code)}, {"message", e.message},
                   {"hint", e.hint}, {"exit_code", rc}}}};
    std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  }
  return rc;
}

int cli_usage(const std::string& command, const std::string& message, const std::string& hint) {
  return cli_fail(command, make_error(ErrorCode::invalid_input, message, hint), kExitUsage);
}

std::string cli_version_text() {
  return "ucutlass " UCUTLASS_VERSION "\nkernel ABI 1\nCUTLASS headers: " + paths_cutlass_dir() +
         "\nruntime headers: " + paths_runtime_dir() + "\nPython package: " + paths_python_dir() + "\n";
}

int cli_main(int argc, char** argv) {
  agent::agent_register_strategies();  // before --strategy checks its names
  CLI::App app{"ucutlass: writes, checks and tunes CUTLASS kernels for PyTorch programs"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "help for every command");
  app.set_version_flag("-V,--version", [] {
    std::string text = cli_version_text();
    text.pop_back();  // CLI11 ends the line itself
    return text;
  }, "print the version and the folders in use");
  app.footer("Exit codes: 0 ok, 1 the input is wrong or the work failed, 2 usage, 3 environment, 4 internal "
             "error (docs/cli.md).");
  std::vector<std::pair<CLI::App*, CommandRun>> runners;
  std::vector<std::string> names;
  for (const auto& spec : cli_commands()) {
    CLI::App* sub = app.add_subcommand(spec.name, spec.summary);
    runners.emplace_back(sub, spec.setup(*sub));
    names.emplace_back(spec.name);
  }
  for (int i = 1; i < argc; ++i) g_json_errors = g_json_errors || std::string_view(argv[i]) == "--json";
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --help-all, --version
    const std::string command = named_command(argc, argv, names);
    if (command.empty() && argc > 1 && argv[1][0] != '-') {
      const std::string guess = diag_closest(argv[1], names);
      return cli_usage("", std::string("unknown command '") + argv[1] + "'" +
                               (guess.empty() ? "" : "; did you mean '" + guess + "'?"),
                       help_hint(""));
    }
    if (dynamic_cast<const CLI::ExtrasError*>(&e)) return report_extras(app, command);
    return cli_usage(command, e.what(), help_hint(command));
  }
  for (auto& [sub, run] : runners) {
    if (!sub->parsed()) continue;
    const int rc = run();
    // The searches build many kernels: keep the cache under its cap (`compile` does it itself).
    if (sub->get_name() == "optimize" || sub->get_name() == "bench") cli_apply_cache_cap();
    return rc;
  }
  return kExitUsage;
}

}  // namespace ucut

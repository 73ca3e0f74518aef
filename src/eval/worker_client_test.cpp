// The worker client and pool against a fake worker (testdata/fake_worker.sh): responses are
// mapped onto records, and a hang, a crash, a fatal CUDA error or garbage on the stream each cost
// one record and one restart, after which the next candidate evaluates normally.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "eval/worker_pool.h"
#include "support/fs.h"

namespace ucut::eval {
namespace {

const std::string kFake = std::string(UCUTLASS_SOURCE_DIR) + "/src/eval/testdata/fake_worker.sh";

struct Fixture : ::testing::Test {
  std::string log = ::testing::TempDir() + "/fake_worker_" + std::to_string(::getpid()) + ".log";
  void SetUp() override { std::remove(log.c_str()); }
  void TearDown() override { std::remove(log.c_str()); }
  WorkerOptions options() {
    WorkerOptions w;
    w.argv = {"/bin/sh", kFake};
    w.env["FAKE_WORKER_LOG"] = log;
    w.start_timeout = std::chrono::milliseconds(10000);
    return w;
  }
  PoolOptions pool_options(std::vector<int> gpus) {
    PoolOptions po;
    po.gpus = std::move(gpus);
    po.worker = options();
    return po;
  }
  int starts() {
    std::ifstream in(log);
    int n = 0;
    std::string line;
    while (std::getline(in, line)) n += line.rfind("start", 0) == 0;
    return n;
  }
  static EvalOptions fast() {
    EvalOptions o;
    o.timeout = std::chrono::milliseconds(1500);
    return o;
  }
};

TEST_F(Fixture, OkResultBecomesARecordWithSpeedups) {
  WorkerClient w(options());
  ASSERT_TRUE(w.load_problem("p.py", std::chrono::milliseconds(5000)));
  ProblemContext ctx;
  ctx.info = {{"name", "fake"}, {"source_sha256", "abc123"}};
  ctx.env = *w.environment();
  EXPECT_EQ(measure_baselines(w, ctx, "default", "", std::chrono::milliseconds(5000)), "");
  EXPECT_DOUBLE_EQ(ctx.eager_ms, 2.0);
  EXPECT_DOUBLE_EQ(ctx.compile_ms, 1.0);
  ctx.t_sol_ms = 0.25;
  ctx.sol_source = "datasheet";
  RunRecord r = evaluate_candidate(w, {"good", "/k/ok.so", ""}, ctx, fast());
  EXPECT_EQ(r.status, "ok") << r.error;
  EXPECT_DOUBLE_EQ(r.median_ms, 0.5);
  EXPECT_DOUBLE_EQ(r.speedup_eager, 4.0);
  EXPECT_DOUBLE_EQ(r.speedup_compile, 2.0);
  EXPECT_DOUBLE_EQ(r.frac_sol, 0.5);
  EXPECT_EQ(r.trials, 6);
  EXPECT_EQ(r.config, "cfg_a");
  EXPECT_EQ(r.gpu, "Fake H200");
  EXPECT_EQ(r.worst_index, "[1]");
  EXPECT_TRUE(r.counted);
  EXPECT_TRUE(r.recheck_passed);
  EXPECT_EQ(r.samples_ms.size(), 2u);
}

TEST_F(Fixture, EveryFailureIsARecordAndTheNextCandidateStillRuns) {
  WorkerClient w(options());
  ASSERT_TRUE(w.load_problem("p.py", std::chrono::milliseconds(5000)));
  ProblemContext ctx;
  struct Case {
    const char* so;
    const char* status;
    const char* text;
  } cases[] = {
      {"/k/hang.so", "timeout", "timeout"},
      {"/k/ok.so", "ok", ""},
      {"/k/crash.so", "launch_error", "signal 11"},
      {"/k/ok.so", "ok", ""},
      {"/k/fatal.so", "launch_error", "illegal memory access"},
      {"/k/ok.so", "ok", ""},
      {"/k/noise.so", "launch_error", "not JSON"},
      {"/k/ok.so", "ok", ""},
      {"/k/mismatch.so", "mismatch", "outside"},
      {"/k/none.so", "launch_error", "no such kernel"},
  };
  for (const auto& c : cases) {
    RunRecord r = evaluate_candidate(w, {"c", c.so, ""}, ctx, fast());
    EXPECT_EQ(r.status, c.status) << c.so << ": " << r.error;
    EXPECT_NE(r.error.find(c.text), std::string::npos) << c.so << ": " << r.error;
    EXPECT_EQ(r.counted, r.status == "ok");
  }
  EXPECT_EQ(starts(), 5);  // first start + restarts after hang, crash, fatal, noise
  EXPECT_EQ(w.restarts(), 4);
}

TEST_F(Fixture, CrashMessageCarriesTheWorkersStderr) {
  WorkerClient w(options());
  ASSERT_TRUE(w.load_problem("p.py", std::chrono::milliseconds(5000)));
  RunRecord r = evaluate_candidate(w, {"c", "/k/crash.so", ""}, ProblemContext{}, fast());
  EXPECT_NE(r.error.find("Segmentation fault in fake kernel"), std::string::npos) << r.error;
}

TEST_F(Fixture, CompileErrorNeverReachesTheWorker) {
  WorkerClient w(options());
  RunRecord r = evaluate_candidate(w, {"c", "", "prog.ucut:3:5: error: unknown epilogue"}, ProblemContext{}, fast());
  EXPECT_EQ(r.status, "compile_error");
  EXPECT_EQ(r.phase, "compile");
  EXPECT_EQ(starts(), 0);
}

TEST_F(Fixture, BadProblemIsAnErrorNamingTheFile) {
  WorkerClient w(options());
  auto r = w.load_problem("missing.py", std::chrono::milliseconds(5000));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("missing.py"), std::string::npos);
}

// A problem whose evaluation cannot fit in GPU memory (the worker's memory plan, made when it
// loads the problem: docs/eval-contract.md "Memory") is refused up front: no baselines, and every
// candidate a launch_error in phase memory whose message names the sizes and the fix, never counted.
TEST_F(Fixture, ProblemThatCannotFitIsRefusedWithTheSizesAndTheFix) {
  WorkerPool pool(pool_options({0}));
  ProblemContext ctx;
  std::string notes;
  ASSERT_TRUE(pool.prepare("huge.py", ctx, notes));
  EXPECT_EQ(notes.rfind("baselines failed: does not fit in GPU memory", 0), 0u) << notes;
  EXPECT_TRUE(std::isnan(ctx.eager_ms));
  auto recs = pool.evaluate_all({{"a", "/k/ok.so", ""}, {"b", "/k/ok.so", ""}}, ctx, fast());
  ASSERT_EQ(recs.size(), 2u);
  for (const auto& r : recs) {
    EXPECT_EQ(r.status, "launch_error");
    EXPECT_EQ(r.phase, "memory");
    EXPECT_NE(r.error.find("needs about 160.5 GiB of GPU memory (inputs 2 x 40.0 GiB"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("make get_inputs() smaller"), std::string::npos) << r.error;
    EXPECT_FALSE(r.counted);
  }
  EXPECT_NE(run_records_markdown(recs).find("- a (launch_error): does not fit in GPU memory"), std::string::npos);
  EXPECT_EQ(starts(), 1);  // refused, not crashed: the worker stays
}

// PyTorch without a CUDA GPU makes a worker that would time the CPU: it is refused at start.
TEST_F(Fixture, WorkerWithoutAGpuIsRefused) {
  WorkerOptions o = options();
  o.env["FAKE_WORKER_GPU"] = "cpu";
  WorkerClient w(o);
  auto r = w.load_problem("p.py", std::chrono::milliseconds(5000));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::invalid_input);
  EXPECT_NE(r.error().message.find("no CUDA GPU: PyTorch in the evaluation worker sees none"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().hint.find("optimize --plan"), std::string::npos);
}

TEST_F(Fixture, WorkerThatCannotStartIsAnError) {
  WorkerOptions o;
  o.argv = {"/nonexistent/python"};
  WorkerClient w(o);
  auto r = w.load_problem("p.py", std::chrono::milliseconds(2000));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::subprocess);
}

TEST_F(Fixture, PoolSpreadsCandidatesOverGpusAndKeepsOrder) {
  WorkerPool pool(pool_options({0, 1}));
  ProblemContext ctx;
  std::string notes;
  ASSERT_TRUE(pool.prepare("p.py", ctx, notes));
  EXPECT_EQ(ctx.info.value("name", ""), "fake");
  std::vector<BuiltLibrary> cands = {{"a", "/k/ok.so", ""}, {"b", "/k/crash.so", ""}, {"c", "/k/mismatch.so", ""},
                                  {"d", "/k/ok.so", ""}, {"e", "/k/ok.so", ""}};
  int seen = 0;
  auto recs = pool.evaluate_all(cands, ctx, fast(), [&](const RunRecord&) { ++seen; });
  ASSERT_EQ(recs.size(), 5u);
  EXPECT_EQ(seen, 5);
  const char* want[] = {"ok", "launch_error", "mismatch", "ok", "ok"};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(recs[i].candidate, cands[i].name);
    EXPECT_EQ(recs[i].status, want[i]) << recs[i].error;
  }
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("gpu=0"), std::string::npos);
  EXPECT_NE(ss.str().find("gpu=1"), std::string::npos);
}

// A run started under CUDA_VISIBLE_DEVICES evaluates on the GPUs it names: --gpus indices count
// the visible GPUs (runs E and H of docs/benchmarks.md put two "separate" passes on one GPU when
// the worker overwrote the parent's mapping with the bare index).
TEST(PoolGpus, IndicesCountTheParentsVisibleDevices) {
  EXPECT_EQ(*worker_visible_device(1, ""), "1");
  EXPECT_EQ(*worker_visible_device(0, "1"), "1");
  EXPECT_EQ(*worker_visible_device(1, "2,3"), "3");
  EXPECT_EQ(*worker_visible_device(0, "GPU-8a1f,GPU-77c0"), "GPU-8a1f");
  auto past = worker_visible_device(1, "1");
  ASSERT_FALSE(past);
  EXPECT_NE(past.error().message.find("CUDA_VISIBLE_DEVICES=1"), std::string::npos);
}

TEST_F(Fixture, PoolUnderCudaVisibleDevicesUsesTheNamedGpus) {
  const char* old = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string saved = old ? old : "";
  setenv("CUDA_VISIBLE_DEVICES", "5,7", 1);
  auto all = pool_parse_gpus("all");
  {
    WorkerPool pool(pool_options({1}));
    ProblemContext ctx;
    std::string notes;
    EXPECT_TRUE(pool.prepare("p.py", ctx, notes));
  }
  if (old) setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
  else unsetenv("CUDA_VISIBLE_DEVICES");
  ASSERT_TRUE(all);
  EXPECT_EQ(*all, (std::vector<int>{0, 1}));
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("gpu=7"), std::string::npos) << ss.str();
  EXPECT_EQ(ss.str().find("gpu=1"), std::string::npos) << ss.str();
}

TEST(PoolGpus, Parse) {
  auto g = pool_parse_gpus("0,2");
  ASSERT_TRUE(g);
  EXPECT_EQ(*g, (std::vector<int>{0, 2}));
  EXPECT_FALSE(pool_parse_gpus("0,x"));
  EXPECT_FALSE(pool_parse_gpus("1,,2"));
  auto all = pool_parse_gpus("all");
  ASSERT_TRUE(all);
  EXPECT_FALSE(all->empty());
}

}  // namespace
}  // namespace ucut::eval

#include "search/suite.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <thread>

namespace ucut::search {

double suite_headroom(const HeadroomInputs& p) {
  if (p.t_sol <= 0) return std::numeric_limits<double>::infinity();
  if (p.t_best) return *p.t_best / p.t_sol;
  if (p.t_eager > 0) return p.t_eager / p.t_sol;
  return std::numeric_limits<double>::infinity();
}

double suite_priority(const HeadroomInputs& p) {
  const double h = suite_headroom(p);
  if (std::isinf(h)) return h;
  return std::log(std::max(h, 1.0)) / (1.0 + std::max(0, p.since_improvement) / 4.0);
}

std::optional<size_t> suite_pick(const std::vector<HeadroomInputs>& problems, int breadth) {
  // Tiers: 0 untried, 1 tried with nothing correct, 2 correct with fewer than `breadth` attempts,
  // 3 correct. Within a tier: the most headroom (tiers 1 and 2: the fewest attempts first; tiers
  // 2 and 3: the headroom discounted by stagnation), then fewer attempts, then the earlier
  // problem.
  auto tier = [breadth](const HeadroomInputs& p) {
    return p.attempts == 0 ? 0 : !p.t_best ? 1 : p.attempts < breadth ? 2 : 3;
  };
  auto better = [&](const HeadroomInputs& a, double ha, const HeadroomInputs& b, double hb) {
    if (tier(a) != tier(b)) return tier(a) < tier(b);
    if ((tier(a) == 1 || tier(a) == 2) && a.attempts != b.attempts) return a.attempts < b.attempts;
    if (ha != hb) return ha > hb;
    return a.attempts < b.attempts;
  };
  std::optional<size_t> best;
  double best_h = 0;
  for (size_t i = 0; i < problems.size(); ++i) {
    const auto& p = problems[i];
    if (p.stopped) continue;
    const double h = p.t_best ? suite_priority(p) : suite_headroom(p);
    if (!best || better(p, h, problems[*best], best_h)) {
      best = i;
      best_h = h;
    }
  }
  return best;
}

SuiteScheduler::SuiteScheduler(std::vector<SearchSession*> sessions, SuiteOptions options,
                               Clock& clock)
    : sessions_(std::move(sessions)), opt_(options), clock_(clock) {}

int SuiteScheduler::run(const std::atomic<bool>* interrupt) {
  const double t0 = clock_.now_s();
  // A failed start stops that session (step() retries it once and then says interrupted).
  // overlap: each session starts (baselines) and primes its compiles on its own thread; the
  // loop below steps a session only once its start has finished.
  std::vector<std::thread> starts;
  std::unique_ptr<std::atomic<bool>[]> started(new std::atomic<bool>[sessions_.size()]);
  for (size_t i = 0; i < sessions_.size(); ++i) started[i] = !opt_.overlap;
  if (opt_.overlap) {
    for (size_t i = 0; i < sessions_.size(); ++i)
      starts.emplace_back([s = sessions_[i], flag = &started[i]] {
        // The opening compiles while the baselines are measured, where the strategy allows it:
        // with one GPU, 80 problems' baselines take minutes (run BK: the first attempt came 299 s
        // into the search), and nvcc need not wait for them.
        if (s->load()) s->prime();
        if (s->start()) s->prime();
        *flag = true;
      });
  } else {
    for (auto* s : sessions_) (void)s->start();
  }
  struct Join {
    std::vector<std::thread>& ts;
    ~Join() {
      for (auto& t : ts) t.join();
    }
  } join{starts};
  int made = 0;
  while (true) {
    if (interrupt && interrupt->load()) {
      for (auto* s : sessions_)
        if (!s->stopped()) s->interrupt();
      break;
    }
    if (opt_.pool > 0 && made >= opt_.pool) break;
    if (opt_.wall_s > 0 && clock_.now_s() - t0 >= opt_.wall_s) break;
    std::vector<HeadroomInputs> view;
    bool alive = false;
    for (size_t i = 0; i < sessions_.size(); ++i) {
      SearchSession* s = sessions_[i];
      if (!started[i]) {  // still measuring its baselines
        alive = true;
        view.push_back({true, 0, std::nullopt, 0, 0});
        continue;
      }
      StopInputs in = s->stop_inputs();
      // overlap: a session still compiling its next candidate waits its turn
      const bool skip = s->stopped() || (opt_.overlap && !s->ready());
      alive = alive || !s->stopped();
      view.push_back({skip, in.attempts, in.t_best, in.t_eager, in.t_sol, in.since_improvement});
    }
    if (!alive) break;
    auto pick = suite_pick(view, opt_.breadth);
    if (!pick) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // every live session is compiling
      continue;
    }
    const size_t before = sessions_[*pick]->state().attempts.size();
    sessions_[*pick]->step();
    if (sessions_[*pick]->state().attempts.size() > before) {
      ++made;
      order_.push_back(*pick);
    }
  }
  return made;
}

}  // namespace ucut::search

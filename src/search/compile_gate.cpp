#include "search/compile_gate.h"

#include <algorithm>
#include <chrono>

#include "build/compiler.h"

namespace ucut::search {

void CompileGate::set_width(int width) {
  std::lock_guard<std::mutex> lock(mu_);
  width_ = width < 0 ? 0 : width;
  cv_.notify_all();
}

int CompileGate::width() const {
  std::lock_guard<std::mutex> lock(mu_);
  return width_;
}

double CompileGate::now_s() const {
  if (now_) return now_();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void CompileGate::account() const {
  const double t = now_s();
  if (last_ < 0) since_ = last_ = t;
  const double dt = std::max(0.0, t - last_);
  use_.slot_s += dt * running_;
  if (!queue_.empty()) {
    use_.waiting_s += dt;
    use_.slot_s_waiting += dt * running_;
  }
  last_ = t;
}

CompileGate::Usage CompileGate::usage() const {
  std::lock_guard<std::mutex> lock(mu_);
  account();
  Usage u = use_;
  u.wall_s = std::max(0.0, last_ - since_);
  return u;
}

void CompileGate::reset_usage() {
  std::lock_guard<std::mutex> lock(mu_);
  use_ = Usage{};
  since_ = last_ = now_s();
}

void CompileGate::set_clock(std::function<double()> now) {
  std::lock_guard<std::mutex> lock(mu_);
  now_ = std::move(now);
  use_ = Usage{};
  since_ = last_ = now_s();
}

int CompileGate::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

int CompileGate::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(queue_.size());
}

bool CompileGate::acquire(const std::atomic<bool>* cancelled, bool urgent) {
  std::unique_lock<std::mutex> lock(mu_);
  const std::pair<int, uint64_t> key{urgent ? 0 : 1, next_ticket_++};
  account();
  queue_.insert(key);
  while (true) {
    if ((cancelled && cancelled->load()) || build::build_compiles_aborted()) {
      account();
      queue_.erase(key);
      cv_.notify_all();
      return false;
    }
    if (*queue_.begin() == key && (width_ == 0 || running_ < width_)) {
      account();
      queue_.erase(key);
      ++running_;
      cv_.notify_all();
      return true;
    }
    // The cancel flag is set without the lock: poll it while waiting.
    cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
}

bool CompileGate::try_acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (width_ == 0 || !queue_.empty() || running_ >= width_ || build::build_compiles_aborted()) return false;
  account();
  ++running_;
  return true;
}

void CompileGate::release() {
  std::lock_guard<std::mutex> lock(mu_);
  account();
  if (running_ > 0) --running_;
  cv_.notify_all();
}

CompileGate& compile_gate() {
  static CompileGate gate;
  return gate;
}

}  // namespace ucut::search

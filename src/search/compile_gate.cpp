#include "search/compile_gate.h"

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
  queue_.insert(key);
  while (true) {
    if ((cancelled && cancelled->load()) || build::build_compiles_aborted()) {
      queue_.erase(key);
      cv_.notify_all();
      return false;
    }
    if (*queue_.begin() == key && (width_ == 0 || running_ < width_)) {
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
  ++running_;
  return true;
}

void CompileGate::release() {
  std::lock_guard<std::mutex> lock(mu_);
  if (running_ > 0) --running_;
  cv_.notify_all();
}

CompileGate& compile_gate() {
  static CompileGate gate;
  return gate;
}

}  // namespace ucut::search

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
  return waiting_;
}

void CompileGate::skip_cancelled() {
  while (!cancelled_.empty() && *cancelled_.begin() == serving_) {
    cancelled_.erase(cancelled_.begin());
    ++serving_;
  }
}

bool CompileGate::acquire(const std::atomic<bool>* cancelled) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t ticket = next_ticket_++;
  ++waiting_;
  while (true) {
    if ((cancelled && cancelled->load()) || build::build_compiles_aborted()) {
      --waiting_;
      if (ticket == serving_) ++serving_;
      else cancelled_.insert(ticket);
      skip_cancelled();
      cv_.notify_all();
      return false;
    }
    if (ticket == serving_ && (width_ == 0 || running_ < width_)) {
      --waiting_;
      ++running_;
      ++serving_;
      skip_cancelled();
      cv_.notify_all();
      return true;
    }
    // The cancel flag is set without the lock: poll it while waiting.
    cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
}

bool CompileGate::try_acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (width_ == 0 || waiting_ > 0 || running_ >= width_ || build::build_compiles_aborted()) return false;
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

#include "compiler/entries/background_compiler.h"

#include <algorithm>
#include <utility>

namespace graphjit::compiler::entries {

BackgroundCompiler::BackgroundCompiler(int capacity, CompileFn compile, DropFn on_drop)
    : capacity_(std::max(1, capacity)),
      compile_(std::move(compile)),
      on_drop_(std::move(on_drop)) {}

BackgroundCompiler::~BackgroundCompiler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  queued_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void BackgroundCompiler::Enqueue(const std::shared_ptr<CacheEntry>& entry) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->lock() == entry) {
      queue_.erase(it);
      break;
    }
  }
  while (static_cast<int>(queue_.size()) >= capacity_) {
    std::shared_ptr<CacheEntry> dropped = queue_.front().lock();
    queue_.pop_front();
    if (dropped != nullptr) on_drop_(*dropped);
  }
  queue_.push_back(entry);
  if (!worker_.joinable()) worker_ = std::thread([this] { Loop(); });
  queued_.notify_one();
}

void BackgroundCompiler::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    queued_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    std::shared_ptr<CacheEntry> entry = queue_.front().lock();
    queue_.pop_front();
    if (entry == nullptr) continue;
    lock.unlock();
    compile_(std::move(entry));  // the entry (and maybe its code) is released outside mu_
    lock.lock();
  }
}

}  // namespace graphjit::compiler::entries

#include "compiler/cache/code_store.h"

#include <chrono>

#include "absl/strings/str_format.h"

namespace graphjit::compiler {

std::string CodeStoreStats::ToString() const {
  return absl::StrFormat("lookups=%d hits=%d compiles=%d failed=%d live=%d compile=%.3fs", lookups,
                         hits, compiles, failed_compiles, live, compile_seconds);
}

std::shared_ptr<CodeStore> CodeStore::Default() {
  // Never destroyed: code may still be held by static objects at exit.
  static auto* store = new std::shared_ptr<CodeStore>(std::make_shared<CodeStore>());
  return *store;
}

std::shared_ptr<const CompiledGraph> CodeStore::Find(const ContentKey& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = slots_.find(key);
  return it == slots_.end() ? nullptr : it->second.code.lock();
}

void CodeStore::SweepLocked() {
  if (slots_.size() < sweep_at_) return;
  absl::erase_if(slots_, [](const auto& kv) {
    return !kv.second.compiling && kv.second.code.expired();
  });
  sweep_at_ = std::max<size_t>(64, 2 * slots_.size());
}

absl::StatusOr<std::shared_ptr<const CompiledGraph>> CodeStore::GetOrCompile(
    const ContentKey& key, CompileFn compile, bool* compiled) {
  if (compiled != nullptr) *compiled = false;
  std::unique_lock<std::mutex> lock(mu_);
  ++stats_.lookups;
  while (true) {
    Slot& slot = slots_[key];
    if (std::shared_ptr<const CompiledGraph> code = slot.code.lock()) {
      ++stats_.hits;
      return code;
    }
    if (!slot.compiling) break;
    compiled_.wait(lock);  // the slot may be gone (a failed compile): look it up again
  }
  slots_[key].compiling = true;
  ++stats_.compiles;
  lock.unlock();
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<CompiledGraph>> result = compile();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::shared_ptr<const CompiledGraph> code;
  if (result.ok()) code = std::shared_ptr<const CompiledGraph>(*std::move(result));
  // Destroying the last holder frees code under the JIT's locks, never under ours:
  // `code` outlives the lock below.
  lock.lock();
  stats_.compile_seconds += seconds;
  if (code == nullptr) {
    ++stats_.failed_compiles;
    slots_.erase(key);
  } else {
    Slot& slot = slots_[key];
    slot.code = code;
    slot.compiling = false;
    SweepLocked();
  }
  compiled_.notify_all();
  if (code == nullptr) return result.status();
  if (compiled != nullptr) *compiled = true;
  return code;
}

CodeStoreStats CodeStore::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  CodeStoreStats s = stats_;
  s.live = 0;
  for (const auto& [key, slot] : slots_) s.live += slot.code.expired() ? 0 : 1;
  return s;
}

}  // namespace graphjit::compiler

#include "compiler/compiled/kernel_modules.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/store/content_store.h"
#include "compiler/store/disk_cache.h"
#include "compiler/store/remote_cache.h"

namespace graphjit::compiler {
namespace {

constexpr int kKernelsPerModule = 6;

// The module of `g` from the disk cache, else the remote cache, else compiled (and then
// stored in both).
absl::StatusOr<std::unique_ptr<NativeModule>> LoadOrCompile(const ModuleSources& sources,
                                                            ModuleGroup& g) {
  DiskCache* disk = sources.disk;
  RemoteCache* remote = sources.remote;
  if (disk != nullptr) {
    if (std::optional<std::string> object = disk->Load(g.key)) {
      absl::StatusOr<std::unique_ptr<NativeModule>> loaded = LoadModule(*object, g.function_names);
      if (loaded.ok()) {
        g.loaded = true;
        return loaded;
      }
      // Passed the file checks but does not link: never load it again.
      disk->Remove(g.key);
    }
  }
  // Below the disk: the remote value, or its lock (this process compiles the module
  // for all), or a bounded wait for the process that holds it.
  RemoteCache::Claim claim;
  if (remote != nullptr) {
    claim = remote->Acquire(g.key);
    g.remote_wait = claim.waited;
    if (claim.kind == RemoteCache::Claim::kHit) {
      absl::StatusOr<std::unique_ptr<NativeModule>> loaded =
          LoadModule(claim.payload, g.function_names);
      if (loaded.ok()) {
        g.loaded = g.fetched = g.remote_hit = true;
        if (disk != nullptr) disk->Store(g.key, claim.payload);
        return loaded;
      }
      remote->Reject(g.key, absl::StrCat("does not link: ", loaded.status().message()));
      claim = RemoteCache::Claim();  // compiled and published without the lock
      g.remote_miss = true;
    } else if (claim.kind == RemoteCache::Claim::kLocked) {
      g.remote_miss = true;
    } else {
      g.remote_fallback = true;
    }
  }
  std::vector<const Program*> programs;
  for (int j : g.members) {
    absl::StatusOr<const Program*> unit = sources.unit(j);
    if (!unit.ok()) {
      if (remote != nullptr) remote->Release(g.key, claim);
      return unit.status();
    }
    programs.push_back(*unit);
  }
  CompileOptions codegen = sources.codegen;
  codegen.keep_object = disk != nullptr || remote != nullptr;
  absl::StatusOr<std::unique_ptr<NativeModule>> compiled =
      CompileModule(programs, g.function_names, codegen);
  if (!compiled.ok()) {
    if (remote != nullptr) remote->Release(g.key, claim);
    std::vector<std::string> names;
    for (int j : g.members) names.push_back(sources.names[j]);
    return absl::Status(
        compiled.status().code(),
        absl::StrCat("kernels ", absl::StrJoin(names, ", "), ": ", compiled.status().message()));
  }
  if (remote != nullptr) remote->Publish(g.key, (*compiled)->object(), claim);
  if (disk != nullptr) disk->Store(g.key, (*compiled)->object());
  return compiled;
}

}  // namespace

std::vector<ModuleGroup> GroupModules(const std::vector<int>& missing,
                                      const std::vector<ContentKey>& keys) {
  const int num_groups =
      (static_cast<int>(missing.size()) + kKernelsPerModule - 1) / kKernelsPerModule;
  std::vector<ModuleGroup> groups(num_groups);
  for (size_t m = 0; m < missing.size(); ++m) {
    groups[m * num_groups / missing.size()].members.push_back(missing[m]);
  }
  for (ModuleGroup& g : groups) {
    std::string members;
    for (int j : g.members) absl::StrAppend(&members, keys[j].ToHex(), ",");
    g.key = KernelContentKey(absl::StrCat("module-v1:", members));
    // Named after the module's key, so its object links under the same names anywhere.
    for (size_t i = 0; i < g.members.size(); ++i) {
      g.function_names.push_back(absl::StrCat("gj_", g.key.ToHex(), "_", i));
    }
  }
  return groups;
}

int GetOrCompileModules(const ModuleSources& sources, std::vector<ModuleGroup>* groups) {
  ModuleStore& modules = ModuleStore::Default();
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < groups->size();) {
      ModuleGroup& g = (*groups)[i];
      if (sources.private_text) {
        // Private: its function names must not clash with the shared module of this key.
        for (std::string& name : g.function_names) absl::StrAppend(&name, "_", i, "_private");
        absl::StatusOr<std::unique_ptr<NativeModule>> m = LoadOrCompile(sources, g);
        g.module = m.ok() ? absl::StatusOr<std::shared_ptr<const NativeModule>>(*std::move(m))
                          : m.status();
        g.built = true;
        continue;
      }
      // One live module per key: concurrent graphs missing the same kernels share it.
      g.module = modules.GetOrCompile(g.key, [&] { return LoadOrCompile(sources, g); }, &g.built);
    }
  };
  // Threads pay only for compiles: modules that are live or on disk load in this thread
  // (starting the threads would cost more than the loads, which are a warm start's time).
  const int to_compile = ModulesToCompile(sources, *groups);
  const int threads = std::max(1, std::min(sources.max_threads, to_compile));
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (std::thread& t : pool) t.join();
  }
  return threads;
}

int ModulesToCompile(const ModuleSources& sources, const std::vector<ModuleGroup>& groups) {
  ModuleStore& modules = ModuleStore::Default();
  int to_compile = 0;
  for (const ModuleGroup& g : groups) {
    const bool live = !sources.private_text && modules.Find(g.key) != nullptr;
    const bool on_disk = sources.disk != nullptr && sources.disk->Contains(g.key);
    to_compile += !live && !on_disk;
  }
  return to_compile;
}

}  // namespace graphjit::compiler

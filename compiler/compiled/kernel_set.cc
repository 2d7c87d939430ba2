#include "compiler/compiled/kernel_set.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/lower/kernel_unit.h"
#include "compiler/store/code_store.h"
#include "compiler/store/disk_cache.h"
#include "compiler/store/remote_cache.h"
#include "ir/clock.h"
#include "runtime/scalar_semantics.h"

namespace graphjit::compiler {
namespace {

// A workspace offset: i64 arithmetic over symbols (lowering builds them from SymExprs).
int64_t EvalOffset(const ExprPtr& e, const int64_t* symbols) {
  switch (e->kind) {
    case ExprKind::kConst:
      return e->i_value;
    case ExprKind::kSymbol:
      return symbols[e->index];
    case ExprKind::kOp: {
      int64_t a = EvalOffset(e->operands[0], symbols);
      if (e->operands.size() == 1) return e->op == ScalarOp::kNeg ? -a : a;
      int64_t b = EvalOffset(e->operands[1], symbols);
      switch (e->op) {
        case ScalarOp::kAdd:
          return a + b;
        case ScalarOp::kSub:
          return a - b;
        case ScalarOp::kMul:
          return a * b;
        case ScalarOp::kDiv:
          return runtime::FloorDivI64(a, b);
        case ScalarOp::kMod:
          return runtime::FloorModI64(a, b);
        case ScalarOp::kMax:
          return std::max(a, b);
        case ScalarOp::kMin:
          return std::min(a, b);
        default:
          break;
      }
      break;
    }
    default:
      break;
  }
  GJ_FATAL() << "workspace offset is not i64 arithmetic: " << ExprToString(e);
}

bool IsConstantOffset(const ExprPtr& e) { return e->kind == ExprKind::kConst; }

}  // namespace

absl::StatusOr<std::unique_ptr<KernelSet>> KernelSet::Compile(const Program& program,
                                                              const KernelSetOptions& options) {
  const auto start = ir::Clock::now();
  std::unique_ptr<KernelSet> set(new KernelSet());
  for (const Buffer& b : program.buffers) {
    Address a;
    if (b.kind == BufferKind::kTemp) {
      if (IsConstantOffset(b.workspace_offset)) {
        a.offset = b.workspace_offset->i_value;
      } else {
        a.offset_expr = b.workspace_offset;
      }
    } else {
      a.arg = b.arg_index;
    }
    set->addresses_.push_back(a);
  }

  // Units and their keys; each distinct key compiles once (job order: first use).
  std::vector<KernelUnit> units;
  absl::flat_hash_map<ContentKey, int> job_of;
  std::vector<int> jobs;  // unit index of each distinct key
  for (int k = 0; k < static_cast<int>(program.kernels.size()); ++k) {
    units.push_back(MakeKernelUnit(program, k));
    Call call;
    call.key = KernelContentKey(units.back().text, options.codegen);
    call.buffers = units.back().buffers;
    call.symbols = units.back().symbols;
    if (job_of.try_emplace(call.key, static_cast<int>(jobs.size())).second) jobs.push_back(k);
    set->calls_.push_back(std::move(call));
  }

  // Texts are kept only by private compiles: code from the store may have been compiled
  // without them.
  const bool keep_text = options.codegen.keep_ir || options.codegen.emit_asm;
  KernelStore& store = *options.store;
  std::vector<std::shared_ptr<const KernelCode>> code(jobs.size());
  std::vector<int> missing;
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (!keep_text) code[j] = store.Find(set->calls_[jobs[j]].key);
    if (code[j] == nullptr) missing.push_back(static_cast<int>(j));
  }
  KernelSetStats& stats = set->stats_;
  stats.reused = static_cast<int>(jobs.size() - missing.size());

  // The missing kernels compile in modules of up to kKernelsPerModule (LLVM's fixed cost
  // per module, measured at about 6-9 ms here, is what a handful of small kernels cost),
  // balanced, in first-use order: the grouping depends only on what is missing, so a new
  // process that misses the same kernels forms the same modules and finds them on disk.
  constexpr int kKernelsPerModule = 6;
  const int num_groups =
      (static_cast<int>(missing.size()) + kKernelsPerModule - 1) / kKernelsPerModule;
  struct Group {
    std::vector<int> members;  // indices into jobs
    ContentKey key;
    std::vector<std::string> symbols;
    absl::StatusOr<std::shared_ptr<const NativeModule>> module = absl::UnknownError("not run");
    bool built = false;    // compiled or loaded here (else a live module was shared)
    bool loaded = false;   // from the disk or the remote cache
    bool fetched = false;  // from the remote cache
    // The remote cache's answer: a value, a miss (compiled under its lock), a fallback
    // (compiled without it); waited: another process held the lock for a while.
    bool remote_hit = false, remote_miss = false, remote_fallback = false, remote_wait = false;
  };
  std::vector<Group> groups(num_groups);
  for (size_t m = 0; m < missing.size(); ++m) {
    groups[m * num_groups / missing.size()].members.push_back(missing[m]);
  }
  for (Group& g : groups) {
    std::string members;
    for (int j : g.members) absl::StrAppend(&members, set->calls_[jobs[j]].key.ToHex(), ",");
    g.key = KernelContentKey(absl::StrCat("module-v1:", members));
    // Named after the module's key, so its object links under the same names anywhere.
    for (size_t i = 0; i < g.members.size(); ++i) {
      g.symbols.push_back(absl::StrCat("gj_", g.key.ToHex(), "_", i));
    }
  }

  DiskCache* disk = keep_text ? nullptr : options.disk;
  RemoteCache* remote = keep_text ? nullptr : options.remote;
  std::atomic<size_t> next{0};
  auto build = [&](Group& g) -> absl::StatusOr<std::unique_ptr<NativeModule>> {
    if (disk != nullptr) {
      if (std::optional<std::string> object = disk->Load(g.key)) {
        absl::StatusOr<std::unique_ptr<NativeModule>> loaded = LoadModule(*object, g.symbols);
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
        absl::StatusOr<std::unique_ptr<NativeModule>> loaded = LoadModule(claim.payload, g.symbols);
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
    for (int j : g.members) programs.push_back(&units[jobs[j]].program);
    CompileOptions codegen = options.codegen;
    codegen.keep_object = disk != nullptr || remote != nullptr;
    absl::StatusOr<std::unique_ptr<NativeModule>> compiled =
        CompileModule(programs, g.symbols, codegen);
    if (!compiled.ok()) {
      if (remote != nullptr) remote->Release(g.key, claim);
      std::vector<std::string> names;
      for (int j : g.members) names.push_back(program.kernels[jobs[j]].name);
      return absl::Status(
          compiled.status().code(),
          absl::StrCat("kernels ", absl::StrJoin(names, ", "), ": ", compiled.status().message()));
    }
    if (remote != nullptr) remote->Publish(g.key, (*compiled)->object(), claim);
    if (disk != nullptr) disk->Store(g.key, (*compiled)->object());
    return compiled;
  };
  ModuleStore& modules = ModuleStore::Default();
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < groups.size();) {
      Group& g = groups[i];
      if (keep_text) {
        // Private: its entry names must not clash with the shared module of this key.
        for (std::string& symbol : g.symbols) absl::StrAppend(&symbol, "_", i, "_private");
        absl::StatusOr<std::unique_ptr<NativeModule>> m = build(g);
        g.module = m.ok() ? absl::StatusOr<std::shared_ptr<const NativeModule>>(*std::move(m))
                          : m.status();
        g.built = true;
        continue;
      }
      // One live module per key: concurrent graphs missing the same kernels share it.
      g.module = modules.GetOrCompile(g.key, [&] { return build(g); }, &g.built);
    }
  };
  // Threads pay only for compiles: modules that are live or on disk load in this thread
  // (starting the threads would cost more than the loads, which are a warm start's time).
  int to_compile = 0;
  for (const Group& g : groups) {
    const bool live = !keep_text && modules.Find(g.key) != nullptr;
    std::error_code error;
    const bool on_disk = disk != nullptr && std::filesystem::exists(disk->PathOf(g.key), error);
    to_compile += !live && !on_disk;
  }
  const int threads = std::max(1, std::min<int>(std::max(1, options.threads), to_compile));
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (std::thread& t : pool) t.join();
  }

  stats.kernels = static_cast<int>(program.kernels.size());
  stats.distinct = static_cast<int>(jobs.size());
  stats.threads = num_groups == 0 ? 0 : threads;
  stats.modules = num_groups;
  stats.remote = remote != nullptr;
  for (Group& g : groups) {
    if (!g.module.ok()) return g.module.status();
    const NativeModule& module = **g.module;
    const int n = static_cast<int>(g.members.size());
    (!g.built ? stats.reused : g.loaded ? stats.loaded : stats.compiled) += n;
    if (g.built && g.fetched) stats.fetched += n;
    if (g.built) {
      stats.remote_hits += g.remote_hit;
      stats.remote_misses += g.remote_miss;
      stats.remote_lock_waits += g.remote_wait;
      stats.remote_fallbacks += g.remote_fallback;
    }
    if (g.built) {
      stats.timings += module.timings();
    }
    if (keep_text) {
      absl::StrAppend(&set->llvm_ir_, module.llvm_ir());
      absl::StrAppend(&set->optimized_ir_, module.optimized_ir());
      absl::StrAppend(&set->assembly_, module.assembly());
    }
    for (size_t i = 0; i < g.members.size(); ++i) {
      auto kernel = std::make_shared<const KernelCode>(KernelCode{*g.module, static_cast<int>(i)});
      const int j = g.members[i];
      code[j] = keep_text ? kernel : store.Insert(set->calls_[jobs[j]].key, std::move(kernel));
    }
  }
  for (Call& call : set->calls_) {
    call.code = code[job_of.at(call.key)];
    call.entry = call.code->entry();
  }
  stats.wall_seconds = ir::SecondsSince(start);
  return set;
}

template <typename OnCall>
void KernelSet::RunCalls(void** args, const int64_t* symbols, char* workspace,
                         OnCall on_call) const {
  absl::InlinedVector<void*, 64> address(addresses_.size());
  for (size_t b = 0; b < addresses_.size(); ++b) {
    const Address& a = addresses_[b];
    if (a.arg >= 0) {
      address[b] = args[a.arg];
    } else {
      address[b] = workspace + (a.offset_expr ? EvalOffset(a.offset_expr, symbols) : a.offset);
    }
  }
  absl::InlinedVector<void*, 16> unit_args;
  absl::InlinedVector<int64_t, 16> unit_symbols;
  for (const Call& call : calls_) {
    unit_args.clear();
    unit_symbols.clear();
    for (int b : call.buffers) unit_args.push_back(address[b]);
    for (int s : call.symbols) unit_symbols.push_back(symbols[s]);
    on_call(call, unit_args.data(), unit_symbols.data());
  }
}

void KernelSet::Run(void** args, const int64_t* symbols, char* workspace) const {
  RunCalls(args, symbols, workspace,
           [](const Call& call, void** a, const int64_t* s) { call.entry(a, s, nullptr); });
}

void KernelSet::RunTimed(void** args, const int64_t* symbols, char* workspace,
                         double* kernel_seconds) const {
  size_t k = 0;
  RunCalls(args, symbols, workspace, [&](const Call& call, void** a, const int64_t* s) {
    const auto start = ir::Clock::now();
    call.entry(a, s, nullptr);
    kernel_seconds[k++] += ir::SecondsSince(start);
  });
}

std::vector<ContentKey> KernelSet::keys() const {
  std::vector<ContentKey> keys;
  for (const Call& call : calls_) keys.push_back(call.key);
  return keys;
}

}  // namespace graphjit::compiler

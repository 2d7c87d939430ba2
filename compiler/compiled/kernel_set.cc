#include "compiler/compiled/kernel_set.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "compiler/compiled/kernel_modules.h"
#include "compiler/compiled/step_phases.h"
#include "compiler/lower/kernel_unit.h"
#include "compiler/lower/parallel_loops.h"
#include "compiler/store/code_store.h"
#include "ir/clock.h"
#include "ir/status_macros.h"
#include "runtime/jit_helpers.h"
#include "runtime/scalar_semantics.h"
#include "runtime/thread_pool.h"

namespace graphjit::compiler {

// A program's kernels as canonical units (compiler/lower/kernel_unit.h) with their
// content keys; equal keys are one distinct kernel, compiled once.
struct CanonicalKernels {
  std::vector<KernelBinding> bindings;  // per kernel
  std::vector<KernelUnit> units;        // per kernel; empty when bound from bindings
  std::vector<int> distinct;            // the first kernel of each distinct key, in first-use order
  std::vector<ContentKey> distinct_keys;             // per distinct kernel
  absl::flat_hash_map<ContentKey, int> distinct_of;  // key -> its index in distinct
};

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
  GJ_FATAL() << "not i64 arithmetic of the symbols: " << ExprToString(e);
}

bool IsConstantOffset(const ExprPtr& e) { return e->kind == ExprKind::kConst; }

// Whether EvalOffset can evaluate `e` (a loop extent may be any i64 expression).
bool IsSymbolArithmetic(const Expr* e) {
  if (e == nullptr || e->dtype != ir::DType::kI64) return false;
  switch (e->kind) {
    case ExprKind::kConst:
    case ExprKind::kSymbol:
      return true;
    case ExprKind::kOp:
      switch (e->op) {
        case ScalarOp::kAdd:
        case ScalarOp::kSub:
        case ScalarOp::kMul:
        case ScalarOp::kDiv:
        case ScalarOp::kMod:
        case ScalarOp::kMax:
        case ScalarOp::kMin:
          break;
        case ScalarOp::kNeg:
          if (e->operands.size() != 1) return false;
          break;
        default:
          return false;
      }
      for (const ExprPtr& operand : e->operands) {
        if (!IsSymbolArithmetic(operand.get())) return false;
      }
      return e->op == ScalarOp::kNeg || e->operands.size() == 2;
    default:
      return false;
  }
}

void AddDistinct(CanonicalKernels& c) {
  for (int k = 0; k < static_cast<int>(c.bindings.size()); ++k) {
    const ContentKey& key = c.bindings[k].key;
    if (c.distinct_of.try_emplace(key, static_cast<int>(c.distinct.size())).second) {
      c.distinct.push_back(k);
      c.distinct_keys.push_back(key);
    }
  }
}

CanonicalKernels Canonicalize(const Program& program, const CompileOptions& codegen) {
  CanonicalKernels c;
  for (int k = 0; k < static_cast<int>(program.kernels.size()); ++k) {
    c.units.push_back(MakeKernelUnit(program, k));
    const KernelUnit& unit = c.units.back();
    c.bindings.push_back({KernelContentKey(unit.text, codegen), unit.buffers, unit.symbols});
  }
  AddDistinct(c);
  return c;
}

// The kernels as `bindings` bound them, if they fit the program (one per kernel, every
// buffer and symbol in range).
std::optional<CanonicalKernels> FromBindings(const Program& program,
                                             const std::vector<KernelBinding>& bindings) {
  if (bindings.size() != program.kernels.size()) return std::nullopt;
  for (const KernelBinding& b : bindings) {
    for (int buffer : b.buffers) {
      if (buffer < 0 || buffer >= static_cast<int>(program.buffers.size())) return std::nullopt;
    }
    for (int symbol : b.symbols) {
      if (symbol < 0 || symbol >= static_cast<int>(program.symbols.size())) return std::nullopt;
    }
  }
  CanonicalKernels c;
  c.bindings = bindings;
  AddDistinct(c);
  return c;
}

// Sets code[j] for the distinct kernels live in the KernelStore (never for private
// compiles); returns the others, the missing ones, in first-use order.
std::vector<int> FindLiveKernels(const CanonicalKernels& canonical, KernelStore& store,
                                 bool keep_text,
                                 std::vector<std::shared_ptr<const KernelCode>>* code) {
  std::vector<int> missing;
  for (size_t j = 0; j < canonical.distinct.size(); ++j) {
    if (!keep_text) (*code)[j] = store.Find(canonical.distinct_keys[j]);
    if ((*code)[j] == nullptr) missing.push_back(static_cast<int>(j));
  }
  return missing;
}

// The distinct kernels' programs and names, the codegen options and the caches (none for
// private compiles) the missing modules come from.
ModuleSources SourcesOf(const Program& program, const CanonicalKernels& canonical,
                        const KernelSetOptions& options, bool keep_text) {
  ModuleSources sources;
  for (int k : canonical.distinct) {
    if (!canonical.units.empty()) sources.units.push_back(&canonical.units[k].program);
    sources.names.push_back(program.kernels[k].name);
  }
  sources.codegen = options.codegen;
  sources.private_text = keep_text;
  sources.disk = keep_text ? nullptr : options.disk;
  sources.remote = keep_text ? nullptr : options.remote;
  sources.max_threads = std::max(1, options.threads);
  return sources;
}

// Adds one module's kernels to the counts: shared live, loaded or compiled, and what the
// remote cache answered for it.
void CountModule(const ModuleGroup& g, KernelSetStats* stats) {
  const int n = static_cast<int>(g.members.size());
  (!g.built ? stats->reused : g.loaded ? stats->loaded : stats->compiled) += n;
  if (g.built && g.fetched) stats->fetched += n;
  if (g.built) {
    stats->remote_hits += g.remote_hit;
    stats->remote_misses += g.remote_miss;
    stats->remote_lock_waits += g.remote_wait;
    stats->remote_fallbacks += g.remote_fallback;
    stats->timings += (*g.module)->timings();
  }
}

}  // namespace

std::vector<KernelSet::Address> KernelSet::AddressesOf(const Program& program) {
  std::vector<Address> addresses;
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
    addresses.push_back(a);
  }
  return addresses;
}

absl::StatusOr<std::unique_ptr<KernelSet>> KernelSet::Compile(const Program& program,
                                                              const KernelSetOptions& options) {
  const auto start = ir::Clock::now();
  const bool keep_text = options.codegen.keep_ir || options.codegen.emit_asm;
  if (options.bindings != nullptr && !keep_text) {
    if (std::optional<CanonicalKernels> bound = FromBindings(program, *options.bindings)) {
      bool needs_units = false;
      absl::StatusOr<std::unique_ptr<KernelSet>> set =
          Build(program, options, *bound, start, &needs_units);
      // Only compiling needs the units binding skipped: then canonicalize after all.
      if (!needs_units) return set;
    }
  }
  return Build(program, options, Canonicalize(program, options.codegen), start, nullptr);
}

absl::StatusOr<std::unique_ptr<KernelSet>> KernelSet::Build(const Program& program,
                                                            const KernelSetOptions& options,
                                                            const CanonicalKernels& canonical,
                                                            ir::Clock::time_point start,
                                                            bool* needs_units) {
  std::unique_ptr<KernelSet> set(new KernelSet());
  set->bound_ = canonical.units.empty();
  set->addresses_ = AddressesOf(program);
  GJ_CHECK(options.run_threads >= 1 && options.run_threads <= runtime::kMaxThreads)
      << "KernelSetOptions::run_threads " << options.run_threads;
  set->run_threads_ = options.run_threads;
  set->min_parallel_work_ = options.min_parallel_work;
  // Texts are kept only by private compiles: code from the stores may have been compiled
  // without them.
  const bool keep_text = options.codegen.keep_ir || options.codegen.emit_asm;

  for (size_t k = 0; k < program.kernels.size(); ++k) {
    const Kernel& kernel = program.kernels[k];
    Call call;
    call.buffers = canonical.bindings[k].buffers;
    call.symbols = canonical.bindings[k].symbols;
    call.key = canonical.bindings[k].key;
    // The range symbols are in the unit whatever the host does with them; it splits only
    // where it can evaluate the extent and the work (else the kernel runs whole).
    call.ranged = kernel.parallel_loop >= 0;
    if (call.ranged && IsSymbolArithmetic(kernel.loops[kernel.parallel_loop].get()) &&
        IsSymbolArithmetic(kernel.parallel_work.get())) {
      call.parallel_extent = kernel.loops[kernel.parallel_loop];
      call.parallel_work = kernel.parallel_work;
      call.parallel_align = std::max<int64_t>(1, kernel.parallel_align);
    }
    call.blas = kernel.kind == KernelKind::kExternMatmul;
    if (ExprPtr work = KernelWork(kernel); IsSymbolArithmetic(work.get())) call.work = work;
    set->calls_.push_back(std::move(call));
  }
  std::vector<std::vector<int>> touched;
  for (const KernelBinding& b : canonical.bindings) touched.push_back(b.buffers);
  const std::vector<int> phases = StepPhases(program, touched);
  for (size_t k = 0; k < phases.size(); ++k) set->calls_[k].phase = phases[k];
  if (program.symbols.empty()) {
    set->fixed_forks_ = set->StepForks(nullptr);
    set->fixed_work_ = set->StepWork(nullptr);
  }
  if (set->run_threads_ > 1 && set->min_parallel_work_ > 0) {
    set->choice_ = std::make_unique<StepChoice>();
  }
  std::vector<std::shared_ptr<const KernelCode>> code(canonical.distinct.size());
  const std::vector<int> missing = FindLiveKernels(canonical, *options.store, keep_text, &code);
  std::vector<ModuleGroup> groups = GroupModules(missing, canonical.distinct_keys);
  ModuleSources sources = SourcesOf(program, canonical, options, keep_text);
  if (sources.units.empty() && ModulesToCompile(sources, groups) > 0) {
    *needs_units = true;
    return absl::FailedPreconditionError("kernels to compile: canonicalize them");
  }
  const int threads = GetOrCompileModules(sources, &groups);
  if (sources.units.empty()) {
    for (const ModuleGroup& g : groups) {
      if (g.needs_units) {
        *needs_units = true;
        return g.module.status();
      }
    }
  }

  KernelSetStats& stats = set->stats_;
  stats.kernels = static_cast<int>(program.kernels.size());
  stats.distinct = static_cast<int>(canonical.distinct.size());
  stats.reused = stats.distinct - static_cast<int>(missing.size());
  stats.threads = groups.empty() ? 0 : threads;
  stats.modules = static_cast<int>(groups.size());
  stats.remote = sources.remote != nullptr;
  GJ_RETURN_IF_ERROR(
      set->AddModules(groups, canonical.distinct_keys, *options.store, keep_text, &code));
  for (const ModuleGroup& g : groups) {
    if (!g.built || g.loaded) continue;
    KernelSetStats::Module& m = stats.compiled_modules.emplace_back();
    for (int j : g.members) m.kernels.push_back(program.kernels[canonical.distinct[j]].name);
    m.timings = (*g.module)->timings();
  }
  for (Call& call : set->calls_) {
    call.code = code[canonical.distinct_of.at(call.key)];
    call.entry = call.code->entry();
  }
  stats.wall_seconds = ir::SecondsSince(start);
  return set;
}

absl::Status KernelSet::AddModules(const std::vector<ModuleGroup>& groups,
                                   const std::vector<ContentKey>& keys, KernelStore& store,
                                   bool keep_text,
                                   std::vector<std::shared_ptr<const KernelCode>>* code) {
  for (const ModuleGroup& g : groups) {
    if (!g.module.ok()) return g.module.status();
    const NativeModule& module = **g.module;
    CountModule(g, &stats_);
    if (keep_text) {
      absl::StrAppend(&llvm_ir_, module.llvm_ir());
      absl::StrAppend(&optimized_ir_, module.optimized_ir());
      absl::StrAppend(&assembly_, module.assembly());
    }
    for (size_t i = 0; i < g.members.size(); ++i) {
      auto kernel = std::make_shared<const KernelCode>(KernelCode{*g.module, static_cast<int>(i)});
      const int j = g.members[i];
      (*code)[j] = keep_text ? kernel : store.Insert(keys[j], std::move(kernel));
    }
  }
  return absl::OkStatus();
}

void KernelSet::Locate(void** args, const int64_t* symbols, char* workspace,
                       absl::InlinedVector<void*, 64>* address) const {
  address->resize(addresses_.size());
  for (size_t b = 0; b < addresses_.size(); ++b) {
    const Address& a = addresses_[b];
    if (a.arg >= 0) {
      (*address)[b] = args[a.arg];
    } else {
      (*address)[b] = workspace + (a.offset_expr ? EvalOffset(a.offset_expr, symbols) : a.offset);
    }
  }
}

template <typename OnCall>
void KernelSet::RunCalls(void** args, const int64_t* symbols, char* workspace,
                         OnCall on_call) const {
  absl::InlinedVector<void*, 64> address;
  Locate(args, symbols, workspace, &address);
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

int KernelSet::Parts(const Call& call, const int64_t* symbols, int threads, int64_t* extent) const {
  *extent = call.parallel_extent == nullptr ? 0 : EvalOffset(call.parallel_extent, symbols);
  if (threads == 1 || call.parallel_extent == nullptr) return 1;
  const int64_t per_iteration = EvalOffset(call.parallel_work, symbols);
  const int64_t work = *extent * per_iteration;
  if (work < min_parallel_work_) return 1;
  const int64_t chunks = (*extent + call.parallel_align - 1) / call.parallel_align;
  // Each part gets at least half the threshold's work.
  int64_t by_work = min_parallel_work_ < 2 ? threads : work / (min_parallel_work_ / 2);
  int parts = static_cast<int>(std::max<int64_t>(1, std::min({int64_t{threads}, chunks, by_work})));
  // Every part of a BLAS product, the smallest of the uneven ones too, stays above
  // kMinBlasPartWork whatever min_parallel_work says, so a split never changes a bit.
  if (call.blas) {
    for (; parts > 1; --parts) {
      int64_t smallest = *extent;
      for (int p = 0; p < parts; ++p) {
        const auto [begin, end] = PartRange(call, *extent, parts, p);
        smallest = std::min(smallest, end - begin);
      }
      if (smallest * per_iteration >= kMinBlasPartWork) break;
    }
  }
  return parts;
}

int KernelSet::PartsOf(int k, const int64_t* symbols) const {
  int64_t extent;
  return Parts(calls_[k], symbols, run_threads_, &extent);
}

void KernelSet::RunCall(const Call& call, void** unit_args, const int64_t* unit_symbols,
                        const int64_t* symbols, int threads) const {
  // On one thread as on several: OpenBLAS's own threads sum some products in another order
  // than one thread does (its Haswell kernels at 128 x 3840 x 64, say), and the pool
  // splits the large ones itself.
  if (call.blas) runtime::UseSingleThreadedBlas();
  if (!call.ranged) {
    call.entry(unit_args, unit_symbols, nullptr);
    return;
  }
  int64_t extent;
  const int parts = Parts(call, symbols, threads, &extent);
  // The unit's symbols, then its range [begin, end) (kernel_unit.h); each part its own.
  const size_t n = call.symbols.size();
  auto run_range = [&](int64_t begin, int64_t end) {
    absl::InlinedVector<int64_t, 16> s(unit_symbols, unit_symbols + n);
    s.push_back(begin);
    s.push_back(end);
    call.entry(unit_args, s.data(), nullptr);
  };
  if (parts == 1 || call.parallel_extent == nullptr) {
    // An extent the host cannot evaluate: the whole loop (the kernel clamps end to it).
    return call.parallel_extent == nullptr ? run_range(0, INT64_MAX) : run_range(0, extent);
  }
  runtime::ThreadPool::Shared().Run(parts, [&](int p) {
    const auto [begin, end] = PartRange(call, extent, parts, p);
    if (begin < end) run_range(begin, end);
  });
}

std::pair<int64_t, int64_t> KernelSet::PartRange(const Call& call, int64_t extent, int parts,
                                                 int p) {
  // Static, even split in whole chunks of the alignment: part p of a kernel gets the same
  // range every call, so its worker finds its slice of the weights in its own cache.
  const int64_t chunks = (extent + call.parallel_align - 1) / call.parallel_align;
  return {std::min(extent, chunks * p / parts * call.parallel_align),
          std::min(extent, chunks * (p + 1) / parts * call.parallel_align)};
}

void KernelSet::PlanStep(void** args, const int64_t* symbols, char* workspace,
                         runtime::PhasedJob* job, std::vector<StepTask>* plan) const {
  const int threads = run_threads_;
  job->Reset(threads);
  absl::InlinedVector<void*, 64> address(addresses_.size(), nullptr);
  if (args != nullptr) Locate(args, symbols, workspace, &address);
  absl::InlinedVector<void*, 16> unit_args;
  absl::InlinedVector<int64_t, 16> ints;
  absl::InlinedVector<int64_t, 8> load(threads, 0);  // work given to each thread this phase
  // The whole kernels of the phase (cost, kernel, extent), costliest first once the split
  // ones are placed.
  absl::InlinedVector<std::tuple<int64_t, size_t, int64_t>, 16> whole;
  auto add = [&](size_t k, int thread, int64_t begin, int64_t end) {
    const Call& call = calls_[k];
    unit_args.clear();
    ints.clear();
    for (int b : call.buffers) unit_args.push_back(address[b]);
    for (int s : call.symbols) ints.push_back(symbols[s]);
    if (call.ranged) {
      ints.push_back(begin);
      ints.push_back(end);
    }
    job->AddTask(thread, call.entry, unit_args, ints);
    if (plan != nullptr)
      plan->push_back({job->phases() - 1, static_cast<int>(k), thread, begin, end, call.ranged});
  };
  auto place_whole = [&] {
    std::stable_sort(whole.begin(), whole.end(),
                     [](const auto& a, const auto& b) { return std::get<0>(a) > std::get<0>(b); });
    for (const auto& [cost, k, extent] : whole) {
      // The least loaded thread; one with nothing in this phase yet only for a kernel
      // worth a split (its wake and join cost what a split does).
      int best = 0;
      for (int t = 1; t < threads; ++t) {
        if (load[t] < load[best] && (load[t] > 0 || cost >= min_parallel_work_)) best = t;
      }
      load[best] += cost;
      add(k, best, 0, calls_[k].parallel_extent == nullptr ? INT64_MAX : extent);
    }
    whole.clear();
  };
  for (size_t k = 0; k < calls_.size(); ++k) {
    const Call& call = calls_[k];
    if (k == 0 || call.phase != calls_[k - 1].phase) {
      place_whole();
      job->BeginPhase();
      std::fill(load.begin(), load.end(), 0);
    }
    int64_t extent;
    const int parts = Parts(call, symbols, run_threads_, &extent);
    // Each BLAS call on one thread: the pool's threads run the others beside it.
    if (call.blas) runtime::UseSingleThreadedBlas();
    if (parts == 1) {
      whole.push_back({call.work == nullptr ? 0 : EvalOffset(call.work, symbols), k, extent});
      continue;
    }
    // As RunCall splits it, part p on thread p.
    const int64_t per_iteration = EvalOffset(call.parallel_work, symbols);
    for (int p = 0; p < parts; ++p) {
      const auto [begin, end] = PartRange(call, extent, parts, p);
      if (begin >= end) continue;
      add(k, p, begin, end);
      load[p] += (end - begin) * per_iteration;
    }
  }
  place_whole();
}

std::vector<KernelSet::StepTask> KernelSet::PlanOf(const int64_t* symbols) const {
  std::vector<StepTask> plan;
  if (run_threads_ == 1 || !StepForks(symbols)) return plan;
  runtime::PhasedJob job;
  PlanStep(nullptr, symbols, nullptr, &job, &plan);
  return plan;
}

bool KernelSet::StepForks(const int64_t* symbols) const {
  for (size_t k = 0; k < calls_.size(); ++k) {
    const Call& call = calls_[k];
    int64_t extent;
    if (Parts(call, symbols, run_threads_, &extent) > 1) return true;
    // A whole kernel leaves thread 0 only beside another of its phase (PlanStep).
    const bool alone = (k == 0 || calls_[k - 1].phase != call.phase) &&
                       (k + 1 == calls_.size() || calls_[k + 1].phase != call.phase);
    if (!alone && call.work != nullptr && EvalOffset(call.work, symbols) >= min_parallel_work_) {
      return true;
    }
  }
  return false;
}

int64_t KernelSet::StepWork(const int64_t* symbols) const {
  int64_t work = 0;
  for (const Call& call : calls_) {
    if (call.work != nullptr) work += EvalOffset(call.work, symbols);
  }
  return work;
}

void KernelSet::Run(void** args, const int64_t* symbols, char* workspace) const {
  // A step that would not fork (a tiny graph) skips planning: its call stays ~100 ns.
  if (run_threads_ > 1 && (fixed_forks_.has_value() ? *fixed_forks_ : StepForks(symbols))) {
    StepChoice::Ticket ticket = {StepChoice::Path::kPool, false, 0};
    if (choice_ != nullptr) {
      ticket = choice_->Next(fixed_work_.has_value() ? *fixed_work_ : StepWork(symbols));
    }
    const ir::Clock::time_point start = ticket.timed ? ir::Clock::now() : ir::Clock::time_point{};
    if (ticket.path == StepChoice::Path::kPool) {
      // One job per step: the pool wakes once and each thread walks its share of every
      // phase (runtime/phased_job.h); a job kept per thread keeps its memory across calls.
      thread_local runtime::PhasedJob job;
      PlanStep(args, symbols, workspace, &job);
      runtime::ThreadPool::Shared().RunPhased(job);
    } else {
      RunCalls(args, symbols, workspace, [&](const Call& call, void** a, const int64_t* s) {
        RunCall(call, a, s, symbols, /*threads=*/1);
      });
    }
    if (ticket.timed) choice_->Record(ticket, ir::SecondsSince(start));
    return;
  }
  RunCalls(args, symbols, workspace, [&](const Call& call, void** a, const int64_t* s) {
    RunCall(call, a, s, symbols, run_threads_);
  });
}

void KernelSet::RunTimed(void** args, const int64_t* symbols, char* workspace,
                         double* kernel_seconds) const {
  size_t k = 0;
  RunCalls(args, symbols, workspace, [&](const Call& call, void** a, const int64_t* s) {
    const auto start = ir::Clock::now();
    RunCall(call, a, s, symbols, run_threads_);
    kernel_seconds[k++] += ir::SecondsSince(start);
  });
}

std::vector<KernelBinding> KernelSet::bindings() const {
  std::vector<KernelBinding> bindings;
  for (const Call& call : calls_) bindings.push_back({call.key, call.buffers, call.symbols});
  return bindings;
}

std::vector<ContentKey> KernelSet::keys() const {
  std::vector<ContentKey> keys;
  for (const Call& call : calls_) keys.push_back(call.key);
  return keys;
}

}  // namespace graphjit::compiler

#include "compiler/compiled/kernel_set.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <tuple>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/numbers.h"
#include "compiler/compiled/back_end.h"
#include "compiler/lower/buffer_plan.h"
#include "compiler/store/content_store.h"
#include "ir/clock.h"
#include "ir/status_macros.h"
#include "runtime/jit_helpers.h"
#include "runtime/scalar_semantics.h"
#include "runtime/thread_pool.h"

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
  GJ_FATAL() << "not i64 arithmetic of the symbols: " << ExprToString(e);
}

}  // namespace

absl::StatusOr<std::unique_ptr<KernelSet>> KernelSet::Compile(const Program& program,
                                                              const KernelSetOptions& options) {
  return BackEnd::Compile(program, options);
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

void KernelSet::ClearHeader(char* workspace, int64_t bytes) {
  if (workspace != nullptr && bytes >= kWorkspaceHeaderBytes) {
    std::memset(workspace, 0, kWorkspaceHeaderBytes);
  }
}

bool KernelSet::ConstantsKept(const int64_t* symbols, char* workspace) const {
  if (!has_header_ || workspace == nullptr) return false;
  // FNV-1a over the symbol values: another binding moves the once kernels' buffers (and
  // changes their sizes).
  uint64_t hash = 14695981039346656037ull;
  for (int s = 0; s < num_symbols_; ++s) {
    hash = (hash ^ static_cast<uint64_t>(symbols[s])) * 1099511628211ull;
  }
  uint64_t* header = reinterpret_cast<uint64_t*>(workspace);
  const bool kept = any_once_ && header[0] == identity_ && header[1] == hash;
  header[0] = identity_;
  header[1] = hash;
  return kept;
}

template <typename OnCall>
void KernelSet::RunCalls(void** args, const int64_t* symbols, char* workspace, bool skip_once,
                         OnCall on_call) const {
  absl::InlinedVector<void*, 64> address;
  Locate(args, symbols, workspace, &address);
  absl::InlinedVector<void*, 16> unit_args;
  absl::InlinedVector<int64_t, 16> unit_symbols;
  for (const Call& call : calls_) {
    if (skip_once && call.once) continue;
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
    call.function(unit_args, unit_symbols, nullptr);
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
    call.function(unit_args, s.data(), nullptr);
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
                         runtime::PhasedJob* job, std::vector<StepTask>* plan,
                         bool skip_once) const {
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
    job->AddTask(thread, call.function, unit_args, ints);
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
    if (skip_once && call.once) continue;
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
  const bool skip_once = ConstantsKept(symbols, workspace);
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
      PlanStep(args, symbols, workspace, &job, /*plan=*/nullptr, skip_once);
      runtime::ThreadPool::Shared().RunPhased(job);
    } else {
      RunCalls(args, symbols, workspace, skip_once,
               [&](const Call& call, void** a, const int64_t* s) {
                 RunCall(call, a, s, symbols, /*threads=*/1);
               });
    }
    if (ticket.timed) choice_->Record(ticket, ir::SecondsSince(start));
    return;
  }
  RunCalls(args, symbols, workspace, skip_once, [&](const Call& call, void** a, const int64_t* s) {
    RunCall(call, a, s, symbols, run_threads_);
  });
}

void KernelSet::RunTimed(void** args, const int64_t* symbols, char* workspace,
                         double* kernel_seconds) const {
  RunCalls(args, symbols, workspace, ConstantsKept(symbols, workspace),
           [&](const Call& call, void** a, const int64_t* s) {
             const auto start = ir::Clock::now();
             RunCall(call, a, s, symbols, run_threads_);
             kernel_seconds[&call - calls_.data()] += ir::SecondsSince(start);
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

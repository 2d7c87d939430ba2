// The back end's steps (back_end.h) and the state they pass along.
#include "compiler/compiled/back_end.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "compiler/compiled/kernel_modules.h"
#include "compiler/compiled/step_phases.h"
#include "compiler/lower/kernel_unit.h"
#include "compiler/lower/parallel_loops.h"
#include "compiler/store/content_store.h"
#include "ir/check.h"
#include "ir/clock.h"
#include "ir/pass_manager.h"
#include "ir/status_macros.h"
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

// Each distinct kernel's canonical program, for the modules that compile: the units
// canonicalize made, or, for kernels bound from a graph record, made on first request
// (from any compile thread) and checked against the key the record bound.
class UnitSource {
 public:
  UnitSource(const Program& program, const CanonicalKernels& canonical,
             const CompileOptions& codegen)
      : program_(program),
        canonical_(canonical),
        codegen_(codegen),
        made_(canonical.units.empty() ? canonical.distinct.size() : 0) {}

  absl::StatusOr<const Program*> Get(int j) {
    const int k = canonical_.distinct[j];
    if (!canonical_.units.empty()) return &canonical_.units[k].program;
    absl::MutexLock lock(&mu_);
    if (made_[j] == nullptr) {
      auto unit = std::make_unique<KernelUnit>(MakeKernelUnit(program_, k));
      const KernelBinding& bound = canonical_.bindings[k];
      if (KernelContentKey(unit->text, codegen_) != bound.key || unit->buffers != bound.buffers ||
          unit->symbols != bound.symbols) {
        return absl::DataLossError(absl::StrCat("kernel '", program_.kernels[k].name,
                                                "': the graph record's binding does not match "
                                                "its canonical form"));
      }
      made_[j] = std::move(unit);
    }
    return &made_[j]->program;
  }

 private:
  const Program& program_;
  const CanonicalKernels& canonical_;
  const CompileOptions& codegen_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<KernelUnit>> made_;
};

const char* HowGot(const ModuleGroup& g, bool got) {
  if (!got) return "to get";
  if (!g.module.ok()) return "failed";
  if (!g.built) return "live";
  if (g.fetched) return "fetched from the remote cache";
  if (g.loaded) return "loaded from disk";
  return "compiled";
}

}  // namespace

// What the steps pass along: the set being built and what each step found.
struct BackEndState {
  const Program* program;
  const KernelSetOptions* options;
  // Texts are kept only by private compiles: code from the stores may have been compiled
  // without them.
  bool keep_text = false;
  std::unique_ptr<KernelSet> set;
  CanonicalKernels canonical;
  std::unique_ptr<UnitSource> units;
  std::vector<std::shared_ptr<const KernelCode>> code;  // per distinct kernel
  std::vector<int> missing;                             // distinct kernels not live
  bool looked_up = false;                               // find_live has run
  std::vector<ModuleGroup> groups;
  bool got = false;  // get_modules has run
  int threads = 0;   // compile threads get_modules used
};

namespace {

// A listing of what the steps have found so far, for --print-after.
std::string BackEndText(const BackEndState& s) {
  const Program& program = *s.program;
  const CanonicalKernels& c = s.canonical;
  std::string text =
      absl::StrCat("kernels ", program.kernels.size(), ", distinct ", c.distinct.size(),
                   c.units.empty() ? " (bound from a graph record)" : "", "\n");
  for (size_t k = 0; k < c.bindings.size(); ++k) {
    const int j = c.distinct_of.at(c.bindings[k].key);
    const bool missing = std::find(s.missing.begin(), s.missing.end(), j) != s.missing.end();
    absl::StrAppend(&text, "  ", program.kernels[k].name, ": distinct ", j, ", key ",
                    c.bindings[k].key.ToHex().substr(0, 16),
                    !s.looked_up ? ""
                    : missing    ? ", missing"
                                 : ", live",
                    "\n");
  }
  if (!s.groups.empty() || !s.missing.empty()) {
    absl::StrAppend(&text, "missing ", s.missing.size(), " in ", s.groups.size(), " modules\n");
  }
  for (size_t m = 0; m < s.groups.size(); ++m) {
    const ModuleGroup& g = s.groups[m];
    std::vector<std::string> names;
    for (int j : g.members) names.push_back(program.kernels[c.distinct[j]].name);
    absl::StrAppend(&text, "  module ", m, " ", g.key.ToHex().substr(0, 16), ": ",
                    absl::StrJoin(names, ", "), " (", HowGot(g, s.got), ")\n");
  }
  return text;
}

// Each module's kernels into the KernelStore (private compiles keep theirs and their
// texts) as code[j] of distinct kernel j, counted in the set's stats; the first module
// that failed is the error.
absl::Status AddModules(BackEndState& s, KernelSetStats* stats, std::string* llvm_ir,
                        std::string* optimized_ir, std::string* assembly) {
  for (const ModuleGroup& g : s.groups) {
    if (!g.module.ok()) return g.module.status();
    const NativeModule& module = **g.module;
    CountModule(g, stats);
    if (s.keep_text) {
      absl::StrAppend(llvm_ir, module.llvm_ir());
      absl::StrAppend(optimized_ir, module.optimized_ir());
      absl::StrAppend(assembly, module.assembly());
    }
    for (size_t i = 0; i < g.members.size(); ++i) {
      auto kernel = std::make_shared<const KernelCode>(KernelCode{*g.module, static_cast<int>(i)});
      const int j = g.members[i];
      s.code[j] = s.keep_text
                      ? kernel
                      : s.options->store->Insert(s.canonical.distinct_keys[j], std::move(kernel));
    }
  }
  return absl::OkStatus();
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

const std::vector<std::string>& BackEnd::StepNames() {
  static const auto* names = new std::vector<std::string>(Steps().names());
  return *names;
}

ir::PassManager<BackEndState> BackEnd::Steps() {
  using S = BackEndState;
  ir::PassManager<S> steps({.step = "back-end step",
                            .list = "the back end",
                            .verifier = "back-end verifier",
                            .prefix_errors = false});
  steps.Add("canonicalize", [](S& s) -> absl::StatusOr<bool> {
    std::optional<CanonicalKernels> bound;
    if (s.options->bindings != nullptr && !s.keep_text) {
      bound = FromBindings(*s.program, *s.options->bindings);
    }
    s.canonical = bound ? *std::move(bound) : Canonicalize(*s.program, s.options->codegen);
    s.set->bound_ = s.canonical.units.empty();
    s.units = std::make_unique<UnitSource>(*s.program, s.canonical, s.options->codegen);
    return false;
  });
  steps.Add("plan_calls", [](S& s) -> absl::StatusOr<bool> {
    KernelSet& set = *s.set;
    const Program& program = *s.program;
    set.addresses_ = KernelSet::AddressesOf(program);
    // Unique per set in the process: the workspace header names the set that ran last.
    static std::atomic<uint64_t> sets{0};
    set.identity_ = ++sets;
    set.has_header_ = !(program.workspace_bytes == ir::SymExpr(0));
    set.num_symbols_ = static_cast<int>(program.symbols.size());
    set.run_threads_ = s.options->run_threads;
    set.min_parallel_work_ = s.options->min_parallel_work;
    for (size_t k = 0; k < program.kernels.size(); ++k) {
      const Kernel& kernel = program.kernels[k];
      const KernelBinding& binding = s.canonical.bindings[k];
      KernelSet::Call call;
      call.buffers = binding.buffers;
      call.symbols = binding.symbols;
      call.key = binding.key;
      // The range symbols are in the unit whatever the host does with them; it splits
      // only where it can evaluate the extent and the work (else the kernel runs whole).
      call.ranged = kernel.parallel_loop >= 0;
      if (call.ranged && IsSymbolArithmetic(kernel.loops[kernel.parallel_loop].get()) &&
          IsSymbolArithmetic(kernel.parallel_work.get())) {
        call.parallel_extent = kernel.loops[kernel.parallel_loop];
        call.parallel_work = kernel.parallel_work;
        call.parallel_align = std::max<int64_t>(1, kernel.parallel_align);
      }
      call.blas = kernel.kind == KernelKind::kExternMatmul;
      call.once = kernel.once;
      set.any_once_ = set.any_once_ || kernel.once;
      if (ExprPtr work = KernelWork(kernel); IsSymbolArithmetic(work.get())) call.work = work;
      set.calls_.push_back(std::move(call));
    }
    std::vector<std::vector<int>> touched;
    for (const KernelBinding& b : s.canonical.bindings) touched.push_back(b.buffers);
    const std::vector<int> phases = StepPhases(program, touched);
    for (size_t k = 0; k < phases.size(); ++k) set.calls_[k].phase = phases[k];
    if (program.symbols.empty()) {
      set.fixed_forks_ = set.StepForks(nullptr);
      set.fixed_work_ = set.StepWork(nullptr);
    }
    if (set.run_threads_ > 1 && set.min_parallel_work_ > 0) {
      set.choice_ = std::make_unique<StepChoice>();
    }
    return false;
  });
  steps.Add("find_live", [](S& s) -> absl::StatusOr<bool> {
    s.code.assign(s.canonical.distinct.size(), nullptr);
    s.missing = FindLiveKernels(s.canonical, *s.options->store, s.keep_text, &s.code);
    s.looked_up = true;
    return false;
  });
  steps.Add("group_modules", [](S& s) -> absl::StatusOr<bool> {
    s.groups = GroupModules(s.missing, s.canonical.distinct_keys);
    return false;
  });
  steps.Add("get_modules", [](S& s) -> absl::StatusOr<bool> {
    ModuleSources sources;
    for (int k : s.canonical.distinct) sources.names.push_back(s.program->kernels[k].name);
    sources.unit = [units = s.units.get()](int j) { return units->Get(j); };
    sources.codegen = s.options->codegen;
    sources.private_text = s.keep_text;
    sources.disk = s.keep_text ? nullptr : s.options->disk;
    sources.remote = s.keep_text ? nullptr : s.options->remote;
    sources.max_threads = std::max(1, s.options->threads);
    s.threads = GetOrCompileModules(sources, &s.groups);
    s.got = true;
    s.set->stats_.remote = sources.remote != nullptr;
    return false;
  });
  steps.Add("link", [](S& s) -> absl::StatusOr<bool> {
    KernelSet& set = *s.set;
    KernelSetStats& stats = set.stats_;
    stats.kernels = static_cast<int>(s.program->kernels.size());
    stats.distinct = static_cast<int>(s.canonical.distinct.size());
    stats.reused = stats.distinct - static_cast<int>(s.missing.size());
    stats.threads = s.groups.empty() ? 0 : s.threads;
    stats.modules = static_cast<int>(s.groups.size());
    GJ_RETURN_IF_ERROR(AddModules(s, &stats, &set.llvm_ir_, &set.optimized_ir_, &set.assembly_));
    for (const ModuleGroup& g : s.groups) {
      if (!g.built || g.loaded) continue;
      KernelSetStats::Module& m = stats.compiled_modules.emplace_back();
      for (int j : g.members) {
        m.kernels.push_back(s.program->kernels[s.canonical.distinct[j]].name);
      }
      m.timings = (*g.module)->timings();
    }
    for (KernelSet::Call& call : set.calls_) {
      call.code = s.code[s.canonical.distinct_of.at(call.key)];
      call.function = call.code->function();
    }
    return false;
  });
  return steps;
}

absl::StatusOr<std::unique_ptr<KernelSet>> BackEnd::Compile(const Program& program,
                                                            const KernelSetOptions& options) {
  const auto start = ir::Clock::now();
  GJ_CHECK(options.run_threads >= 1 && options.run_threads <= runtime::kMaxThreads)
      << "KernelSetOptions::run_threads " << options.run_threads;
  BackEndState state;
  state.program = &program;
  state.options = &options;
  state.keep_text = options.codegen.keep_ir || options.codegen.emit_asm;
  state.set.reset(new KernelSet());
  KernelSet& set = *state.set;
  ir::PassManager<BackEndState> steps = Steps();
  if (!options.print_after.empty()) {
    GJ_RETURN_IF_ERROR(steps.SetPrintAfter(
        options.print_after, [&options](const std::string& step, const BackEndState& s) {
          if (options.print_sink) options.print_sink(step, BackEndText(s));
        }));
  }
  absl::Status status = steps.Run(state);
  set.stats_.steps = steps.stats();
  GJ_RETURN_IF_ERROR(status);
  set.stats_.wall_seconds = ir::SecondsSince(start);
  return std::move(state.set);
}

}  // namespace graphjit::compiler

#include "compiler/kernel_set.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "compiler/cache/code_store.h"
#include "compiler/cache/disk_cache.h"
#include "compiler/lower/kernel_unit.h"

namespace graphjit::compiler {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

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
        case ScalarOp::kAdd: return a + b;
        case ScalarOp::kSub: return a - b;
        case ScalarOp::kMul: return a * b;
        case ScalarOp::kDiv: return FloorDiv(a, b);
        case ScalarOp::kMod: return a - FloorDiv(a, b) * b;
        case ScalarOp::kMax: return std::max(a, b);
        case ScalarOp::kMin: return std::min(a, b);
        default: break;
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

int DefaultCompileThreads() {
  static const int threads = [] {
    int fallback = std::max(1u, std::thread::hardware_concurrency());
    const char* env = std::getenv("GRAPHJIT_COMPILE_THREADS");
    if (env == nullptr || *env == '\0') return fallback;
    int n = 0;
    if (!absl::SimpleAtoi(env, &n) || n < 1 || n > 256) {
      std::fprintf(stderr,
                   "graphjit: GRAPHJIT_COMPILE_THREADS='%s' is not an integer in [1, 256]; using "
                   "%d (the hardware concurrency)\n",
                   env, fallback);
      return fallback;
    }
    return n;
  }();
  return threads;
}

absl::StatusOr<std::unique_ptr<KernelSet>> KernelSet::Compile(const Program& program,
                                                              const KernelSetOptions& options) {
  const auto start = std::chrono::steady_clock::now();
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
    call.key = KernelContentKey(units.back().text);
    call.buffers = units.back().buffers;
    call.symbols = units.back().symbols;
    if (job_of.try_emplace(call.key, static_cast<int>(jobs.size())).second) jobs.push_back(k);
    set->calls_.push_back(std::move(call));
  }

  // Texts are kept only by private compiles: code from the store may have been compiled
  // without them.
  const bool keep_text = options.codegen.keep_ir || options.codegen.emit_asm;
  KernelStore& store = KernelStore::Default();
  std::vector<absl::StatusOr<std::shared_ptr<const NativeCode>>> results(jobs.size());
  std::vector<char> compiled(jobs.size(), 0), loaded(jobs.size(), 0);
  DiskCache* disk = keep_text ? nullptr : options.disk;
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t j; (j = next.fetch_add(1)) < jobs.size();) {
      const KernelUnit& unit = units[jobs[j]];
      const ContentKey& key = set->calls_[jobs[j]].key;
      auto compile = [&]() -> absl::StatusOr<std::unique_ptr<NativeCode>> {
        // Shared code is named after its key, so an object stored by one process links
        // under the same name in the next.
        const std::string symbol = keep_text ? "" : absl::StrCat("gj_k_", key.ToHex());
        if (disk != nullptr) {
          if (std::optional<std::string> object = disk->Load(key)) {
            absl::StatusOr<std::unique_ptr<NativeCode>> code = LoadNativeCode(*object, symbol);
            if (code.ok()) {
              loaded[j] = 1;
              return code;
            }
            // Passed the file checks but does not link: never load it again.
            disk->Remove(key);
          }
        }
        CompileOptions codegen = options.codegen;
        codegen.symbol = symbol;
        codegen.keep_object = disk != nullptr;
        absl::StatusOr<std::unique_ptr<NativeCode>> code = CompileProgram(unit.program, codegen);
        if (!code.ok()) {
          return absl::Status(code.status().code(),
                              absl::StrCat("kernel ", program.kernels[jobs[j]].name, ": ",
                                           code.status().message()));
        }
        if (disk != nullptr) disk->Store(key, (*code)->object());
        return code;
      };
      if (keep_text) {
        absl::StatusOr<std::unique_ptr<NativeCode>> code = compile();
        if (code.ok()) {
          results[j] = std::shared_ptr<const NativeCode>(*std::move(code));
        } else {
          results[j] = code.status();
        }
        compiled[j] = 1;
      } else {
        bool did = false;
        results[j] = store.GetOrCompile(key, compile, &did);
        compiled[j] = did && !loaded[j];
      }
    }
  };
  const int threads = std::max(
      1, std::min<int>(options.threads > 0 ? options.threads : DefaultCompileThreads(),
                       static_cast<int>(jobs.size())));
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (std::thread& t : pool) t.join();
  }

  KernelSetStats& stats = set->stats_;
  stats.kernels = static_cast<int>(program.kernels.size());
  stats.distinct = static_cast<int>(jobs.size());
  stats.threads = threads;
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (!results[j].ok()) return results[j].status();
    const NativeCode& code = **results[j];
    if (loaded[j]) {
      ++stats.loaded;
      stats.timings.codegen += code.timings().codegen;
    } else if (compiled[j]) {
      ++stats.compiled;
      stats.timings.ir_build += code.timings().ir_build;
      stats.timings.optimize += code.timings().optimize;
      stats.timings.codegen += code.timings().codegen;
    } else {
      ++stats.reused;
    }
    if (keep_text) {
      const std::string header = absl::StrCat("; kernel ", program.kernels[jobs[j]].name, "\n");
      absl::StrAppend(&set->llvm_ir_, header, code.llvm_ir());
      absl::StrAppend(&set->optimized_ir_, header, code.optimized_ir());
      absl::StrAppend(&set->assembly_, header, code.assembly());
    }
  }
  for (Call& call : set->calls_) {
    call.code = *results[job_of.at(call.key)];
    call.entry = call.code->entry();
  }
  stats.wall_seconds = SecondsSince(start);
  return set;
}

void KernelSet::Run(void** args, const int64_t* symbols, char* workspace) const {
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
    call.entry(unit_args.data(), unit_symbols.data(), nullptr);
  }
}

std::vector<ContentKey> KernelSet::keys() const {
  std::vector<ContentKey> keys;
  for (const Call& call : calls_) keys.push_back(call.key);
  return keys;
}

}  // namespace graphjit::compiler

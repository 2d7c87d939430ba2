#include "compiler/jit.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/entries/entry_call.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

using cache::DynamicDim;
using cache::ShapePolicy;

bool IsIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// `x_0` for dim 0 of input `x`; characters a symbol cannot hold become '_'.
std::string DefaultSymbol(const std::string& input, int axis) {
  std::string s = absl::StrCat(input, "_", axis);
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  if (std::isdigit(static_cast<unsigned char>(s[0]))) s = "_" + s;
  return s;
}

std::string Where(const DimSpec& d) { return absl::StrCat(d.input, ".shape[", d.axis, "]"); }

// The index of the dynamic dim named `symbol`, or -1.
int DimIndex(const std::vector<DynamicDim>& dims, const std::string& symbol) {
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k].symbol == symbol) return static_cast<int>(k);
  }
  return -1;
}

// How one dim is keyed: exact and auto apply to every dim; symbolic to the declared
// ones; pow2 and mult128 to the padded ones; every other dim is exact.
ShapePolicy DimPolicy(ShapePolicy policy, bool declared, bool padded) {
  switch (policy) {
    case ShapePolicy::kExact:
    case ShapePolicy::kAuto:
      return policy;
    case ShapePolicy::kSymbolic:
      return declared ? ShapePolicy::kSymbolic : ShapePolicy::kExact;
    case ShapePolicy::kPow2:
    case ShapePolicy::kMult128:
      return padded ? policy : ShapePolicy::kExact;
  }
  return ShapePolicy::kExact;
}

}  // namespace

absl::StatusOr<std::unique_ptr<JitFunction>> Jit(std::string name, TraceFn fn,
                                                 runtime::TensorMap weights, JitOptions options) {
  const std::string policy(cache::PolicyName(options.policy));
  if (!fn) return absl::InvalidArgumentError(absl::StrCat("jit '", name, "': empty function"));
  if (absl::Status s = CheckThreads(options.compile.threads, "JitOptions::compile.threads");
      !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("jit '", name, "': ", s.message()));
  }
  if (options.capacity < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "jit '", name, "': capacity must be >= 0 (0: no bound), got ", options.capacity));
  }
  // Declared types without symbols have nothing to pad: every policy is exact there.
  bool static_types = false;
  if (options.input_types) {
    static_types = true;
    for (const auto& [n, type] : *options.input_types) {
      for (const ir::SymExpr& e : type.shape) static_types = static_types && e.IsConstant();
    }
  }
  if (cache::PadsInputs(options.policy) && !static_types &&
      (!options.padding || options.padding->dims.empty())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "jit '", name, "': policy ", policy,
        " pads inputs to buckets, so it needs JitOptions::padding: the dims to pad (e.g. "
        "{\"k_cache\", 1, \"S\"}) and the mask inputs that hide the padding; or use exact, "
        "symbolic or auto"));
  }
  if (options.policy == ShapePolicy::kSymbolic && options.dynamic_dims.empty() &&
      !options.input_types && !(options.padding && !options.padding->dims.empty())) {
    return absl::InvalidArgumentError(
        absl::StrCat("jit '", name,
                     "': policy symbolic needs JitOptions::dynamic_dims, the dims to leave "
                     "symbolic (e.g. {\"x\", 0} for dim 0 of input x)"));
  }
  std::vector<DimSpec> declared = options.dynamic_dims;
  if (options.padding) {
    declared.insert(declared.end(), options.padding->dims.begin(), options.padding->dims.end());
  }
  for (const DimSpec& d : declared) {
    if (d.axis < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("jit '", name, "': dynamic dim ", Where(d), ": axis must be >= 0"));
    }
    if (!d.symbol.empty() && !IsIdentifier(d.symbol)) {
      return absl::InvalidArgumentError(
          absl::StrCat("jit '", name, "': dynamic dim ", Where(d), ": symbol '", d.symbol,
                       "' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)"));
    }
  }
  if (options.store == nullptr) options.store = CodeStore::Default();
  // The environment is read here, once, at the top: everything below gets the env.
  if (options.compile.env == nullptr) options.compile.env = &CompileEnv::FromEnvironment();
  cache::TracedFunction function{std::move(name), std::move(fn), std::move(weights)};
  return std::unique_ptr<JitFunction>(new JitFunction(std::move(function), std::move(options)));
}

absl::StatusOr<cache::InputSignature> JitFunction::SignatureFor(
    const runtime::TensorMap& inputs) const {
  const std::string prefix = Prefix();
  const ShapePolicy policy = options_.policy;
  std::vector<DynamicDim> dims;
  frontend::InputTypes types;
  if (options_.input_types) {
    GJ_RETURN_IF_ERROR(DeclaredTypes(&types, &dims));
  } else {
    GJ_RETURN_IF_ERROR(CallTypes(inputs, &types, &dims));
  }

  frontend::InputTypes masks;
  if (options_.padding && cache::PadsInputs(policy)) {
    std::optional<ir::DType> first;
    for (const auto& [n, type] : types) {
      if (!options_.padding->dims.empty() && n == options_.padding->dims.front().input) {
        first = type.dtype;
      }
    }
    for (const MaskSpec& m : options_.padding->masks) {
      ir::DType dtype = m.dtype.value_or(first.value_or(ir::DType::kF64));
      if (!ir::IsFloat(dtype)) {
        return absl::InvalidArgumentError(absl::StrCat(prefix, ": mask '", m.input,
                                                       "' must be a float tensor (an additive 0 / "
                                                       "-inf mask), got ",
                                                       ir::DTypeName(dtype)));
      }
      for (const ir::SymExpr& e : m.shape) {
        std::string symbol;
        if (e.IsConstant()) continue;
        int k = e.IsSymbol(&symbol) ? DimIndex(dims, symbol) : -1;
        if (k < 0 || !dims[k].padded()) {
          return absl::InvalidArgumentError(
              absl::StrCat(prefix, ": mask '", m.input, "' dim `", e.ToString(),
                           "` must be a constant or the symbol of a padded dim"));
        }
      }
      masks.emplace_back(m.input, ir::ValueType{dtype, m.shape});
    }
  }
  absl::StatusOr<cache::InputSignature> sig =
      cache::InputSignature::Create(types, masks, std::move(dims));
  if (!sig.ok()) {
    return absl::Status(sig.status().code(), absl::StrCat(prefix, ": ", sig.status().message()));
  }
  return sig;
}

absl::Status JitFunction::DeclaredTypes(frontend::InputTypes* types,
                                        std::vector<cache::DynamicDim>* dims) const {
  *types = *options_.input_types;
  // The dynamic dims are the declared types' symbols; a padding dim names one by its
  // symbol or by where it appears.
  std::set<std::string> padded;
  if (options_.padding) {
    for (const DimSpec& d : options_.padding->dims) {
      std::string symbol = d.symbol;
      for (const auto& [n, type] : *types) {
        if (symbol.empty() && n == d.input && d.axis < type.rank()) {
          type.shape[d.axis].IsSymbol(&symbol);
        }
      }
      if (symbol.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(Prefix(), ": padding dim ", Where(d),
                         " is not a symbolic dim of the declared input types"));
      }
      padded.insert(symbol);
    }
  }
  std::set<std::string> seen;
  for (const auto& [n, type] : *types) {
    for (const ir::SymExpr& e : type.shape) {
      std::string symbol;
      if (!e.IsSymbol(&symbol) || !seen.insert(symbol).second) continue;
      dims->push_back({symbol, DimPolicy(options_.policy, true, padded.contains(symbol)), true});
    }
  }
  return absl::OkStatus();
}

absl::Status JitFunction::CallTypes(const runtime::TensorMap& inputs, frontend::InputTypes* types,
                                    std::vector<cache::DynamicDim>* dims) const {
  const std::string prefix = Prefix();
  std::vector<std::string> names;
  for (const auto& [n, t] : inputs) names.push_back(n);
  std::sort(names.begin(), names.end());
  struct Declared {
    const DimSpec* spec;
    bool padded;
  };
  std::vector<Declared> declared;
  for (const DimSpec& d : options_.dynamic_dims) declared.push_back({&d, false});
  if (options_.padding && cache::PadsInputs(options_.policy)) {
    for (const DimSpec& d : options_.padding->dims) declared.push_back({&d, true});
  }
  std::set<std::string> named;
  for (const Declared& d : declared) {
    auto it = inputs.find(d.spec->input);
    if (it == inputs.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          prefix, ": dynamic dim ", Where(*d.spec), " names input '", d.spec->input,
          "', which this call does not pass (inputs: ", absl::StrJoin(names, ", "), ")"));
    }
    if (d.spec->axis >= it->second.rank()) {
      return absl::InvalidArgumentError(absl::StrCat(prefix, ": dynamic dim ", Where(*d.spec),
                                                     ": input '", d.spec->input, "' is ",
                                                     it->second.TypeString()));
    }
    if (!d.spec->symbol.empty()) named.insert(d.spec->symbol);
  }
  for (const std::string& n : names) {
    const runtime::Tensor& t = inputs.at(n);
    ir::ValueType type{t.dtype(), {}};
    for (int axis = 0; axis < t.rank(); ++axis) {
      const Declared* decl = nullptr;
      for (const Declared& d : declared) {
        if (d.spec->input == n && d.spec->axis == axis && (decl == nullptr || d.padded)) decl = &d;
      }
      DynamicDim dim;
      dim.named = decl != nullptr && !decl->spec->symbol.empty();
      dim.symbol = dim.named ? decl->spec->symbol : DefaultSymbol(n, axis);
      // Unnamed dims never share a symbol by accident (`a.b` and `a_b` both sanitize to
      // `a_b_0`): only names the caller chose are shared.
      while (!dim.named && (named.contains(dim.symbol) || DimIndex(*dims, dim.symbol) >= 0)) {
        dim.symbol += "_";
      }
      dim.policy = DimPolicy(options_.policy, decl != nullptr, decl != nullptr && decl->padded);
      int k = DimIndex(*dims, dim.symbol);
      if (k < 0) {
        dims->push_back(dim);
      } else if (dim.padded()) {
        (*dims)[k].policy = dim.policy;  // a named dim padded anywhere is padded everywhere
      }
      type.shape.push_back(ir::SymExpr::Symbol(dim.symbol));
    }
    types->emplace_back(n, std::move(type));
  }
  return absl::OkStatus();
}

absl::StatusOr<cache::CompileCache*> JitFunction::CacheFor(const runtime::TensorMap& inputs,
                                                           cache::CompileCache::Args* args) {
  // The hit path takes no lock here: a function usually sees one signature, then sticks
  // to it, and caches are never destroyed before the function.
  if (cache::CompileCache* last = last_.load(std::memory_order_acquire); last != nullptr) {
    if (last->signature().Matches(inputs, args)) return last;
    if (options_.input_types) {
      // Declared types: one signature, whose guards reject (and explain) what differs.
      last->signature().Resolve(inputs, args);
      return last;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = caches_.rbegin(); it != caches_.rend(); ++it) {
    if ((*it)->signature().Matches(inputs, args)) {
      last_.store(it->get(), std::memory_order_release);
      return it->get();
    }
  }
  if (options_.input_types && !caches_.empty()) {
    caches_.front()->signature().Resolve(inputs, args);
    return caches_.front().get();
  }
  GJ_ASSIGN_OR_RETURN(cache::InputSignature sig, SignatureFor(inputs));
  if (options_.log.guards && !options_.input_types) {
    cache::LogLine("guards", absl::StrCat(function_.name, "/", cache::PolicyName(options_.policy),
                                          ": new input signature #", caches_.size() + 1, ": ",
                                          sig.ToString()));
  }
  caches_.push_back(std::make_unique<cache::CompileCache>(function_, options_, std::move(sig)));
  if (!caches_.back()->signature().Matches(inputs, args))
    caches_.back()->signature().Resolve(inputs, args);
  last_.store(caches_.back().get(), std::memory_order_release);
  return caches_.back().get();
}

absl::StatusOr<std::vector<runtime::Tensor>> JitFunction::Run(const runtime::TensorMap& inputs,
                                                              const ir::Bindings& bindings) {
  cache::CompileCache::Args args;
  GJ_ASSIGN_OR_RETURN(cache::CompileCache * cache, CacheFor(inputs, &args));
  // The one call path, by position: an idle call of the cache (its frame kept from an
  // earlier call when the entry is the same), handed back when done.
  std::unique_ptr<cache::EntryCall> call = cache->calls().Borrow();
  absl::Status status = call->Run(args, bindings);
  absl::StatusOr<std::vector<runtime::Tensor>> outputs =
      status.ok() ? absl::StatusOr<std::vector<runtime::Tensor>>(call->TakeOutputs()) : status;
  cache->calls().Return(std::move(call));
  return outputs;
}

absl::StatusOr<std::shared_ptr<const cache::CacheEntry>> JitFunction::Acquire(
    const runtime::TensorMap& inputs) {
  cache::CompileCache::Args args;
  GJ_ASSIGN_OR_RETURN(cache::CompileCache * cache, CacheFor(inputs, &args));
  return cache->Acquire(args);
}

std::string JitFunction::ExplainMiss(const runtime::TensorMap& inputs) const {
  std::lock_guard<std::mutex> lock(mu_);
  cache::CompileCache::Args args;
  for (auto it = caches_.rbegin(); it != caches_.rend(); ++it) {
    if ((*it)->signature().Matches(inputs, &args)) return (*it)->ExplainMiss(args);
  }
  if (caches_.empty()) return "no live entries";
  if (options_.input_types) {
    caches_.front()->signature().Resolve(inputs, &args);
    return caches_.front()->ExplainMiss(args);
  }
  // Explain against the newest signature: its first failing guard names the difference.
  const cache::InputSignature& sig = caches_.back()->signature();
  caches_.back()->signature().Resolve(inputs, &args);
  std::string why = sig.ExplainFailure(args);
  if (why.empty()) {
    std::vector<std::string> names;
    for (const auto& [n, t] : inputs) names.push_back(n);
    std::sort(names.begin(), names.end());
    why = absl::StrCat("inputs {", absl::StrJoin(names, ", "), "} differ from ", sig.ToString());
  }
  return absl::StrCat(why, " (a new input signature)");
}

cache::CacheStats JitFunction::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  cache::CacheStats sum;
  for (const auto& c : caches_) sum += c->stats();
  return sum;
}

int64_t JitFunction::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t n = 0;
  for (const auto& c : caches_) n += c->size();
  return n;
}

int64_t JitFunction::num_signatures() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(caches_.size());
}

std::string JitFunction::SignatureText() const {
  std::lock_guard<std::mutex> lock(mu_);
  return caches_.empty() ? "" : caches_.back()->signature().ToString();
}

}  // namespace graphjit::compiler

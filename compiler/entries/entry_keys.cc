#include "compiler/entries/entry_keys.h"

#include <utility>

#include "absl/strings/str_join.h"

namespace graphjit::compiler::entries {

EntryKeys::EntryKeys(const InputSignature& signature)
    : signature_(signature), auto_state_(signature.num_dynamic()) {
  for (const DynamicDim& d : signature.dynamic_dims()) {
    keys_are_values_ = keys_are_values_ && d.policy == ShapePolicy::kExact;
  }
}

DimKeys EntryKeys::Observe(const DimValues& values, std::vector<int>* turned_dynamic) {
  if (keys_are_values_) return values;
  DimKeys keys(signature_.num_dynamic());
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    const DynamicDim& d = signature_.dynamic_dims()[k];
    if (d.policy != ShapePolicy::kAuto) {
      keys[k] = KeyFor(d.policy, values[k]);
      continue;
    }
    const bool was_dynamic = auto_state_[k].dynamic();
    keys[k] = auto_state_[k].Observe(values[k]);
    if (!was_dynamic && auto_state_[k].dynamic()) turned_dynamic->push_back(k);
  }
  DuckSize(values, &keys);
  return keys;
}

DimKeys EntryKeys::Peek(const DimValues& values) const {
  if (keys_are_values_) return values;
  DimKeys keys(signature_.num_dynamic());
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    const DynamicDim& d = signature_.dynamic_dims()[k];
    if (d.policy == ShapePolicy::kAuto) {
      AutoDimState state = auto_state_[k];  // a copy: peeking must not change history
      keys[k] = state.Observe(values[k]);
    } else {
      keys[k] = KeyFor(d.policy, values[k]);
    }
  }
  DuckSize(values, &keys);
  return keys;
}

void EntryKeys::DuckSize(const DimValues& values, DimKeys* keys) const {
  // An unnamed symbolic dim shares the symbol of the first unnamed symbolic dim of equal
  // value (so `x + y` over two growing dims traces), named dims keep their own; the entry
  // then guards the equality.
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    if ((*keys)[k] != kSymbolicDim) continue;
    int rep = k;
    if (!signature_.dynamic_dims()[k].named) {
      for (int j = 0; j < k; ++j) {
        if (IsSymbolicKey((*keys)[j]) && !signature_.dynamic_dims()[j].named &&
            values[j] == values[k]) {
          rep = SymbolicRep((*keys)[j]);
          break;
        }
      }
    }
    (*keys)[k] = SymbolicKey(rep);
  }
}

std::string EntryKeys::ToText(const DimKeys& keys) const {
  // Dims that are named, symbolic or padded are the interesting ones; when there are
  // none (exact keys of unnamed dims) every dim shows.
  std::vector<std::string> shown, all;
  for (int k = 0; k < signature_.num_dynamic(); ++k) {
    const DynamicDim& d = signature_.dynamic_dims()[k];
    std::string text = KeyToString(d.symbol, keys[k]);
    if (d.named || d.padded() || IsSymbolicKey(keys[k])) shown.push_back(text);
    all.push_back(std::move(text));
  }
  if (shown.empty()) shown = std::move(all);
  return shown.empty() ? "(no dims)" : absl::StrJoin(shown, ",");
}

}  // namespace graphjit::compiler::entries

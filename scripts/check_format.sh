#!/usr/bin/env bash
# Checks C++ files against .clang-format (Google style, 100 columns) without changing
# them; prints each file that differs and exits 1 if any does. CI runs it.
#   scripts/check_format.sh            files added since the merge base with main (and
#                                      untracked ones): new files must be formatted
#   scripts/check_format.sh --changed  files added or modified since then
#   scripts/check_format.sh --all      every tracked .cc / .h file (once the tree has
#                                      been formatted, this is what CI runs)
#   scripts/check_format.sh FILE...    these files
# To fix a file: clang-format -i FILE. CLANG_FORMAT picks the binary (default
# clang-format; version 14 or newer).
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT="${CLANG_FORMAT:-clang-format}"
command -v "$CLANG_FORMAT" >/dev/null || {
  echo "check_format: $CLANG_FORMAT not found (apt-get install clang-format)" >&2
  exit 2
}

is_cxx() { [[ $1 == *.cc || $1 == *.h ]]; }

files=()
if [[ $# -eq 0 || $1 == --changed ]]; then
  filter=A
  [[ $# -gt 0 ]] && filter=AM
  base="$(git merge-base HEAD main 2>/dev/null || git rev-list --max-parents=0 HEAD | tail -1)"
  while IFS= read -r f; do
    is_cxx "$f" && [[ -f $f ]] && files+=("$f")
  done < <(git diff --name-only --diff-filter="$filter" "$base" --
           git ls-files --others --exclude-standard)
elif [[ $1 == --all ]]; then
  while IFS= read -r f; do files+=("$f"); done < <(git ls-files '*.cc' '*.h')
else
  files=("$@")
fi

bad=0
for f in "${files[@]}"; do
  if ! "$CLANG_FORMAT" --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "check_format: $f is not formatted (clang-format -i $f)"
    bad=1
  fi
done
echo "check_format: ${#files[@]} file(s) checked" >&2
exit "$bad"

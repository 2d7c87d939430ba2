#!/usr/bin/env bash
# Checks C++ files against .clang-format (Google style, 100 columns) without changing
# them; prints each file that differs and exits 1 if any does. CI runs `--all` (the
# CTest format.tree_is_clang_formatted).
#   scripts/check_format.sh            files added since the merge base with main (and
#                                      untracked ones): new files must be formatted
#   scripts/check_format.sh --changed  files added or modified since then
#   scripts/check_format.sh --all      every tracked .cc / .h file (what CI runs)
#   scripts/check_format.sh FILE...    these files
# To fix a file: clang-format-19 -i FILE. The version is pinned because clang-format's
# output changes between releases: CLANG_FORMAT picks the binary (default clang-format-19,
# which scripts/bootstrap.sh installs); another version may disagree with the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT="${CLANG_FORMAT:-clang-format-19}"
command -v "$CLANG_FORMAT" >/dev/null || {
  echo "check_format: $CLANG_FORMAT not found (scripts/bootstrap.sh installs clang-format-19)" >&2
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
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    while IFS= read -r f; do files+=("$f"); done < <(git ls-files '*.cc' '*.h')
  else  # a source tree without git (an unpacked archive): every C++ file under it
    while IFS= read -r f; do files+=("$f"); done < <(find . -path ./build\* -prune -o \
      \( -name '*.cc' -o -name '*.h' \) -type f -print | sed 's|^\./||' | sort)
  fi
else
  files=("$@")
fi

bad=0
for f in "${files[@]}"; do
  if ! "$CLANG_FORMAT" --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "check_format: $f is not formatted ($CLANG_FORMAT -i $f)"
    bad=1
  fi
done
echo "check_format: ${#files[@]} file(s) checked" >&2
exit "$bad"

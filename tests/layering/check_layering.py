#!/usr/bin/env python3
"""Checks that every #include respects the layers of docs/DESIGN.md ("Layers").

Usage: check_layering.py [REPO_ROOT]   (default: two levels above this script)

Scans every .h/.cc under ir/ runtime/ frontend/ compiler/ models/ studies/ tools/
benchmarks/ (tests/ and examples/ are exempt) and fails, printing file:line and the rule
broken, when a file includes a header of a layer above its own:

  ir < runtime < frontend < compiler < models < studies < tools, benchmarks

tools and benchmarks are both on top and neither includes the other. Within compiler/,
compiler/lazy (the lazy runner) may include any of compiler/, but nothing else in
compiler/ includes compiler/lazy. Only compiler/codegen and compiler/jit include LLVM
headers (llvm/..., llvm-c/...).
"""

import os
import re
import sys

LAYERS = ["ir", "runtime", "frontend", "compiler", "models", "studies", "tools", "benchmarks"]
# Rank of each top-level folder; tools and benchmarks share the top rank.
RANK = {"ir": 0, "runtime": 1, "frontend": 2, "compiler": 3, "models": 4, "studies": 5,
        "tools": 6, "benchmarks": 6}
ORDER = "ir < runtime < frontend < compiler < models < studies < tools, benchmarks"
LLVM_DIRS = ("compiler/codegen/", "compiler/jit/")

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def rules_broken(path, target):
    """The rules `path` (repo-relative) breaks by including `target`, as messages."""
    broken = []
    src_top = path.split("/", 1)[0]
    tgt_top = target.split("/", 1)[0]
    if target.startswith(("llvm/", "llvm-c/")):
        if not path.startswith(LLVM_DIRS):
            broken.append("only compiler/codegen and compiler/jit include LLVM headers")
        return broken
    if tgt_top not in RANK or "/" not in target:
        return broken  # a system or third-party header, or a same-folder relative include
    if tgt_top != src_top:
        if RANK[tgt_top] > RANK[src_top]:
            broken.append(f"{src_top} must not include {tgt_top}, a layer above it ({ORDER})")
        elif RANK[tgt_top] == RANK[src_top]:
            broken.append(f"{src_top} and {tgt_top} are both top layers; "
                          "neither includes the other")
    elif src_top == "compiler":
        if target.startswith("compiler/lazy/") and not path.startswith("compiler/lazy/"):
            broken.append("nothing in compiler/ includes compiler/lazy (the lazy runner sits "
                          "above the rest of the compiler) except compiler/lazy itself")
    return broken


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    violations = 0
    files = 0
    for layer in LAYERS:
        top = os.path.join(root, layer)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith((".h", ".cc")):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                files += 1
                with open(full, encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        for rule in rules_broken(rel, m.group(2)):
                            print(f"{rel}:{lineno}: #include {m.group(1)}{m.group(2)}"
                                  f"{'>' if m.group(1) == '<' else chr(34)}: {rule}")
                            violations += 1
    if files == 0:
        print(f"check_layering: no sources found under {root}")
        return 2
    if violations:
        print(f"FAILED: {violations} include(s) break the layering ({files} files checked)")
        return 1
    print(f"ok: {files} files respect the layering ({ORDER})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

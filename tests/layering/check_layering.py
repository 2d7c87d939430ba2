#!/usr/bin/env python3
"""Checks that every #include respects the layers of docs/DESIGN.md ("Layers").

Usage: check_layering.py [REPO_ROOT]   (default: two levels above this script)

Scans every .h/.cc under ir/ runtime/ frontend/ onnx/ compiler/ models/ studies/ tools/
benchmarks/ python/ (tests/ and examples/ are exempt) and fails, printing file:line and
the rule broken, when a file includes a header of a layer above its own:

  ir < runtime < frontend, onnx < compiler < models < studies < tools, benchmarks, python

frontend and onnx (the ONNX importer) share a rank and neither includes the other; tools,
benchmarks and the Python module are all on top and none includes another. One rule is explicit
rather than by rank: compiler/ never includes onnx/ (the importer is a client of the IR,
not a part of the compiler; models and tools above may use it). The ONNX library's own
headers (onnx/onnx_pb.h, onnx/onnx-ml.pb.h, ... from libonnx-dev) share the onnx/
prefix; they are not the importer's, so they are not checked. Inside compiler/
the sub-layers of docs/DESIGN.md ("Inside the compiler") hold the same way:

  passes, lower, orc < codegen, analysis < store < compiled < entries, autodiff
    < the Jit API (compiler/*.h) < lazy

Folders of one rank never include each other, so no arrow climbs and there is no cycle.
Only compiler/codegen and compiler/orc include LLVM headers (llvm/..., llvm-c/...).

  check_layering.py --self-test   plants a climb inside compiler/, a compiler -> onnx
                                  and a frontend -> onnx include in a copy of the tree and
                                  checks that each is caught (the test of the test)
"""

import os
import re
import sys

LAYERS = ["ir", "runtime", "frontend", "onnx", "compiler", "models", "studies", "tools",
          "benchmarks", "python"]
# Rank of each top-level folder; frontend and onnx share a rank, as tools and benchmarks do.
RANK = {"ir": 0, "runtime": 1, "frontend": 2, "onnx": 2, "compiler": 3, "models": 4,
        "studies": 5, "tools": 6, "benchmarks": 6, "python": 6}
ORDER = ("ir < runtime < frontend, onnx < compiler < models < studies < tools, benchmarks, "
         "python")
# Includes the ranks would allow but the design forbids: (from folder, to folder, why).
FORBIDDEN = [("compiler", "onnx", "compiler/ never includes onnx/ (the importer is a client "
                                  "of the IR, not part of the compiler)")]
# Headers of libonnx-dev under the same onnx/ prefix: third-party, not the importer's.
ONNX_LIBRARY_HEADERS = re.compile(r"^onnx/(onnx[-_][\w-]*\.h|"
                                  r"(common|defs|shape_inference|version_converter)/)")
LLVM_DIRS = ("compiler/codegen/", "compiler/orc/")
# Sub-layers of compiler/: the folder under compiler/ ("" for the Jit API files at its top).
COMPILER_RANK = {"passes": 0, "lower": 0, "orc": 0, "codegen": 1, "analysis": 1, "store": 2,
                 "compiled": 3, "entries": 4, "autodiff": 4, "": 5, "lazy": 6}
COMPILER_ORDER = ("passes, lower, orc < codegen, analysis < store < compiled < "
                  "entries, autodiff < Jit API (compiler/*.h) < lazy")


def compiler_sublayer(path):
    """The sub-layer of a compiler/ path: its folder, or "" for compiler/FILE."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 else ""

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def rules_broken(path, target):
    """The rules `path` (repo-relative) breaks by including `target`, as messages."""
    broken = []
    src_top = path.split("/", 1)[0]
    tgt_top = target.split("/", 1)[0]
    if target.startswith(("llvm/", "llvm-c/")):
        if not path.startswith(LLVM_DIRS):
            broken.append("only compiler/codegen and compiler/orc include LLVM headers")
        return broken
    if tgt_top not in RANK or "/" not in target or ONNX_LIBRARY_HEADERS.match(target):
        return broken  # a system or third-party header, or a same-folder relative include
    for src_layer, tgt_layer, why in FORBIDDEN:
        if src_top == src_layer and tgt_top == tgt_layer:
            broken.append(why)
    if tgt_top != src_top:
        if RANK[tgt_top] > RANK[src_top]:
            broken.append(f"{src_top} must not include {tgt_top}, a layer above it ({ORDER})")
        elif RANK[tgt_top] == RANK[src_top]:
            broken.append(f"{src_top} and {tgt_top} share a layer; "
                          "neither includes the other")
    elif src_top == "compiler":
        src, tgt = compiler_sublayer(path), compiler_sublayer(target)
        if src == tgt:
            return broken
        if src not in COMPILER_RANK or tgt not in COMPILER_RANK:
            unknown = src if src not in COMPILER_RANK else tgt
            broken.append(f"compiler/{unknown}/ has no place in the sub-layers; add it to "
                          "COMPILER_RANK and docs/DESIGN.md")
        elif COMPILER_RANK[tgt] > COMPILER_RANK[src]:
            broken.append(f"compiler/{src or '*.h'} must not include compiler/{tgt or '*.h'}, "
                          f"a sub-layer above it ({COMPILER_ORDER})")
        elif COMPILER_RANK[tgt] == COMPILER_RANK[src]:
            broken.append(f"compiler/{src or '*.h'} and compiler/{tgt or '*.h'} share a "
                          "sub-layer; neither includes the other")
    return broken


def self_test(root):
    """Copies the layered folders, plants one climb inside compiler/, expects a failure."""
    import shutil
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for layer in LAYERS:
            if os.path.isdir(os.path.join(root, layer)):
                shutil.copytree(os.path.join(root, layer), os.path.join(tmp, layer),
                                ignore=shutil.ignore_patterns("*.txt", "*.md", "*.py"))
        clean = subprocess.run([sys.executable, __file__, tmp], capture_output=True, text=True)
        if clean.returncode != 0:
            print("self-test: the unplanted copy already fails:\n" + clean.stdout)
            return 1
        # (planted file, its include, what it breaks)
        plants = [("compiler/lower/planted_climb.h", "compiler/entries/guards.h",
                   "a climb inside compiler/ (lower -> entries)"),
                  ("compiler/passes/planted_onnx.h", "onnx/import.h",
                   "compiler -> onnx, which the ranks alone would allow"),
                  ("frontend/planted_onnx.h", "onnx/import.h",
                   "frontend -> onnx, a folder of the same rank")]
        for path, include, _ in plants:
            os.makedirs(os.path.dirname(os.path.join(tmp, path)), exist_ok=True)
            with open(os.path.join(tmp, path), "w", encoding="utf-8") as f:
                f.write(f'#include "{include}"\n')
        bad = subprocess.run([sys.executable, __file__, tmp], capture_output=True, text=True)
        for path, _, what in plants:
            if bad.returncode != 1 or f"{path}:1" not in bad.stdout:
                print(f"self-test: a planted include ({what}) was not caught:\n" + bad.stdout)
                return 1
    print("ok: planted includes are caught: " + "; ".join(what for _, _, what in plants))
    return 0


def main():
    args = [a for a in sys.argv[1:] if a != "--self-test"]
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), "..", ".."))
    if "--self-test" in sys.argv[1:]:
        return self_test(root)
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

#!/usr/bin/env python3
"""Checks that docs/DESIGN.md stays a true map of the tree.

  check_design_map.py ROOT              the layout table ("Where each thing lives") names
                                        every file group of every source folder, and the
                                        data flow names every default pass
  check_design_map.py --names ROOT      no source file or document uses a retired name
                                        (the glossary gives each word one meaning)
  check_design_map.py --self-test ROOT  both checks catch what they should

A file group is a file's stem: `kernel_set` stands for kernel_set.h and kernel_set.cc,
`ops.def` for itself. A row may name a family with a star (`ops_*`). Prints file:line (or
the folder) and what is missing; exit 1 if anything is.
"""
import os
import re
import sys
import tempfile

# Folders whose files the table must name, each with its own row; `compiler/` names only
# the files at its top.
FOLDERS = ["ir", "runtime", "frontend", "onnx", "compiler/passes", "compiler/lower",
           "compiler/orc", "compiler/codegen", "compiler/analysis", "compiler/store",
           "compiler/compiled", "compiler/autodiff", "compiler/entries", "compiler",
           "compiler/lazy", "models", "studies", "tools", "benchmarks"]
SOURCE_EXT = (".h", ".cc", ".def", ".py", ".sh", ".gir")

# Retired names: each meant two things (docs/DESIGN.md, "Glossary"), or named something
# that is gone. (pattern, what to say instead)
RETIRED = [
    (r"\bEntryFn\b", "KernelFn: a compiled kernel's function"),
    (r"\bJitEngine\b", "OrcEngine: Jit is the user-facing API only"),
    (r"\bJitCode\b", "OrcCode"),
    (r"\bJitRequest\b", "OrcRequest"),
    (r"\bDescribeJitTarget\b", "DescribeHostTarget"),
    (r"\bjit_engine\b", "compiler/orc/orc_engine"),
    (r"\bCodeStore\b", "GraphStore: it holds compiled graphs"),
    (r"\bCodeStoreStats\b", "StoreStats"),
    (r"store/code_store\.h", "store/content_store.h"),
    (r"\bcompiler::cache\b|\bcache::[A-Z]|namespace cache\b", "namespace entries"),
    (r"\bneeds_units\b", "the back end makes units on demand (UnitSource)"),
    (r"\bentry_names?\b", "function_name(s): an exported function"),
]


def source_files(root):
    for top in ["ir", "runtime", "frontend", "onnx", "compiler", "models", "studies", "tools",
                "benchmarks", "tests", "examples", "docs", "scripts"]:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith(SOURCE_EXT + (".md", ".txt")):
                    yield os.path.join(dirpath, f)
    for top_file in ["README.md", "CMakeLists.txt"]:
        if os.path.exists(os.path.join(root, top_file)):
            yield os.path.join(root, top_file)


def check_names(root):
    problems = []
    me = os.path.abspath(__file__)
    for path in source_files(root):
        if os.path.abspath(path) == me:
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                for pattern, instead in RETIRED:
                    if re.search(pattern, line):
                        problems.append(f"{os.path.relpath(path, root)}:{n}: retired name "
                                        f"/{pattern}/; use {instead}")
    return problems


def layout_rows(design):
    """{folder: row text} from the table under '## Where each thing lives'."""
    rows = {}
    section = design.split("## Where each thing lives", 1)
    if len(section) < 2:
        return rows
    for line in section[1].splitlines():
        m = re.match(r"\|\s*`([^`]+)/`\s*\|(.*)\|\s*$", line)
        if m:
            rows[m.group(1)] = m.group(2)
        elif rows and not line.startswith("|"):
            break
    return rows


def groups_of(root, folder):
    groups = set()
    for f in os.listdir(os.path.join(root, folder)):
        path = os.path.join(root, folder, f)
        if not os.path.isfile(path) or not f.endswith(SOURCE_EXT):
            continue
        stem, ext = os.path.splitext(f)
        groups.add(f if ext in (".def", ".py", ".sh", ".gir") else stem)
    return groups


def named(group, row):
    names = re.findall(r"`([^`]+)`", row)
    for name in names:
        name = name.split(" ")[0]
        if name == group or (name.endswith("*") and group.startswith(name[:-1])):
            return True
        if name.startswith("graphjit-") and group.replace("_main", "") in name:
            return True
    return False


def default_passes(root):
    with open(os.path.join(root, "compiler/passes/pipeline.cc")) as f:
        text = f.read()
    body = text.split("BuiltinPasses()", 1)[1].split("};", 1)[0]
    passes = []
    for m in re.finditer(r'\{"(\w+)",([^\n]*)', body):
        if "in_default=*/false" not in m.group(2):
            passes.append(m.group(1))
    return passes


def check_map(root, design_path=None):
    design_path = design_path or os.path.join(root, "docs/DESIGN.md")
    with open(design_path) as f:
        design = f.read()
    rows = layout_rows(design)
    problems = []
    for folder in FOLDERS:
        if folder not in rows:
            problems.append(f"docs/DESIGN.md: no row for `{folder}/` in the layout table")
            continue
        for group in sorted(groups_of(root, folder)):
            if not named(group, rows[folder]):
                problems.append(f"docs/DESIGN.md: the `{folder}/` row does not name `{group}`")
    flow = design.split("## Data flow", 1)[-1].split("\n## ", 1)[0]
    passes_row = rows.get("compiler/passes", "")
    for p in default_passes(root):
        if p not in flow:
            problems.append(f"docs/DESIGN.md: the data flow does not name the default pass {p}")
        if f"`{p}`" not in passes_row:
            problems.append(f"docs/DESIGN.md: the `compiler/passes/` row does not name `{p}`")
    return problems


def self_test(root):
    with open(os.path.join(root, "docs/DESIGN.md")) as f:
        design = f.read()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        broken = os.path.join(tmp, "DESIGN.md")
        with open(broken, "w") as f:
            f.write(design.replace("`kernel_set`", "`kernel_sets`").replace("`cse`", "`cs e`"))
        found = check_map(root, broken)
        for want in ["does not name `kernel_set`", "does not name `cse`"]:
            if not any(want in p for p in found):
                print(f"self-test: a map without {want.split()[-1]} passed the check")
                ok = False
        # A tree of its own, so the real check running beside this one never sees it.
        os.makedirs(os.path.join(tmp, "docs"))
        with open(os.path.join(tmp, "docs", "planted.md"), "w") as f:
            f.write("fine\nthe JitEngine compiles\n")
        if not any("planted.md:2" in p for p in check_names(tmp)):
            print("self-test: a planted retired name passed the check")
            ok = False
    return ok


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    root = os.path.abspath(args[0] if args else ".")
    if "--self-test" in argv:
        ok = self_test(root)
        print("self-test passed" if ok else "self-test FAILED")
        return 0 if ok else 1
    problems = check_names(root) if "--names" in argv else check_map(root)
    problems = list(dict.fromkeys(problems))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

// Internal to compiler/compiled (the back end's group_modules and get_modules steps,
// back_end.h): the kernels a
// program misses, grouped into LLVM modules, and each module got through the stores -
// live in the ModuleStore, loaded from the disk or the remote cache, or compiled here (in
// parallel) and stored in them.
#ifndef GRAPHJIT_COMPILER_COMPILED_KERNEL_MODULES_H_
#define GRAPHJIT_COMPILER_COMPILED_KERNEL_MODULES_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/codegen/native_code.h"
#include "compiler/lower/kernel_ir.h"
#include "compiler/store/content_key.h"

namespace graphjit::compiler {

class DiskCache;    // compiler/store/disk_cache.h
class RemoteCache;  // compiler/store/remote_cache.h

// One module of missing kernels and how it was got.
struct ModuleGroup {
  std::vector<int> members;  // indices into the distinct kernels
  ContentKey key;
  std::vector<std::string> function_names;  // each member's, exported
  absl::StatusOr<std::shared_ptr<const NativeModule>> module = absl::UnknownError("not run");
  bool built = false;    // compiled or loaded here (else a live module was shared)
  bool loaded = false;   // from the disk or the remote cache
  bool fetched = false;  // from the remote cache
  // The remote cache's answer: a value, a miss (compiled under its lock), a fallback
  // (compiled without it); waited: another process held the lock for a while.
  bool remote_hit = false, remote_miss = false, remote_fallback = false, remote_wait = false;
};

// Groups the missing kernels (`missing`: indices into `keys`, the distinct kernels' keys,
// in first-use order) into balanced modules of up to six, in that order. LLVM's fixed
// cost per module, measured at about 6-9 ms here, is what a handful of small kernels
// cost. The grouping depends only on what is missing, so a new process that misses the
// same kernels forms the same modules (keys and function names) and finds them on disk.
std::vector<ModuleGroup> GroupModules(const std::vector<int>& missing,
                                      const std::vector<ContentKey>& keys);

// What the modules are built from and where they may come from.
struct ModuleSources {
  // Distinct kernel j's canonical program, asked for only when a module must compile
  // (kernels bound from a graph record are canonicalized then); thread-safe.
  std::function<absl::StatusOr<const Program*>(int j)> unit;
  std::vector<std::string> names;  // per distinct kernel: a kernel's name, for errors
  CompileOptions codegen;
  // Private compiles (keep_ir / emit_asm) keep their texts: they never share a module,
  // nor use the caches (give them null).
  bool private_text = false;
  DiskCache* disk = nullptr;
  RemoteCache* remote = nullptr;
  int max_threads = 1;
};

// Sets every group's module: the live one of its key (shared, not built), else loaded
// from the disk cache, else from the remote cache (or compiled under its lock), else
// compiled; what is built is stored in the caches. Compiles run on up to max_threads
// threads, no more than the modules neither live nor on disk; returns the threads used.
int GetOrCompileModules(const ModuleSources& sources, std::vector<ModuleGroup>* groups);

// How many of `groups` are neither live nor on disk: the ones that would compile.
int ModulesToCompile(const ModuleSources& sources, const std::vector<ModuleGroup>& groups);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_COMPILED_KERNEL_MODULES_H_

// CompileEnv: where compiles find and keep code, how many threads they use and what they
// report, decided once and passed down, so that no part of the compiler reads the
// environment or picks a process-wide store on its own. Jit, the lazy runner and the
// tools take the process's one (FromEnvironment) at the top; tests and embedders can
// make their own (a private disk cache, no remote tier, one thread).
//
// The variables (docs/ENVIRONMENT.md), all read here and nowhere else in the library:
//   GRAPHJIT_CACHE_DIR          kernels' object code on disk (`off`: none; unset:
//                               $XDG_CACHE_HOME/graphjit, else $HOME/.cache/graphjit)
//   GRAPHJIT_CACHE_MAX_BYTES    its size bound (default 1 GiB)
//   GRAPHJIT_REMOTE_CACHE       redis://[USER[:PASSWORD]@]HOST:PORT[/DB], the shared tier
//                               below the disk, with GRAPHJIT_REMOTE_CACHE_{CONNECT_TIMEOUT,
//                               TIMEOUT,LOCK_TTL,LOCK_WAIT,RETRY}_MS and
//                               GRAPHJIT_REMOTE_CACHE_PASSWORD_FILE (mode 0600)
//   GRAPHJIT_CACHE_SECRET_FILE  the secret both tiers sign and verify records with (mode
//                               0600; docs/SECURITY.md); unset: the disk cache signs with
//                               a per-user key ($XDG_CONFIG_HOME/graphjit/cache-key, else
//                               $HOME/.config/graphjit/cache-key, made on first use) and
//                               the remote tier is refused, unless
//   GRAPHJIT_REMOTE_CACHE_TRUST `unsigned`: remote code is published and loaded unsigned
//                               (unsafe; default `signed`)
//   GRAPHJIT_COMPILE_THREADS    threads compiling one graph's kernels (default: all cores)
//   GRAPHJIT_NUM_THREADS        threads running one call's kernels (default: the CPUs of
//                               this process's affinity mask; 1..1024)
//   GRAPHJIT_DUMP_DIR           every compile writes its stages there
//   GRAPHJIT_PROFILE            per-kernel times of every compiled graph, on stderr
//   GRAPHJIT_PRODUCTS           large products: auto, tiles (generated) or blas (OpenBLAS)
//   GRAPHJIT_LOG                recompiles, guards, cache (comma-separated, or all)
// A value that does not parse is reported once on stderr and its default used.
#ifndef GRAPHJIT_COMPILER_COMPILED_COMPILE_ENV_H_
#define GRAPHJIT_COMPILER_COMPILED_COMPILE_ENV_H_

#include <string>

#include "compiler/lower/matmul_strategy.h"
#include "compiler/store/cache_log.h"
#include "compiler/store/content_store.h"
#include "compiler/store/disk_cache.h"
#include "compiler/store/remote_cache.h"

namespace graphjit::compiler {

struct CompileEnv {
  // The memory tier of kernels: equal kernels of every graph compiled with this env are
  // compiled once and shared while used.
  KernelStore* kernels = &KernelStore::Default();
  // Object code by kernel key across processes; null: none. The stores carry the secret
  // their records are signed with (DiskCache::Open, RemoteCacheOptions::secret).
  DiskCache* disk = nullptr;
  RemoteCache* remote = nullptr;  // the shared tier below `disk`; null: none
  int compile_threads = 1;        // threads compiling one graph's kernels (>= 1)
  // Threads running one call's kernels: the parallel loops of large kernels split into
  // up to this many ranges on the runtime's thread pool (1..runtime::kMaxThreads).
  int threads = 1;
  std::string dump_dir;  // non-empty: every compile writes its stages there
  bool profile = false;  // time every call per kernel, table on stderr at exit
  // The kernels of large products (GRAPHJIT_PRODUCTS=auto|tiles|blas).
  ProductKernels products = ProductKernels::kAuto;
  LogFlags log;

  // The process's environment, read once (at the first call) and kept for the process.
  static const CompileEnv& FromEnvironment();
  // FromEnvironment without the disk and remote tiers: every miss compiles here.
  static const CompileEnv& MemoryOnly();
};

// GRAPHJIT_LOG alone, without opening any store (JitOptions' default logging).
LogFlags LogFlagsFromEnvironment();

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_COMPILED_COMPILE_ENV_H_

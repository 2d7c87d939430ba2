// StepChoice: whether a step that could run on the thread pool (KernelSet::Run) does, as
// measured on this machine.
//
// A phased job pays about three cache-line crossings between cores per phase. Where the
// cores are far apart (a crossing 0.3 us; `bench_overhead`'s BM_CoreRoundTrip 550-620 ns
// on a 2-vCPU EPYC) the decode layer's f32 step at S = 64 took 11.2 us on 2 threads
// against 8.6 us on one: what a phase saves depends on the core pair the host gives, which
// no constant threshold knows. So per bucket of step work (its log2), the first calls
// alternate between the calling thread alone and the pool, the faster by median serves
// the calls after them, and every kRetrialCalls calls the bucket is measured again (hosts
// move vCPUs). The outputs are the same bits on either path.
#ifndef GRAPHJIT_COMPILER_COMPILED_STEP_CHOICE_H_
#define GRAPHJIT_COMPILER_COMPILED_STEP_CHOICE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace graphjit::compiler {

class StepChoice {
 public:
  enum class Path : uint8_t { kSerial, kPool };
  static constexpr int kBuckets = 64;
  static constexpr uint32_t kTrialsEach = 5;       // timed calls per path per round
  static constexpr uint32_t kRetrialCalls = 4096;  // calls of a bucket between rounds

  // The path of the next call whose step does `work` (Kernel::parallel_work units);
  // `timed`: measure the call and Record it.
  struct Ticket {
    Path path;
    bool timed;
    int bucket;
  };
  Ticket Next(int64_t work);
  void Record(const Ticket& ticket, double seconds);

  // The path a bucket serves once measured (kPool until then); for tests and --stats.
  Path Chosen(int64_t work) const;

 private:
  struct Bucket {
    std::atomic<uint32_t> calls{0};
    std::atomic<Path> chosen{Path::kPool};
    std::mutex mu;
    std::vector<double> seconds[2];  // guarded by mu: this round's samples per path
  };
  static int BucketOf(int64_t work);

  std::array<Bucket, kBuckets> buckets_;
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_COMPILED_STEP_CHOICE_H_

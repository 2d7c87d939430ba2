#include "compiler/compiled/step_choice.h"

#include <algorithm>
#include <bit>

#include "ir/clock.h"

namespace graphjit::compiler {

int StepChoice::BucketOf(int64_t work) {
  if (work <= 0) return 0;
  return std::min(kBuckets - 1, static_cast<int>(std::bit_width(static_cast<uint64_t>(work))));
}

StepChoice::Ticket StepChoice::Next(int64_t work) {
  const int b = BucketOf(work);
  Bucket& bucket = buckets_[b];
  const uint32_t n = bucket.calls.fetch_add(1, std::memory_order_relaxed) % kRetrialCalls;
  if (n < 2 * kTrialsEach) {
    // A round: the paths alternate, so load from other tenants hits both alike.
    return {n % 2 == 0 ? Path::kSerial : Path::kPool, true, b};
  }
  return {bucket.chosen.load(std::memory_order_relaxed), false, b};
}

void StepChoice::Record(const Ticket& ticket, double seconds) {
  Bucket& bucket = buckets_[ticket.bucket];
  std::lock_guard<std::mutex> lock(bucket.mu);
  std::vector<double>& mine = bucket.seconds[static_cast<int>(ticket.path)];
  mine.push_back(seconds);
  std::vector<double>& serial = bucket.seconds[static_cast<int>(Path::kSerial)];
  std::vector<double>& pool = bucket.seconds[static_cast<int>(Path::kPool)];
  if (serial.size() < kTrialsEach || pool.size() < kTrialsEach) return;
  bucket.chosen.store(ir::Median(pool) < ir::Median(serial) ? Path::kPool : Path::kSerial,
                      std::memory_order_relaxed);
  serial.clear();
  pool.clear();
}

StepChoice::Path StepChoice::Chosen(int64_t work) const {
  return buckets_[BucketOf(work)].chosen.load(std::memory_order_relaxed);
}

}  // namespace graphjit::compiler

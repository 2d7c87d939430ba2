// The disk cache's graph-level record: a compile writes it, a new process (a fresh kernel
// store over the same directory) reads it instead of running the passes and lowering and
// gets the same program and the same output bits; a record of other weights or options
// is never read; a damaged one is refused, removed and written again.
#include "compiler/compiled/graph_record.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "compiler/store/content_store.h"
#include "compiler/store/disk_cache.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "models/model.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace graphjit::compiler {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kSpec[] = "decode:d=32,H=4,G=2,dh=8,f=64,seed=41";

class GraphRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() /
            absl::StrCat("gj_graph_record_", ::getpid(), "_",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
    disk_ =
        *DiskCache::Open(dir_, int64_t{1} << 30, *CacheSecret::FromBytes("graph record test key"));
    model_ = *models::CreateModel(kSpec);
    graph_ = *models::TraceModel(*model_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A compile as a new process would do it: its own kernel store, the shared directory.
  absl::StatusOr<std::unique_ptr<CompiledGraph>> CompileFresh(
      CompileGraphOptions options = {}, const runtime::TensorMap* params = nullptr) {
    stores_.push_back(std::make_unique<KernelStore>());
    envs_.push_back(std::make_unique<CompileEnv>(CompileEnv::MemoryOnly()));
    envs_.back()->kernels = stores_.back().get();
    envs_.back()->disk = disk_.get();
    options.env = envs_.back().get();
    return CompiledGraph::Compile(graph_, params != nullptr ? *params : model_->params(), options);
  }

  std::vector<runtime::Tensor> Run(const CompiledGraph& cg) {
    const ir::Bindings bindings = model_->CompleteBindings({{"S", 12}});
    runtime::TensorMap inputs = *model_->ExampleInputs(bindings, 3);
    absl::StatusOr<std::vector<runtime::Tensor>> out = cg.Run(inputs, bindings);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *std::move(out) : std::vector<runtime::Tensor>{};
  }

  std::string RecordPath() {
    return disk_->PathOf(*GraphRecordKey(graph_, model_->params(), CompileGraphOptions{}));
  }

  std::string dir_;
  std::unique_ptr<DiskCache> disk_;
  std::unique_ptr<models::Model> model_;
  ir::Graph graph_;
  std::vector<std::unique_ptr<KernelStore>> stores_;
  std::vector<std::unique_ptr<CompileEnv>> envs_;
};

void ExpectSameBits(const std::vector<runtime::Tensor>& a, const std::vector<runtime::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].TypeString(), b[i].TypeString());
    EXPECT_EQ(std::memcmp(a[i].raw_data(), b[i].raw_data(), a[i].nbytes()), 0) << "output " << i;
  }
}

TEST(GraphRecord, ThisBuildHasAnId) {
  // Debian's toolchain links with --build-id; without one, records are off.
  EXPECT_GE(BuildId().size(), 16u);
  EXPECT_EQ(BuildId().find_first_not_of("0123456789abcdef"), std::string::npos) << BuildId();
}

TEST_F(GraphRecordTest, AWarmStartSkipsPassesAndLoweringWithTheSameBits) {
  auto cold = CompileFresh();
  ASSERT_TRUE(cold.ok()) << cold.status();
  EXPECT_FALSE((*cold)->from_record());
  EXPECT_GT((*cold)->timings().passes, 0);
  EXPECT_FALSE((*cold)->pass_stats().empty());
  ASSERT_TRUE(fs::exists(RecordPath()));
  const std::vector<runtime::Tensor> expected = Run(**cold);
  const std::string program = ProgramToString((*cold)->program());
  cold->reset();  // its kernels leave the memory tier with it

  auto warm = CompileFresh();
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_TRUE((*warm)->from_record());
  EXPECT_EQ((*warm)->timings().passes, 0);
  EXPECT_EQ((*warm)->timings().lower, 0);
  EXPECT_GT((*warm)->timings().record, 0);
  EXPECT_THAT((*warm)->pass_stats(), IsEmpty());
  // The kernels bound as the record says, not canonicalized again.
  EXPECT_TRUE((*warm)->kernels().bound());
  const KernelSetStats& kernels = (*warm)->kernels().stats();
  EXPECT_EQ(kernels.compiled, 0);
  EXPECT_EQ(kernels.loaded, kernels.distinct);
  EXPECT_EQ(ProgramToString((*warm)->program()), program);
  // The folded weights came from the record: params the caller never had.
  const runtime::TensorMap made = MadeParams(model_->params(), (*warm)->params());
  EXPECT_FALSE(made.empty());
  ExpectSameBits(Run(**warm), expected);
}

// The record outlives kernel objects the size bound removed: the warm start then
// canonicalizes and compiles what is missing, with the same bits.
// Every file of the cache - module objects, the graph record, its weight pack - with one
// payload byte changed and the checksum recomputed (what a writer without the secret can
// do): none is used; everything compiles here, with the same output bits, and the files
// are written again. Files signed under another secret are refused the same way.
TEST_F(GraphRecordTest, TamperedOrForeignFilesAreNeverUsed) {
  auto cold = CompileFresh();
  ASSERT_TRUE(cold.ok()) << cold.status();
  const std::vector<runtime::Tensor> expected = Run(**cold);
  const int distinct = (*cold)->kernels().stats().distinct;
  cold->reset();
  int files = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_)) {
    std::string bytes;
    {
      std::ifstream in(e.path(), std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const size_t summed = bytes.size() - CacheSecret::kTagBytes - 8;
    bytes[summed - 1] ^= 0x01;  // the payload's last byte
    const uint64_t sum = XXH3_64bits(bytes.data(), summed);
    std::memcpy(bytes.data() + summed, &sum, 8);
    std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << bytes;
    ++files;
  }
  ASSERT_GE(files, 3);
  auto tampered = CompileFresh();
  ASSERT_TRUE(tampered.ok()) << tampered.status();
  EXPECT_FALSE((*tampered)->from_record());
  EXPECT_EQ((*tampered)->kernels().stats().compiled, distinct);
  EXPECT_EQ((*tampered)->kernels().stats().loaded, 0);
  EXPECT_GE(disk_->stats().rejected, 2);  // the record and the modules looked up
  ExpectSameBits(Run(**tampered), expected);
  tampered->reset();
  // Rewritten: the record at once; the weight pack (written only when absent) once a
  // read refused it - so the second compile after the tampering reads the record again.
  bool healed = false;
  for (int i = 0; i < 2 && !healed; ++i) {
    auto again = CompileFresh();
    ASSERT_TRUE(again.ok()) << again.status();
    healed = (*again)->from_record();
    ExpectSameBits(Run(**again), expected);
  }
  EXPECT_TRUE(healed);
  // The same directory read with another secret: nothing is used.
  disk_ = *DiskCache::Open(dir_, int64_t{1} << 30, *CacheSecret::FromBytes("another fleet's key"));
  auto foreign = CompileFresh();
  ASSERT_TRUE(foreign.ok()) << foreign.status();
  EXPECT_FALSE((*foreign)->from_record());
  EXPECT_EQ((*foreign)->kernels().stats().loaded, 0);
  ExpectSameBits(Run(**foreign), expected);
}

TEST_F(GraphRecordTest, KernelsGoneFromDiskAreCompiledAgain) {
  auto cold = CompileFresh();
  ASSERT_TRUE(cold.ok()) << cold.status();
  const std::vector<runtime::Tensor> expected = Run(**cold);
  const std::string record = RecordPath();
  absl::StatusOr<GraphRecord> decoded = DecodeGraphRecord(
      *disk_->Load(*GraphRecordKey(graph_, model_->params(), CompileGraphOptions{})));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const std::string pack = disk_->PathOf(decoded->pack_key);
  cold->reset();
  // Every module's object, not the record or its weight pack.
  for (const fs::directory_entry& e : fs::directory_iterator(dir_)) {
    if (e.path().string() != record && e.path().string() != pack) fs::remove(e.path());
  }
  auto warm = CompileFresh();
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_TRUE((*warm)->from_record());
  // The record's bindings still serve: the back end makes the units of only the kernels
  // whose modules compile (no second canonicalization of the whole program).
  EXPECT_TRUE((*warm)->kernels().bound());
  EXPECT_GT((*warm)->kernels().stats().compiled, 0);
  ExpectSameBits(Run(**warm), expected);
}

// A record that passes every check but binds a kernel to another key than its
// canonical form's (damage, or a bug): the kernel's unit is refused when its module must
// compile, the record is removed, and the graph compiles as without it.
TEST_F(GraphRecordTest, BindingsThatDoNotMatchAreRemovedAndCompiledWithout) {
  auto cold = CompileFresh();
  ASSERT_TRUE(cold.ok()) << cold.status();
  const std::vector<runtime::Tensor> expected = Run(**cold);
  const ContentKey key = *GraphRecordKey(graph_, model_->params(), CompileGraphOptions{});
  absl::StatusOr<GraphRecord> decoded = DecodeGraphRecord(*disk_->Load(key));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  std::vector<KernelBinding> bindings = (*cold)->kernels().bindings();
  bindings[0].key = KernelContentKey("not this kernel's canonical form");
  const runtime::TensorMap made = MadeParams(model_->params(), (*cold)->params());
  disk_->Store(key, EncodeGraphRecord(decoded->graph, made, decoded->lowered, bindings).record);
  cold->reset();
  auto healed = CompileFresh();
  ASSERT_TRUE(healed.ok()) << healed.status();
  EXPECT_FALSE((*healed)->from_record());
  ExpectSameBits(Run(**healed), expected);
  // Written again, right this time.
  auto warm = CompileFresh();
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_TRUE((*warm)->from_record());
  ExpectSameBits(Run(**warm), expected);
}

TEST_F(GraphRecordTest, OtherWeightsOrOptionsNeverReadIt) {
  ASSERT_TRUE(CompileFresh().ok());
  auto other_model = *models::CreateModel("decode:d=32,H=4,G=2,dh=8,f=64,seed=42");
  auto other_weights = CompileFresh({}, &other_model->params());
  ASSERT_TRUE(other_weights.ok()) << other_weights.status();
  EXPECT_FALSE((*other_weights)->from_record());

  CompileGraphOptions baseline;
  baseline.codegen.tier = CodeTier::kBaseline;
  auto other_tier = CompileFresh(baseline);
  ASSERT_TRUE(other_tier.ok()) << other_tier.status();
  EXPECT_FALSE((*other_tier)->from_record());

  // Kept IR wants every stage run: no record read, none written.
  CompileGraphOptions keep_ir;
  keep_ir.codegen.keep_ir = true;
  auto with_ir = CompileFresh(keep_ir);
  ASSERT_TRUE(with_ir.ok()) << with_ir.status();
  EXPECT_FALSE((*with_ir)->from_record());
  EXPECT_FALSE((*with_ir)->kernels().llvm_ir().empty());
}

TEST_F(GraphRecordTest, ADamagedRecordIsRefusedRemovedAndWrittenAgain) {
  ASSERT_TRUE(CompileFresh().ok());
  const std::optional<ContentKey> key =
      GraphRecordKey(graph_, model_->params(), CompileGraphOptions{});
  ASSERT_TRUE(key.has_value());
  // An intact file (checksum right) whose payload is not a graph record.
  disk_->Store(*key, "not a graph record");
  const int64_t rejected = disk_->stats().rejected;
  auto refused = CompileFresh();
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_FALSE((*refused)->from_record());
  EXPECT_EQ(disk_->stats().rejected, rejected + 1);
  auto rewritten = CompileFresh();
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  EXPECT_TRUE((*rewritten)->from_record());

  // A truncated file fails the record's own checks and is replaced the same way.
  const std::string path = RecordPath();
  fs::resize_file(path, fs::file_size(path) / 2);
  auto truncated = CompileFresh();
  ASSERT_TRUE(truncated.ok()) << truncated.status();
  EXPECT_FALSE((*truncated)->from_record());
  EXPECT_EQ(disk_->stats().rejected, rejected + 2);
  auto again = CompileFresh();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE((*again)->from_record());
}

TEST_F(GraphRecordTest, DecodeRefusesDamageNamingThePart) {
  auto cg = CompileFresh();
  ASSERT_TRUE(cg.ok()) << cg.status();
  const runtime::TensorMap made = MadeParams(model_->params(), (*cg)->params());
  const std::string payload =
      EncodeGraphRecord((*cg)->graph(), made, LoweredGraph{(*cg)->program(), {}},
                        (*cg)->kernels().bindings())
          .record;
  // The program's args were left out: they no longer match its arg count.
  absl::StatusOr<GraphRecord> no_args = DecodeGraphRecord(payload);
  ASSERT_FALSE(no_args.ok());
  EXPECT_EQ(no_args.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(no_args.status().message(), HasSubstr("arg bindings"));

  // One binding short of the program's kernels.
  LoweredGraph lowered = LoweredGraph{(*cg)->program(), {}};
  std::vector<KernelBinding> bindings = (*cg)->kernels().bindings();
  bindings.pop_back();
  absl::StatusOr<GraphRecord> short_bindings =
      DecodeGraphRecord(EncodeGraphRecord((*cg)->graph(), made, lowered, bindings).record);
  ASSERT_FALSE(short_bindings.ok());
  EXPECT_THAT(short_bindings.status().message(), HasSubstr("kernel bindings"));

  for (size_t n = 0; n < payload.size(); n += payload.size() / 97 + 1) {
    absl::StatusOr<GraphRecord> cut = DecodeGraphRecord(payload.substr(0, n));
    ASSERT_FALSE(cut.ok()) << n;
    EXPECT_EQ(cut.status().code(), absl::StatusCode::kDataLoss) << cut.status();
  }

  // A pack that does not hold a param's bytes.
  absl::StatusOr<GraphRecord> record = DecodeGraphRecord(
      *disk_->Load(*GraphRecordKey(graph_, model_->params(), CompileGraphOptions{})));
  ASSERT_TRUE(record.ok()) << record.status();
  ASSERT_FALSE(record->packed.empty());
  const std::string pack = *disk_->Load(record->pack_key);
  GraphRecord cut_pack = *record;
  const absl::Status short_pack =
      UnpackParams(absl::string_view(pack).substr(0, pack.size() - 8), nullptr, &cut_pack);
  EXPECT_EQ(short_pack.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(short_pack.message(), HasSubstr("past the pack"));
  GraphRecord whole = *record;
  ASSERT_TRUE(UnpackParams(pack, nullptr, &whole).ok());
  EXPECT_EQ(whole.made_params.size(), made.size());
  for (const auto& [name, t] : made) {
    ASSERT_TRUE(whole.made_params.contains(name)) << name;
    EXPECT_EQ(runtime::MaxAbsDiff(whole.made_params.at(name), t), 0) << name;
  }
}

// Entries compiled with the same weights (the exact policy's lengths) share one weight
// pack; a record whose pack is gone is refused and written again with it.
TEST_F(GraphRecordTest, EntriesWithTheSameWeightsShareOnePack) {
  auto nine = models::TraceModel(*model_, {.fixed_dims = {{"S", 9}}});
  auto twelve = models::TraceModel(*model_, {.fixed_dims = {{"S", 12}}});
  ASSERT_TRUE(nine.ok() && twelve.ok());
  graph_ = *nine;
  ASSERT_TRUE(CompileFresh().ok());
  const ContentKey key_nine = *GraphRecordKey(*nine, model_->params(), {});
  graph_ = *twelve;
  ASSERT_TRUE(CompileFresh().ok());
  const ContentKey key_twelve = *GraphRecordKey(*twelve, model_->params(), {});
  ASSERT_NE(key_nine.ToHex(), key_twelve.ToHex());
  absl::StatusOr<GraphRecord> r9 = DecodeGraphRecord(*disk_->Load(key_nine));
  absl::StatusOr<GraphRecord> r12 = DecodeGraphRecord(*disk_->Load(key_twelve));
  ASSERT_TRUE(r9.ok() && r12.ok());
  EXPECT_EQ(r9->pack_key.ToHex(), r12->pack_key.ToHex());
  EXPECT_FALSE(r9->packed.empty());

  fs::remove(disk_->PathOf(r12->pack_key));
  auto without_pack = CompileFresh();
  ASSERT_TRUE(without_pack.ok()) << without_pack.status();
  EXPECT_FALSE((*without_pack)->from_record());
  EXPECT_TRUE(fs::exists(disk_->PathOf(r12->pack_key)));  // written again
  auto again = CompileFresh();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE((*again)->from_record());
}

TEST_F(GraphRecordTest, ArgsMustNameTheGraphsNodes) {
  auto cg = CompileFresh();
  ASSERT_TRUE(cg.ok()) << cg.status();
  LoweredGraph lowered{(*cg)->program(), {}};
  // The args of the record the compile wrote, with one input renamed.
  absl::StatusOr<GraphRecord> record = [&] {
    auto payload = disk_->Load(*GraphRecordKey(graph_, model_->params(), CompileGraphOptions{}));
    return payload ? DecodeGraphRecord(*payload) : absl::NotFoundError("no record");
  }();
  ASSERT_TRUE(record.ok()) << record.status();
  lowered.args = record->lowered.args;
  for (ArgBinding& a : lowered.args) {
    if (a.kind == ArgBinding::Kind::kInput) {
      a.name = "renamed";
      break;
    }
  }
  const runtime::TensorMap made = MadeParams(model_->params(), (*cg)->params());
  absl::StatusOr<GraphRecord> renamed =
      DecodeGraphRecord(EncodeGraphRecord(record->graph, made, lowered, record->bindings).record);
  ASSERT_FALSE(renamed.ok());
  EXPECT_THAT(renamed.status().message(), HasSubstr("'renamed' does not match"));
}

// Weights a pass made at compile time (`made`: one of these names) live in the record's
// weight pack: a warm start reads them from it; every file truncated to half is refused,
// everything is built again with the same bits, and the cache heals.
void ExpectMadeWeightsSurviveTruncation(const std::string& text, const runtime::TensorMap& params,
                                        const runtime::TensorMap& in,
                                        const std::vector<std::string>& made) {
  const std::string dir =
      (fs::temp_directory_path() / absl::StrCat("gj_graph_record_packed_", ::getpid())).string();
  fs::remove_all(dir);
  std::unique_ptr<DiskCache> disk =
      *DiskCache::Open(dir, int64_t{1} << 30, *CacheSecret::FromBytes("graph record test key"));
  ir::Graph graph = *ir::ParseGraph(text);
  std::vector<std::unique_ptr<KernelStore>> stores;
  std::vector<std::unique_ptr<CompileEnv>> envs;
  auto compile = [&] {
    stores.push_back(std::make_unique<KernelStore>());
    envs.push_back(std::make_unique<CompileEnv>(CompileEnv::MemoryOnly()));
    envs.back()->kernels = stores.back().get();
    envs.back()->disk = disk.get();
    CompileGraphOptions options;
    options.products = ProductKernels::kTiles;
    options.env = envs.back().get();
    return CompiledGraph::Compile(graph, params, options);
  };
  auto run = [&](const CompiledGraph& cg) {
    absl::StatusOr<std::vector<runtime::Tensor>> out = cg.Run(in);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *std::move(out) : std::vector<runtime::Tensor>{};
  };
  auto cold = compile();
  ASSERT_TRUE(cold.ok()) << cold.status();
  const std::vector<runtime::Tensor> expected = run(**cold);
  cold->reset();
  auto warm = compile();
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_TRUE((*warm)->from_record());
  const runtime::TensorMap warm_made = MadeParams(params, (*warm)->params());
  EXPECT_TRUE(std::any_of(made.begin(), made.end(),
                          [&](const std::string& name) { return warm_made.contains(name); }));
  ExpectSameBits(run(**warm), expected);
  warm->reset();
  int files = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    fs::resize_file(e.path(), fs::file_size(e.path()) / 2);
    ++files;
  }
  ASSERT_GE(files, 3);  // modules, the record, the weight pack
  auto truncated = compile();
  ASSERT_TRUE(truncated.ok()) << truncated.status();
  EXPECT_FALSE((*truncated)->from_record());
  EXPECT_EQ((*truncated)->kernels().stats().loaded, 0);
  EXPECT_GE(disk->stats().rejected, 2);
  ExpectSameBits(run(**truncated), expected);
  truncated->reset();
  bool healed = false;
  for (int i = 0; i < 2 && !healed; ++i) {
    auto again = compile();
    ASSERT_TRUE(again.ok()) << again.status();
    healed = (*again)->from_record();
    ExpectSameBits(run(**again), expected);
  }
  EXPECT_TRUE(healed);
  fs::remove_all(dir);
}

// `shape` filled with values in [offset, offset + step * period).
runtime::Tensor Ramp(std::vector<int64_t> shape, double step, int period, double offset) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  std::vector<double> v(count);
  for (int64_t i = 0; i < count; ++i) v[i] = step * static_cast<double>(i % period) + offset;
  return *runtime::Tensor::FromDoubles(ir::DType::kF32, shape, v);
}

// A convolution's weights packed into the tiles' panels (orient_products).
TEST(GraphRecordPackedWeights, TruncatedFilesAreRefusedAndRebuilt) {
  ExpectMadeWeightsSurviveTruncation(R"(graph g {
  %0 = input {name="x"} : f32[1, 40, 1, 7]
  %1 = window(%0) {dilations=[1, 1], kernel=[1, 3], strides=[1, 1]} : f32[1, 40, 1, 3, 1, 5]
  %2 = reshape(%1) {shape=[120, 5]} : f32[120, 5]
  %3 = param {name="w"} : f32[70, 120]
  %4 = matmul(%3, %2) : f32[70, 5]
  return %4
})",
                                     {{"w", Ramp({70, 120}, 0.01, 89, -0.4)}},
                                     {{"x", Ramp({1, 40, 1, 7}, 0.02, 31, -0.3)}},
                                     {"panels32(w)", "panels16(w)"});
}

// A 3 x 3 convolution's Winograd-transformed weights (winograd_convolutions).
TEST(GraphRecordPackedWeights, WinogradWeightsAreKeptAndRebuilt) {
  ExpectMadeWeightsSurviveTruncation(R"(graph g {
  %0 = input {name="x"} : f32[1, 16, 10, 66]
  %1 = window(%0) {dilations=[1, 1], kernel=[3, 3], strides=[1, 1]} : f32[1, 16, 3, 3, 8, 64]
  %2 = reshape(%1) {shape=[1, 144, 512]} : f32[1, 144, 512]
  %3 = param {name="w"} : f32[64, 144]
  %4 = matmul(%3, %2) : f32[1, 64, 512]
  return %4
})",
                                     {{"w", Ramp({64, 144}, 0.01, 89, -0.4)}},
                                     {{"x", Ramp({1, 16, 10, 66}, 0.02, 31, -0.3)}},
                                     {"winograd(w)"});
}

}  // namespace
}  // namespace graphjit::compiler

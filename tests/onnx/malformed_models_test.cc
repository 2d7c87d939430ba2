// Malformed models must be refused with a Status, never crash the importer: ONNX's node
// test models with random edits (attributes, inputs, outputs, dims, flipped or truncated
// bytes), imported in one process. A crash or a CHECK failure aborts the test binary.
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "gtest/gtest.h"
#include "onnx/import.h"
#include "onnx/onnx_pb.h"

namespace graphjit::onnx {
namespace {

namespace fs = std::filesystem;

constexpr char kNodeTests[] = "/usr/share/libonnx-testdata/data/node";

// One random edit of the kind a broken exporter or a damaged file makes.
void Edit(std::mt19937_64& rng, ::onnx::ModelProto* m) {
  auto* g = m->mutable_graph();
  if (g->node_size() == 0) return;
  auto* node = g->mutable_node(rng() % g->node_size());
  auto small = [&] { return static_cast<int64_t>(rng() % 11) - 5; };
  switch (rng() % 7) {
    case 0:
      if (node->attribute_size()) {
        auto* a = node->mutable_attribute(rng() % node->attribute_size());
        a->set_i(small());
        a->set_f(static_cast<float>(small()));
        for (int i = 0; i < a->ints_size(); ++i) a->set_ints(i, small());
      }
      break;
    case 1:
      if (node->input_size()) node->mutable_input()->RemoveLast();
      break;
    case 2:
      if (node->input_size()) node->set_input(rng() % node->input_size(), "");
      break;
    case 3:
    case 4:
      if (g->input_size()) {
        auto* shape = g->mutable_input(rng() % g->input_size())
                          ->mutable_type()
                          ->mutable_tensor_type()
                          ->mutable_shape();
        if (shape->dim_size() == 0) {
          shape->add_dim()->set_dim_value(rng() % 3);
        } else if (rng() % 3 == 0) {
          shape->mutable_dim()->RemoveLast();
        } else if (rng() % 2) {
          shape->mutable_dim(rng() % shape->dim_size())->set_dim_param("S");
        } else {
          shape->mutable_dim(rng() % shape->dim_size())->set_dim_value(rng() % 4);
        }
      }
      break;
    case 5:
      node->add_output("extra_output");
      break;
    default:
      if (node->input_size() > 1) {
        const int i = rng() % node->input_size(), j = rng() % node->input_size();
        std::string t = node->input(i);
        node->set_input(i, node->input(j));
        node->set_input(j, t);
      }
  }
}

TEST(OnnxMalformedModels, EditedNodeTestModelsAreRefusedWithoutCrashing) {
  if (!fs::is_directory(kNodeTests)) {
    GTEST_SKIP() << kNodeTests << " is missing: apt-get install libonnx-testdata "
                 << "(or run scripts/bootstrap.sh)";
  }
  std::mt19937_64 rng(20261202);  // fixed: the same edits every run
  int imports = 0, refused = 0;
  for (const auto& entry : fs::directory_iterator(kNodeTests)) {
    std::ifstream in(entry.path() / "model.onnx", std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string bytes = buffer.str();
    ::onnx::ModelProto base;
    ASSERT_TRUE(base.ParseFromString(bytes)) << entry.path();
    for (int k = 0; k < 30; ++k) {
      std::string edited;
      if (k < 20) {
        ::onnx::ModelProto m = base;
        for (int e = 0; e <= k % 3; ++e) Edit(rng, &m);
        edited = m.SerializeAsString();
      } else {
        edited = bytes;
        if (k % 2) edited.resize(rng() % (edited.size() + 1));
        for (int f = 0; f <= k % 4 && !edited.empty(); ++f) {
          edited[rng() % edited.size()] ^= static_cast<char>(1 << (rng() % 8));
        }
      }
      absl::StatusOr<ImportedModel> model = ImportFromBytes(edited, "edited.onnx");
      ++imports;
      refused += !model.ok();
    }
  }
  // Most edits break a model; some leave it valid (an unused input's dim, say).
  EXPECT_GT(refused, imports / 2);
}

}  // namespace
}  // namespace graphjit::onnx

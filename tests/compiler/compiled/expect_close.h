// Compiled against interpreted results where the interpreter's answer is finite.
#ifndef GRAPHJIT_TESTS_COMPILER_DRIVER_EXPECT_CLOSE_H_
#define GRAPHJIT_TESTS_COMPILER_DRIVER_EXPECT_CLOSE_H_

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/tensor.h"

namespace graphjit::compiler {

// Every element of `want` is finite, so `got`'s must be too: each within
// tol * (1 + |want|). `what` prefixes the element in failure messages.
inline void ExpectFiniteAndClose(const runtime::Tensor& want, const runtime::Tensor& got,
                                 double tol, const std::string& what = "") {
  const std::vector<double> w = want.ToDoubles(), v = got.ToDoubles();
  ASSERT_EQ(w.size(), v.size()) << what;
  for (size_t i = 0; i < w.size(); ++i) {
    ASSERT_TRUE(std::isfinite(w[i])) << what << "element " << i;
    EXPECT_NEAR(v[i], w[i], tol * (1 + std::abs(w[i]))) << what << "element " << i;
  }
}

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_TESTS_COMPILER_DRIVER_EXPECT_CLOSE_H_

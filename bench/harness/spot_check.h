// The reference spot check of the peer problem: before anything is timed, the output of the kernel under test is
// compared with ops/reference at every output of a small problem, else at the four corners and 300 seeded samples.
#pragma once

#include <cstddef>
#include <string>

#include "bench/harness/peer_problem.h"
#include "core/status.h"
#include "core/tensor.h"

namespace octet::bench {

struct SpotCheck {
  size_t checked = 0;    // outputs compared
  size_t inside = 0;     // of those, reference values strictly inside (0, 255)
  std::string mismatch;  // the first difference ("row 3, column 7: got 12, expected 13"); empty when all match

  // A u8 check proves little when most outputs clamp to 0 or 255: true when under a quarter are inside.
  bool MostlyClamped() const { return inside * 4 < checked; }
};

// One output of the reference: row i of A times row j of W through the problem's stage (s32 or u8).
int64_t GemmReferenceValue(const GemmProblem& p, int64_t i, int64_t j);
// One output of the reference at output pixel (oy, ox), channel o (NHWC).
Result<int64_t> ConvReferenceValue(const ConvProblem& p, int64_t oy, int64_t ox, int64_t o);

// `y` is the M x N output of the problem's plan (s32 for kS32, else u8).
Result<SpotCheck> CheckGemm(const GemmProblem& p, const Tensor& y);
// `y` is the 1 x OH x OW x C_out u8 output of the problem's plan.
Result<SpotCheck> CheckConv(const ConvProblem& p, const Tensor& y);

}  // namespace octet::bench

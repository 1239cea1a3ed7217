// The aligned scratch buffer the sgemm kernel tests pass as SgemmArgs::workspace (the operators own theirs).
#pragma once

#include <cstdlib>
#include <memory>

#include "ops/float/ukernels/sgemm.h"

namespace octet::testing {

struct FreeFloats {
  void operator()(float* p) const { std::free(p); }
};
using SgemmWorkspace = std::unique_ptr<float, FreeFloats>;

// kSgemmWorkspaceFloats floats, 64-byte aligned.
inline SgemmWorkspace MakeSgemmWorkspace() {
  return SgemmWorkspace(
      static_cast<float*>(std::aligned_alloc(64, (float_ops::kSgemmWorkspaceFloats * 4 + 63) / 64 * 64)));
}

}  // namespace octet::testing

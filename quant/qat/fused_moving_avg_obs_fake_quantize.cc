#include "quant/qat/fake_quantize_kinds.h"

namespace octet::qat {

Result<std::unique_ptr<FakeQuantizeModule>> MakeFusedMovingAvgObsFakeQuantize(const FakeQuantizeConfig&,
                                                                               const Context&) {
  return Unimplemented("FusedMovingAvgObsFakeQuantize: not implemented yet");
}

}  // namespace octet::qat

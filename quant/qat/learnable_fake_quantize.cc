#include "quant/qat/fake_quantize_kinds.h"

namespace octet::qat {

Result<std::unique_ptr<FakeQuantizeModule>> MakeLearnableFakeQuantize(const FakeQuantizeConfig&,
                                                                               const Context&) {
  return Unimplemented("_LearnableFakeQuantize: not implemented yet");
}

}  // namespace octet::qat

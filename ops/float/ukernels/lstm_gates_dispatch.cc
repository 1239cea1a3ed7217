// The float LSTM cell family's candidate list, built from lstm_gates.inc.
#include <vector>

#include "ops/float/ukernels/lstm_gates.h"

namespace octet::float_ops {

std::span<const UkernelEntry<LstmGatesFn>> LstmGatesUkernels() {
  static const std::vector<UkernelEntry<LstmGatesFn>> list = {
#define OCTET_LSTM_GATES_UKERNEL(isa, fn) {Isa::isa, #fn, &fn},
#include "ops/float/ukernels/lstm_gates.inc"
#undef OCTET_LSTM_GATES_UKERNEL
  };
  return list;
}

}  // namespace octet::float_ops

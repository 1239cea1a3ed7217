#include "quant/quantized_registry.h"

#include "ops/int8/int8_ops.h"
#include "quant/fused_ops.h"

namespace octet {

OpRegistry QuantizedGraphRegistry() {
  OpRegistry registry = QuantFloatRegistry();
  const Status status = RegisterInt8Ops(registry);
  OCTET_CHECK(status.ok());  // the int8 operators have names of their own: a failure here is a bug in octet
  return registry;
}

}  // namespace octet

// `octet --version`: the build's identity and the ISAs it has, detects and enables.
#pragma once

namespace octet::cli {

// Prints version, git hash, compiler, threading backend, the ISAs compiled in, detected (with the CPU features)
// and enabled after OCTET_ISA. With `verbose`, also which kernel each quantize/dequantize family would choose and
// why the others were skipped. Returns the exit status (1 when OCTET_ISA is malformed).
int PrintVersion(bool verbose);

}  // namespace octet::cli

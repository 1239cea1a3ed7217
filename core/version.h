// Build identity: octet's version, the git commit and the compiler, for `octet --version` and reports.
#pragma once

namespace octet {

const char* Version();      // "0.1.0"
const char* GitHash();      // short hash of the commit built, "+dirty" if the tree had changes, or "unknown"
const char* CompilerName(); // e.g. "g++ 12.2.0"

}  // namespace octet

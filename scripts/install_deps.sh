#!/usr/bin/env bash
# Installs everything octet's build, tests, cross build and fuzzers need on Debian 12 (bookworm), from Debian's own
# packages. Safe to re-run: when every package is already installed it does nothing and needs no root.
set -euo pipefail

# Each package and why octet needs it. xtl-dev is deliberately absent: third_party/CMakeLists.txt stands in for the
# 'xtl' target that Debian's xsimd config names.
packages=(
  cmake ninja-build git           # build (git stamps the version with the commit hash)
  pkgconf                         # pkg-config: the install stage builds an example through octet-runtime.pc
  g++                             # g++-12: release build
  clang-14 libclang-rt-14-dev     # clang build, ASan/UBSan and libFuzzer runtimes
  libeigen3-dev libxsimd-dev libtbb-dev catch2 libbenchmark-dev libcli11-dev nlohmann-json3-dev libfmt-dev
  g++-aarch64-linux-gnu qemu-user # aarch64 cross build, tests under qemu-aarch64
  python3 python3-numpy           # test scripts and data generators (standard library and numpy only)
  pybind11-dev python3-dev        # the Python module (python/, OCTET_PYTHON): pybind11 and Python's headers
  libonnx-dev libprotobuf-dev     # ONNX import and export (io/onnx): onnx-ml.pb.h, libonnx_proto, protobuf, and
                                  # libonnx (its shape inference gives the QDQ export's outputs their shapes)
  libonnx-testdata                # ONNX's backend node tests through octet run (tests/onnx/backend_node_test.py)
  zlib1g-dev                      # octet demo reads the bundled data/digits.csv.gz
  nodejs                          # the ONNX Runtime check of QDQ exports (onnxruntime-node, tests/onnx/ort_qdq)
  python3-onnx                    # onnx.checker on every QDQ export the tests write (tests/onnx/check_onnx_models.py),
                                  # and the backend node tests' reference data
  libopenmpi-dev openmpi-bin      # optional MPI: octet calibrate --mpi and its mpirun test (cmake/OctetMpi.cmake)
  chromium                        # the HTML report's screenshot test (tests/numeric_suite/render_report_test.sh)
)
# npm comes with some nodejs builds (NodeSource's) and conflicts with Debian's npm package there; Debian's own nodejs
# needs the npm package.
command -v npm >/dev/null 2>&1 || packages+=(npm)

log() { printf 'install_deps: %s\n' "$*"; }
die() { printf 'install_deps: ERROR: %s\n' "$*" >&2; exit 1; }

missing=()
for p in "${packages[@]}"; do
  if [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)" != "installed" ]; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  log "all ${#packages[@]} packages already installed"
  exit 0
fi
log "installing: ${missing[*]}"

command -v apt-get >/dev/null 2>&1 || die "apt-get not found; octet's dependencies are installed from Debian 12 packages"
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || die "not root and sudo is not available; run this script as root"
  as_root=(sudo -n)
fi
export DEBIAN_FRONTEND=noninteractive

# apt output goes to a log, printed only when a step fails.
apt_log=$(mktemp "${TMPDIR:-/tmp}/octet-apt.XXXXXX")
trap 'rm -f "$apt_log"' EXIT
apt_step() {
  if ! "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive "$@" </dev/null >"$apt_log" 2>&1; then
    tail -n 40 "$apt_log" >&2
    die "'$*' failed (last lines above)"
  fi
}

# Refresh the package lists when they are missing (a fresh image ships none) or more than a day old.
lists=/var/lib/apt/lists
if [ -z "$(find "$lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null | head -n 1)" ]; then
  log "apt-get update"
  apt_step apt-get update -qq
fi
apt_step apt-get install -y -qq --no-install-recommends "${missing[@]}"

for p in "${missing[@]}"; do
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)" = "installed" ] ||
    die "package '$p' is still not installed after apt-get install"
done
log "done"

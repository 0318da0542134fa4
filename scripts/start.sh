#!/usr/bin/env bash
# Builds Tandem from nothing (see build.sh) and runs it on the shipped model. Extra arguments
# go to `tandem run`, e.g. `scripts/start.sh --json -n 64`.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

"$root/scripts/build.sh" >&2
exec "$root/build/tandem" run -m "$root/models/stories260K.gguf" -p "Once upon a time" "$@"

#!/usr/bin/env bash
# Runs the end-to-end suite: OpenAI's Node client, the Vercel AI SDK and LangChain JS against
# `tandem serve` (with llama.cpp's llama-server as the cloud tier where a test needs one), and
# the dashboard in a headless browser. Works from any directory.
#
#   TANDEM_BINARY  the gateway            (default: <repo>/build/tandem)
#   LLAMA_SERVER   llama.cpp's server     (default: scripts/build-llama.sh's prefix + /bin/llama-server)
#   TANDEM_MODEL   the GGUF both tiers use (default: <repo>/models/stories260K.gguf)
#   FAULT_UPSTREAM the mock upstream      (default: <repo>/build/tests/support/fault_upstream)
#
# Extra arguments go to `node --test` (e.g. --test-name-pattern=cloud).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/../.." && pwd)

for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "e2e: $tool is not installed" >&2; exit 1; }
done

# npm ci only when needed: it wipes node_modules and goes to the registry every time. The
# stamp lives inside node_modules, so removing node_modules also forces a reinstall.
lock_sha=$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)
stamp="$here/node_modules/.package-lock.sha256"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$lock_sha" ]]; then
  echo "e2e: installing the Node dependencies (npm ci)" >&2
  npm ci --prefix "$here" --no-audit --no-fund >&2
  echo "$lock_sha" >"$stamp"
fi

export TANDEM_BINARY="${TANDEM_BINARY:-$repo_root/build/tandem}"
export TANDEM_MODEL="${TANDEM_MODEL:-$repo_root/models/stories260K.gguf}"
export FAULT_UPSTREAM="${FAULT_UPSTREAM:-$repo_root/build/tests/support/fault_upstream}"
if [[ -z "${LLAMA_SERVER:-}" ]]; then
  # Builds llama.cpp on a cold cache (minutes); prints the cached prefix at once otherwise.
  llama_prefix=$("$repo_root/scripts/build-llama.sh" | tail -n1)
  export LLAMA_SERVER="$llama_prefix/bin/llama-server"
fi

cd "$repo_root"
exec node --test "$@" tests/e2e/

#!/usr/bin/env bash
# Builds llama.cpp (CPU, static libraries plus llama-server and llama-bench) from the git
# bundle inside the npm package node-llama-cpp, and installs it into a cache outside the
# checkout keyed by llama.cpp's commit and our build options. A complete cache is reused
# as is; the script prints the install prefix on its last line.
#
#   TANDEM_CACHE_DIR   cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/tandem)
set -euo pipefail

readonly NPM_PACKAGE="node-llama-cpp@3.22.1"
readonly NPM_TARBALL_SHA256="a0d9dd80eacd2ab1cfe71aee57ac8a806487fd70b3d2a38fbec637752d9e5c5f"
readonly LLAMA_COMMIT="de3ff815ea7d559ee917f063901b8986f038abc6"

# Every option that changes the built artifacts belongs here: it is part of the cache key.
readonly CMAKE_OPTIONS=(
  -DCMAKE_BUILD_TYPE=Release
  -DBUILD_SHARED_LIBS=OFF
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON
  -DGGML_NATIVE=ON
  -DGGML_OPENMP=ON
  -DLLAMA_BUILD_TESTS=OFF
  -DLLAMA_BUILD_EXAMPLES=OFF
  -DLLAMA_BUILD_TOOLS=ON
  -DLLAMA_BUILD_SERVER=ON
  -DLLAMA_BUILD_APP=OFF
  -DLLAMA_BUILD_UI=OFF
  -DLLAMA_USE_PREBUILT_UI=OFF
  -DLLAMA_OPENSSL=OFF
  # GGML_NATIVE turns on llama.cpp's AMX kernels on CPUs that have AMX (Sapphire Rapids and
  # later), and at this commit they crash in ggml_backend_amx_mul_mat on quantized models,
  # depending on the machine (seen here: every Q8_0/Q4_0 drift test; upstream issue 20824,
  # closed without a fix). The flags leave every other native feature (AVX-512, VNNI) on.
  "-DCMAKE_C_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
  "-DCMAKE_CXX_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
)
# The tools Tandem uses: llama-server (a real OpenAI-compatible cloud tier in tests),
# llama-bench (the benchmark's reference) and llama-quantize (derived test models). Building
# only these, not all of llama.cpp's tools, halves the time on a fresh machine.
readonly TOOLS=(llama-server llama-bench llama-quantize)

cache_root="${TANDEM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tandem}"
options_key=$(printf '%s\n' "${CMAKE_OPTIONS[@]}" "$(c++ --version | head -n1)" | sha256sum | cut -c1-12)
prefix="$cache_root/llama.cpp-${LLAMA_COMMIT:0:12}-$options_key"
stamp="$prefix/.complete"

log() { echo "build-llama: $*" >&2; }

if [[ -f "$stamp" ]]; then
  echo "$prefix"
  exit 0
fi

mkdir -p "$cache_root"
# Two builds racing for the same cache would corrupt it: serialize them.
exec 9>"$cache_root/.llama.lock"
flock 9
if [[ -f "$stamp" ]]; then
  echo "$prefix"
  exit 0
fi

work=$(mktemp -d "$cache_root/work.XXXXXX")
trap 'rm -rf "$work"' EXIT

log "fetching $NPM_PACKAGE"
(cd "$work" && npm pack --silent "$NPM_PACKAGE" >/dev/null)
tarball=$(ls "$work"/node-llama-cpp-*.tgz)
actual_sha=$(sha256sum "$tarball" | cut -d' ' -f1)
if [[ "$actual_sha" != "$NPM_TARBALL_SHA256" ]]; then
  log "refusing $tarball: sha256 $actual_sha, expected $NPM_TARBALL_SHA256"
  exit 1
fi

tar -xzf "$tarball" -C "$work" package/llama/gitRelease.bundle
git -c advice.detachedHead=false clone --quiet "$work/package/llama/gitRelease.bundle" "$work/src"
head=$(git -C "$work/src" rev-parse HEAD)
if [[ "$head" != "$LLAMA_COMMIT" ]]; then
  log "bundle holds commit $head, expected $LLAMA_COMMIT"
  exit 1
fi

log "building llama.cpp ${LLAMA_COMMIT:0:12} (a few minutes, once per machine)"
rm -rf "$prefix"
cmake -S "$work/src" -B "$work/build" -G Ninja "${CMAKE_OPTIONS[@]}" \
  -DLLAMA_TOOLS_INSTALL=OFF -DCMAKE_INSTALL_PREFIX="$prefix" >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work/build" --parallel "$(nproc)" --target llama ggml "${TOOLS[@]}" \
  >"$work/build.log" 2>&1 || { tail -n 60 "$work/build.log" >&2; exit 1; }
# Libraries, headers and CMake package files; the tools are copied by hand because
# llama.cpp's install rules expect every tool to have been built.
cmake --install "$work/build" >/dev/null
mkdir -p "$prefix/bin"
for tool in "${TOOLS[@]}"; do
  install -m 755 "$work/build/bin/$tool" "$prefix/bin/$tool"
done
echo "$LLAMA_COMMIT" >"$stamp"
log "installed into $prefix"
echo "$prefix"

#!/usr/bin/env bash
# Builds llama.cpp (CPU, static libraries plus llama-server and llama-bench) from the git
# bundle inside the npm package node-llama-cpp, and installs it into a cache outside the
# checkout keyed by llama.cpp's commit and our build options. A complete cache is reused
# as is; the script prints the install prefix on its last line.
#
# Besides what llama.cpp's own install rules put there, the prefix gets ("extras", below):
#   include/llama-common/          headers of llama.cpp's `common` library (chat templates,
#                                  tool-call parsers, JSON schema to grammar, sampling)
#   lib/libllama-common-base.a     its build-info functions, which libllama-common.a calls
#   share/llama-test-assets/       gguf-py, two real vocabularies and chat templates, the
#                                  inputs of scripts/make-test-models.py
# A cache built before the extras existed gets them in place, without rebuilding llama.cpp.
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

# The extras' layout version: a prefix whose marker holds another one gets them reinstalled.
# Bump it when the lists below change. The extras are not part of the cache key: installing
# them never touches what was built.
readonly EXTRAS_VERSION=1
# The common headers Tandem includes; everything they include is installed with them.
readonly COMMON_HEADERS=(chat.h common.h json.h json-schema-to-grammar.h log.h sampling.h)
# What scripts/make-test-models.py derives its models from, relative to llama.cpp's source.
readonly TEST_ASSETS=(
  LICENSE
  gguf-py/LICENSE
  gguf-py/gguf
  models/ggml-vocab-llama-bpe.gguf
  models/ggml-vocab-qwen2.gguf
  models/templates/meta-llama-Llama-3.2-3B-Instruct.jinja
  models/templates/Qwen-Qwen3-0.6B.jinja
  models/templates/NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja
)

cache_root="${TANDEM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tandem}"
options_key=$(printf '%s\n' "${CMAKE_OPTIONS[@]}" "$(c++ --version | head -n1)" | sha256sum | cut -c1-12)
prefix="$cache_root/llama.cpp-${LLAMA_COMMIT:0:12}-$options_key"
stamp="$prefix/.complete"
extras_marker="$prefix/.common-headers"

log() { echo "build-llama: $*" >&2; }
up_to_date() {
  [[ -f "$stamp" && -f "$extras_marker" && "$(cat "$extras_marker")" == "$EXTRAS_VERSION" ]]
}

if up_to_date; then
  echo "$prefix"
  exit 0
fi

mkdir -p "$cache_root"
# Two builds racing for the same cache would corrupt it: serialize them.
exec 9>"$cache_root/.llama.lock"
flock 9
if up_to_date; then
  echo "$prefix"
  exit 0
fi

work=$(mktemp -d "$cache_root/work.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Checks llama.cpp's source out of the npm package into $work/src.
fetch_source() {
  log "fetching $NPM_PACKAGE"
  (cd "$work" && npm pack --silent "$NPM_PACKAGE" >/dev/null)
  local tarball actual_sha head
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
}

# Builds llama.cpp and installs it into $prefix, ending with the stamp.
build_and_install() {
  log "building llama.cpp ${LLAMA_COMMIT:0:12} (a few minutes, once per machine)"
  rm -rf "$prefix"
  cmake -S "$work/src" -B "$work/build" -G Ninja "${CMAKE_OPTIONS[@]}" \
    -DLLAMA_TOOLS_INSTALL=OFF -DCMAKE_INSTALL_PREFIX="$prefix" >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log" >&2; exit 1; }
  cmake --build "$work/build" --parallel "$(nproc)" --target llama ggml "${TOOLS[@]}" \
    >"$work/build.log" 2>&1 || { tail -n 60 "$work/build.log" >&2; exit 1; }
  # Libraries (libllama-common.a among them: llama-server builds it), headers and CMake package
  # files; the tools are copied by hand because llama.cpp's install rules expect every tool to
  # have been built.
  cmake --install "$work/build" >/dev/null
  mkdir -p "$prefix/bin"
  local tool
  for tool in "${TOOLS[@]}"; do
    install -m 755 "$work/build/bin/$tool" "$prefix/bin/$tool"
  done
  echo "$LLAMA_COMMIT" >"$stamp"
}

# Installs the common library's headers: COMMON_HEADERS and everything they include, found
# by the compiler itself, so a new llama.cpp commit cannot leave one out. What they include
# from outside common/ must be a header llama.cpp already installed (llama.h, ggml.h, ...):
# a vendored library's header (nlohmann/json.hpp is 3.12, Debian's 3.11) would be refused.
install_common_headers() {
  local src="$work/src" dest="$prefix/include/llama-common" header deps
  printf '#include "%s"\n' "${COMMON_HEADERS[@]}" >"$work/closure.cpp"
  deps=$(c++ -std=c++17 -MM -MT closure -I"$src/common" -I"$src/include" \
    -I"$src/ggml/include" "$work/closure.cpp" | tr -s ' \\' '\n' | grep -v -e '^closure:$' \
    -e '/closure\.cpp$' -e '^$')
  rm -rf "$dest"
  for header in $deps; do
    header=$(realpath --relative-to="$src" "$header")
    case "$header" in
      common/*) install -D -m 644 "$src/$header" "$dest/${header#common/}" ;;
      *)
        if [[ ! -f "$prefix/include/$(basename "$header")" ]]; then
          log "the common headers include $header, which llama.cpp does not install"
          exit 1
        fi
        ;;
    esac
  done
}

# libllama-common.a calls llama_build_info() and friends from llama.cpp's llama-common-base,
# a one-file library that its install rules leave out. It is compiled here from the same
# template, with the values the installed tools report, so a cache that no longer has its
# build tree gets the same library as a fresh build.
install_common_base() {
  local info number commit compiler target content common_lib lib_dir
  info=$("$prefix/bin/llama-server" --version 2>&1) || true
  number=$(sed -n 's/^version: .* (build \([0-9]*\), commit \([0-9a-z]*\))$/\1/p' <<<"$info")
  commit=$(sed -n 's/^version: .* (build \([0-9]*\), commit \([0-9a-z]*\))$/\2/p' <<<"$info")
  compiler=$(sed -n 's/^built with \(.*\) for \(.*\)$/\1/p' <<<"$info")
  target=$(sed -n 's/^built with \(.*\) for \(.*\)$/\2/p' <<<"$info")
  if [[ -z "$number" || -z "$commit" || -z "$compiler" || -z "$target" ]]; then
    log "cannot read the build info from llama-server --version: $info"
    exit 1
  fi
  shopt -u patsub_replacement 2>/dev/null || true # '&' in a value stays a '&'
  content=$(<"$work/src/common/build-info.cpp.in")
  content=${content//@LLAMA_BUILD_NUMBER@/$number}
  content=${content//@LLAMA_BUILD_COMMIT@/$commit}
  content=${content//@BUILD_COMPILER@/$compiler}
  content=${content//@BUILD_TARGET@/$target}
  printf '%s\n' "$content" >"$work/build-info.cpp"
  c++ -std=c++17 -O2 -fPIC -I"$work/src/common" -c "$work/build-info.cpp" -o "$work/build-info.o"
  # Beside libllama-common.a: lib/ here, lib64/ where GNUInstallDirs chose that.
  common_lib=$(find "$prefix"/lib* -maxdepth 1 -name libllama-common.a -print -quit)
  if [[ -z "$common_lib" ]]; then
    log "$prefix has no libllama-common.a: delete it and run this script again to rebuild"
    exit 1
  fi
  lib_dir=$(dirname "$common_lib")
  rm -f "$lib_dir/libllama-common-base.a"
  ar rcs "$lib_dir/libllama-common-base.a" "$work/build-info.o"
}

install_test_assets() {
  local dest="$prefix/share/llama-test-assets" asset
  rm -rf "$dest"
  for asset in "${TEST_ASSETS[@]}"; do
    mkdir -p "$dest/$(dirname "$asset")"
    cp -R "$work/src/$asset" "$dest/$asset"
  done
}

fetch_source
if [[ -f "$stamp" ]]; then
  log "adding the common headers and test assets to $prefix (no rebuild)"
else
  build_and_install
fi
install_common_headers
install_common_base
install_test_assets
echo "$EXTRAS_VERSION" >"$extras_marker"
log "installed into $prefix"
echo "$prefix"

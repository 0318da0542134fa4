#!/usr/bin/env bash
# Fails, listing the files, if any C++ source differs from what clang-format would write.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

mapfile -t files < <(git ls-files -co --exclude-standard -- '*.cpp' '*.h')
bad=()
for file in "${files[@]}"; do
  [[ -f "$file" ]] || continue
  if ! clang-format --dry-run --Werror "$file" >/dev/null 2>&1; then
    bad+=("$file")
  fi
done
if ((${#bad[@]} > 0)); then
  echo "check-format: not clang-format clean (run: clang-format -i FILE):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files clean"

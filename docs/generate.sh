#!/usr/bin/env bash
# Regenerates the reference pages under docs/reference/ from the TableGen
# sources (the add_mlir_doc targets, all built by `ninja mlir-doc`):
#
#   FlashDialect.md           ops, attributes, enums   (FlashOps.td)
#   TMTensorDialect.md        torch-mlir's tm_tensor ops as FlashFuse reads
#                             them                     (TMTensorOps.td)
#   FlashInterfaces.md        AttentionVariantInterface (FlashInterfaces.td)
#   FlashTransformsPasses.md  flash-raise-attention, flash-derive-block-sparsity,
#                             flash-select-config
#   FlashConversionPasses.md  flash-decompose-kvcache, flash-lower-naive,
#                             -to-loops, -to-gpu
#
#   docs/generate.sh [BUILD_DIR]          rewrite docs/reference/
#   docs/generate.sh --check [BUILD_DIR]  fail if a committed page is stale
#
# BUILD_DIR defaults to build/ and must be configured (scripts/test.sh does).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
check=0
if [[ ${1:-} == --check ]]; then
  check=1
  shift
fi
BUILD=${1:-${BUILD_DIR:-$ROOT/build}}
DEST=$ROOT/docs/reference

# generated file (relative to BUILD/docs) -> page name under docs/reference
PAGES=(
  "Dialects/FlashDialect.md:FlashDialect.md"
  "Dialects/TMTensorDialect.md:TMTensorDialect.md"
  "Interfaces/FlashInterfaces.md:FlashInterfaces.md"
  "FlashTransformsPasses.md:FlashTransformsPasses.md"
  "FlashConversionPasses.md:FlashConversionPasses.md"
)

ninja -C "$BUILD" mlir-doc >/dev/null

stale=()
mkdir -p "$DEST"
for page in "${PAGES[@]}"; do
  src=$BUILD/docs/${page%%:*}
  dst=$DEST/${page##*:}
  if [[ ! -f $src ]]; then
    echo "docs: $src was not generated (is its add_mlir_doc target gone?)" >&2
    exit 1
  fi
  if ((check)); then
    cmp -s "$src" "$dst" || stale+=("docs/reference/${page##*:}")
  else
    cp "$src" "$dst"
  fi
done

if ((check)); then
  if ((${#stale[@]})); then
    echo "docs: out of date with the .td files: ${stale[*]}" >&2
    echo "docs: run docs/generate.sh and commit docs/reference/" >&2
    exit 1
  fi
  echo "docs: reference pages up to date"
else
  echo "docs: wrote ${#PAGES[@]} pages to docs/reference/"
fi

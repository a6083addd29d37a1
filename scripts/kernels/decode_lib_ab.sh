#!/bin/bash
# A decode-kernel change checked and timed against the libraries before it,
# in one device call:
#
#   FLASHFUSE_RUNTIME_LIB=... PYTHONPATH=python \
#     scripts/kernels/decode_lib_ab.sh OLD_DIR NEW_DIR OUT_DIR [PART]
#
# OLD_DIR and NEW_DIR each hold decode libraries (h100-decode,
# h100-decode-rows8, ...: build/kernels/<name>/{kernels.cubin,manifest.txt}
# copied there), which the package searches in its own order. PART:
#   time    graph-replayed steps at B = 1 over narrow KV heads and one
#           issue-15 shape (decode_split_sweep.py at the runtime's split
#           count, 32 and 128), each library set in its own process,
#           ROUNDS interleaved rounds (default 2); then COLD=1 steps.
#   check   check_decode.py over NEW's rows8 and h100-decode libraries.
#   sanity  compute-sanitizer memcheck over NEW's rows8 quick sweep, and
#           the package's decode GPU tests against NEW.
#   all     (default) the three in that order.
# One device call holds about one PART at these sizes (10 minutes).
set -u
old=$1 new=$2 out=$3 part=${4:-all}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
shapes=${SHAPES:-16/2/8192/0,16/2/16384/0,16/2/32768/0,8/1/8192/0,8/1/16384/0,8/1/32768/0,8/1/65536/0,16/2/32768/64,32/8/8192/0}
cold_shapes=${COLD_SHAPES:-16/2/16384/0,8/1/16384/0,8/1/32768/0}

if [[ $part == time || $part == all ]]; then
  for ((r = 1; r <= ${ROUNDS:-2}; r++)); do
    for lib in "$old" "$new"; do
      FLASHFUSE_KERNEL_DIR=$lib SHAPES=$shapes SPLITS=0,32,128 ROUNDS=1 \
        WARM_MS=60 TAG="$(basename "$lib") r$r " \
        python3 "$here/decode_split_sweep.py"
    done
  done
  for lib in "$old" "$new"; do
    FLASHFUSE_KERNEL_DIR=$lib COLD=1 SHAPES=$cold_shapes SPLITS=0 ROUNDS=3 \
      WARM_MS=60 TAG="$(basename "$lib") " python3 "$here/decode_split_sweep.py"
  done
fi
if [[ $part == check || $part == all ]]; then
  for n in h100-decode-rows8 h100-decode; do
    FLASHFUSE_KERNEL_DIR=$new python3 "$here/check_decode.py" "$new/$n" \
      --no-bench --out "$out" | tail -4
  done
fi
if [[ $part == sanity || $part == all ]]; then
  FLASHFUSE_KERNEL_DIR=$new compute-sanitizer --tool memcheck --print-limit 5 \
    python3 "$here/check_decode.py" "$new/h100-decode-rows8" --quick \
    --no-bench --out "$out" | tail -3
  (cd "$here/../../python" && FLASHFUSE_KERNEL_DIR=$(cd "$new" && pwd) \
    python3 -m pytest -q tests/test_decode_gpu.py tests/test_decode_fp8_gpu.py \
      tests/test_pool_kvcache_gpu.py tests/test_alibi_decode_gpu.py | tail -4)
fi

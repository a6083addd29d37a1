/* fp8_vt_layout.h is included by the compiler (the FP8 forwards' P
 * operands), the runtime (Vt's tensor map) and C callers that lay Vt out,
 * so it must stay plain C99 with no dependency: compiled as strict C99 with
 * warnings as errors, this checks that the key order is a permutation of
 * each group, that it is the order the k32 A operand takes the
 * accumulator's pairs in (thread t: keys 2t, 2t+1 of each 8-key tile;
 * operand positions 4t..4t+3 and 16+4t..16+4t+3), and Sk_pad. */
#include "flashfuse/fp8_vt_layout.h"

#include <stdio.h>

static int failures = 0;

static void expect(const char *what, long long got, long long want) {
  if (got != want) {
    fprintf(stderr, "  %s: got %lld, want %lld\n", what, got, want);
    ++failures;
  }
}

int main(void) {
  int seen[FLASHFUSE_FP8_VT_KEY_GROUP] = {0};
  int t, half, j, e, p;
  for (p = 0; p < FLASHFUSE_FP8_VT_KEY_GROUP; ++p) {
    int32_t key = flashfuse_fp8_vt_key_at(p);
    if (key < 0 || key >= FLASHFUSE_FP8_VT_KEY_GROUP || seen[key]++)
      expect("a key seen once", key, -1);
  }
  /* Register (half) of thread t holds positions 16 half + 4t + 2j + e:
   * pair j of the thread's tiles 4kk + 2 half + j, i.e. key
   * 16 half + 8j + 2t + e. */
  for (half = 0; half < 2; ++half)
    for (t = 0; t < 4; ++t)
      for (j = 0; j < 2; ++j)
        for (e = 0; e < 2; ++e)
          expect("key at position",
                 flashfuse_fp8_vt_key_at(16 * half + 4 * t + 2 * j + e),
                 16 * half + 8 * j + 2 * t + e);
  expect("Sk_pad(1)", flashfuse_fp8_vt_keys(1), 32);
  expect("Sk_pad(32)", flashfuse_fp8_vt_keys(32), 32);
  expect("Sk_pad(33)", flashfuse_fp8_vt_keys(33), 64);
  expect("Sk_pad(8191)", flashfuse_fp8_vt_keys(8191), 8192);
  if (failures)
    fprintf(stderr, "fp8_vt_layout.h: %d failures\n", failures);
  return failures ? 1 : 0;
}

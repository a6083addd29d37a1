// RUN: flashfuse-opt %s --flash-lower-to-gpu --split-input-file --verify-diagnostics

func.func @no_config(%q: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{has no kernel config; run flash-select-config first}}
  %o = flash.attention %q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

func.func @f32(%q: tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32> {
  // expected-error @+1 {{the sm80 recipe needs f16 or bf16 operands, got 'f32'}}
  %o = flash.attention %q, %q, %q {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>} : tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32> -> tensor<1x1x64x64xf32>
  return %o : tensor<1x1x64x64xf32>
}

// -----

func.func @head_dim(%q: tensor<1x1x64x84xf16>) -> tensor<1x1x64x84xf16> {
  // expected-error @+1 {{the GPU recipes support D and Dv multiples of 8 from 8 to 256 with Dv <= D, got D = 84, Dv = 84}}
  %o = flash.attention %q, %q, %q {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>} : tensor<1x1x64x84xf16>, tensor<1x1x64x84xf16>, tensor<1x1x64x84xf16> -> tensor<1x1x64x84xf16>
  return %o : tensor<1x1x64x84xf16>
}

// -----

func.func @dv_above_d(%q: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x128xf16>) -> tensor<1x1x64x128xf16> {
  // expected-error @+1 {{the GPU recipes support D and Dv multiples of 8 from 8 to 256 with Dv <= D, got D = 64, Dv = 128}}
  %o = flash.attention %q, %q, %v {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>} : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x128xf16> -> tensor<1x1x64x128xf16>
  return %o : tensor<1x1x64x128xf16>
}

// -----

func.func @recipe(%q: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{recipe 'sm90' needs chip=sm_90a (wgmma), got chip=sm_80}}
  %o = flash.attention %q, %q, %q {config = #flash.config<sm90, block_m = 64, block_n = 64, warps = 4, stages = 2>} : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

func.func @warp_shape(%q: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{config block_m = 32 must be a multiple of 16 * warps (64) and block_n = 64 of 16}}
  %o = flash.attention %q, %q, %q {config = #flash.config<sm80, block_m = 32, block_n = 64, warps = 4, stages = 2>} : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

func.func @head_dim_not_innermost(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{'key' must keep the head dim innermost for the GPU recipe (perm[3] == 3)}}
  %o = flash.attention %q, %k, %q {k_perm = array<i64: 0, 1, 3, 2>, config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>} : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// Values read from above the op are kernel parameters (mod-captures.mlir),
// but only scalars a parameter carries exactly and tensors read by
// tensor.extract.
func.func @captured_f64(%q: tensor<1x1x64x64xf16>, %t: f64) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{a score_mod or mask_mod reads a value of type 'f64' from above the op; a kernel takes integers (up to 64 bits), index, f16, bf16 and f32 values, and ranked tensors of them}}
  %o = flash.attention %q, %q, %q {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>} : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %tf = arith.truncf %t : f64 to f32
    %r = arith.addf %s, %tf : f32
    flash.yield %r : f32
  }
  return %o : tensor<1x1x64x64xf16>
}

// -----

func.func @captured_tensor_dim(%q: tensor<1x1x64x64xf16>, %ids: tensor<?xi32>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{a score_mod or mask_mod reads the tensor 'tensor<?xi32>' from above the op through 'tensor.dim'; a kernel reads such tensors only by tensor.extract}}
  %o = flash.attention %q, %q, %q {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>} : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16> mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %ids, %c0 : tensor<?xi32>
    %in = arith.cmpi slt, %j, %n : index
    flash.yield %in : i1
  }
  return %o : tensor<1x1x64x64xf16>
}

// -----

func.func @captured_tensor_of_f64(%q: tensor<1x1x64x64xf16>, %t: tensor<4xf64>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{a score_mod or mask_mod reads a value of type 'tensor<4xf64>' from above the op}}
  %o = flash.attention %q, %q, %q {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>} : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %e = tensor.extract %t[%h] : tensor<4xf64>
    %ef = arith.truncf %e : f64 to f32
    %r = arith.addf %s, %ef : f32
    flash.yield %r : f32
  }
  return %o : tensor<1x1x64x64xf16>
}

// -----

// The kernels compute a captured tensor's offsets in 32 bits.
func.func @captured_tensor_too_large(%q: tensor<1x1x64x64xf16>, %t: tensor<65536x32768xf32>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{a score_mod or mask_mod reads the tensor 'tensor<65536x32768xf32>' of 2147483648 elements from above the op; a kernel addresses a captured tensor in 32 bits (at most 2147483647 elements)}}
  %o = flash.attention %q, %q, %q {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>} : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> -> tensor<1x1x64x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %e = tensor.extract %t[%i, %j] : tensor<65536x32768xf32>
    %r = arith.addf %s, %e : f32
    flash.yield %r : f32
  }
  return %o : tensor<1x1x64x64xf16>
}

// -----

// new_kv is lowered (kvcache-append.mlir); what the decode recipe cannot
// serve is still refused with it, before anything is launched.
func.func @kvcache_new_kv_dv(%q: tensor<1x8x1x64xf16>, %k: tensor<1x8x64x64xf16>, %v: tensor<1x8x64x32xf16>, %len: tensor<1xi32>, %kn: tensor<1x8x1x64xf16>, %vn: tensor<1x8x1x32xf16>) -> tensor<1x8x1x32xf16> {
  // expected-error @+1 {{the decode recipe supports D = Dv, a multiple of 16 from 32 to 256, got D = 64, Dv = 32}}
  %o, %kc, %vc = flash.attention_kvcache %q, %k, %v, %len new_kv(%kn, %vn : tensor<1x8x1x64xf16>, tensor<1x8x1x32xf16>) {config = #flash.config<decode, block_m = 16, block_n = 64, warps = 4, stages = 2>}
      : tensor<1x8x1x64xf16>, tensor<1x8x64x64xf16>, tensor<1x8x64x32xf16>, tensor<1xi32> -> tensor<1x8x1x32xf16>, tensor<1x8x64x64xf16>, tensor<1x8x64x32xf16>
  return %o : tensor<1x8x1x32xf16>
}

// -----

// An FP8 cache on sm_80 (this file's chip): no e4m3 conversion instruction,
// so no kernel (decode-fp8.mlir has sm_90a's).
func.func @kvcache_fp8_cache(%q: tensor<1x8x1x64xf16>, %k: tensor<1x8x64x64xf8E4M3FN>, %len: tensor<1xi32>, %d: tensor<1x8xf32>) -> tensor<1x8x1x64xf16> {
  // expected-error @+1 {{no GPU kernel for an f8E4M3FN KV cache on this target: the decode kernel converts e4m3 with cvt.rn.f16x2.e4m3x2 and kv_append with cvt.rn.satfinite.e4m3x2.f32, which need sm_89 or later}}
  %o = flash.attention_kvcache %q, %k, %k, %len descale(%d, %d : tensor<1x8xf32>, tensor<1x8xf32>) {config = #flash.config<decode, block_m = 16, block_n = 64, warps = 4, stages = 2>}
      : tensor<1x8x1x64xf16>, tensor<1x8x64x64xf8E4M3FN>, tensor<1x8x64x64xf8E4M3FN>, tensor<1xi32> -> tensor<1x8x1x64xf16>
  return %o : tensor<1x8x1x64xf16>
}

// -----

func.func @kvcache_recipe(%q: tensor<1x8x1x64xf16>, %k: tensor<1x8x64x64xf16>, %len: tensor<1xi32>) -> tensor<1x8x1x64xf16> {
  // expected-error @+1 {{is lowered by the 'decode' recipe, got 'sm80'}}
  %o = flash.attention_kvcache %q, %k, %k, %len {config = #flash.config<sm80, block_m = 64, block_n = 64, warps = 4, stages = 2>}
      : tensor<1x8x1x64xf16>, tensor<1x8x64x64xf16>, tensor<1x8x64x64xf16>, tensor<1xi32> -> tensor<1x8x1x64xf16>
  return %o : tensor<1x8x1x64xf16>
}

// -----

func.func @kvcache_tiles(%q: tensor<1x8x1x64xf16>, %k: tensor<1x8x64x64xf16>, %len: tensor<1xi32>) -> tensor<1x8x1x64xf16> {
  // expected-error @+1 {{the decode recipe needs block_m a multiple of 16 * warps (64) and block_n of 16, or block_m a multiple of 16 dividing 16 * warps and block_n a multiple of 16 per warp sharing a row; got block_m = 16, block_n = 32, warps = 4}}
  %o = flash.attention_kvcache %q, %k, %k, %len {config = #flash.config<decode, block_m = 16, block_n = 32, warps = 4, stages = 2>}
      : tensor<1x8x1x64xf16>, tensor<1x8x64x64xf16>, tensor<1x8x64x64xf16>, tensor<1xi32> -> tensor<1x8x1x64xf16>
  return %o : tensor<1x8x1x64xf16>
}

// -----

// block_m = 8 (the rows as the products' n) needs an 8-row Q tile that the
// 128 threads copy evenly: not at D = 64 (64 chunks).
func.func @kvcache_swapped_d64(%q: tensor<1x8x1x64xf16>, %k: tensor<1x8x64x64xf16>, %len: tensor<1xi32>) -> tensor<1x8x1x64xf16> {
  // expected-error @+1 {{the decode recipe's block_m = 8 (the rows as the products' n) needs a 16-bit cache, D and Dv of 64 or more whose 8-row Q tile the block's threads copy evenly, 2 or more warps and block_n a multiple of 16 per warp; got D = 64, block_n = 128, warps = 4}}
  %o = flash.attention_kvcache %q, %k, %k, %len {config = #flash.config<decode, block_m = 8, block_n = 128, warps = 4, stages = 2>}
      : tensor<1x8x1x64xf16>, tensor<1x8x64x64xf16>, tensor<1x8x64x64xf16>, tensor<1xi32> -> tensor<1x8x1x64xf16>
  return %o : tensor<1x8x1x64xf16>
}

// -----

// ... and 16 keys a warp of every block.
func.func @kvcache_swapped_keys(%q: tensor<1x8x1x128xf16>, %k: tensor<1x8x64x128xf16>, %len: tensor<1xi32>) -> tensor<1x8x1x128xf16> {
  // expected-error @+1 {{the decode recipe's block_m = 8 (the rows as the products' n) needs a 16-bit cache, D and Dv of 64 or more whose 8-row Q tile the block's threads copy evenly, 2 or more warps and block_n a multiple of 16 per warp; got D = 128, block_n = 32, warps = 4}}
  %o = flash.attention_kvcache %q, %k, %k, %len {config = #flash.config<decode, block_m = 8, block_n = 32, warps = 4, stages = 2>}
      : tensor<1x8x1x128xf16>, tensor<1x8x64x128xf16>, tensor<1x8x64x128xf16>, tensor<1xi32> -> tensor<1x8x1x128xf16>
  return %o : tensor<1x8x1x128xf16>
}

// -----

func.func @recipe_ws(%q: tensor<1x1x128x64xf16>) -> tensor<1x1x128x64xf16> {
  // expected-error @+1 {{recipe 'sm90ws' needs chip=sm_90a (wgmma), got chip=sm_80}}
  %o = flash.attention %q, %q, %q {config = #flash.config<sm90ws, block_m = 128, block_n = 128, warps = 8, stages = 3>} : tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16>, tensor<1x1x128x64xf16> -> tensor<1x1x128x64xf16>
  return %o : tensor<1x1x128x64xf16>
}

// -----

// An explicit config is not fitted to the chip: six stages of 128 keys at
// D = 128 need more than sm_80's 163 KiB a block.
func.func @too_much_shared_memory(%q: tensor<1x1x128x128xf16>) -> tensor<1x1x128x128xf16> {
  // expected-error-re @+1 {{its forward kernel needs {{[0-9]+}} bytes of shared memory, chip=sm_80 has at most 166912 a block: take fewer stages or smaller tiles}}
  %o = flash.attention %q, %q, %q {config = #flash.config<sm80, block_m = 128, block_n = 128, warps = 4, stages = 6>} : tensor<1x1x128x128xf16>, tensor<1x1x128x128xf16>, tensor<1x1x128x128xf16> -> tensor<1x1x128x128xf16>
  return %o : tensor<1x1x128x128xf16>
}

// -----

// The backward's padded tiles: K and V of 128 keys (69632 bytes), three
// stages of Q and dO of 64 rows (104448), dS (18432), LSE and Dsum (1536).
func.func @backward_too_much_shared_memory(%x: tensor<1x1x128x128xf16>, %lse: tensor<1x1x128xf32>) {
  // expected-error @+1 {{its backward kernel needs 194048 bytes of shared memory, chip=sm_80 has at most 166912 a block: take fewer stages or smaller tiles}}
  %g:3 = flash.attention_grad %x, %x, %x, %x, %x, %lse {config = #flash.config<sm80, block_m = 64, block_n = 128, warps = 8, stages = 3>}
      : tensor<1x1x128x128xf16>, tensor<1x1x128x128xf16>, tensor<1x1x128x128xf16>,
        tensor<1x1x128x128xf16>, tensor<1x1x128x128xf16>, tensor<1x1x128xf32>
      -> tensor<1x1x128x128xf16>, tensor<1x1x128x128xf16>, tensor<1x1x128x128xf16>
  return
}

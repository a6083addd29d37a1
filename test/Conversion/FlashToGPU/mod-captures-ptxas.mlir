// REQUIRES: ptxas
// Kernels whose score_mod / mask_mod read values from above their op
// (docs/KERNEL_ABI.md "Values captured by score_mod and mask_mod"), the
// input of the GPU check: flashfuse-compile it for h100 with --recipe=sm90
// (the default gives ops with regions the sm90ws kernels), --recipe=sm80
// and --recipe=auto-tma, with --no-derive-block-sparsity, and run
// scripts/kernels/check_captures.py on the artifacts (forwards, through
// flashfuse.artifact.forward) and scripts/kernels/check_backward.py
// --alibi-slopes (the backward). Per dtype and D:
//   @alibi_*: score + alpha * slopes[h] * (kv_idx - q_idx), slopes an f32
//     [Hq] tensor and alpha an f32 scalar (captures f32/1 f32), causal;
//   @documents_*: keep iff ids[b, q_idx] == ids[b, kv_idx] and
//     q_idx - kv_idx <= reach, ids an i32 [B, S] tensor and reach an i32
//     scalar (captures i32/2 i32);
//   @alibi_grad_*: the ALiBi backward, slopes only, causal or not.
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --recipe=sm90 --no-derive-block-sparsity --allow-spills -o %t/h100 > %t.log
// RUN: FileCheck %s < %t.log
// RUN: FileCheck %s --check-prefix=SPILL < %t.log
// RUN: flashfuse-compile %s --target=h100 --recipe=sm80 --no-derive-block-sparsity --allow-spills -o %t/sm80 | FileCheck %s --check-prefix=SM80
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
// The sm90ws forwards (--recipe=auto-tma; 128 x 128 tiles for regions,
// the persistent walk's included): they spill 0-36 bytes at the
// consumers' registers and are still the faster (docs/PERF.md run 440).
// RUN: flashfuse-compile %s --target=h100 --recipe=auto-tma --no-derive-block-sparsity --allow-spills -o %t/ws | FileCheck %s --check-prefix=WS
// WS-COUNT-8: ptxas sm_90a flash_fwd_sm90ws_{{[a-z0-9]+}}_d{{[0-9]+}}_m128n128w8s3_{{[a-z_]*}}mod{{[0-7]}}:

// Eight forwards and eight backwards of three kernels each. Most run at
// the 255-register cap: the sm90 forwards do not spill; the backwards
// spill 0-12 bytes (sm80 recipe: 0-24, its D = 128 causal forward 8), as
// the kernels of constant score_mods do (0-48, docs/PERF.md).
// CHECK-COUNT-32: ptxas sm_90a flash_
// CHECK-NOT: ptxas
// CHECK: wrote
// SPILL-COUNT-8: ptxas sm_90a flash_fwd_sm90_{{.*}}_mod{{[0-7]}}: {{[0-9]+}} registers, 0 bytes stack, 0/0 bytes spill stores/loads
// SM80-COUNT-32: ptxas sm_90a flash_{{fwd|bwd}}{{.*}}_sm80_
// SM80: wrote
// The kernels that inline the regions say so (`mods 1`: launched by name,
// never for a variant) and name the captured values' types; the backward's
// preprocess and postprocess, which do not, have neither key.
// MANIFEST: kernel flash_fwd_sm90_f16_d64_{{.*}}_causal_mod0
// MANIFEST: mods 1
// MANIFEST-NEXT: captures f32/1 f32
// MANIFEST: kernel flash_fwd_sm90_f16_d64_{{.*}}_mod1
// MANIFEST: mods 1
// MANIFEST-NEXT: captures i32/2 i32
// MANIFEST: kernel flash_bwd_pre_sm90_f16_d64_{{.*}}_mod8
// MANIFEST-NOT: mods
// MANIFEST: kernel flash_bwd_sm90_f16_d64_{{.*}}_mod8
// MANIFEST: mods 1
// MANIFEST-NEXT: captures f32/1

func.func @alibi_f16_d64(%q: tensor<2x4x256x64xf16>, %k: tensor<2x4x256x64xf16>, %v: tensor<2x4x256x64xf16>, %slopes: tensor<?xf32>, %alpha: f32) -> tensor<2x4x256x64xf16> {
  %o = flash.attention %q, %k, %v {causal = #flash.causal<top_left>} : tensor<2x4x256x64xf16>, tensor<2x4x256x64xf16>, tensor<2x4x256x64xf16> -> tensor<2x4x256x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<?xf32>
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %m = arith.mulf %relf, %sl : f32
    %am = arith.mulf %m, %alpha : f32
    %r = arith.addf %s, %am : f32
    flash.yield %r : f32
  }
  return %o : tensor<2x4x256x64xf16>
}

func.func @documents_f16_d64(%q: tensor<2x4x256x64xf16>, %k: tensor<2x4x256x64xf16>, %v: tensor<2x4x256x64xf16>, %ids: tensor<2x?xi32>, %reach: i32) -> tensor<2x4x256x64xf16> {
  %o = flash.attention %q, %k, %v : tensor<2x4x256x64xf16>, tensor<2x4x256x64xf16>, tensor<2x4x256x64xf16> -> tensor<2x4x256x64xf16> mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%b, %i] : tensor<2x?xi32>
    %dj = tensor.extract %ids[%b, %j] : tensor<2x?xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    %back = arith.subi %i, %j : index
    %back32 = arith.index_cast %back : index to i32
    %near = arith.cmpi sle, %back32, %reach : i32
    %keep = arith.andi %same, %near : i1
    flash.yield %keep : i1
  }
  return %o : tensor<2x4x256x64xf16>
}

func.func @alibi_f16_d128(%q: tensor<2x4x256x128xf16>, %k: tensor<2x4x256x128xf16>, %v: tensor<2x4x256x128xf16>, %slopes: tensor<?xf32>, %alpha: f32) -> tensor<2x4x256x128xf16> {
  %o = flash.attention %q, %k, %v {causal = #flash.causal<top_left>} : tensor<2x4x256x128xf16>, tensor<2x4x256x128xf16>, tensor<2x4x256x128xf16> -> tensor<2x4x256x128xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<?xf32>
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %m = arith.mulf %relf, %sl : f32
    %am = arith.mulf %m, %alpha : f32
    %r = arith.addf %s, %am : f32
    flash.yield %r : f32
  }
  return %o : tensor<2x4x256x128xf16>
}

func.func @documents_f16_d128(%q: tensor<2x4x256x128xf16>, %k: tensor<2x4x256x128xf16>, %v: tensor<2x4x256x128xf16>, %ids: tensor<2x?xi32>, %reach: i32) -> tensor<2x4x256x128xf16> {
  %o = flash.attention %q, %k, %v : tensor<2x4x256x128xf16>, tensor<2x4x256x128xf16>, tensor<2x4x256x128xf16> -> tensor<2x4x256x128xf16> mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%b, %i] : tensor<2x?xi32>
    %dj = tensor.extract %ids[%b, %j] : tensor<2x?xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    %back = arith.subi %i, %j : index
    %back32 = arith.index_cast %back : index to i32
    %near = arith.cmpi sle, %back32, %reach : i32
    %keep = arith.andi %same, %near : i1
    flash.yield %keep : i1
  }
  return %o : tensor<2x4x256x128xf16>
}

func.func @alibi_grad_f16_d64_none(%do: tensor<1x4x256x64xf16>, %q: tensor<1x4x256x64xf16>, %k: tensor<1x4x256x64xf16>, %v: tensor<1x4x256x64xf16>, %o: tensor<1x4x256x64xf16>, %lse: tensor<1x4x256xf32>, %slopes: tensor<4xf32>) -> (tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256xf32> -> tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<4xf32>
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %m = arith.mulf %relf, %sl : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %dq, %dk, %dv : tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>
}

func.func @alibi_grad_f16_d64_causal(%do: tensor<1x4x256x64xf16>, %q: tensor<1x4x256x64xf16>, %k: tensor<1x4x256x64xf16>, %v: tensor<1x4x256x64xf16>, %o: tensor<1x4x256x64xf16>, %lse: tensor<1x4x256xf32>, %slopes: tensor<4xf32>) -> (tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>} : tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256xf32> -> tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<4xf32>
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %m = arith.mulf %relf, %sl : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %dq, %dk, %dv : tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>
}

func.func @alibi_grad_f16_d128_none(%do: tensor<1x4x256x128xf16>, %q: tensor<1x4x256x128xf16>, %k: tensor<1x4x256x128xf16>, %v: tensor<1x4x256x128xf16>, %o: tensor<1x4x256x128xf16>, %lse: tensor<1x4x256xf32>, %slopes: tensor<4xf32>) -> (tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256xf32> -> tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<4xf32>
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %m = arith.mulf %relf, %sl : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %dq, %dk, %dv : tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>
}

func.func @alibi_grad_f16_d128_causal(%do: tensor<1x4x256x128xf16>, %q: tensor<1x4x256x128xf16>, %k: tensor<1x4x256x128xf16>, %v: tensor<1x4x256x128xf16>, %o: tensor<1x4x256x128xf16>, %lse: tensor<1x4x256xf32>, %slopes: tensor<4xf32>) -> (tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>} : tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256xf32> -> tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<4xf32>
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %m = arith.mulf %relf, %sl : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %dq, %dk, %dv : tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>, tensor<1x4x256x128xf16>
}

func.func @alibi_bf16_d64(%q: tensor<2x4x256x64xbf16>, %k: tensor<2x4x256x64xbf16>, %v: tensor<2x4x256x64xbf16>, %slopes: tensor<?xf32>, %alpha: f32) -> tensor<2x4x256x64xbf16> {
  %o = flash.attention %q, %k, %v {causal = #flash.causal<top_left>} : tensor<2x4x256x64xbf16>, tensor<2x4x256x64xbf16>, tensor<2x4x256x64xbf16> -> tensor<2x4x256x64xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<?xf32>
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %m = arith.mulf %relf, %sl : f32
    %am = arith.mulf %m, %alpha : f32
    %r = arith.addf %s, %am : f32
    flash.yield %r : f32
  }
  return %o : tensor<2x4x256x64xbf16>
}

func.func @documents_bf16_d64(%q: tensor<2x4x256x64xbf16>, %k: tensor<2x4x256x64xbf16>, %v: tensor<2x4x256x64xbf16>, %ids: tensor<2x?xi32>, %reach: i32) -> tensor<2x4x256x64xbf16> {
  %o = flash.attention %q, %k, %v : tensor<2x4x256x64xbf16>, tensor<2x4x256x64xbf16>, tensor<2x4x256x64xbf16> -> tensor<2x4x256x64xbf16> mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%b, %i] : tensor<2x?xi32>
    %dj = tensor.extract %ids[%b, %j] : tensor<2x?xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    %back = arith.subi %i, %j : index
    %back32 = arith.index_cast %back : index to i32
    %near = arith.cmpi sle, %back32, %reach : i32
    %keep = arith.andi %same, %near : i1
    flash.yield %keep : i1
  }
  return %o : tensor<2x4x256x64xbf16>
}

func.func @alibi_bf16_d128(%q: tensor<2x4x256x128xbf16>, %k: tensor<2x4x256x128xbf16>, %v: tensor<2x4x256x128xbf16>, %slopes: tensor<?xf32>, %alpha: f32) -> tensor<2x4x256x128xbf16> {
  %o = flash.attention %q, %k, %v {causal = #flash.causal<top_left>} : tensor<2x4x256x128xbf16>, tensor<2x4x256x128xbf16>, tensor<2x4x256x128xbf16> -> tensor<2x4x256x128xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<?xf32>
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %m = arith.mulf %relf, %sl : f32
    %am = arith.mulf %m, %alpha : f32
    %r = arith.addf %s, %am : f32
    flash.yield %r : f32
  }
  return %o : tensor<2x4x256x128xbf16>
}

func.func @documents_bf16_d128(%q: tensor<2x4x256x128xbf16>, %k: tensor<2x4x256x128xbf16>, %v: tensor<2x4x256x128xbf16>, %ids: tensor<2x?xi32>, %reach: i32) -> tensor<2x4x256x128xbf16> {
  %o = flash.attention %q, %k, %v : tensor<2x4x256x128xbf16>, tensor<2x4x256x128xbf16>, tensor<2x4x256x128xbf16> -> tensor<2x4x256x128xbf16> mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %ids[%b, %i] : tensor<2x?xi32>
    %dj = tensor.extract %ids[%b, %j] : tensor<2x?xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    %back = arith.subi %i, %j : index
    %back32 = arith.index_cast %back : index to i32
    %near = arith.cmpi sle, %back32, %reach : i32
    %keep = arith.andi %same, %near : i1
    flash.yield %keep : i1
  }
  return %o : tensor<2x4x256x128xbf16>
}

func.func @alibi_grad_bf16_d64_none(%do: tensor<1x4x256x64xbf16>, %q: tensor<1x4x256x64xbf16>, %k: tensor<1x4x256x64xbf16>, %v: tensor<1x4x256x64xbf16>, %o: tensor<1x4x256x64xbf16>, %lse: tensor<1x4x256xf32>, %slopes: tensor<4xf32>) -> (tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256xf32> -> tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<4xf32>
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %m = arith.mulf %relf, %sl : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %dq, %dk, %dv : tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>
}

func.func @alibi_grad_bf16_d64_causal(%do: tensor<1x4x256x64xbf16>, %q: tensor<1x4x256x64xbf16>, %k: tensor<1x4x256x64xbf16>, %v: tensor<1x4x256x64xbf16>, %o: tensor<1x4x256x64xbf16>, %lse: tensor<1x4x256xf32>, %slopes: tensor<4xf32>) -> (tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>} : tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256xf32> -> tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<4xf32>
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %m = arith.mulf %relf, %sl : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %dq, %dk, %dv : tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>
}

func.func @alibi_grad_bf16_d128_none(%do: tensor<1x4x256x128xbf16>, %q: tensor<1x4x256x128xbf16>, %k: tensor<1x4x256x128xbf16>, %v: tensor<1x4x256x128xbf16>, %o: tensor<1x4x256x128xbf16>, %lse: tensor<1x4x256xf32>, %slopes: tensor<4xf32>) -> (tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256xf32> -> tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<4xf32>
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %m = arith.mulf %relf, %sl : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %dq, %dk, %dv : tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>
}

func.func @alibi_grad_bf16_d128_causal(%do: tensor<1x4x256x128xbf16>, %q: tensor<1x4x256x128xbf16>, %k: tensor<1x4x256x128xbf16>, %v: tensor<1x4x256x128xbf16>, %o: tensor<1x4x256x128xbf16>, %lse: tensor<1x4x256xf32>, %slopes: tensor<4xf32>) -> (tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>} : tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256xf32> -> tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %sl = tensor.extract %slopes[%h] : tensor<4xf32>
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %m = arith.mulf %relf, %sl : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %dq, %dk, %dv : tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>, tensor<1x4x256x128xbf16>
}

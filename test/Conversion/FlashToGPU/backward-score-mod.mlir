// REQUIRES: ptxas
// Additive score_mods (derivative 1) have a GPU backward: the kernels
// recompute P through the inlined region and dS needs no extra factor. An
// ALiBi-style score + (kv_idx - q_idx) / 16 on the sm90 backward, f16/bf16,
// D = 64/128, causal or not. The same file is the input of the GPU check
// (docs/PERF.md): flashfuse-compile it for h100 with --recipe=sm90 (the
// default gives ops with regions the sm90ws kernels) and run
// scripts/kernels/check_backward.py ARTIFACT --alibi 0.0625.
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a | FileCheck %s
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --recipe=sm90 --allow-spills -o %t | FileCheck %s --check-prefix=PTXAS

// One kernel per op (a region makes a kernel unique), launched after the
// preprocess; the region's ops are inlined into the main kernel.
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_pre_sm90_f16_d64_m128n128w8s2_mod0
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_sm90_f16_d64_m128n128w8s2_mod0
// CHECK: gpu.launch_func @flash_kernels::@flash_bwd_post_sm90_f16_d64_m128n128w8s2_mod0
// CHECK-LABEL: gpu.func @flash_bwd_sm90_f16_d64_m128n128w8s2_mod0(
// CHECK: arith.subi
// CHECK: arith.sitofp {{.*}} : i64 to f32
// CHECK: arith.mulf {{.*}} : f32
// CHECK: gpu.return
// PTXAS-COUNT-8: ptxas sm_90a flash_bwd_sm90_
// PTXAS: wrote

func.func @alibi_f16_d64_full(%do: tensor<1x2x256x64xf16>, %q: tensor<1x2x256x64xf16>, %k: tensor<1x2x256x64xf16>, %v: tensor<1x2x256x64xf16>, %o: tensor<1x2x256x64xf16>, %lse: tensor<1x2x256xf32>) -> (tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256xf32> -> tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %slope = arith.constant 0.0625 : f32
    %m = arith.mulf %relf, %slope : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %dq, %dk, %dv : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>
}

func.func @alibi_f16_d64_causal(%do: tensor<1x2x256x64xf16>, %q: tensor<1x2x256x64xf16>, %k: tensor<1x2x256x64xf16>, %v: tensor<1x2x256x64xf16>, %o: tensor<1x2x256x64xf16>, %lse: tensor<1x2x256xf32>) -> (tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>} : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256xf32> -> tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %slope = arith.constant 0.0625 : f32
    %m = arith.mulf %relf, %slope : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %dq, %dk, %dv : tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>
}

func.func @alibi_f16_d128_full(%do: tensor<1x2x256x128xf16>, %q: tensor<1x2x256x128xf16>, %k: tensor<1x2x256x128xf16>, %v: tensor<1x2x256x128xf16>, %o: tensor<1x2x256x128xf16>, %lse: tensor<1x2x256xf32>) -> (tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256xf32> -> tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %slope = arith.constant 0.0625 : f32
    %m = arith.mulf %relf, %slope : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %dq, %dk, %dv : tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>
}

func.func @alibi_f16_d128_causal(%do: tensor<1x2x256x128xf16>, %q: tensor<1x2x256x128xf16>, %k: tensor<1x2x256x128xf16>, %v: tensor<1x2x256x128xf16>, %o: tensor<1x2x256x128xf16>, %lse: tensor<1x2x256xf32>) -> (tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>} : tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256xf32> -> tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %slope = arith.constant 0.0625 : f32
    %m = arith.mulf %relf, %slope : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %dq, %dk, %dv : tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>
}

func.func @alibi_bf16_d64_full(%do: tensor<1x2x256x64xbf16>, %q: tensor<1x2x256x64xbf16>, %k: tensor<1x2x256x64xbf16>, %v: tensor<1x2x256x64xbf16>, %o: tensor<1x2x256x64xbf16>, %lse: tensor<1x2x256xf32>) -> (tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256xf32> -> tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %slope = arith.constant 0.0625 : f32
    %m = arith.mulf %relf, %slope : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %dq, %dk, %dv : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>
}

func.func @alibi_bf16_d64_causal(%do: tensor<1x2x256x64xbf16>, %q: tensor<1x2x256x64xbf16>, %k: tensor<1x2x256x64xbf16>, %v: tensor<1x2x256x64xbf16>, %o: tensor<1x2x256x64xbf16>, %lse: tensor<1x2x256xf32>) -> (tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>} : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256xf32> -> tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %slope = arith.constant 0.0625 : f32
    %m = arith.mulf %relf, %slope : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %dq, %dk, %dv : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>
}

func.func @alibi_bf16_d128_full(%do: tensor<1x2x256x128xbf16>, %q: tensor<1x2x256x128xbf16>, %k: tensor<1x2x256x128xbf16>, %v: tensor<1x2x256x128xbf16>, %o: tensor<1x2x256x128xbf16>, %lse: tensor<1x2x256xf32>) -> (tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256xf32> -> tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %slope = arith.constant 0.0625 : f32
    %m = arith.mulf %relf, %slope : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %dq, %dk, %dv : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>
}

func.func @alibi_bf16_d128_causal(%do: tensor<1x2x256x128xbf16>, %q: tensor<1x2x256x128xbf16>, %k: tensor<1x2x256x128xbf16>, %v: tensor<1x2x256x128xbf16>, %o: tensor<1x2x256x128xbf16>, %lse: tensor<1x2x256xf32>) -> (tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse {causal = #flash.causal<top_left>} : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256xf32> -> tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16> score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %rel = arith.subi %j, %i : index
    %reli = arith.index_cast %rel : index to i64
    %relf = arith.sitofp %reli : i64 to f32
    %slope = arith.constant 0.0625 : f32
    %m = arith.mulf %relf, %slope : f32
    %r = arith.addf %s, %m : f32
    flash.yield %r : f32
  }
  return %dq, %dk, %dv : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>
}

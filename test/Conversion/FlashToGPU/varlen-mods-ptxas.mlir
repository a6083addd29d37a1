// REQUIRES: ptxas
// score_mod and mask_mod over a packed (varlen) batch (FlashOps.td: the
// regions see b = the sequence, q_idx / kv_idx local to it): the varlen
// schedulers already give the engines the block's sequence as its batch
// index and sequence-local rows and columns, so the regions are inlined as
// in a dense kernel. flash-attn's varlen ALiBi as flashfuse.varlen_attention
// compiles it (variants._alibi): per-head slopes and the per-sequence
// bottom-right offset Lk_b - Lq_b, both captured tensors; the backward
// also with a mask_mod on the local row. The sm90 forward assembles
// without spilling; the sm80 forward spills 8 bytes and the backwards
// (the h100 target's on the sm90ws recipe) 12-16 (--allow-spills, as flashfuse-compile's on-demand variants are
// built; the dense forms of these ops spill as much).
//
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --allow-spills -o %t/h100 | FileCheck %s --check-prefix=H100
// RUN: flashfuse-compile %s --target=a100 --allow-spills -o %t/a100 | FileCheck %s --check-prefix=A100
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/h100/manifest.txt
//
// H100-DAG: ptxas sm_90a flash_fwd_sm90_bf16_d128_m128n128w8s3_causalbr_varlen_mod0: {{.*}}, 0/0 bytes spill stores/loads
// H100-DAG: ptxas sm_90a flash_bwd_sm90ws_bf16_d128_m64n128w8s2_causalbr_varlen_mod1:
// H100-DAG: ptxas sm_90a flash_bwd_pre_sm90_bf16_d128_{{.*}}: {{.*}}, 0/0 bytes spill stores/loads
// A100-DAG: ptxas sm_80 flash_fwd_sm80_bf16_d128_{{.*}}_causalbr_varlen_mod0:
// A100-DAG: ptxas sm_80 flash_bwd_sm80_bf16_d128_{{.*}}_causalbr_varlen_mod1:
//
// MANIFEST-LABEL: kernel flash_fwd_sm90_bf16_d128_m128n128w8s3_causalbr_varlen_mod0
// MANIFEST: kind forward
// MANIFEST: varlen 1
// MANIFEST-NEXT: mods 1
// MANIFEST-NEXT: captures f32/1 f32/1
// MANIFEST-NEXT: params memref:q memref:k memref:v memref:o memref:lse memref:cu_seqlens_q memref:cu_seqlens_k {{.*}} i32:num_seqs i32:max_seqlen_q {{.*}} memref:capture0 memref:capture1
// MANIFEST-LABEL: kernel flash_bwd_sm90ws_bf16_d128_m64n128w8s2_causalbr_varlen_mod1
// MANIFEST: kind backward
// MANIFEST: varlen 1
// MANIFEST-NEXT: mods 1
// MANIFEST-NEXT: captures f32/1 f32/1

func.func @fwd(%q: tensor<1x?x16x128xbf16>, %k: tensor<1x?x4x128xbf16>,
               %v: tensor<1x?x4x128xbf16>, %cu_q: tensor<?xi32>,
               %cu_k: tensor<?xi32>, %slopes: tensor<?xf32>,
               %offs: tensor<?xf32>)
    -> (tensor<1x?x16x128xbf16>, tensor<1x16x?xf32>) {
  %o, %lse = flash.attention %q, %k, %v varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>)
      {causal = #flash.causal<bottom_right>, q_perm = array<i64: 0, 2, 1, 3>,
       k_perm = array<i64: 0, 2, 1, 3>, v_perm = array<i64: 0, 2, 1, 3>}
      : tensor<1x?x16x128xbf16>, tensor<1x?x4x128xbf16>, tensor<1x?x4x128xbf16>
      -> tensor<1x?x16x128xbf16>, tensor<1x16x?xf32>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %slope = tensor.extract %slopes[%h] : tensor<?xf32>
        %off = tensor.extract %offs[%b] : tensor<?xf32>
        %j32 = arith.index_cast %j : index to i32
        %i32 = arith.index_cast %i : index to i32
        %if = arith.sitofp %i32 : i32 to f32
        %diag = arith.addf %if, %off : f32
        %jf = arith.sitofp %j32 : i32 to f32
        %d = arith.subf %jf, %diag : f32
        %dist = math.absf %d : f32
        %neg = arith.negf %slope : f32
        %r = math.fma %neg, %dist, %s : f32
        flash.yield %r : f32
      }
  return %o, %lse : tensor<1x?x16x128xbf16>, tensor<1x16x?xf32>
}

func.func @grad(%do: tensor<1x?x16x128xbf16>, %q: tensor<1x?x16x128xbf16>,
                %k: tensor<1x?x4x128xbf16>, %v: tensor<1x?x4x128xbf16>,
                %o: tensor<1x?x16x128xbf16>, %lse: tensor<1x16x?xf32>,
                %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>,
                %slopes: tensor<?xf32>, %offs: tensor<?xf32>)
    -> (tensor<1x?x16x128xbf16>, tensor<1x?x4x128xbf16>, tensor<1x?x4x128xbf16>) {
  %dq, %dk, %dv = flash.attention_grad %do, %q, %k, %v, %o, %lse
      varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>)
      {causal = #flash.causal<bottom_right>, q_perm = array<i64: 0, 2, 1, 3>,
       k_perm = array<i64: 0, 2, 1, 3>, v_perm = array<i64: 0, 2, 1, 3>}
      : tensor<1x?x16x128xbf16>, tensor<1x?x16x128xbf16>, tensor<1x?x4x128xbf16>,
        tensor<1x?x4x128xbf16>, tensor<1x?x16x128xbf16>, tensor<1x16x?xf32>
      -> tensor<1x?x16x128xbf16>, tensor<1x?x4x128xbf16>, tensor<1x?x4x128xbf16>
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %slope = tensor.extract %slopes[%h] : tensor<?xf32>
        %off = tensor.extract %offs[%b] : tensor<?xf32>
        %j32 = arith.index_cast %j : index to i32
        %i32 = arith.index_cast %i : index to i32
        %if = arith.sitofp %i32 : i32 to f32
        %diag = arith.addf %if, %off : f32
        %jf = arith.sitofp %j32 : i32 to f32
        %d = arith.subf %jf, %diag : f32
        %dist = math.absf %d : f32
        %neg = arith.negf %slope : f32
        %r = math.fma %neg, %dist, %s : f32
        flash.yield %r : f32
      } mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c3 = arith.constant 3 : index
        %keep = arith.cmpi ne, %i, %c3 : index
        flash.yield %keep : i1
      }
  return %dq, %dk, %dv : tensor<1x?x16x128xbf16>, tensor<1x?x4x128xbf16>, tensor<1x?x4x128xbf16>
}

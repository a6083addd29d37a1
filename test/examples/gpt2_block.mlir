// The attention block of GPT-2 small (12 heads, head dim 64, hidden 768) for
// one sequence of 64 tokens in f16, written by hand in the linalg-on-tensors
// form torch-mlir emits for Hugging Face's GPT2Attention (eager `_attn`):
//
//   qkv = x @ c_attn.weight + c_attn.bias            # Conv1D, [1, 64, 2304]
//   q, k, v = qkv.split(768, dim=2)                  # each [1, 64, 768]
//   q, k, v = (t.view(1, 64, 12, 64).permute(0, 2, 1, 3) for t in (q, k, v))
//   w = torch.matmul(q, k.transpose(-1, -2))         # [1, 12, 64, 64]
//   w = w / 8.0                                      # sqrt(head dim)
//   w = torch.where(causal_mask, w, finfo(f16).min)
//   w = softmax(w, dim=-1)
//   o = torch.matmul(w, v)                           # [1, 12, 64, 64]
//   o = o.permute(0, 2, 1, 3).reshape(1, 64, 768)
//   return o @ c_proj.weight + c_proj.bias
//
// Weights are function arguments rather than the dense_resource blobs of a
// real export, to keep the file readable. The 4-D matmuls are collapsed to
// linalg.batch_matmul over B*H as torch-mlir does, K is transposed by a
// separate linalg.transpose, and softmax is decomposed into max, sub+exp,
// sum and div with keepdim shapes. flash-raise-attention must turn the
// middle into one flash.attention {causal} with scale 0.125 and leave the
// projections alone.
//
// This file must parse and verify (a lit test runs it through flashfuse-opt);
// scripts/demo.sh raises and lowers it.
// RUN: flashfuse-opt %s | FileCheck %s
// CHECK-LABEL: func.func @gpt2_attention_block
// CHECK-COUNT-2: linalg.batch_matmul

#map_bias = affine_map<(d0, d1) -> (d1)>
#map_id2 = affine_map<(d0, d1) -> (d0, d1)>
#map_id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map_mask = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
#map_keep = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>

func.func @gpt2_attention_block(%x: tensor<1x64x768xf16>,
                                %w_attn: tensor<768x2304xf16>,
                                %b_attn: tensor<2304xf16>,
                                %w_proj: tensor<768x768xf16>,
                                %b_proj: tensor<768xf16>) -> tensor<1x64x768xf16> {
  %zero = arith.constant 0.000000e+00 : f16
  %neg_inf = arith.constant 0xFC00 : f16
  %f16_min = arith.constant -6.550400e+04 : f16
  %sqrt_d = arith.constant 8.000000e+00 : f16

  // c_attn: [64, 768] x [768, 2304] + bias.
  %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x64x768xf16> into tensor<64x768xf16>
  %e0 = tensor.empty() : tensor<64x2304xf16>
  %f0 = linalg.fill ins(%zero : f16) outs(%e0 : tensor<64x2304xf16>) -> tensor<64x2304xf16>
  %mm0 = linalg.matmul ins(%x2, %w_attn : tensor<64x768xf16>, tensor<768x2304xf16>)
                       outs(%f0 : tensor<64x2304xf16>) -> tensor<64x2304xf16>
  %qkv2 = linalg.generic {indexing_maps = [#map_id2, #map_bias, #map_id2],
                          iterator_types = ["parallel", "parallel"]}
      ins(%mm0, %b_attn : tensor<64x2304xf16>, tensor<2304xf16>) outs(%e0 : tensor<64x2304xf16>) {
  ^bb0(%a: f16, %b: f16, %out: f16):
    %s = arith.addf %a, %b : f16
    linalg.yield %s : f16
  } -> tensor<64x2304xf16>
  %qkv = tensor.expand_shape %qkv2 [[0, 1], [2]] output_shape [1, 64, 2304]
      : tensor<64x2304xf16> into tensor<1x64x2304xf16>

  // split(768, dim=2), view as heads, permute to [B, H, S, D].
  %q0 = tensor.extract_slice %qkv[0, 0, 0] [1, 64, 768] [1, 1, 1] : tensor<1x64x2304xf16> to tensor<1x64x768xf16>
  %k0 = tensor.extract_slice %qkv[0, 0, 768] [1, 64, 768] [1, 1, 1] : tensor<1x64x2304xf16> to tensor<1x64x768xf16>
  %v0 = tensor.extract_slice %qkv[0, 0, 1536] [1, 64, 768] [1, 1, 1] : tensor<1x64x2304xf16> to tensor<1x64x768xf16>
  %q1 = tensor.expand_shape %q0 [[0], [1], [2, 3]] output_shape [1, 64, 12, 64] : tensor<1x64x768xf16> into tensor<1x64x12x64xf16>
  %k1 = tensor.expand_shape %k0 [[0], [1], [2, 3]] output_shape [1, 64, 12, 64] : tensor<1x64x768xf16> into tensor<1x64x12x64xf16>
  %v1 = tensor.expand_shape %v0 [[0], [1], [2, 3]] output_shape [1, 64, 12, 64] : tensor<1x64x768xf16> into tensor<1x64x12x64xf16>
  %eh = tensor.empty() : tensor<1x12x64x64xf16>
  %q = linalg.transpose ins(%q1 : tensor<1x64x12x64xf16>) outs(%eh : tensor<1x12x64x64xf16>) permutation = [0, 2, 1, 3]
  %k = linalg.transpose ins(%k1 : tensor<1x64x12x64xf16>) outs(%eh : tensor<1x12x64x64xf16>) permutation = [0, 2, 1, 3]
  %v = linalg.transpose ins(%v1 : tensor<1x64x12x64xf16>) outs(%eh : tensor<1x12x64x64xf16>) permutation = [0, 2, 1, 3]

  // torch.matmul(q, k.transpose(-1, -2)) over the 12 heads.
  %kt = linalg.transpose ins(%k : tensor<1x12x64x64xf16>) outs(%eh : tensor<1x12x64x64xf16>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x12x64x64xf16> into tensor<12x64x64xf16>
  %kt3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x12x64x64xf16> into tensor<12x64x64xf16>
  %e3 = tensor.empty() : tensor<12x64x64xf16>
  %f3 = linalg.fill ins(%zero : f16) outs(%e3 : tensor<12x64x64xf16>) -> tensor<12x64x64xf16>
  %qk3 = linalg.batch_matmul ins(%q3, %kt3 : tensor<12x64x64xf16>, tensor<12x64x64xf16>)
                             outs(%f3 : tensor<12x64x64xf16>) -> tensor<12x64x64xf16>
  %qk = tensor.expand_shape %qk3 [[0, 1], [2], [3]] output_shape [1, 12, 64, 64]
      : tensor<12x64x64xf16> into tensor<1x12x64x64xf16>

  // w / sqrt(64)
  %scaled = linalg.generic {indexing_maps = [#map_id4, #map_id4],
                            iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%qk : tensor<1x12x64x64xf16>) outs(%eh : tensor<1x12x64x64xf16>) {
  ^bb0(%a: f16, %out: f16):
    %d = arith.divf %a, %sqrt_d : f16
    linalg.yield %d : f16
  } -> tensor<1x12x64x64xf16>

  // The causal mask, tril(ones) as torch-mlir builds it from iota and a
  // compare, broadcast over batch and heads by torch.where.
  %em = tensor.empty() : tensor<1x1x64x64xi1>
  %causal = linalg.generic {indexing_maps = [#map_id4],
                            iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%em : tensor<1x1x64x64xi1>) {
  ^bb0(%out: i1):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %keep = arith.cmpi ule, %j, %i : index
    linalg.yield %keep : i1
  } -> tensor<1x1x64x64xi1>
  %masked = linalg.generic {indexing_maps = [#map_mask, #map_id4, #map_id4],
                            iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%causal, %scaled : tensor<1x1x64x64xi1>, tensor<1x12x64x64xf16>)
      outs(%eh : tensor<1x12x64x64xf16>) {
  ^bb0(%c: i1, %a: f16, %out: f16):
    %sel = arith.select %c, %a, %f16_min : f16
    linalg.yield %sel : f16
  } -> tensor<1x12x64x64xf16>

  // softmax(dim=-1): amax(keepdim), exp(w - max), sum(keepdim), divide.
  %er = tensor.empty() : tensor<1x12x64x1xf16>
  %fmax = linalg.fill ins(%neg_inf : f16) outs(%er : tensor<1x12x64x1xf16>) -> tensor<1x12x64x1xf16>
  %rowmax = linalg.generic {indexing_maps = [#map_id4, #map_keep],
                            iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%masked : tensor<1x12x64x64xf16>) outs(%fmax : tensor<1x12x64x1xf16>) {
  ^bb0(%a: f16, %acc: f16):
    %m = arith.maximumf %a, %acc : f16
    linalg.yield %m : f16
  } -> tensor<1x12x64x1xf16>
  %exp = linalg.generic {indexing_maps = [#map_id4, #map_keep, #map_id4],
                         iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%masked, %rowmax : tensor<1x12x64x64xf16>, tensor<1x12x64x1xf16>)
      outs(%eh : tensor<1x12x64x64xf16>) {
  ^bb0(%a: f16, %m: f16, %out: f16):
    %d = arith.subf %a, %m : f16
    %e = math.exp %d : f16
    linalg.yield %e : f16
  } -> tensor<1x12x64x64xf16>
  %fsum = linalg.fill ins(%zero : f16) outs(%er : tensor<1x12x64x1xf16>) -> tensor<1x12x64x1xf16>
  %rowsum = linalg.generic {indexing_maps = [#map_id4, #map_keep],
                            iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%exp : tensor<1x12x64x64xf16>) outs(%fsum : tensor<1x12x64x1xf16>) {
  ^bb0(%a: f16, %acc: f16):
    %s = arith.addf %a, %acc : f16
    linalg.yield %s : f16
  } -> tensor<1x12x64x1xf16>
  %probs = linalg.generic {indexing_maps = [#map_id4, #map_keep, #map_id4],
                           iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%exp, %rowsum : tensor<1x12x64x64xf16>, tensor<1x12x64x1xf16>)
      outs(%eh : tensor<1x12x64x64xf16>) {
  ^bb0(%e: f16, %s: f16, %out: f16):
    %p = arith.divf %e, %s : f16
    linalg.yield %p : f16
  } -> tensor<1x12x64x64xf16>

  // torch.matmul(probs, v)
  %p3 = tensor.collapse_shape %probs [[0, 1], [2], [3]] : tensor<1x12x64x64xf16> into tensor<12x64x64xf16>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x12x64x64xf16> into tensor<12x64x64xf16>
  %pv3 = linalg.batch_matmul ins(%p3, %v3 : tensor<12x64x64xf16>, tensor<12x64x64xf16>)
                             outs(%f3 : tensor<12x64x64xf16>) -> tensor<12x64x64xf16>
  %pv = tensor.expand_shape %pv3 [[0, 1], [2], [3]] output_shape [1, 12, 64, 64]
      : tensor<12x64x64xf16> into tensor<1x12x64x64xf16>

  // Merge heads: permute back to [B, S, H, D] and flatten to 768.
  %es = tensor.empty() : tensor<1x64x12x64xf16>
  %merged4 = linalg.transpose ins(%pv : tensor<1x12x64x64xf16>) outs(%es : tensor<1x64x12x64xf16>) permutation = [0, 2, 1, 3]
  %merged = tensor.collapse_shape %merged4 [[0, 1], [2, 3]] : tensor<1x64x12x64xf16> into tensor<64x768xf16>

  // c_proj: [64, 768] x [768, 768] + bias.
  %ep = tensor.empty() : tensor<64x768xf16>
  %fp = linalg.fill ins(%zero : f16) outs(%ep : tensor<64x768xf16>) -> tensor<64x768xf16>
  %mm1 = linalg.matmul ins(%merged, %w_proj : tensor<64x768xf16>, tensor<768x768xf16>)
                       outs(%fp : tensor<64x768xf16>) -> tensor<64x768xf16>
  %proj = linalg.generic {indexing_maps = [#map_id2, #map_bias, #map_id2],
                          iterator_types = ["parallel", "parallel"]}
      ins(%mm1, %b_proj : tensor<64x768xf16>, tensor<768xf16>) outs(%ep : tensor<64x768xf16>) {
  ^bb0(%a: f16, %b: f16, %out: f16):
    %s = arith.addf %a, %b : f16
    linalg.yield %s : f16
  } -> tensor<64x768xf16>
  %y = tensor.expand_shape %proj [[0, 1], [2]] output_shape [1, 64, 768]
      : tensor<64x768xf16> into tensor<1x64x768xf16>
  return %y : tensor<1x64x768xf16>
}

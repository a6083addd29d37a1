// REQUIRES: ptxas, cuobjdump
// The SASS of every generated kernel runs its matrix products on the tensor
// cores: HMMA (mma.sync) for the sm80 recipe, HGMMA (wgmma) for the sm90
// recipe, on the variants of the ptxas tests beside this one. ptxas could
// in principle lower an mma it cannot schedule to something else; this
// reads what the hardware will execute (cuobjdump -sass).
//
// RUN: rm -rf %t
// RUN: flashfuse-compile %S/compile-ptxas.mlir --target=a100 -o %t/fwd-a100 > /dev/null
// RUN: %sass-mma-counts %t/fwd-a100/kernels.cubin | FileCheck %s --check-prefix=FWD80 --implicit-check-not="hmma=0"
// RUN: flashfuse-compile %S/compile-ptxas.mlir --target=h100 -o %t/fwd-h100 > /dev/null
// RUN: %sass-mma-counts %t/fwd-h100/kernels.cubin | FileCheck %s --check-prefix=FWD90
// RUN: flashfuse-compile %S/backward-ptxas.mlir --target=a100 -o %t/bwd-a100 > /dev/null
// RUN: %sass-mma-counts %t/bwd-a100/kernels.cubin | FileCheck %s --check-prefix=BWD80
// RUN: flashfuse-compile %S/backward-sm90-ptxas.mlir --target=h100 -o %t/bwd-h100 > /dev/null
// RUN: %sass-mma-counts %t/bwd-h100/kernels.cubin | FileCheck %s --check-prefix=BWD90

// All 27 sm80 forwards (D = 32 ... 256, every variant) use HMMA and no HGMMA.
// FWD80-COUNT-27: {{^}}flash_fwd_sm80_{{[a-z0-9_]+}} hmma={{[1-9][0-9]*}} hgmma=0{{$}}

// On sm_90a: the sm90 forwards (D = 64, 128, 256) use HGMMA only, the
// others (D = 32, 96) stay on HMMA.
// FWD90-COUNT-7: {{^}}flash_fwd_sm80_{{[a-z0-9_]+}} hmma={{[1-9][0-9]*}} hgmma=0{{$}}
// FWD90-COUNT-20: {{^}}flash_fwd_sm90_{{[a-z0-9_]+}} hmma=0 hgmma={{[1-9][0-9]*}}{{$}}

// The backward's main kernels: HMMA (sm80) and HGMMA (sm90); the
// preprocess and postprocess kernels are elementwise.
// BWD80: flash_bwd_post_sm80_bf16_d64_m64n64w4s2 hmma=0 hgmma=0
// BWD80: flash_bwd_pre_sm80_bf16_d64_m64n64w4s2 hmma=0 hgmma=0
// BWD80: flash_bwd_sm80_bf16_d64_m64n64w4s2 hmma={{[1-9][0-9]*}} hgmma=0
// BWD90-COUNT-6: {{^}}flash_bwd_{{pre|post}}_sm90_{{[a-z0-9_]+}} hmma=0 hgmma=0{{$}}
// BWD90-COUNT-3: {{^}}flash_bwd_sm90_{{[a-z0-9_]+}} hmma=0 hgmma={{[1-9][0-9]*}}{{$}}

// REQUIRES: ptxas, cuobjdump
// Where KernelSpec::waitsForOutputAfterSoftmax holds (the 16-bit D = 256
// forward), the overlapped key loop waits for the P·V product in a basic
// block of the wait's own, after the softmax that the product overlaps
// (wgmma::waitGroupThenCopy: a branch on the block index, the same wait on
// both sides, P_j's registers copied after it). ptxas moves a plain wgmma
// wait up to the top of its basic block, which the D = 128 kernel keeps
// (docs/PERF.md runs 361-364): in its SASS the loop's
// WARPGROUP.DEPBAR.LE gsb0, 0x0 comes before the softmax's first MUFU.EX2,
// in the D = 256 kernel's after it.
//
// RUN: flashfuse-opt %s --flash-select-config="target=h100 recipe=sm90ws" --flash-lower-to-gpu="chip=sm_90a kernels-only=true" | FileCheck %s --check-prefix=IR
// RUN: rm -rf %t && flashfuse-compile %s --target=h100 --recipe=sm90ws -o %t | FileCheck %s --check-prefix=PTXAS
// RUN: %cuobjdump -sass -fun flash_fwd_sm90ws_bf16_d256_m128n80w8s2 %t/kernels.cubin | FileCheck %s --check-prefix=D256
// RUN: %cuobjdump -sass -fun flash_fwd_sm90ws_bf16_d128_m128n176w8s2 %t/kernels.cubin | FileCheck %s --check-prefix=D128

// IR-LABEL: gpu.func @flash_fwd_sm90ws_bf16_d256_m128n80w8s2(
// IR: scf.for
// IR: nvvm.wgmma.wait.group.sync.aligned 1
// IR-NOT: nvvm.wgmma.wait.group.sync.aligned 0
// IR: llvm.inline_asm has_side_effects {{.*}}"{\0A.reg .pred p;\0Asetp.ne.b32 p, ${{[0-9]+}}, -1;\0A@p bra.uni FF_WAIT_A;\0Awgmma.wait_group.sync.aligned 0;\0Abra.uni FF_WAIT_J;\0AFF_WAIT_A:\0Awgmma.wait_group.sync.aligned 0;\0AFF_WAIT_J:\0Amov.b32 $0,
// IR-LABEL: gpu.func @flash_fwd_sm90ws_bf16_d128_m128n176w8s2(
// IR-NOT: FF_WAIT
// IR: nvvm.wgmma.wait.group.sync.aligned 1
// IR-NOT: FF_WAIT
// IR: nvvm.wgmma.wait.group.sync.aligned 0

// No spill in either; a serialised wgmma (ptxas C7513) would put a
// WARPGROUP.DEPBAR.LE gsb0, 0x0 after every product, which D256 refuses.
// PTXAS-DAG: ptxas sm_90a flash_fwd_sm90ws_bf16_d256_m128n80w8s2: {{.*}} 0/0 bytes spill stores/loads
// PTXAS-DAG: ptxas sm_90a flash_fwd_sm90ws_bf16_d128_m128n176w8s2: {{.*}} 0/0 bytes spill stores/loads

// D256: WARPGROUP.DEPBAR.LE gsb0, 0x1
// D256-NOT: WARPGROUP.DEPBAR.LE gsb0, 0x0
// D256: MUFU.EX2
// D256: WARPGROUP.DEPBAR.LE gsb0, 0x0

// D128: WARPGROUP.DEPBAR.LE gsb0, 0x1
// D128-NOT: MUFU.EX2
// D128: WARPGROUP.DEPBAR.LE gsb0, 0x0
// D128: MUFU.EX2

func.func @d256(%q: tensor<1x8x1000x256xbf16>) -> tensor<1x8x1000x256xbf16> {
  %o = flash.attention %q, %q, %q
      : tensor<1x8x1000x256xbf16>, tensor<1x8x1000x256xbf16>, tensor<1x8x1000x256xbf16>
      -> tensor<1x8x1000x256xbf16>
  return %o : tensor<1x8x1000x256xbf16>
}

func.func @d128(%q: tensor<1x8x1000x128xbf16>) -> tensor<1x8x1000x128xbf16> {
  %o = flash.attention %q, %q, %q
      : tensor<1x8x1000x128xbf16>, tensor<1x8x1000x128xbf16>, tensor<1x8x1000x128xbf16>
      -> tensor<1x8x1000x128xbf16>
  return %o : tensor<1x8x1000x128xbf16>
}

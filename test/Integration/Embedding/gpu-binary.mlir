// The embedding recipe of docs/EMBEDDING.md, end to end: a stack that keeps
// its own runtime takes FlashFuse's output where the kernels are a
// gpu.binary (PTX) and the host side is gpu.launch_func ops in the kernel
// ABI of docs/KERNEL_ABI.md. No ptxas is needed: the binary holds PTX text
// (format=isa), which the driver JIT-compiles at load time.
//
// The recipe itself, for the sm90 and the sm80 recipes:
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a --flash-kernels-to-ptx | FileCheck %s --check-prefixes=BIN,SM90
// RUN: flashfuse-opt %s --flash-select-config=target=a100 --flash-lower-to-gpu=chip=sm_80 --flash-kernels-to-ptx | FileCheck %s --check-prefixes=BIN,SM80
//
// A stack's own streams: upstream's gpu-async-region turns each launch into
// an asynchronous one on a token chain, which gpu-to-llvm maps to a stream.
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a --gpu-async-region --flash-kernels-to-ptx | FileCheck %s --check-prefix=ASYNC
//
// Down to LLVM IR with upstream's host lowering: the launch becomes calls
// into the mgpu* runtime-wrapper ABI (stream, module load, launch), which a
// stack with its own runtime implements, or replaces by lowering
// gpu.launch_func itself. Bufferized with identity layouts at the function
// boundary, the kernels read and write the caller's buffers: no copies.
// RUN: flashfuse-opt %s --flash-select-config=target=h100 --flash-lower-to-gpu=chip=sm_90a --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --gpu-async-region --flash-kernels-to-ptx --convert-scf-to-cf --expand-strided-metadata --finalize-memref-to-llvm --convert-arith-to-llvm --convert-index-to-llvm --gpu-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVM

// BIN: module attributes {gpu.container_module}
// BIN-LABEL: func.func @gqa_causal
// BIN-NOT: flash.attention
// The operands' buffers, and buffers for O and LSE the stack may place.
// BIN-DAG: bufferization.to_buffer %arg0
// BIN-DAG: bufferization.to_buffer %arg1
// BIN-DAG: bufferization.to_buffer %arg2
// BIN-DAG: memref.alloc() : memref<2x8x256x64xf16>
// BIN-DAG: memref.alloc() : memref<2x8x256xf32>
// One launch; grid (ceil(Sq / block_m), Hq, B), the kernel ABI's params:
// five 1-D memrefs (q, k, v, o, lse), the sizes, the strides, the scalars.
// SM90: gpu.launch_func @flash_kernels::@[[KERNEL:flash_fwd_sm90_f16_d64_[a-z0-9]+_causal]] blocks in (%{{.*}}, %c8{{.*}}, %c2{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %{{.*}} args(%{{.*}} : memref<?xf16>, %{{.*}} : memref<?xf16>, %{{.*}} : memref<?xf16>, %{{.*}} : memref<?xf16>, %{{.*}} : memref<?xf32>, %{{.*}} : i32,
// SM80: gpu.launch_func @flash_kernels::@[[KERNEL:flash_fwd_sm80_f16_d64_[a-z0-9]+_causal]] blocks in
// BIN: bufferization.to_tensor
// BIN: return
// The gpu.module was serialised away: what is left is the binary.
// BIN-NOT: gpu.module
// BIN: gpu.binary @flash_kernels
// SM90-SAME: #nvvm.target<{{.*}}chip = "sm_90a"
// SM90-SAME: .target sm_90a
// SM80-SAME: #nvvm.target<{{.*}}chip = "sm_80"
// SM80-SAME: .target sm_80
// BIN-SAME: .visible .entry [[KERNEL]](
// SM80-SAME: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// SM90-SAME: wgmma.mma_async
// BIN-NOT: gpu.module

// ASYNC-LABEL: func.func @gqa_causal
// ASYNC: %[[T0:.*]] = gpu.wait async
// ASYNC: %[[T1:.*]] = gpu.launch_func async [%[[T0]]] @flash_kernels::
// ASYNC: gpu.wait [%[[T1]]]
// ASYNC: gpu.binary @flash_kernels

// LLVM: @flash_kernels_binary = internal constant
// LLVM-LABEL: define {{.*}} @gqa_causal(
// LLVM-NOT: memrefCopy
// LLVM: %[[STREAM:.*]] = call ptr @mgpuStreamCreate()
// 5 memrefs x 5 fields + 23 scalars = 48 kernel params.
// LLVM: call void @mgpuLaunchKernel(ptr %{{.*}}, i64 2, i64 8, i64 2, i64 {{[0-9]+}}, i64 1, i64 1, i32 {{[0-9]+}}, ptr %[[STREAM]], ptr %{{.*}}, ptr null, i64 48)
// LLVM: call void @mgpuStreamSynchronize(ptr %[[STREAM]])
// LLVM-NOT: memrefCopy
// LLVM: ret
// LLVM: call ptr @mgpuModuleLoadJIT(ptr @flash_kernels_binary

func.func @gqa_causal(%q: tensor<2x8x256x64xf16>, %k: tensor<2x2x256x64xf16>,
                      %v: tensor<2x2x256x64xf16>) -> tensor<2x8x256x64xf16> {
  %o = flash.attention %q, %k, %v {causal = #flash.causal<top_left>}
      : tensor<2x8x256x64xf16>, tensor<2x2x256x64xf16>, tensor<2x2x256x64xf16>
      -> tensor<2x8x256x64xf16>
  return %o : tensor<2x8x256x64xf16>
}

// flash-align-dynamic-shared-memory: a kernel marked
// flash.aligned_dynamic_shared addresses the dynamic shared memory through
// one external zero-length array aligned to 1024 bytes (or the option's
// alignment); the mark is dropped; unmarked kernels keep convert-gpu-to-
// nvvm's internal global, and static shared arrays are never retargeted;
// an alignment that is not a power of two is an error.
// varlen-backward-softcap-ptxas.mlir checks the kernels' PTX.
// RUN: flashfuse-opt %s --pass-pipeline='builtin.module(gpu.module(flash-align-dynamic-shared-memory))' | FileCheck %s
// RUN: flashfuse-opt %s --pass-pipeline='builtin.module(gpu.module(flash-align-dynamic-shared-memory{alignment=128}))' | FileCheck %s --check-prefix=A128
// RUN: not flashfuse-opt %s --pass-pipeline='builtin.module(gpu.module(flash-align-dynamic-shared-memory{alignment=48}))' 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK: llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-NEXT: llvm.mlir.global external @__dynamic_shmem_align1024() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @static_tile()
// CHECK-LABEL: llvm.func @marked()
// CHECK-NOT: flash.aligned_dynamic_shared
// CHECK: llvm.mlir.addressof @__dynamic_shmem_align1024 : !llvm.ptr<3>
// CHECK: llvm.mlir.addressof @static_tile : !llvm.ptr<3>
// CHECK-LABEL: llvm.func @plain()
// CHECK: llvm.mlir.addressof @__dynamic_shmem__0 : !llvm.ptr<3>
// CHECK-LABEL: llvm.func @marked_too()
// CHECK: llvm.mlir.addressof @__dynamic_shmem_align1024 : !llvm.ptr<3>
// A128: llvm.mlir.global external @__dynamic_shmem_align128() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
// A128: llvm.mlir.addressof @__dynamic_shmem_align128 : !llvm.ptr<3>
// BAD: error: flash-align-dynamic-shared-memory: alignment 48 is not a power of two
module attributes {gpu.container_module} {
  gpu.module @m {
    llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
    llvm.mlir.global internal @static_tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i8>
    llvm.func @marked() attributes {flash.aligned_dynamic_shared, nvvm.kernel} {
      %0 = llvm.mlir.addressof @__dynamic_shmem__0 : !llvm.ptr<3>
      %1 = llvm.mlir.addressof @static_tile : !llvm.ptr<3>
      llvm.return
    }
    llvm.func @plain() attributes {nvvm.kernel} {
      %0 = llvm.mlir.addressof @__dynamic_shmem__0 : !llvm.ptr<3>
      llvm.return
    }
    llvm.func @marked_too() attributes {flash.aligned_dynamic_shared, nvvm.kernel} {
      %0 = llvm.mlir.addressof @__dynamic_shmem__0 : !llvm.ptr<3>
      llvm.return
    }
  }
}

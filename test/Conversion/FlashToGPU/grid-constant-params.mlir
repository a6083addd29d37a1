// flash-grid-constant-params: a kernel's trailing tensor-map pointers become
// by-value, grid-constant 128-byte parameters; other kernels are untouched;
// a count that does not fit the signature is an error.
// RUN: flashfuse-opt %s --split-input-file --pass-pipeline='builtin.module(gpu.module(flash-grid-constant-params))' -verify-diagnostics | FileCheck %s

// CHECK-LABEL: llvm.func @tma_kernel
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: i32, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK-NOT: flash.grid_constant_params
// CHECK-LABEL: llvm.func @plain_kernel
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-SAME: attributes {nvvm.kernel}
module attributes {gpu.container_module} {
  gpu.module @m {
    llvm.func @tma_kernel(%p: !llvm.ptr, %n: i32, %a: !llvm.ptr, %b: !llvm.ptr) attributes {flash.grid_constant_params = 2 : i64, nvvm.kernel} {
      llvm.return
    }
    llvm.func @plain_kernel(%p: !llvm.ptr, %q: !llvm.ptr) attributes {nvvm.kernel} {
      llvm.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @+1 {{parameter 1 is to be a by-value tensor map but is not a pointer: 'i32'}}
    llvm.func @not_a_pointer(%p: !llvm.ptr, %n: i32, %a: !llvm.ptr) attributes {flash.grid_constant_params = 2 : i64, nvvm.kernel} {
      llvm.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @m {
    // expected-error @+1 {{'flash.grid_constant_params' = 3 but the kernel has 1 parameters}}
    llvm.func @too_many(%p: !llvm.ptr) attributes {flash.grid_constant_params = 3 : i64, nvvm.kernel} {
      llvm.return
    }
  }
}

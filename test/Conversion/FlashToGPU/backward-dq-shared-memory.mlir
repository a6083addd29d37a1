// The deterministic backward's dQ kernel holds Q and dO tiles next to a
// two-stage ring of K/V tiles of the main kernel's keys; the config fits
// the main kernel only, so where the dQ kernel's tiles pass the chip's
// shared memory a block, its key tiles are narrowed (the ring kept two
// deep), and the launch sizes each kernel by its own layout.
// RUN: flashfuse-opt %s --flash-lower-to-gpu="chip=sm_80 deterministic=true" | FileCheck %s --check-prefix=SM80
// RUN: flashfuse-opt %s --flash-lower-to-gpu="chip=sm_90a deterministic=true" | FileCheck %s --check-prefix=SM90

// D = 128 at 64 x 128 (flash-select-config's choice on the A100): the
// main kernel takes 140288 bytes without its dS tile; the dQ kernel Q and
// dO (34816) and two stages of K and V of 128 keys (139264), 174080 in
// all, past sm_80's 166912: 64 keys (104448). sm_90a holds 128 (232448).
// SM80: gpu.launch_func @flash_kernels::@flash_bwd_sm80_f16_d128_m64n128w8s2_det {{.*}} dynamic_shared_memory_size %c140288_i32
// SM80: gpu.launch_func @flash_kernels::@flash_bwd_dq_sm80_f16_d128_m64n64w4s2_det {{.*}} dynamic_shared_memory_size %c104448_i32
// SM80-DAG: gpu.func @flash_bwd_sm80_f16_d128_m64n128w8s2_det({{.*}}smem = 140288
// SM80-DAG: gpu.func @flash_bwd_dq_sm80_f16_d128_m64n64w4s2_det({{.*}}smem = 104448
// SM90: gpu.launch_func @flash_kernels::@flash_bwd_dq_sm80_f16_d128_m64n128w4s2_det {{.*}} dynamic_shared_memory_size %c174080_i32
// SM90: gpu.func @flash_bwd_dq_sm80_f16_d128_m64n128w4s2_det({{.*}}smem = 174080
func.func @grad_d128(%x: tensor<1x2x256x128xf16>, %lse: tensor<1x2x256xf32>) {
  %g:3 = flash.attention_grad %x, %x, %x, %x, %x, %lse {config = #flash.config<sm80, block_m = 64, block_n = 128, warps = 8, stages = 2>}
      : tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>,
        tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256xf32>
      -> tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>, tensor<1x2x256x128xf16>
  return
}

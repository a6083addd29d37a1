// Every (Sq, Sk) in {(1,1), (17,17), (113,203), (128,64)} with every head
// dim D in {32, 64, 80, 128}, forward and backward, both lowerings, f32,
// against the double-precision reference of flashfuse-numerics. Tolerance:
// 1e-4 of the largest reference value (all statistics and accumulations are
// f32; the observed error is ~1e-7).

// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=1 Sk=1 D=32 seed=2' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=1 Sk=1 D=32 seed=3' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=1 Sk=1 D=32 seed=4' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=1 Sk=1 D=32 seed=5' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=1 Sk=1 D=64 seed=6' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=1 Sk=1 D=64 seed=7' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=1 Sk=1 D=64 seed=8' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=1 Sk=1 D=64 seed=9' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=1 Sk=1 D=80 seed=10' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=1 Sk=1 D=80 seed=11' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=1 Sk=1 D=80 seed=12' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=1 Sk=1 D=80 seed=13' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=1 Sk=1 D=128 seed=14' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=1 Sk=1 D=128 seed=15' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=1 Sk=1 D=128 seed=16' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=1 Sk=1 D=128 seed=17' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 D=32 seed=18' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 D=32 seed=19' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 D=32 seed=20' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 D=32 seed=21' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 D=64 seed=22' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 D=64 seed=23' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 D=64 seed=24' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 D=64 seed=25' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 D=80 seed=26' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 D=80 seed=27' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 D=80 seed=28' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 D=80 seed=29' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 D=128 seed=30' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 D=128 seed=31' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 D=128 seed=32' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=17 Sk=17 D=128 seed=33' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=113 Sk=203 D=32 seed=34' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=113 Sk=203 D=32 seed=35' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=113 Sk=203 D=32 seed=36' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=113 Sk=203 D=32 seed=37' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=113 Sk=203 D=64 seed=38' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=113 Sk=203 D=64 seed=39' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=113 Sk=203 D=64 seed=40' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=113 Sk=203 D=64 seed=41' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=113 Sk=203 D=80 seed=42' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=113 Sk=203 D=80 seed=43' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=113 Sk=203 D=80 seed=44' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=113 Sk=203 D=80 seed=45' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=113 Sk=203 D=128 seed=46' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=113 Sk=203 D=128 seed=47' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=113 Sk=203 D=128 seed=48' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=113 Sk=203 D=128 seed=49' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=128 Sk=64 D=32 seed=50' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=128 Sk=64 D=32 seed=51' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=128 Sk=64 D=32 seed=52' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=128 Sk=64 D=32 seed=53' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=128 Sk=64 D=64 seed=54' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=128 Sk=64 D=64 seed=55' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=128 Sk=64 D=64 seed=56' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=128 Sk=64 D=64 seed=57' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=128 Sk=64 D=80 seed=58' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=128 Sk=64 D=80 seed=59' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=128 Sk=64 D=80 seed=60' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=128 Sk=64 D=80 seed=61' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=fwd B=1 Hq=2 Hkv=1 Sq=128 Sk=64 D=128 seed=62' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=fwd B=1 Hq=2 Hkv=1 Sq=128 Sk=64 D=128 seed=63' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=naive dir=bwd B=1 Hq=2 Hkv=1 Sq=128 Sk=64 D=128 seed=64' | FileCheck %s
// RUN: flashfuse-numerics 'lowering=loops dir=bwd B=1 Hq=2 Hkv=1 Sq=128 Sk=64 D=128 seed=65' | FileCheck %s

// CHECK-NOT: FAIL
// CHECK: PASS: case 1
// CHECK: 1 of 1 cases passed

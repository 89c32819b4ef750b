// RUN: penguin-opt %s -p stablehlo-canonicalize-for-penguin --pass-statistics 2>&1 >/dev/null | filecheck %s
// RUN: penguin-opt %s -p stablehlo-legalize-to-hlo,canonicalize-for-penguin --pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=MHLO
// RUN: penguin-opt %s -p stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-for-penguin --pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=TWICE

// The statistics report, pinned count by count: one program with every rewriter's match
// and near misses. Ops a rewriter creates are seen by the rewriters after it (the
// ResizeNearestGrad lowering's legacy broadcast is the third broadcast rewritten, then
// folded) and never by the rewriter itself (the fused sort is not visited again).

func.func @every_rewriter_matches_and_near_misses(%arg0: tensor<2x4xf32>, %arg1: tensor<2x3xf32>, %arg2: tensor<1x8x8x3xf32>, %arg3: tensor<0x4xf32>) -> (tensor<2x4xi32>, tensor<i32>, tensor<3xi32>, tensor<4x2x3xf32>, tensor<2x2xf32>, tensor<1x4x4x3xf32>, tensor<4xf32>, tensor<0x4xf32>, tensor<2x3xf32>) {
  %iota = stablehlo.iota dim = 1 : tensor<2x4xi32>
  %sorted:2 = "stablehlo.sort"(%arg0, %iota) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %lt = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<2x4xf32>, tensor<2x4xi32>) -> (tensor<2x4xf32>, tensor<2x4xi32>)
  %t = stablehlo.tuple %arg1, %arg1 : tuple<tensor<2x3xf32>, tensor<2x3xf32>>
  %g = stablehlo.get_tuple_element %t[1] : (tuple<tensor<2x3xf32>, tensor<2x3xf32>>) -> tensor<2x3xf32>
  %n = stablehlo.get_dimension_size %g, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>
  %cf = stablehlo.constant dense<[1.5, -2.5, 3.5]> : tensor<3xf32>
  %ci = stablehlo.convert %cf : (tensor<3xf32>) -> tensor<3xi32>
  %cx = stablehlo.convert %arg1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %bc = "stablehlo.broadcast"(%arg1) {broadcast_sizes = array<i64: 4>} : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
  %two = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %bcc = "stablehlo.broadcast"(%two) {broadcast_sizes = array<i64: 2>} : (tensor<2xf32>) -> tensor<2x2xf32>
  %r = stablehlo.custom_call @ResizeNearestGrad(%arg2) : (tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32>
  %e = stablehlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "{a: 1}"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %es = stablehlo.slice %e [0:1, 0:4] : (tensor<2x4xf32>) -> tensor<1x4xf32>
  %er = stablehlo.reshape %es : (tensor<1x4xf32>) -> tensor<4xf32>
  %z = stablehlo.add %arg3, %arg3 : tensor<0x4xf32>
  return %sorted#1, %n, %ci, %bc, %bcc, %r, %er, %z, %cx : tensor<2x4xi32>, tensor<i32>, tensor<3xi32>, tensor<4x2x3xf32>, tensor<2x2xf32>, tensor<1x4x4x3xf32>, tensor<4xf32>, tensor<0x4xf32>, tensor<2x3xf32>
}

// CHECK: warning: AwsNeuronErf: backend_config '{a: 1}' is not alphanumeric
// CHECK: remark: broadcast operand is not a constant; converted anyway
// CHECK-LABEL: stablehlo-canonicalize-for-penguin
// CHECK-NEXT:   fuseIotaSort
// CHECK-NEXT:     (S)      1 matched   - root ops visited
// CHECK-NEXT:     (S)      1 rewritten - ops rewritten
// CHECK-NEXT:   canonicalizeTupleOp
// CHECK-NEXT:     (S)      1 matched   - root ops visited
// CHECK-NEXT:     (S)      1 rewritten - ops rewritten
// CHECK-NEXT:   replaceGetDimensionSize
// CHECK-NEXT:     (S)      1 matched   - root ops visited
// CHECK-NEXT:     (S)      1 rewritten - ops rewritten
// CHECK-NEXT:   replaceConvertsWithConstants
// CHECK-NEXT:     (S)      2 matched   - root ops visited
// CHECK-NEXT:     (S)      1 rewritten - ops rewritten
// CHECK-NEXT:     (S)      1 skipped   - operand-not-constant
// CHECK-NEXT:   replaceInvalidBackendConfigs
// CHECK-NEXT:     (S)      2 matched   - root ops visited
// CHECK-NEXT:     (S)      1 rewritten - ops rewritten
// CHECK-NEXT:     (S)      1 skipped   - not-AwsNeuronErf
// CHECK-NEXT:   lowerResizeNearestGrad
// CHECK-NEXT:     (S)      2 matched   - root ops visited
// CHECK-NEXT:     (S)      1 rewritten - ops rewritten
// CHECK-NEXT:     (S)      1 skipped   - not-ResizeNearestGrad
// CHECK-NEXT:   replaceBroadcastsWithBroadcastInDim
// CHECK-NEXT:     (S)      3 matched   - root ops visited
// CHECK-NEXT:     (S)      3 rewritten - ops rewritten
// CHECK-NEXT:   replaceBroadcastInDimWithConstants
// CHECK-NEXT:     (S)      3 matched   - root ops visited
// CHECK-NEXT:     (S)      2 rewritten - ops rewritten
// CHECK-NEXT:     (S)      1 skipped   - operand-not-constant
// CHECK-NEXT:   removeDeadZeroSizedTensorOps
// CHECK-NEXT:     (S)     20 matched   - root ops visited
// CHECK-NEXT:     (S)      1 rewritten - ops rewritten
// CHECK-NEXT:     (S)     10 skipped   - not-side-effect-free
// CHECK-NEXT:     (S)      9 skipped   - not-zero-sized
// CHECK-NOT: {{.}}

// MHLO: warning: AwsNeuronErf: backend_config '{a: 1}' is not alphanumeric
// MHLO-LABEL: {{^}}canonicalize-for-penguin
// MHLO-NEXT:   fuseIotaSort
// MHLO-NEXT:     (S)      1 matched   - root ops visited
// MHLO-NEXT:     (S)      1 rewritten - ops rewritten
// MHLO-NEXT:   canonicalizeTupleOp
// MHLO-NEXT:     (S)      1 matched   - root ops visited
// MHLO-NEXT:     (S)      1 rewritten - ops rewritten
// MHLO-NEXT:   replaceGetDimensionSize
// MHLO-NEXT:     (S)      1 matched   - root ops visited
// MHLO-NEXT:     (S)      1 rewritten - ops rewritten
// MHLO-NEXT:   replaceConvertsWithConstants
// MHLO-NEXT:     (S)      2 matched   - root ops visited
// MHLO-NEXT:     (S)      1 rewritten - ops rewritten
// MHLO-NEXT:     (S)      1 skipped   - operand-not-constant
// MHLO-NEXT:   replaceInvalidBackendConfigs
// MHLO-NEXT:     (S)      2 matched   - root ops visited
// MHLO-NEXT:     (S)      1 rewritten - ops rewritten
// MHLO-NEXT:     (S)      1 skipped   - not-AwsNeuronErf
// MHLO-NEXT:   lowerResizeNearestGrad
// MHLO-NEXT:     (S)      2 matched   - root ops visited
// MHLO-NEXT:     (S)      1 rewritten - ops rewritten
// MHLO-NEXT:     (S)      1 skipped   - not-ResizeNearestGrad
// MHLO-NEXT:   replaceBroadcastsWithBroadcastInDim
// MHLO-NEXT:     (S)      3 matched   - root ops visited
// MHLO-NEXT:     (S)      3 rewritten - ops rewritten
// MHLO-NEXT:   replaceBroadcastInDimWithConstants
// MHLO-NEXT:     (S)      3 matched   - root ops visited
// MHLO-NEXT:     (S)      2 rewritten - ops rewritten
// MHLO-NEXT:     (S)      1 skipped   - operand-not-constant
// MHLO-NOT: removeDeadZeroSizedTensorOps

// A pass given twice is reported per instance, as mlir-opt does; the second finds the
// first one's output at its fixed point (nothing rewritten).
// TWICE-LABEL: {{^}}stablehlo-canonicalize-for-penguin{{$}}
// TWICE-NEXT:   fuseIotaSort
// TWICE-NEXT:     (S)      1 matched   - root ops visited
// TWICE-NEXT:     (S)      1 rewritten - ops rewritten
// TWICE-LABEL: {{^}}stablehlo-canonicalize-for-penguin #2{{$}}
// TWICE-NEXT:   fuseIotaSort
// TWICE-NEXT:     (S)      1 matched   - root ops visited
// TWICE-NEXT:     (S)      0 rewritten - ops rewritten
// TWICE-NEXT:     (S)      1 skipped   - not-two-operands
// TWICE-NOT:  {{[1-9][0-9]*}} rewritten

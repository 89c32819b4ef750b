// RUN: penguin-opt %s -p 'stablehlo-canonicalize-for-penguin{broadcast-num-elements-to-fold=6 resize-nearest-grad-mode=sum all-functions=true}' --split-input-file | filecheck %s

// Budget boundary: 6 elements fold, 8 do not.
// CHECK-LABEL: func.func @main
// CHECK-DAG:     stablehlo.constant dense<7> : tensor<2x3xi32>
// CHECK-DAG:     stablehlo.broadcast_in_dim %{{.*}}, dims = [] : (tensor<i32>) -> tensor<2x4xi32>
func.func @main() -> (tensor<2x3xi32>, tensor<2x4xi32>) {
  %c = stablehlo.constant dense<7> : tensor<i32>
  %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2x3xi32>
  %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2x4xi32>
  return %0, %1 : tensor<2x3xi32>, tensor<2x4xi32>
}

// -----

// resize-nearest-grad-mode=sum: the window sum, no division; all-functions reaches @g.
// CHECK-LABEL: func.func private @g
// CHECK:         "stablehlo.reduce_window"
// CHECK-NOT:     custom_call
// CHECK-LABEL: func.func @main
// CHECK:         %[[R:.*]] = "stablehlo.reduce_window"
// CHECK-SAME:      window_dimensions = array<i64: 3, 2>
// CHECK-NOT:     stablehlo.divide
// CHECK:         return %[[R]]
func.func private @g(%arg0: tensor<2x2xf32>) -> tensor<1x1xf32> {
  %0 = stablehlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<2x2xf32>) -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}
func.func @main(%arg0: tensor<6x4xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<6x4xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

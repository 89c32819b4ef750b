// RUN: penguin-opt %s -p 'stablehlo-canonicalize-for-penguin{broadcast-num-elements-to-fold=6 resize-nearest-grad-mode=sum all-functions=true}' --split-input-file | filecheck %s

// Budget boundary: 6 elements fold, 8 do not.
// CHECK-LABEL: func.func @broadcast_num_elements_to_fold_6_folds_8_stays
// CHECK-DAG:     stablehlo.constant dense<7> : tensor<2x3xi32>
// CHECK-DAG:     stablehlo.broadcast_in_dim %{{.*}}, dims = [] : (tensor<i32>) -> tensor<2x4xi32>
func.func @broadcast_num_elements_to_fold_6_folds_8_stays() -> (tensor<2x3xi32>, tensor<2x4xi32>) {
  %c = stablehlo.constant dense<7> : tensor<i32>
  %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2x3xi32>
  %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2x4xi32>
  return %0, %1 : tensor<2x3xi32>, tensor<2x4xi32>
}

// -----

// resize-nearest-grad-mode=sum: the window sum, no division; all-functions=true lowers
// the private @private_also_lowered too.
// CHECK-LABEL: func.func private @private_also_lowered
// CHECK:         "stablehlo.reduce_window"
// CHECK-NOT:     custom_call
// CHECK-LABEL: func.func @lower_resize_nearest_grad_sum_mode_no_divide
// CHECK:         %[[R:.*]] = "stablehlo.reduce_window"
// CHECK-SAME:      window_dimensions = array<i64: 3, 2>
// CHECK-NOT:     stablehlo.divide
// CHECK:         return %[[R]]
func.func private @private_also_lowered(%arg0: tensor<2x2xf32>) -> tensor<1x1xf32> {
  %0 = stablehlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<2x2xf32>) -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}
func.func @lower_resize_nearest_grad_sum_mode_no_divide(%arg0: tensor<6x4xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<6x4xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

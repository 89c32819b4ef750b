// RUN: penguin-opt %s -p canonicalize-for-penguin --split-input-file | filecheck %s
// RUN: penguin-opt %s -p canonicalize-for-penguin --split-input-file | penguin-opt -p canonicalize-for-penguin --split-input-file | filecheck %s

// fuseIotaSort on MHLO.
// CHECK-LABEL: func.func @fuse_iota_sort_mhlo
// CHECK-NOT:     mhlo.iota
// CHECK:         %[[S:.*]]:2 = "mhlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}>
// CHECK:         (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xi32>)
// CHECK:         return %[[S]]#1
func.func @fuse_iota_sort_mhlo(%arg0: tensor<8xf32>) -> tensor<8xi32> {
  %0 = "mhlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<8xi32>
  %1:2 = "mhlo.sort"(%arg0, %0) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %2 = mhlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    mhlo.return %2 : tensor<i1>
  }) : (tensor<8xf32>, tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>)
  return %1#1 : tensor<8xi32>
}

// -----

// canonicalizeTupleOp on MHLO.
// CHECK-LABEL: func.func @canonicalize_tuple_op_mhlo
// CHECK-NOT:     mhlo.tuple
// CHECK:         return %arg1, %arg0
func.func @canonicalize_tuple_op_mhlo(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %t = mhlo.tuple %arg0, %arg1 : tuple<tensor<3xf32>, tensor<3xf32>>
  %a = mhlo.get_tuple_element %t[1] : (tuple<tensor<3xf32>, tensor<3xf32>>) -> tensor<3xf32>
  %b = mhlo.get_tuple_element %t[0] : (tuple<tensor<3xf32>, tensor<3xf32>>) -> tensor<3xf32>
  return %a, %b : tensor<3xf32>, tensor<3xf32>
}

// -----

// replaceGetDimensionSize on MHLO; the dynamic dim stays.
// CHECK-LABEL: func.func @replace_get_dimension_size_mhlo_dynamic_dim
// CHECK-DAG:     mhlo.constant dense<7> : tensor<i32>
// CHECK-DAG:     "mhlo.get_dimension_size"(%arg0) <{dimension = 0 : i64}>
func.func @replace_get_dimension_size_mhlo_dynamic_dim(%arg0: tensor<?x7xf32>) -> (tensor<i32>, tensor<i32>) {
  %0 = "mhlo.get_dimension_size"(%arg0) <{dimension = 0 : i64}> : (tensor<?x7xf32>) -> tensor<i32>
  %1 = "mhlo.get_dimension_size"(%arg0) <{dimension = 1 : i64}> : (tensor<?x7xf32>) -> tensor<i32>
  return %0, %1 : tensor<i32>, tensor<i32>
}

// -----

// replaceConvertsWithConstants on MHLO: i32 -> ui8 wraps, f64 -> f16 rounds once.
// CHECK-LABEL: func.func @replace_converts_with_constants_mhlo_i32_ui8_wraps
// CHECK-DAG:     mhlo.constant dense<[44, 255]> : tensor<2xui8>
// CHECK-DAG:     mhlo.constant dense<1.000980e+00> : tensor<f16>
// CHECK-NOT:     mhlo.convert
func.func @replace_converts_with_constants_mhlo_i32_ui8_wraps() -> (tensor<2xui8>, tensor<f16>) {
  %c = mhlo.constant dense<[300, -1]> : tensor<2xi32>
  %0 = mhlo.convert %c : (tensor<2xi32>) -> tensor<2xui8>
  %d = mhlo.constant dense<1.000732421875000001> : tensor<f64>
  %1 = mhlo.convert %d : (tensor<f64>) -> tensor<f16>
  return %0, %1 : tensor<2xui8>, tensor<f16>
}

// -----

// replaceInvalidBackendConfigs on MHLO: api_version and aliasing are kept.
// CHECK-LABEL: func.func @replace_invalid_backend_configs_mhlo_api_version_aliasing
// CHECK:         mhlo.custom_call @AwsNeuronErf(%arg0) {api_version = 2 : i32, backend_config = "None", output_operand_aliases = [#mhlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>]}
func.func @replace_invalid_backend_configs_mhlo_api_version_aliasing(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mhlo.custom_call @AwsNeuronErf(%arg0) {api_version = 2 : i32, backend_config = "{a: 1}", has_side_effect = true, output_operand_aliases = [#mhlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>]} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// replaceInvalidBackendConfigs keeps the discardable attributes (sharding, frontend
// attributes): the rebuilt call is the same call on every device.
// CHECK-LABEL: func.func @replace_invalid_backend_configs_keeps_sharding
// CHECK:         mhlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "None", mhlo.frontend_attributes = {_xla_stream = "1"}, mhlo.sharding = "{replicated}"}
func.func @replace_invalid_backend_configs_keeps_sharding(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mhlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "{mode: 1}", has_side_effect = true, mhlo.frontend_attributes = {_xla_stream = "1"}, mhlo.sharding = "{replicated}"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// lowerResizeNearestGrad: a dimension empty on both sides has factor 1 (an empty batch).
// CHECK-LABEL: func.func @lower_resize_nearest_grad_empty_batch
// CHECK:         "mhlo.reduce_window"
// CHECK-SAME:      window_dimensions = dense<[1, 2]> : tensor<2xi64>, window_strides = dense<[1, 2]> : tensor<2xi64>
// CHECK:         mhlo.divide
// CHECK-NOT:     ResizeNearestGrad
func.func @lower_resize_nearest_grad_empty_batch(%arg0: tensor<0x8xf32>) -> tensor<0x4xf32> {
  %0 = mhlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<0x8xf32>) -> tensor<0x4xf32>
  return %0 : tensor<0x4xf32>
}

// -----

// lowerResizeNearestGrad on MHLO (NHWC, scale 2x2).
// CHECK-LABEL: func.func @lower_resize_nearest_grad_mhlo_nhwc_scale_2x2
// CHECK:         %[[R:.*]] = "mhlo.reduce_window"
// CHECK-SAME:      window_dimensions = dense<[1, 2, 2, 1]> : tensor<4xi64>
// CHECK-SAME:      window_strides = dense<[1, 2, 2, 1]> : tensor<4xi64>
// CHECK:           mhlo.add
// CHECK:         %[[V:.*]] = mhlo.constant dense<4.000000e+00> : tensor<1x2x2x3xf32>
// CHECK:         mhlo.divide %[[R]], %[[V]]
func.func @lower_resize_nearest_grad_mhlo_nhwc_scale_2x2(%arg0: tensor<1x4x4x3xf32>) -> tensor<1x2x2x3xf32> {
  %0 = mhlo.custom_call @ResizeNearestGrad(%arg0) {backend_config = "00"} : (tensor<1x4x4x3xf32>) -> tensor<1x2x2x3xf32>
  return %0 : tensor<1x2x2x3xf32>
}

// -----

// replaceBroadcastsWithBroadcastInDim then replaceBroadcastInDimWithConstants on MHLO.
// CHECK-LABEL: func.func @replace_broadcasts_then_broadcast_in_dim_with_constants_mhlo
// CHECK-DAG:     "mhlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = dense<[1, 2]> : tensor<2xi64>}>
// CHECK-DAG:     mhlo.constant dense<{{\[\[}}1, 2], [1, 2], [1, 2]]> : tensor<3x2xi32>
// CHECK-NOT:     "mhlo.broadcast"
func.func @replace_broadcasts_then_broadcast_in_dim_with_constants_mhlo(%arg0: tensor<2x3xf32>) -> (tensor<4x2x3xf32>, tensor<3x2xi32>) {
  %0 = "mhlo.broadcast"(%arg0) <{broadcast_sizes = dense<4> : tensor<1xi64>}> : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
  %c = mhlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = "mhlo.broadcast"(%c) <{broadcast_sizes = dense<3> : tensor<1xi64>}> : (tensor<2xi32>) -> tensor<3x2xi32>
  return %0, %1 : tensor<4x2x3xf32>, tensor<3x2xi32>
}

// -----

// The MHLO pass has no removeDeadZeroSizedTensorOps: a zero-sized add stays.
// CHECK-LABEL: func.func @remove_dead_zero_sized_tensor_ops_not_in_mhlo_pass
// CHECK:         mhlo.add
func.func @remove_dead_zero_sized_tensor_ops_not_in_mhlo_pass(%arg0: tensor<0x4xf32>) -> tensor<0x4xf32> {
  %0 = mhlo.add %arg0, %arg0 : tensor<0x4xf32>
  return %0 : tensor<0x4xf32>
}

// -----

// No-match cases on MHLO: sort operand 1 is an argument; GTE of an argument; convert of a
// non-constant; AwsNeuronErf with a valid config; other custom calls; broadcast_in_dim of
// a non-constant.
// CHECK-LABEL: func.func @no_match_mhlo_every_rewriter
// CHECK:         "mhlo.sort"(%arg0, %arg1)
// CHECK:         mhlo.get_tuple_element %arg2[0]
// CHECK:         mhlo.convert %arg0
// CHECK:         mhlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "abc"}
// CHECK:         mhlo.custom_call @ResizeNearestGradX(%arg0)
// CHECK:         "mhlo.broadcast_in_dim"(%arg0)
func.func @no_match_mhlo_every_rewriter(%arg0: tensor<4xf32>, %arg1: tensor<4xi32>, %arg2: tuple<tensor<4xf32>>) -> (tensor<4xi32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>) {
  %1:2 = "mhlo.sort"(%arg0, %arg1) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %2 = mhlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    mhlo.return %2 : tensor<i1>
  }) : (tensor<4xf32>, tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>)
  %g = mhlo.get_tuple_element %arg2[0] : (tuple<tensor<4xf32>>) -> tensor<4xf32>
  %c = mhlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xi32>
  %e = mhlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "abc"} : (tensor<4xf32>) -> tensor<4xf32>
  %r = mhlo.custom_call @ResizeNearestGradX(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  %b = "mhlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = dense<1> : tensor<1xi64>}> : (tensor<4xf32>) -> tensor<2x4xf32>
  return %1#1, %g, %c, %e, %r, %b : tensor<4xi32>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<4xf32>, tensor<2x4xf32>
}

// -----

// Nested regions on MHLO: a convert(constant) inside a case branch folds.
// CHECK-LABEL: func.func @replace_converts_with_constants_mhlo_nested_in_case_branch
// CHECK:         "mhlo.case"
// CHECK:           mhlo.constant dense<3> : tensor<i32>
// CHECK-NOT:       mhlo.convert
func.func @replace_converts_with_constants_mhlo_nested_in_case_branch(%arg0: tensor<i32>) -> tensor<i32> {
  %0 = "mhlo.case"(%arg0) ({
    %c = mhlo.constant dense<3.7> : tensor<f32>
    %1 = mhlo.convert %c : (tensor<f32>) -> tensor<i32>
    mhlo.return %1 : tensor<i32>
  }, {
    mhlo.return %arg0 : tensor<i32>
  }) : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}

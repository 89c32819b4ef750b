// RUN: penguin-opt %s -p stablehlo-canonicalize-for-penguin --split-input-file | filecheck %s
// RUN: penguin-opt %s -p stablehlo-canonicalize-for-penguin --split-input-file | penguin-opt -p stablehlo-canonicalize-for-penguin --split-input-file | filecheck %s

// fuseIotaSort: argsort drops its iota operand; results and users are unchanged.
// CHECK-LABEL: func.func @fuse_iota_sort_argsort_drops_iota_operand
// CHECK-NOT:     stablehlo.iota
// CHECK:         %[[S:.*]]:2 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64, is_stable = true}>
// CHECK:         (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xi32>)
// CHECK:         return %[[S]]#1
func.func @fuse_iota_sort_argsort_drops_iota_operand(%arg0: tensor<8xf32>) -> tensor<8xi32> {
  %0 = stablehlo.iota dim = 0 : tensor<8xi32>
  %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %2 = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  }) : (tensor<8xf32>, tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>)
  return %1#1 : tensor<8xi32>
}

// -----

// fuseIotaSort: a shared iota stays for its other user.
// CHECK-LABEL: func.func @fuse_iota_sort_shared_iota_other_user
// CHECK:         %[[I:.*]] = stablehlo.iota dim = 1 : tensor<2x5xi32>
// CHECK:         "stablehlo.sort"(%arg0) <{dimension = 1 : i64
// CHECK:         return %{{.*}}#1, %[[I]]
func.func @fuse_iota_sort_shared_iota_other_user(%arg0: tensor<2x5xf32>) -> (tensor<2x5xi32>, tensor<2x5xi32>) {
  %0 = stablehlo.iota dim = 1 : tensor<2x5xi32>
  %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %2 = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  }) : (tensor<2x5xf32>, tensor<2x5xi32>) -> (tensor<2x5xf32>, tensor<2x5xi32>)
  return %1#1, %0 : tensor<2x5xi32>, tensor<2x5xi32>
}

// -----

// fuseIotaSort no-match: the iota runs along another dimension than the sort.
// CHECK-LABEL: func.func @fuse_iota_sort_no_match_iota_along_other_dimension
// CHECK:         stablehlo.iota dim = 0
// CHECK:         "stablehlo.sort"(%arg0, %{{.*}}) <{dimension = 1 : i64
func.func @fuse_iota_sort_no_match_iota_along_other_dimension(%arg0: tensor<2x5xf32>) -> tensor<2x5xi32> {
  %0 = stablehlo.iota dim = 0 : tensor<2x5xi32>
  %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %2 = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  }) : (tensor<2x5xf32>, tensor<2x5xi32>) -> (tensor<2x5xf32>, tensor<2x5xi32>)
  return %1#1 : tensor<2x5xi32>
}

// -----

// fuseIotaSort no-match: operand 1 is not an iota; three operands.
// CHECK-LABEL: func.func @fuse_iota_sort_no_match_operand_1_not_iota_or_three_operands
// CHECK:         "stablehlo.sort"(%arg0, %arg1)
// CHECK:         "stablehlo.sort"(%arg0, %arg1, %{{.*}})
func.func @fuse_iota_sort_no_match_operand_1_not_iota_or_three_operands(%arg0: tensor<4xf32>, %arg1: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %1:2 = "stablehlo.sort"(%arg0, %arg1) <{dimension = 0 : i64, is_stable = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %2 = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  }) : (tensor<4xf32>, tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>)
  %i = stablehlo.iota dim = 0 : tensor<4xi32>
  %3:3 = "stablehlo.sort"(%arg0, %arg1, %i) <{dimension = 0 : i64, is_stable = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>, %e: tensor<i32>, %f: tensor<i32>):
    %2 = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  }) : (tensor<4xf32>, tensor<4xi32>, tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xi32>)
  return %1#1, %3#2 : tensor<4xi32>, tensor<4xi32>
}

// -----

// canonicalizeTupleOp: several GTE users fold to the tuple operands; the tuple dies.
// CHECK-LABEL: func.func @canonicalize_tuple_op_several_gte_users_fold
// CHECK-NOT:     stablehlo.tuple
// CHECK-NOT:     get_tuple_element
// CHECK:         %[[A:.*]] = stablehlo.add %arg1, %arg0
// CHECK:         return %[[A]], %arg0
func.func @canonicalize_tuple_op_several_gte_users_fold(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %t = stablehlo.tuple %arg0, %arg1 : tuple<tensor<3xf32>, tensor<3xf32>>
  %a = stablehlo.get_tuple_element %t[1] : (tuple<tensor<3xf32>, tensor<3xf32>>) -> tensor<3xf32>
  %b = stablehlo.get_tuple_element %t[0] : (tuple<tensor<3xf32>, tensor<3xf32>>) -> tensor<3xf32>
  %c = stablehlo.get_tuple_element %t[0] : (tuple<tensor<3xf32>, tensor<3xf32>>) -> tensor<3xf32>
  %s = stablehlo.add %a, %b : tensor<3xf32>
  return %s, %c : tensor<3xf32>, tensor<3xf32>
}

// -----

// canonicalizeTupleOp: nested tuples fold through, all dead tuples go.
// CHECK-LABEL: func.func @canonicalize_tuple_op_nested_tuples_fold_through
// CHECK-NOT:     tuple
// CHECK:         return %arg1
func.func @canonicalize_tuple_op_nested_tuples_fold_through(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
  %in = stablehlo.tuple %arg0, %arg1 : tuple<tensor<f32>, tensor<f32>>
  %out = stablehlo.tuple %in, %arg0 : tuple<tuple<tensor<f32>, tensor<f32>>, tensor<f32>>
  %g0 = stablehlo.get_tuple_element %out[0] : (tuple<tuple<tensor<f32>, tensor<f32>>, tensor<f32>>) -> tuple<tensor<f32>, tensor<f32>>
  %g1 = stablehlo.get_tuple_element %g0[1] : (tuple<tensor<f32>, tensor<f32>>) -> tensor<f32>
  return %g1 : tensor<f32>
}

// -----

// canonicalizeTupleOp no-match: GTE of a function argument; a tuple still returned stays.
// CHECK-LABEL: func.func @canonicalize_tuple_op_no_match_gte_of_argument_returned_tuple
// CHECK:         stablehlo.get_tuple_element %arg0[0]
// CHECK:         stablehlo.tuple
func.func @canonicalize_tuple_op_no_match_gte_of_argument_returned_tuple(%arg0: tuple<tensor<f32>>, %arg1: tensor<f32>) -> (tensor<f32>, tuple<tensor<f32>>, tensor<f32>) {
  %g = stablehlo.get_tuple_element %arg0[0] : (tuple<tensor<f32>>) -> tensor<f32>
  %t = stablehlo.tuple %arg1 : tuple<tensor<f32>>
  %h = stablehlo.get_tuple_element %t[0] : (tuple<tensor<f32>>) -> tensor<f32>
  return %g, %t, %h : tensor<f32>, tuple<tensor<f32>>, tensor<f32>
}

// -----

// replaceGetDimensionSize: static dims fold to an i32 constant; dynamic dims stay.
// CHECK-LABEL: func.func @replace_get_dimension_size_static_dim_folds_dynamic_stays
// CHECK-DAG:     %[[C:.*]] = stablehlo.constant dense<7> : tensor<i32>
// CHECK-DAG:     %[[D:.*]] = stablehlo.get_dimension_size %arg0, dim = 0
// CHECK:         return %[[D]], %[[C]]
func.func @replace_get_dimension_size_static_dim_folds_dynamic_stays(%arg0: tensor<?x7xf32>) -> (tensor<i32>, tensor<i32>) {
  %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x7xf32>) -> tensor<i32>
  %1 = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<?x7xf32>) -> tensor<i32>
  return %0, %1 : tensor<i32>, tensor<i32>
}

// -----

// replaceGetDimensionSize inside a while body (nested region).
// CHECK-LABEL: func.func @replace_get_dimension_size_nested_in_while
// CHECK:         stablehlo.while
// CHECK:           stablehlo.constant dense<5> : tensor<i32>
// CHECK-NOT:       get_dimension_size
func.func @replace_get_dimension_size_nested_in_while(%arg0: tensor<5xf32>, %arg1: tensor<i32>) -> tensor<i32> {
  %0 = stablehlo.while(%iter = %arg1) : tensor<i32>
    cond {
      %n = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<5xf32>) -> tensor<i32>
      %p = stablehlo.compare LT, %iter, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %iter, %one : tensor<i32>
      stablehlo.return %next : tensor<i32>
    }
  return %0 : tensor<i32>
}

// -----

// replaceConvertsWithConstants: f32 -> i32 truncates toward zero; the source stays.
// CHECK-LABEL: func.func @replace_converts_with_constants_f32_i32_truncates_toward_zero
// CHECK-DAG:     stablehlo.constant dense<[1, -2, 0]> : tensor<3xi32>
// CHECK-DAG:     stablehlo.constant dense<[1.500000e+00, -2.700000e+00, 0.000000e+00]> : tensor<3xf32>
// CHECK-NOT:     stablehlo.convert
func.func @replace_converts_with_constants_f32_i32_truncates_toward_zero() -> tensor<3xi32> {
  %c = stablehlo.constant dense<[1.5, -2.7, 0.0]> : tensor<3xf32>
  %0 = stablehlo.convert %c : (tensor<3xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// replaceConvertsWithConstants: f32 -> bf16 rounds once, to nearest even; i1 -> f32.
// CHECK-LABEL: func.func @replace_converts_with_constants_f32_bf16_rounds_once_i1_f32
// CHECK-DAG:     stablehlo.constant dense<[1.000000e+00, 1.007810e+00]> : tensor<2xbf16>
// CHECK-DAG:     stablehlo.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>
func.func @replace_converts_with_constants_f32_bf16_rounds_once_i1_f32() -> (tensor<2xbf16>, tensor<2xf32>) {
  %c = stablehlo.constant dense<[1.00390625, 1.005859375]> : tensor<2xf32>
  %0 = stablehlo.convert %c : (tensor<2xf32>) -> tensor<2xbf16>
  %b = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %1 = stablehlo.convert %b : (tensor<2xi1>) -> tensor<2xf32>
  return %0, %1 : tensor<2xbf16>, tensor<2xf32>
}

// -----

// replaceConvertsWithConstants no-match: the operand is not a constant.
// CHECK-LABEL: func.func @replace_converts_with_constants_no_match_operand_not_constant
// CHECK:         stablehlo.convert %arg0
func.func @replace_converts_with_constants_no_match_operand_not_constant(%arg0: tensor<3xf32>) -> tensor<3xi32> {
  %0 = stablehlo.convert %arg0 : (tensor<3xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// replaceInvalidBackendConfigs: a structured AwsNeuronErf config becomes "None".
// CHECK-LABEL: func.func @replace_invalid_backend_configs_structured_erf_config_becomes_none
// CHECK:         stablehlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "None"}
// CHECK:         stablehlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "00"}
// CHECK:         stablehlo.custom_call @Other(%arg0) {backend_config = "{x: 1}"}
func.func @replace_invalid_backend_configs_structured_erf_config_becomes_none(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = stablehlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "{mode: 1}", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = stablehlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "00"} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = stablehlo.custom_call @Other(%arg0) {backend_config = "{x: 1}"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// replaceInvalidBackendConfigs keeps the discardable attributes (sharding, frontend
// attributes): the rebuilt call is the same call on every device.
// CHECK-LABEL: func.func @replace_invalid_backend_configs_keeps_sharding
// CHECK:         stablehlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "None", mhlo.frontend_attributes = {_xla_stream = "1"}, mhlo.sharding = "{replicated}"}
func.func @replace_invalid_backend_configs_keeps_sharding(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "{mode: 1}", has_side_effect = true, mhlo.frontend_attributes = {_xla_stream = "1"}, mhlo.sharding = "{replicated}"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// lowerResizeNearestGrad (torch-xla form: transposed operand, config "00"):
// reduce_window sum over 2x2 tiles divided by the volume, whose legacy broadcast became
// broadcast_in_dim and then a constant (under budget).
// CHECK-LABEL: func.func @lower_resize_nearest_grad_torch_xla_transposed_mean
// CHECK:         %[[T:.*]] = stablehlo.transpose %arg0
// CHECK-DAG:     %[[Z:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK:         %[[R:.*]] = "stablehlo.reduce_window"(%[[T]], %[[Z]])
// CHECK-SAME:      padding = dense<0> : tensor<4x2xi64>
// CHECK-SAME:      window_dimensions = array<i64: 1, 2, 2, 1>
// CHECK-SAME:      window_strides = array<i64: 1, 2, 2, 1>
// CHECK:           stablehlo.add
// CHECK:         %[[V:.*]] = stablehlo.constant dense<4.000000e+00> : tensor<1x3x2x2xf32>
// CHECK:         %[[D:.*]] = stablehlo.divide %[[R]], %[[V]]
// CHECK-NOT:     custom_call
// CHECK:         stablehlo.transpose %[[D]]
func.func @lower_resize_nearest_grad_torch_xla_transposed_mean(%arg0: tensor<1x2x4x6xf32>) -> tensor<1x2x3x2xf32> {
  %t = stablehlo.transpose %arg0, dims = [0, 3, 2, 1] : (tensor<1x2x4x6xf32>) -> tensor<1x6x4x2xf32>
  %0 = stablehlo.custom_call @ResizeNearestGrad(%t) {backend_config = "00"} : (tensor<1x6x4x2xf32>) -> tensor<1x3x2x2xf32>
  %r = stablehlo.transpose %0, dims = [0, 3, 2, 1] : (tensor<1x3x2x2xf32>) -> tensor<1x2x2x3xf32>
  %s = stablehlo.reshape %r : (tensor<1x2x2x3xf32>) -> tensor<1x2x3x2xf32>
  return %s : tensor<1x2x3x2xf32>
}

// -----

// lowerResizeNearestGrad: the same type pair twice, then the same operand type to another
// result type; each op gets its own pair's window and volume.
// CHECK-LABEL: func.func @lower_resize_nearest_grad_same_pair_twice_then_another_result
// CHECK:         "stablehlo.reduce_window"(%arg0,
// CHECK-SAME:      window_dimensions = array<i64: 2, 2>
// CHECK:         stablehlo.constant dense<4.000000e+00> : tensor<2x2xf32>
// CHECK:         "stablehlo.reduce_window"(%arg0,
// CHECK-SAME:      window_dimensions = array<i64: 2, 2>
// CHECK:         stablehlo.constant dense<4.000000e+00> : tensor<2x2xf32>
// CHECK:         "stablehlo.reduce_window"(%arg0,
// CHECK-SAME:      window_dimensions = array<i64: 1, 2>
// CHECK-SAME:      window_strides = array<i64: 1, 2>
// CHECK:         stablehlo.constant dense<2.000000e+00> : tensor<4x2xf32>
// CHECK-NOT:     custom_call
func.func @lower_resize_nearest_grad_same_pair_twice_then_another_result(%arg0: tensor<4x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<4x2xf32>) {
  %0 = stablehlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<4x4xf32>) -> tensor<2x2xf32>
  %1 = stablehlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<4x4xf32>) -> tensor<2x2xf32>
  %2 = stablehlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<4x4xf32>) -> tensor<4x2xf32>
  return %0, %1, %2 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<4x2xf32>
}

// -----

// lowerResizeNearestGrad with resize-nearest-grad-mode=sum is checked in
// stablehlo_canonicalize_for_penguin_options.mlir.

// replaceBroadcastsWithBroadcastInDim: a non-constant operand converts too (a remark).
// CHECK-LABEL: func.func @replace_broadcasts_with_broadcast_in_dim_non_constant_operand
// CHECK:         stablehlo.broadcast_in_dim %arg0, dims = [2, 3] : (tensor<2x3xf32>) -> tensor<4x5x2x3xf32>
// CHECK-NOT:     stablehlo.broadcast %
func.func @replace_broadcasts_with_broadcast_in_dim_non_constant_operand(%arg0: tensor<2x3xf32>) -> tensor<4x5x2x3xf32> {
  %0 = stablehlo.broadcast %arg0, sizes = [4, 5] : (tensor<2x3xf32>) -> tensor<4x5x2x3xf32>
  return %0 : tensor<4x5x2x3xf32>
}

// -----

// broadcast(constant) -> broadcast_in_dim(constant) -> constant, in one run; the
// source constant is erased once unused.
// CHECK-LABEL: func.func @replace_broadcasts_then_broadcast_in_dim_with_constants_one_run
// CHECK-NEXT:    %[[C:.*]] = stablehlo.constant dense<{{\[\[}}1, 2], [1, 2], [1, 2]]> : tensor<3x2xi32>
// CHECK-NEXT:    return %[[C]]
func.func @replace_broadcasts_then_broadcast_in_dim_with_constants_one_run() -> tensor<3x2xi32> {
  %c = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %0 = stablehlo.broadcast %c, sizes = [3] : (tensor<2xi32>) -> tensor<3x2xi32>
  return %0 : tensor<3x2xi32>
}

// -----

// replaceBroadcastInDimWithConstants: a transposing broadcast_in_dim of a bf16 constant;
// the constant has another user, so it stays.
// CHECK-LABEL: func.func @replace_broadcast_in_dim_with_constants_transposing_bf16_source_kept
// CHECK-DAG:     stablehlo.constant dense<{{\[\[\[}}1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]]> : tensor<1x3x2xbf16>
// CHECK-DAG:     %[[SRC:.*]] = stablehlo.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xbf16>
// CHECK:         return {{.*}}, %[[SRC]]
func.func @replace_broadcast_in_dim_with_constants_transposing_bf16_source_kept() -> (tensor<1x3x2xbf16>, tensor<2x3xbf16>) {
  %c = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xbf16>
  %0 = stablehlo.broadcast_in_dim %c, dims = [2, 1] : (tensor<2x3xbf16>) -> tensor<1x3x2xbf16>
  return %0, %c : tensor<1x3x2xbf16>, tensor<2x3xbf16>
}

// -----

// replaceBroadcastInDimWithConstants: a splat stays a splat; a dynamic result is skipped.
// CHECK-LABEL: func.func @replace_broadcast_in_dim_with_constants_splat_stays_splat_dynamic_skipped
// CHECK:         stablehlo.constant dense<true> : tensor<4x4xi1>
// CHECK:         stablehlo.dynamic_broadcast_in_dim
func.func @replace_broadcast_in_dim_with_constants_splat_stays_splat_dynamic_skipped(%arg0: tensor<2xindex>) -> (tensor<4x4xi1>, tensor<?x?xi1>) {
  %c = stablehlo.constant dense<true> : tensor<i1>
  %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i1>) -> tensor<4x4xi1>
  %1 = stablehlo.dynamic_broadcast_in_dim %c, %arg0, dims = [] : (tensor<i1>, tensor<2xindex>) -> tensor<?x?xi1>
  return %0, %1 : tensor<4x4xi1>, tensor<?x?xi1>
}

// -----

// removeDeadZeroSizedTensorOps: a zero-element add becomes an empty constant.
// CHECK-LABEL: func.func @remove_dead_zero_sized_tensor_ops_zero_element_add_becomes_empty_constant
// CHECK:         %[[E:.*]] = stablehlo.constant dense<> : tensor<0x4xf32>
// CHECK-NOT:     stablehlo.add
// CHECK:         return %[[E]]
func.func @remove_dead_zero_sized_tensor_ops_zero_element_add_becomes_empty_constant(%arg0: tensor<0x4xf32>) -> tensor<0x4xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<0x4xf32>
  return %0 : tensor<0x4xf32>
}

// -----

// removeDeadZeroSizedTensorOps erases ops the earlier rewriters visited and left alone
// (a convert and a broadcast_in_dim of arguments), and a zero-sized reduce with a convert
// in its body: each becomes an empty constant.
// CHECK-LABEL: func.func @remove_dead_zero_sized_tensor_ops_erases_ops_earlier_rewriters_left
// CHECK-DAG:     %[[C:.*]] = stablehlo.constant dense<> : tensor<0x4xi32>
// CHECK-DAG:     %[[B:.*]] = stablehlo.constant dense<> : tensor<2x0xf32>
// CHECK-DAG:     %[[R:.*]] = stablehlo.constant dense<> : tensor<0xf32>
// CHECK-NOT:     stablehlo.convert
// CHECK-NOT:     stablehlo.broadcast_in_dim
// CHECK-NOT:     stablehlo.reduce
// CHECK:         return %[[C]], %[[B]], %[[R]]
func.func @remove_dead_zero_sized_tensor_ops_erases_ops_earlier_rewriters_left(%arg0: tensor<0x4xf32>, %arg1: tensor<0xf32>, %arg2: tensor<0x3xf32>) -> (tensor<0x4xi32>, tensor<2x0xf32>, tensor<0xf32>) {
  %0 = stablehlo.convert %arg0 : (tensor<0x4xf32>) -> tensor<0x4xi32>
  %1 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<0xf32>) -> tensor<2x0xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %2 = stablehlo.reduce(%arg2 init: %z) across dimensions = [1] : (tensor<0x3xf32>, tensor<f32>) -> tensor<0xf32>
    reducer(%a: tensor<f32>, %b: tensor<f32>) {
      %s = stablehlo.add %a, %b : tensor<f32>
      %c = stablehlo.convert %s : tensor<f32>
      stablehlo.return %c : tensor<f32>
    }
  return %0, %1, %2 : tensor<0x4xi32>, tensor<2x0xf32>, tensor<0xf32>
}

// -----

// The pass acts on @main only (the seed's scope; all-functions=false): the private
// @helper keeps its get_dimension_size, @main's folds to a constant.
// CHECK-LABEL: func.func private @helper
// CHECK:         stablehlo.get_dimension_size
// CHECK-LABEL: func.func @main
// CHECK:         stablehlo.constant dense<3> : tensor<i32>
func.func private @helper(%arg0: tensor<3xf32>) -> tensor<i32> {
  %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<3xf32>) -> tensor<i32>
  return %0 : tensor<i32>
}
func.func @main(%arg0: tensor<3xf32>) -> tensor<i32> {
  %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<3xf32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

// replaceBroadcastsWithBroadcastInDim no-match: a dynamic result (broadcast_in_dim needs a
// static one); found by the shared-corpus sweep.
// CHECK-LABEL: func.func @replace_broadcasts_with_broadcast_in_dim_no_match_dynamic_result
// CHECK:         stablehlo.broadcast %arg0, sizes = [20]
func.func @replace_broadcasts_with_broadcast_in_dim_no_match_dynamic_result(%arg0: tensor<?x3xf32>) -> tensor<20x?x3xf32> {
  %0 = stablehlo.broadcast %arg0, sizes = [20] : (tensor<?x3xf32>) -> tensor<20x?x3xf32>
  return %0 : tensor<20x?x3xf32>
}

// RUN: penguin-opt %s -p inline,stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-conv --remarks --split-input-file --verify-diagnostics
// A remark per rewrite, for every rewriter of the StableHLO passes (and inline), at the
// rewritten op's location; warnings of the passes stay expected beside them.

func.func private @double(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @inline_call_of_a_private_function(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark @+1 {{[inlineCall] inlined func.call: @double, 1 op}}
  %0 = call @double(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @fuse_iota_sort_argsort_drops_iota_operand(%arg0: tensor<8xf32>) -> tensor<8xi32> {
  %0 = stablehlo.iota dim = 0 : tensor<8xi32>
  // expected-remark @+1 {{[fuseIotaSort] dropped the iota index operand of stablehlo.sort; created stablehlo.sort}}
  %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %2 = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  }) : (tensor<8xf32>, tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>)
  return %1#1 : tensor<8xi32>
}

// -----

func.func @canonicalize_tuple_op_several_gte_users_fold(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %t = stablehlo.tuple %arg0, %arg1 : tuple<tensor<3xf32>, tensor<3xf32>>
  // expected-remark @+1 {{[canonicalizeTupleOp] forwarded the tuple element that stablehlo.get_tuple_element reads to its uses; created nothing}}
  %a = stablehlo.get_tuple_element %t[1] : (tuple<tensor<3xf32>, tensor<3xf32>>) -> tensor<3xf32>
  // expected-remark @+1 {{[canonicalizeTupleOp] forwarded the tuple element that stablehlo.get_tuple_element reads to its uses; created nothing}}
  %b = stablehlo.get_tuple_element %t[0] : (tuple<tensor<3xf32>, tensor<3xf32>>) -> tensor<3xf32>
  // expected-remark @+1 {{[canonicalizeTupleOp] forwarded the tuple element that stablehlo.get_tuple_element reads to its uses; created nothing}}
  %c = stablehlo.get_tuple_element %t[0] : (tuple<tensor<3xf32>, tensor<3xf32>>) -> tensor<3xf32>
  %s = stablehlo.add %a, %b : tensor<3xf32>
  return %s, %c : tensor<3xf32>, tensor<3xf32>
}

// -----

func.func @replace_get_dimension_size_static_dim_folds_dynamic_stays(%arg0: tensor<?x7xf32>) -> (tensor<i32>, tensor<i32>) {
  %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x7xf32>) -> tensor<i32>
  // expected-remark @+1 {{[replaceGetDimensionSize] replaced stablehlo.get_dimension_size of a static dimension by its constant; created stablehlo.constant}}
  %1 = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<?x7xf32>) -> tensor<i32>
  return %0, %1 : tensor<i32>, tensor<i32>
}

// -----

func.func @replace_converts_with_constants_f32_i32_truncates_toward_zero() -> tensor<3xi32> {
  %c = stablehlo.constant dense<[1.5, -2.7, 0.0]> : tensor<3xf32>
  // expected-remark @+1 {{[replaceConvertsWithConstants] folded stablehlo.convert of a constant; created stablehlo.constant}}
  %0 = stablehlo.convert %c : (tensor<3xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @replace_invalid_backend_configs_structured_erf_config_becomes_none(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // expected-warning @+2 {{AwsNeuronErf: backend_config '{mode: 1}' is not alphanumeric; replaced by "None"}}
  // expected-remark @+1 {{[replaceInvalidBackendConfigs] rewrote the backend_config of stablehlo.custom_call that the Erf handler cannot parse; created stablehlo.custom_call}}
  %0 = stablehlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "{mode: 1}", has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = stablehlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "00"} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = stablehlo.custom_call @Other(%arg0) {backend_config = "{x: 1}"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @lower_resize_nearest_grad_torch_xla_transposed_mean(%arg0: tensor<1x2x4x6xf32>) -> tensor<1x2x3x2xf32> {
  %t = stablehlo.transpose %arg0, dims = [0, 3, 2, 1] : (tensor<1x2x4x6xf32>) -> tensor<1x6x4x2xf32>
  // expected-remark @+3 {{[lowerResizeNearestGrad] lowered stablehlo.custom_call (ResizeNearestGrad) to supported ops; created 2 stablehlo.constant, stablehlo.reduce_window, stablehlo.broadcast, stablehlo.divide}}
  // expected-remark @+2 {{[replaceBroadcastsWithBroadcastInDim] rewrote stablehlo.broadcast as broadcast_in_dim; created stablehlo.broadcast_in_dim}}
  // expected-remark @+1 {{[replaceBroadcastInDimWithConstants] folded stablehlo.broadcast_in_dim of a constant; created stablehlo.constant}}
  %0 = stablehlo.custom_call @ResizeNearestGrad(%t) {backend_config = "00"} : (tensor<1x6x4x2xf32>) -> tensor<1x3x2x2xf32>
  %r = stablehlo.transpose %0, dims = [0, 3, 2, 1] : (tensor<1x3x2x2xf32>) -> tensor<1x2x2x3xf32>
  %s = stablehlo.reshape %r : (tensor<1x2x2x3xf32>) -> tensor<1x2x3x2xf32>
  return %s : tensor<1x2x3x2xf32>
}

// -----

func.func @replace_broadcasts_with_broadcast_in_dim_non_constant_operand(%arg0: tensor<2x3xf32>) -> tensor<4x5x2x3xf32> {
  // expected-remark @+2 {{broadcast operand is not a constant; converted anyway}}
  // expected-remark @+1 {{[replaceBroadcastsWithBroadcastInDim] rewrote stablehlo.broadcast as broadcast_in_dim; created stablehlo.broadcast_in_dim}}
  %0 = stablehlo.broadcast %arg0, sizes = [4, 5] : (tensor<2x3xf32>) -> tensor<4x5x2x3xf32>
  return %0 : tensor<4x5x2x3xf32>
}

// -----

func.func @replace_broadcast_in_dim_with_constants_transposing_bf16_source_kept() -> (tensor<1x3x2xbf16>, tensor<2x3xbf16>) {
  %c = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xbf16>
  // expected-remark @+1 {{[replaceBroadcastInDimWithConstants] folded stablehlo.broadcast_in_dim of a constant; created stablehlo.constant}}
  %0 = stablehlo.broadcast_in_dim %c, dims = [2, 1] : (tensor<2x3xbf16>) -> tensor<1x3x2xbf16>
  return %0, %c : tensor<1x3x2xbf16>, tensor<2x3xbf16>
}

// -----

func.func @remove_dead_zero_sized_tensor_ops_zero_element_add_becomes_empty_constant(%arg0: tensor<0x4xf32>) -> tensor<0x4xf32> {
  // expected-remark @+1 {{[removeDeadZeroSizedTensorOps] replaced zero-sized stablehlo.add by an empty constant; created stablehlo.constant}}
  %0 = stablehlo.add %arg0, %arg0 : tensor<0x4xf32>
  return %0 : tensor<0x4xf32>
}

// -----

func.func @pad_and_stride_nhwc(%x: tensor<1x8x8x3xf32>, %w: tensor<7x7x3x8xf32>) -> tensor<1x4x4x8xf32> {
  // expected-remark @+2 {{[explicitlyPad] moved the padding of stablehlo.convolution into an explicit pad; created stablehlo.constant, stablehlo.pad, stablehlo.convolution}}
  // expected-remark @+1 {{[explicitlyStride] moved the strides of stablehlo.convolution into strided slices; created 8 stablehlo.slice, 4 stablehlo.convolution, 3 stablehlo.add}}
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[3, 3], [3, 3]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]} : (tensor<1x8x8x3xf32>, tensor<7x7x3x8xf32>) -> tensor<1x4x4x8xf32>
  return %0 : tensor<1x4x4x8xf32>
}

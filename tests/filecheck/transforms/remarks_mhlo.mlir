// RUN: penguin-opt %s -p inline,canonicalize-for-penguin,canonicalize-conv --remarks --split-input-file --verify-diagnostics
// A remark per rewrite, for every rewriter of the MHLO passes (and inline), at the
// rewritten op's location (the MHLO twin has no removeDeadZeroSizedTensorOps).

func.func private @double(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = mhlo.add %arg0, %arg0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @inline_call_of_a_private_function(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark @+1 {{[inlineCall] inlined func.call: @double, 1 op}}
  %0 = call @double(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @fuse_iota_sort_mhlo(%arg0: tensor<8xf32>) -> tensor<8xi32> {
  %0 = "mhlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<8xi32>
  // expected-remark @+1 {{[fuseIotaSort] dropped the iota index operand of mhlo.sort; created mhlo.sort}}
  %1:2 = "mhlo.sort"(%arg0, %0) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %2 = mhlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    mhlo.return %2 : tensor<i1>
  }) : (tensor<8xf32>, tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>)
  return %1#1 : tensor<8xi32>
}

// -----

func.func @canonicalize_tuple_op_mhlo(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %t = mhlo.tuple %arg0, %arg1 : tuple<tensor<3xf32>, tensor<3xf32>>
  // expected-remark @+1 {{[canonicalizeTupleOp] forwarded the tuple element that mhlo.get_tuple_element reads to its uses; created nothing}}
  %a = mhlo.get_tuple_element %t[1] : (tuple<tensor<3xf32>, tensor<3xf32>>) -> tensor<3xf32>
  // expected-remark @+1 {{[canonicalizeTupleOp] forwarded the tuple element that mhlo.get_tuple_element reads to its uses; created nothing}}
  %b = mhlo.get_tuple_element %t[0] : (tuple<tensor<3xf32>, tensor<3xf32>>) -> tensor<3xf32>
  return %a, %b : tensor<3xf32>, tensor<3xf32>
}

// -----

func.func @replace_get_dimension_size_mhlo_dynamic_dim(%arg0: tensor<?x7xf32>) -> (tensor<i32>, tensor<i32>) {
  %0 = "mhlo.get_dimension_size"(%arg0) <{dimension = 0 : i64}> : (tensor<?x7xf32>) -> tensor<i32>
  // expected-remark @+1 {{[replaceGetDimensionSize] replaced mhlo.get_dimension_size of a static dimension by its constant; created mhlo.constant}}
  %1 = "mhlo.get_dimension_size"(%arg0) <{dimension = 1 : i64}> : (tensor<?x7xf32>) -> tensor<i32>
  return %0, %1 : tensor<i32>, tensor<i32>
}

// -----

func.func @replace_converts_with_constants_mhlo_i32_ui8_wraps() -> (tensor<2xui8>, tensor<f16>) {
  %c = mhlo.constant dense<[300, -1]> : tensor<2xi32>
  // expected-remark @+1 {{[replaceConvertsWithConstants] folded mhlo.convert of a constant; created mhlo.constant}}
  %0 = mhlo.convert %c : (tensor<2xi32>) -> tensor<2xui8>
  %d = mhlo.constant dense<1.000732421875000001> : tensor<f64>
  // expected-remark @+1 {{[replaceConvertsWithConstants] folded mhlo.convert of a constant; created mhlo.constant}}
  %1 = mhlo.convert %d : (tensor<f64>) -> tensor<f16>
  return %0, %1 : tensor<2xui8>, tensor<f16>
}

// -----

func.func @replace_invalid_backend_configs_mhlo_api_version_aliasing(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-warning @+2 {{AwsNeuronErf: backend_config '{a: 1}' is not alphanumeric; replaced by "None"}}
  // expected-remark @+1 {{[replaceInvalidBackendConfigs] rewrote the backend_config of mhlo.custom_call that the Erf handler cannot parse; created mhlo.custom_call}}
  %0 = mhlo.custom_call @AwsNeuronErf(%arg0) {api_version = 2 : i32, backend_config = "{a: 1}", has_side_effect = true, output_operand_aliases = [#mhlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>]} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @lower_resize_nearest_grad_mhlo_nhwc_scale_2x2(%arg0: tensor<1x4x4x3xf32>) -> tensor<1x2x2x3xf32> {
  // expected-remark @+3 {{[lowerResizeNearestGrad] lowered mhlo.custom_call (ResizeNearestGrad) to supported ops; created 2 mhlo.constant, mhlo.reduce_window, mhlo.broadcast, mhlo.divide}}
  // expected-remark @+2 {{[replaceBroadcastsWithBroadcastInDim] rewrote mhlo.broadcast as broadcast_in_dim; created mhlo.broadcast_in_dim}}
  // expected-remark @+1 {{[replaceBroadcastInDimWithConstants] folded mhlo.broadcast_in_dim of a constant; created mhlo.constant}}
  %0 = mhlo.custom_call @ResizeNearestGrad(%arg0) {backend_config = "00"} : (tensor<1x4x4x3xf32>) -> tensor<1x2x2x3xf32>
  return %0 : tensor<1x2x2x3xf32>
}

// -----

func.func @replace_broadcasts_then_broadcast_in_dim_with_constants_mhlo(%arg0: tensor<2x3xf32>) -> (tensor<4x2x3xf32>, tensor<3x2xi32>) {
  // expected-remark @+2 {{broadcast operand is not a constant; converted anyway}}
  // expected-remark @+1 {{[replaceBroadcastsWithBroadcastInDim] rewrote mhlo.broadcast as broadcast_in_dim; created mhlo.broadcast_in_dim}}
  %0 = "mhlo.broadcast"(%arg0) <{broadcast_sizes = dense<4> : tensor<1xi64>}> : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
  %c = mhlo.constant dense<[1, 2]> : tensor<2xi32>
  // expected-remark @+2 {{[replaceBroadcastsWithBroadcastInDim] rewrote mhlo.broadcast as broadcast_in_dim; created mhlo.broadcast_in_dim}}
  // expected-remark @+1 {{[replaceBroadcastInDimWithConstants] folded mhlo.broadcast_in_dim of a constant; created mhlo.constant}}
  %1 = "mhlo.broadcast"(%c) <{broadcast_sizes = dense<3> : tensor<1xi64>}> : (tensor<2xi32>) -> tensor<3x2xi32>
  return %0, %1 : tensor<4x2x3xf32>, tensor<3x2xi32>
}

// -----

func.func @pad_and_stride_nhwc(%x: tensor<1x8x8x3xf32>, %w: tensor<7x7x3x8xf32>) -> tensor<1x4x4x8xf32> {
  // expected-remark @+2 {{[explicitlyPad] moved the padding of mhlo.convolution into an explicit pad; created mhlo.constant, mhlo.pad, mhlo.convolution}}
  // expected-remark @+1 {{[explicitlyStride] moved the strides of mhlo.convolution into strided slices; created 8 mhlo.slice, 4 mhlo.convolution, 3 mhlo.add}}
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[3, 3], [3, 3]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#mhlo<precision DEFAULT>, #mhlo<precision HIGHEST>]} : (tensor<1x8x8x3xf32>, tensor<7x7x3x8xf32>) -> tensor<1x4x4x8xf32>
  return %0 : tensor<1x4x4x8xf32>
}

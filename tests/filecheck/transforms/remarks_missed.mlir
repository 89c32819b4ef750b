// RUN: penguin-opt %s -p stablehlo-canonicalize-for-penguin,stablehlo-canonicalize-conv --remarks=all --split-input-file --verify-diagnostics
// --remarks=all: a remark per skip too, with the rewriter's reason, for the root ops
// each rewriter visits (removeDeadZeroSizedTensorOps counts its non-candidates without
// visiting them: no remark).

func.func @fuse_iota_sort_no_match_iota_along_other_dimension(%arg0: tensor<2x5xf32>) -> tensor<2x5xi32> {
  %0 = stablehlo.iota dim = 0 : tensor<2x5xi32>
  // expected-remark @+1 {{[fuseIotaSort] skipped stablehlo.sort: iota-dimension-mismatch}}
  %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %2 = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  }) : (tensor<2x5xf32>, tensor<2x5xi32>) -> (tensor<2x5xf32>, tensor<2x5xi32>)
  return %1#1 : tensor<2x5xi32>
}

// -----

func.func @replace_converts_with_constants_no_match_operand_not_constant(%arg0: tensor<3xf32>) -> tensor<3xi32> {
  // expected-remark @+1 {{[replaceConvertsWithConstants] skipped stablehlo.convert: operand-not-constant}}
  %0 = stablehlo.convert %arg0 : (tensor<3xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @pad_only(%x: tensor<1x8x8x2xf32>, %w: tensor<3x3x2x4xf32>) -> tensor<1x8x8x4xf32> {
  // expected-remark @+2 {{[explicitlyPad] moved the padding of stablehlo.convolution into an explicit pad; created stablehlo.constant, stablehlo.pad, stablehlo.convolution}}
  // expected-remark @+1 {{[explicitlyStride] skipped stablehlo.convolution: unit-stride}}
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x8x8x4xf32>
  return %0 : tensor<1x8x8x4xf32>
}

// -----

// lowerResizeNearestGrad decides once per (operand, result) type pair and run; a pair's
// second op gets the same reason.
func.func @lower_resize_nearest_grad_no_match_dynamic_unranked_integer_mean(%d: tensor<?x4xf32>, %u: tensor<*xf32>, %i: tensor<4x4xi32>) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<*xf32>, tensor<2x2xi32>) {
  // expected-remark @+2 {{[replaceInvalidBackendConfigs] skipped stablehlo.custom_call: not-AwsNeuronErf}}
  // expected-remark @+1 {{[lowerResizeNearestGrad] skipped stablehlo.custom_call: dynamic-shape}}
  %0 = stablehlo.custom_call @ResizeNearestGrad(%d) : (tensor<?x4xf32>) -> tensor<?x2xf32>
  // expected-remark @+2 {{[replaceInvalidBackendConfigs] skipped stablehlo.custom_call: not-AwsNeuronErf}}
  // expected-remark @+1 {{[lowerResizeNearestGrad] skipped stablehlo.custom_call: dynamic-shape}}
  %1 = stablehlo.custom_call @ResizeNearestGrad(%d) : (tensor<?x4xf32>) -> tensor<?x2xf32>
  // expected-remark @+2 {{[replaceInvalidBackendConfigs] skipped stablehlo.custom_call: not-AwsNeuronErf}}
  // expected-remark @+1 {{[lowerResizeNearestGrad] skipped stablehlo.custom_call: unranked}}
  %2 = stablehlo.custom_call @ResizeNearestGrad(%u) : (tensor<*xf32>) -> tensor<*xf32>
  // expected-remark @+2 {{[replaceInvalidBackendConfigs] skipped stablehlo.custom_call: not-AwsNeuronErf}}
  // expected-remark @+1 {{[lowerResizeNearestGrad] skipped stablehlo.custom_call: mean-of-non-float}}
  %3 = stablehlo.custom_call @ResizeNearestGrad(%i) : (tensor<4x4xi32>) -> tensor<2x2xi32>
  return %0, %1, %2, %3 : tensor<?x2xf32>, tensor<?x2xf32>, tensor<*xf32>, tensor<2x2xi32>
}

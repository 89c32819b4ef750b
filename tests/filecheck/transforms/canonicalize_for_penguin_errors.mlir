// RUN: penguin-opt %s -p canonicalize-for-penguin --split-input-file --verify-diagnostics
// RUN: not penguin-opt %s -p canonicalize-for-penguin --split-input-file

func.func @resize_nearest_grad_two_operands_mhlo(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'mhlo.custom_call' op ResizeNearestGrad: only one operand allowed}}
  %0 = mhlo.custom_call @ResizeNearestGrad(%arg0, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @resize_nearest_grad_two_results_mhlo(%arg0: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'mhlo.custom_call' op ResizeNearestGrad: only one output allowed}}
  %0:2 = mhlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %0#0 : tensor<2xf32>
}

// -----

func.func @resize_nearest_grad_rank_mismatch_mhlo(%arg0: tensor<4x4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'mhlo.custom_call' op ResizeNearestGrad: input and output have different rank}}
  %0 = mhlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<4x4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @resize_nearest_grad_non_integral_scale_mhlo(%arg0: tensor<1x7x8x1xf32>) -> tensor<1x2x4x1xf32> {
  // expected-error @+1 {{'mhlo.custom_call' op ResizeNearestGrad: output dim 7 is not an integral multiple of input dim 7, which is unsupported}}
  %0 = mhlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<1x7x8x1xf32>) -> tensor<1x2x4x1xf32>
  return %0 : tensor<1x2x4x1xf32>
}

// RUN: penguin-opt %s -p stablehlo-canonicalize-for-penguin --split-input-file --verify-diagnostics
// RUN: not penguin-opt %s -p stablehlo-canonicalize-for-penguin --split-input-file

func.func @resize_nearest_grad_two_operands(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'stablehlo.custom_call' op ResizeNearestGrad: only one operand allowed}}
  %0 = stablehlo.custom_call @ResizeNearestGrad(%arg0, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @resize_nearest_grad_two_results(%arg0: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'stablehlo.custom_call' op ResizeNearestGrad: only one output allowed}}
  %0:2 = stablehlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %0#0 : tensor<2xf32>
}

// -----

func.func @resize_nearest_grad_rank_mismatch(%arg0: tensor<4x4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'stablehlo.custom_call' op ResizeNearestGrad: input and output have different rank}}
  %0 = stablehlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<4x4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @resize_nearest_grad_non_integral_scale(%arg0: tensor<5000xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'stablehlo.custom_call' op ResizeNearestGrad: output dim 5,000 is not an integral multiple of input dim 5,000, which is unsupported}}
  %0 = stablehlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<5000xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expected-warning @+2 {{AwsNeuronErf: backend_config}}
func.func @aws_neuron_erf_non_alphanumeric_config_warns(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "a=b"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{cannot find the main function: no @main and 2 public functions (@no_main_public_one, @no_main_public_two)}}
module {
  func.func @no_main_public_one() { return }
  func.func @no_main_public_two() { return }
}

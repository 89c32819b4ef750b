// RUN: penguin-opt %s -p stablehlo-canonicalize-for-penguin --split-input-file --verify-diagnostics
// RUN: not penguin-opt %s -p stablehlo-canonicalize-for-penguin --split-input-file

func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'stablehlo.custom_call' op ResizeNearestGrad: only one operand allowed}}
  %0 = stablehlo.custom_call @ResizeNearestGrad(%arg0, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @main(%arg0: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'stablehlo.custom_call' op ResizeNearestGrad: only one output allowed}}
  %0:2 = stablehlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %0#0 : tensor<2xf32>
}

// -----

func.func @main(%arg0: tensor<4x4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'stablehlo.custom_call' op ResizeNearestGrad: input and output have different rank}}
  %0 = stablehlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<4x4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @main(%arg0: tensor<5000xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'stablehlo.custom_call' op ResizeNearestGrad: output dim 5,000 is not an integral multiple of input dim 5,000, which is unsupported}}
  %0 = stablehlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<5000xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expected-warning @+2 {{AwsNeuronErf: backend_config}}
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "a=b"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{cannot find the main function: no @main and 2 public functions (@a, @b)}}
module {
  func.func @a() { return }
  func.func @b() { return }
}

"""Programs more than one test file needs."""

# An mhlo.dynamic_conv with rank-5 operands and two spatial dimensions (mlir-hlo's
# canonicalize/convolution.mlir): hlo-legalize-to-stablehlo aborts the process on it
# (LLVM ERROR) up to jaxlib 0.10.2; jaxlib 0.12 rejects the op with a verifier error.
MALFORMED_DYNAMIC_CONV = """func.func @main(%arg0: tensor<1x8x8x32x207xf32>, %arg1: tensor<3x3x32x207x16xf32>) -> tensor<32x1x8x8x16xf32> {
  %pad = arith.constant dense<[2, 0, 1, 1]> : tensor<4xi64>
  %0 = "mhlo.dynamic_conv"(%arg0, %arg1, %pad) {batch_group_count = 1 : i64,
    dimension_numbers = #mhlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 4,
      input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 3,
      kernel_output_feature_dimension = 4, kernel_spatial_dimensions = [0, 1],
      output_batch_dimension = 1, output_feature_dimension = 4, output_spatial_dimensions = [2, 3]>,
    feature_group_count = 1 : i64, lhs_dilation = dense<1> : tensor<2xi64>, padding = dense<1> : tensor<2x2xi64>,
    rhs_dilation = dense<1> : tensor<2xi64>, window_strides = dense<1> : tensor<2xi64>} :
       (tensor<1x8x8x32x207xf32>, tensor<3x3x32x207x16xf32>, tensor<4xi64>) -> tensor<32x1x8x8x16xf32>
  func.return %0 : tensor<32x1x8x8x16xf32>
}
"""


# Weights as torch-mlir and IREE write them: a resource blob (alignment, then the data)
RESOURCE = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = stablehlo.constant dense_resource<weights> : tensor<4xf32>
  %0 = stablehlo.multiply %w, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F000000400000404000008040"
    }
  }
#-}
"""

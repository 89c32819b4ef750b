func.func @main(%x: tensor<1x8x9x2xf32>, %w: tensor<3x3x2x4xf32>) -> tensor<1x4x7x4xf32> {
  %y = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
         window = {stride = [2, 1], pad = [[1, 1], [0, 0]]}
         {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
         : (tensor<1x8x9x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x4x7x4xf32>
  return %y : tensor<1x4x7x4xf32>
}

// RUN: penguin-opt %s -p canonicalize-conv --split-input-file --verify-diagnostics | filecheck %s
// RUN: penguin-opt %s -p 'canonicalize-conv{canonicalize-small-extents=true}' --split-input-file --verify-diagnostics | filecheck %s --check-prefix=SMALL

// canonicalize-conv (CanonicalizeConv) on MHLO: the same rewrites as
// stablehlo-canonicalize-conv; MHLO prints pad and slice in generic form.

// Pad only: mhlo.pad of the lhs with a zero constant; the rebuilt conv has zero padding.
// CHECK-LABEL: func.func @pad_only
// CHECK:         %[[ZERO:.*]] = mhlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[P:.*]] = "mhlo.pad"(%arg0, %[[ZERO]]) <{{[{]}}edge_padding_high = dense<[0, 1, 1, 0]> : tensor<4xi64>, edge_padding_low = dense<[0, 1, 1, 0]> : tensor<4xi64>, interior_padding = dense<0> : tensor<4xi64>}> : (tensor<1x8x8x2xf32>, tensor<f32>) -> tensor<1x10x10x2xf32>
// CHECK-NEXT:    %[[C:.*]] = mhlo.convolution(%[[P]], %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = {{\[\[}}0, 0], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x10x10x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT:    return %[[C]]
func.func @pad_only(%x: tensor<1x8x8x2xf32>, %w: tensor<3x3x2x4xf32>) -> tensor<1x8x8x4xf32> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x8x8x4xf32>
  return %0 : tensor<1x8x8x4xf32>
}

// -----

// Stride only, 1x1 kernel: the seed's single full-extent strided slice.
// CHECK-LABEL: func.func @stride_only_1x1
// CHECK-NOT:     mhlo.pad
// CHECK:         %[[S:.*]] = "mhlo.slice"(%arg0) <{limit_indices = dense<[1, 9, 9, 2]> : tensor<4xi64>, start_indices = dense<0> : tensor<4xi64>, strides = dense<[1, 2, 2, 1]> : tensor<4xi64>}> : (tensor<1x9x9x2xf32>) -> tensor<1x5x5x2xf32>
// CHECK-NEXT:    %[[C:.*]] = mhlo.convolution(%[[S]], %arg1) {{.*}} window = {stride = [1, 1]} {{.*}} -> tensor<1x5x5x4xf32>
// CHECK-NOT:     mhlo.add
// CHECK:         return %[[C]]
func.func @stride_only_1x1(%x: tensor<1x9x9x2xf32>, %w: tensor<1x1x2x4xf32>) -> tensor<1x5x5x4xf32> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x9x9x2xf32>, tensor<1x1x2x4xf32>) -> tensor<1x5x5x4xf32>
  return %0 : tensor<1x5x5x4xf32>
}

// -----

// Stride only, 3-tap kernel along the strided dim: two exact phases, summed.
// CHECK-LABEL: func.func @stride_only_polyphase
// CHECK:         %[[X0:.*]] = "mhlo.slice"(%arg0) <{limit_indices = dense<[1, 9, 9, 2]> : tensor<4xi64>, start_indices = dense<0> : tensor<4xi64>, strides = dense<[1, 2, 1, 1]> : tensor<4xi64>}>
// CHECK-NEXT:    %[[W0:.*]] = "mhlo.slice"(%arg1) <{limit_indices = dense<[3, 3, 2, 4]> : tensor<4xi64>, start_indices = dense<0> : tensor<4xi64>, strides = dense<[2, 1, 1, 1]> : tensor<4xi64>}> {{.*}} -> tensor<2x3x2x4xf32>
// CHECK-NEXT:    %[[C0:.*]] = mhlo.convolution(%[[X0]], %[[W0]]) {{.*}} window = {stride = [1, 1]} {{.*}} -> tensor<1x4x7x4xf32>
// CHECK-NEXT:    %[[X1:.*]] = "mhlo.slice"(%arg0) <{limit_indices = dense<[1, 9, 9, 2]> : tensor<4xi64>, start_indices = dense<[0, 1, 0, 0]> : tensor<4xi64>, strides = dense<[1, 2, 1, 1]> : tensor<4xi64>}>
// CHECK-NEXT:    %[[W1:.*]] = "mhlo.slice"(%arg1) <{limit_indices = dense<[2, 3, 2, 4]> : tensor<4xi64>, start_indices = dense<[1, 0, 0, 0]> : tensor<4xi64>, strides = dense<1> : tensor<4xi64>}> {{.*}} -> tensor<1x3x2x4xf32>
// CHECK-NEXT:    %[[C1:.*]] = mhlo.convolution(%[[X1]], %[[W1]]) {{.*}} window = {stride = [1, 1]} {{.*}} -> tensor<1x4x7x4xf32>
// CHECK-NEXT:    %[[SUM:.*]] = mhlo.add %[[C0]], %[[C1]] : tensor<1x4x7x4xf32>
// CHECK-NEXT:    return %[[SUM]]
func.func @stride_only_polyphase(%x: tensor<1x9x9x2xf32>, %w: tensor<3x3x2x4xf32>) -> tensor<1x4x7x4xf32> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x9x9x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x4x7x4xf32>
  return %0 : tensor<1x4x7x4xf32>
}

// -----

// Stride only on an f16 conv with two phases: the partial convs have f32 results, are
// summed in f32 and rounded to f16 once, as XLA accumulates the conv (in f16 the partial
// sums can overflow where the conv's own sum does not).
// CHECK-LABEL: func.func @stride_polyphase_f16_sums_in_f32
// CHECK:         %[[C0:.*]] = mhlo.convolution{{.*}} : (tensor<1x5x9x2xf16>, tensor<2x3x2x4xf16>) -> tensor<1x4x7x4xf32>
// CHECK:         %[[C1:.*]] = mhlo.convolution{{.*}} : (tensor<1x4x9x2xf16>, tensor<1x3x2x4xf16>) -> tensor<1x4x7x4xf32>
// CHECK-NEXT:    %[[SUM:.*]] = mhlo.add %[[C0]], %[[C1]] : tensor<1x4x7x4xf32>
// CHECK-NEXT:    %[[OUT:.*]] = mhlo.convert %[[SUM]] : (tensor<1x4x7x4xf32>) -> tensor<1x4x7x4xf16>
// CHECK-NEXT:    return %[[OUT]]
func.func @stride_polyphase_f16_sums_in_f32(%x: tensor<1x9x9x2xf16>, %w: tensor<3x3x2x4xf16>) -> tensor<1x4x7x4xf16> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x9x9x2xf16>, tensor<3x3x2x4xf16>) -> tensor<1x4x7x4xf16>
  return %0 : tensor<1x4x7x4xf16>
}

// -----

// Pad and stride, NHWC/HWIO (ResNet50 stem shape): pad first, then 2x2 phases; precision
// config copied verbatim.
// CHECK-LABEL: func.func @pad_and_stride_nhwc
// CHECK:         %[[P:.*]] = "mhlo.pad"(%arg0, %{{.*}}) <{{[{]}}edge_padding_high = dense<[0, 3, 3, 0]> : tensor<4xi64>, edge_padding_low = dense<[0, 3, 3, 0]> : tensor<4xi64>, interior_padding = dense<0> : tensor<4xi64>}>
// CHECK-NEXT:    "mhlo.slice"(%[[P]])
// CHECK-NEXT:    "mhlo.slice"(%arg1)
// CHECK-NEXT:    mhlo.convolution{{.*}}window = {stride = [1, 1], pad = {{\[\[}}0, 0], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#mhlo<precision DEFAULT>, #mhlo<precision HIGHEST>]} : (tensor<1x7x7x3xf32>, tensor<4x4x3x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-COUNT-3: mhlo.convolution{{.*}}precision_config = [#mhlo<precision DEFAULT>, #mhlo<precision HIGHEST>]
// CHECK-NOT:     mhlo.transpose
func.func @pad_and_stride_nhwc(%x: tensor<1x8x8x3xf32>, %w: tensor<7x7x3x8xf32>) -> tensor<1x4x4x8xf32> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[3, 3], [3, 3]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#mhlo<precision DEFAULT>, #mhlo<precision HIGHEST>]} : (tensor<1x8x8x3xf32>, tensor<7x7x3x8xf32>) -> tensor<1x4x4x8xf32>
  return %0 : tensor<1x4x4x8xf32>
}

// -----

// NCHW/OIHW: pad and slices on dims 2 and 3; the layout is kept.
// CHECK-LABEL: func.func @pad_and_stride_nchw
// CHECK:         "mhlo.pad"(%arg0, %{{.*}}) <{edge_padding_high = dense<[0, 0, 1, 1]> : tensor<4xi64>, edge_padding_low = dense<[0, 0, 1, 1]> : tensor<4xi64>, interior_padding = dense<0> : tensor<4xi64>}>
// CHECK-COUNT-4: mhlo.convolution{{.*}}dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1]
func.func @pad_and_stride_nchw(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x4x4xf32> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [2, 2], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
}

// -----

// A permuted layout: dimension numbers copied verbatim; no transpose.
// CHECK-LABEL: func.func @pad_and_stride_permuted
// CHECK:         "mhlo.pad"(%arg0, %{{.*}}) <{edge_padding_high = dense<[0, 0, 2, 0]> : tensor<4xi64>, edge_padding_low = dense<[0, 1, 0, 0]> : tensor<4xi64>, interior_padding = dense<0> : tensor<4xi64>}>
// CHECK-COUNT-4: mhlo.convolution{{.*}}dim_numbers = [f, 0, 1, b]x[1, o, 0, i]->[0, b, f, 1], window = {stride = [1, 1]
// CHECK-NOT:     mhlo.transpose
func.func @pad_and_stride_permuted(%x: tensor<2x8x9x1xf32>, %w: tensor<2x4x3x2xf32>) -> tensor<4x1x4x4xf32> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [f, 0, 1, b]x[1, o, 0, i]->[0, b, f, 1], window = {stride = [2, 3], pad = [[1, 0], [0, 2]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x8x9x1xf32>, tensor<2x4x3x2xf32>) -> tensor<4x1x4x4xf32>
  return %0 : tensor<4x1x4x4xf32>
}

// -----

// Negative padding stays a pad (negative edges crop).
// CHECK-LABEL: func.func @negative_padding
// CHECK:         "mhlo.pad"(%arg0, %{{.*}}) <{{[{]}}edge_padding_high = dense<[0, 0, -1, 0]> : tensor<4xi64>, edge_padding_low = dense<[0, -1, 2, 0]> : tensor<4xi64>, interior_padding = dense<0> : tensor<4xi64>}> {{.*}} -> tensor<1x7x9x2xf32>
// CHECK-NEXT:    mhlo.convolution{{.*}}window = {pad = {{\[\[}}0, 0], [0, 0]]}
func.func @negative_padding(%x: tensor<1x8x8x2xf32>, %w: tensor<3x3x2x2xf32>) -> tensor<1x5x7x2xf32> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[-1, 0], [2, -1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x5x7x2xf32>
  return %0 : tensor<1x5x7x2xf32>
}

// -----

// lhs_dilation with padding: interior padding lhs_dilation - 1, lhs_dilation reset to 1.
// CHECK-LABEL: func.func @lhs_dilation
// CHECK:         "mhlo.pad"(%arg0, %{{.*}}) <{{[{]}}edge_padding_high = dense<[0, 1, 1, 0]> : tensor<4xi64>, edge_padding_low = dense<[0, 2, 2, 0]> : tensor<4xi64>, interior_padding = dense<[0, 1, 1, 0]> : tensor<4xi64>}> {{.*}} -> tensor<1x10x10x2xf32>
// CHECK-NEXT:    mhlo.convolution{{.*}}window = {pad = {{\[\[}}0, 0], [0, 0]], lhs_dilate = [1, 1]}
func.func @lhs_dilation(%x: tensor<1x4x4x2xf32>, %w: tensor<3x3x2x2xf32>) -> tensor<1x8x8x2xf32> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[2, 1], [2, 1]], lhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x8x8x2xf32>
  return %0 : tensor<1x8x8x2xf32>
}

// -----

// rhs_dilation 2 with stride 2: one phase, rhs_dilation 2 / 2 = 1.
// CHECK-LABEL: func.func @rhs_dilation_divisible
// CHECK:         "mhlo.slice"(%arg0)
// CHECK-NEXT:    mhlo.convolution{{.*}}window = {stride = [1, 1], rhs_dilate = [1, 1]}
// CHECK-NOT:     mhlo.add
func.func @rhs_dilation_divisible(%x: tensor<1x9x9x2xf32>, %w: tensor<3x3x2x2xf32>) -> tensor<1x3x3x2xf32> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], rhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x9x9x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x3x3x2xf32>
  return %0 : tensor<1x3x3x2xf32>
}

// -----

// window_reversal: the reversed window's phase {0, 2} is the kernel slice from 1 by 2.
// CHECK-LABEL: func.func @window_reversal
// CHECK:         "mhlo.slice"(%arg0)
// CHECK-NEXT:    "mhlo.slice"(%arg1) <{limit_indices = dense<[4, 1, 2, 2]> : tensor<4xi64>, start_indices = dense<[1, 0, 0, 0]> : tensor<4xi64>, strides = dense<[2, 1, 1, 1]> : tensor<4xi64>}>
// CHECK-NEXT:    mhlo.convolution{{.*}}window = {stride = [1, 1], reverse = [1, 0]}
// CHECK-NEXT:    "mhlo.slice"(%arg0)
// CHECK-NEXT:    "mhlo.slice"(%arg1) <{limit_indices = dense<[4, 1, 2, 2]> : tensor<4xi64>, start_indices = dense<0> : tensor<4xi64>, strides = dense<[2, 1, 1, 1]> : tensor<4xi64>}>
// CHECK-NEXT:    mhlo.convolution{{.*}}window = {stride = [1, 1], reverse = [1, 0]}
// CHECK-NEXT:    mhlo.add
func.func @window_reversal(%x: tensor<1x9x8x2xf32>, %w: tensor<4x1x2x2xf32>) -> tensor<1x3x8x2xf32> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], reverse = [1, 0]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x9x8x2xf32>, tensor<4x1x2x2xf32>) -> tensor<1x3x8x2xf32>
  return %0 : tensor<1x3x8x2xf32>
}

// -----

// Depthwise: feature_group_count copied onto every partial conv.
// CHECK-LABEL: func.func @depthwise
// CHECK-COUNT-4: mhlo.convolution{{.*}}{batch_group_count = 1 : i64, feature_group_count = 4 : i64}
func.func @depthwise(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x1x4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 4 : i64} : (tensor<1x8x8x4xf32>, tensor<3x3x1x4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// Already zero-padding and unit-stride: untouched.
// CHECK-LABEL: func.func @already_canonical
// CHECK-NOT:     mhlo.pad
// CHECK-NOT:     mhlo.slice
// CHECK:         mhlo.convolution(%arg0, %arg1)
// CHECK-NEXT:    return
func.func @already_canonical(%x: tensor<1x8x8x2xf32>, %w: tensor<3x3x2x2xf32>) -> tensor<1x6x6x2xf32> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[0, 0], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x6x6x2xf32>
  return %0 : tensor<1x6x6x2xf32>
}

// -----

// Gated out: rank 3.
// CHECK-LABEL: func.func @gated_rank3
// CHECK-NOT:     mhlo.slice
// CHECK:         mhlo.convolution(%arg0, %arg1) {{.*}} window = {stride = [2], pad = {{\[\[}}1, 1]]}
func.func @gated_rank3(%x: tensor<1x8x2xf32>, %w: tensor<3x2x2xf32>) -> tensor<1x4x2xf32> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [2], pad = [[1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x2xf32>, tensor<3x2x2xf32>) -> tensor<1x4x2xf32>
  return %0 : tensor<1x4x2xf32>
}

// -----

// Gated out: rank 5.
// CHECK-LABEL: func.func @gated_rank5
// CHECK-NOT:     mhlo.slice
// CHECK:         mhlo.convolution(%arg0, %arg1) {{.*}} window = {stride = [2, 2, 2]}
func.func @gated_rank5(%x: tensor<1x6x6x6x2xf32>, %w: tensor<2x2x2x2x2xf32>) -> tensor<1x3x3x3x2xf32> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, 1, 2, f]x[0, 1, 2, i, o]->[b, 0, 1, 2, f], window = {stride = [2, 2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x6x6x6x2xf32>, tensor<2x2x2x2x2xf32>) -> tensor<1x3x3x3x2xf32>
  return %0 : tensor<1x3x3x3x2xf32>
}

// -----

// Gated out: dynamic shape.
// CHECK-LABEL: func.func @gated_dynamic
// CHECK-NOT:     mhlo.pad
// CHECK:         mhlo.convolution(%arg0, %arg1) {{.*}} -> tensor<?x4x4x2xf32>
func.func @gated_dynamic(%x: tensor<?x8x8x2xf32>, %w: tensor<3x3x2x2xf32>) -> tensor<?x4x4x2xf32> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x8x8x2xf32>, tensor<3x3x2x2xf32>) -> tensor<?x4x4x2xf32>
  return %0 : tensor<?x4x4x2xf32>
}

// -----

// Gated out: a stride above the seed's bound 31.
// CHECK-LABEL: func.func @gated_over_bound
// CHECK-NOT:     mhlo.slice
// CHECK:         mhlo.convolution(%arg0, %arg1) {{.*}} window = {stride = [32, 2]}
func.func @gated_over_bound(%x: tensor<1x40x8x2xf32>, %w: tensor<3x3x2x2xf32>) -> tensor<1x2x3x2xf32> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [32, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x40x8x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x2x3x2xf32>
  return %0 : tensor<1x2x3x2xf32>
}

// -----

// Gated out: a spatial extent of 1.
// CHECK-LABEL: func.func @gated_spatial_extent_1
// CHECK-NOT:     mhlo.slice
// CHECK:         mhlo.convolution(%arg0, %arg1) {{.*}} window = {stride = [1, 2]}
func.func @gated_spatial_extent_1(%x: tensor<1x1x8x2xf32>, %w: tensor<1x3x2x2xf32>) -> tensor<1x1x3x2xf32> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x8x2xf32>, tensor<1x3x2x2xf32>) -> tensor<1x1x3x2xf32>
  return %0 : tensor<1x1x3x2xf32>
}

// -----

// Spatial extent 3: only with canonicalize-small-extents (off by default).
// CHECK-LABEL: func.func @small_extent
// CHECK-NOT:     mhlo.pad
// CHECK:         mhlo.convolution(%arg0, %arg1) {{.*}} window = {stride = [2, 2]
// SMALL-LABEL: func.func @small_extent
// SMALL:         "mhlo.pad"(%arg0
// SMALL-COUNT-4: mhlo.convolution{{.*}}window = {stride = [1, 1]
func.func @small_extent(%x: tensor<1x3x8x2xf32>, %w: tensor<3x3x2x2xf32>) -> tensor<1x2x3x2xf32> {
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x3x8x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x2x3x2xf32>
  return %0 : tensor<1x2x3x2xf32>
}

// -----

// The pad path needs an exact zero of the element type: f8E8M0FNU has none (NCC_EUET001).
func.func @no_exact_zero(%x: tensor<1x8x8x2xf8E8M0FNU>, %w: tensor<3x3x2x2xf8E8M0FNU>) -> tensor<1x8x8x2xf8E8M0FNU> {
  // expected-error @+1 {{'mhlo.convolution' op NCC_EUET001: unsupported element type f8E8M0FNU}}
  %0 = mhlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x2xf8E8M0FNU>, tensor<3x3x2x2xf8E8M0FNU>) -> tensor<1x8x8x2xf8E8M0FNU>
  return %0 : tensor<1x8x8x2xf8E8M0FNU>
}

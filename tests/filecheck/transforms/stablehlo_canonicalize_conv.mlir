// RUN: penguin-opt %s -p stablehlo-canonicalize-conv --split-input-file --verify-diagnostics | filecheck %s
// RUN: penguin-opt %s -p 'stablehlo-canonicalize-conv{canonicalize-small-extents=true}' --split-input-file --verify-diagnostics | filecheck %s --check-prefix=SMALL

// stablehlo-canonicalize-conv (CanonicalizeConv): explicitlyPad then explicitlyStride on
// every eligible 2-D convolution. Numeric equivalence: tests/test_canonicalize_conv.py.

// Pad only: the window padding becomes a pad of the lhs with a zero of the element type;
// the rebuilt conv has zero padding, the same strides and the original result type.
// CHECK-LABEL: func.func @pad_only
// CHECK-SAME:    (%[[X:.*]]: tensor<1x8x8x2xf32>, %[[W:.*]]: tensor<3x3x2x4xf32>)
// CHECK:         %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[P:.*]] = stablehlo.pad %[[X]], %[[ZERO]], low = [0, 1, 1, 0], high = [0, 1, 1, 0], interior = [0, 0, 0, 0] : (tensor<1x8x8x2xf32>, tensor<f32>) -> tensor<1x10x10x2xf32>
// CHECK-NEXT:    %[[C:.*]] = stablehlo.convolution(%[[P]], %[[W]]) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = {{\[\[}}0, 0], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x10x10x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT:    return %[[C]]
func.func @pad_only(%x: tensor<1x8x8x2xf32>, %w: tensor<3x3x2x4xf32>) -> tensor<1x8x8x4xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x8x8x4xf32>
  return %0 : tensor<1x8x8x4xf32>
}

// -----

// Stride only, 1x1 kernel: the seed's single full-extent strided slice.
// CHECK-LABEL: func.func @stride_only_1x1
// CHECK-NOT:     stablehlo.pad
// CHECK:         %[[S:.*]] = stablehlo.slice %arg0 [0:1, 0:9:2, 0:9:2, 0:2] : (tensor<1x9x9x2xf32>) -> tensor<1x5x5x2xf32>
// CHECK-NEXT:    %[[C:.*]] = stablehlo.convolution(%[[S]], %arg1) {{.*}} window = {stride = [1, 1]} {{.*}} -> tensor<1x5x5x4xf32>
// CHECK-NOT:     stablehlo.add
// CHECK:         return %[[C]]
func.func @stride_only_1x1(%x: tensor<1x9x9x2xf32>, %w: tensor<1x1x2x4xf32>) -> tensor<1x5x5x4xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x9x9x2xf32>, tensor<1x1x2x4xf32>) -> tensor<1x5x5x4xf32>
  return %0 : tensor<1x5x5x4xf32>
}

// -----

// Stride only, 3-tap kernel along the strided dim: two phases (taps {0, 2} and {1}), each a
// unit-stride conv with the original result type, summed.
// CHECK-LABEL: func.func @stride_only_polyphase
// CHECK-NOT:     stablehlo.pad
// CHECK:         %[[X0:.*]] = stablehlo.slice %arg0 [0:1, 0:9:2, 0:9, 0:2] : (tensor<1x9x9x2xf32>) -> tensor<1x5x9x2xf32>
// CHECK-NEXT:    %[[W0:.*]] = stablehlo.slice %arg1 [0:3:2, 0:3, 0:2, 0:4] : (tensor<3x3x2x4xf32>) -> tensor<2x3x2x4xf32>
// CHECK-NEXT:    %[[C0:.*]] = stablehlo.convolution(%[[X0]], %[[W0]]) {{.*}} window = {stride = [1, 1]} {{.*}} -> tensor<1x4x7x4xf32>
// CHECK-NEXT:    %[[X1:.*]] = stablehlo.slice %arg0 [0:1, 1:9:2, 0:9, 0:2] : (tensor<1x9x9x2xf32>) -> tensor<1x4x9x2xf32>
// CHECK-NEXT:    %[[W1:.*]] = stablehlo.slice %arg1 [1:2, 0:3, 0:2, 0:4] : (tensor<3x3x2x4xf32>) -> tensor<1x3x2x4xf32>
// CHECK-NEXT:    %[[C1:.*]] = stablehlo.convolution(%[[X1]], %[[W1]]) {{.*}} window = {stride = [1, 1]} {{.*}} -> tensor<1x4x7x4xf32>
// CHECK-NEXT:    %[[SUM:.*]] = stablehlo.add %[[C0]], %[[C1]] : tensor<1x4x7x4xf32>
// CHECK-NEXT:    return %[[SUM]]
func.func @stride_only_polyphase(%x: tensor<1x9x9x2xf32>, %w: tensor<3x3x2x4xf32>) -> tensor<1x4x7x4xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x9x9x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x4x7x4xf32>
  return %0 : tensor<1x4x7x4xf32>
}

// -----

// Stride only on an f16 conv with two phases: the partial convs have f32 results, are
// summed in f32 and rounded to f16 once, as XLA accumulates the conv (in f16 the partial
// sums can overflow where the conv's own sum does not).
// CHECK-LABEL: func.func @stride_polyphase_f16_sums_in_f32
// CHECK:         %[[C0:.*]] = stablehlo.convolution{{.*}} : (tensor<1x5x9x2xf16>, tensor<2x3x2x4xf16>) -> tensor<1x4x7x4xf32>
// CHECK:         %[[C1:.*]] = stablehlo.convolution{{.*}} : (tensor<1x4x9x2xf16>, tensor<1x3x2x4xf16>) -> tensor<1x4x7x4xf32>
// CHECK-NEXT:    %[[SUM:.*]] = stablehlo.add %[[C0]], %[[C1]] : tensor<1x4x7x4xf32>
// CHECK-NEXT:    %[[OUT:.*]] = stablehlo.convert %[[SUM]] : (tensor<1x4x7x4xf32>) -> tensor<1x4x7x4xf16>
// CHECK-NEXT:    return %[[OUT]]
func.func @stride_polyphase_f16_sums_in_f32(%x: tensor<1x9x9x2xf16>, %w: tensor<3x3x2x4xf16>) -> tensor<1x4x7x4xf16> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x9x9x2xf16>, tensor<3x3x2x4xf16>) -> tensor<1x4x7x4xf16>
  return %0 : tensor<1x4x7x4xf16>
}

// -----

// Pad and stride, NHWC/HWIO (the ResNet50 stem shape, 7x7/s2/p3): pad first, then 2x2
// phases; the precision config is copied verbatim onto every partial conv.
// CHECK-LABEL: func.func @pad_and_stride_nhwc
// CHECK:         %[[P:.*]] = stablehlo.pad %arg0, %{{.*}}, low = [0, 3, 3, 0], high = [0, 3, 3, 0], interior = [0, 0, 0, 0] {{.*}} -> tensor<1x14x14x3xf32>
// CHECK-NEXT:    stablehlo.slice %[[P]] [0:1, 0:14:2, 0:14:2, 0:3]
// CHECK-NEXT:    stablehlo.slice %arg1 [0:7:2, 0:7:2, 0:3, 0:8] {{.*}} -> tensor<4x4x3x8xf32>
// CHECK-NEXT:    stablehlo.convolution{{.*}}window = {stride = [1, 1], pad = {{\[\[}}0, 0], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]} : (tensor<1x7x7x3xf32>, tensor<4x4x3x8xf32>) -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    stablehlo.slice %[[P]] [0:1, 0:14:2, 1:12:2, 0:3]
// CHECK-NEXT:    stablehlo.slice %arg1 [0:7:2, 1:7:2, 0:3, 0:8]
// CHECK-NEXT:    stablehlo.convolution{{.*}}precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]{{.*}} -> tensor<1x4x4x8xf32>
// CHECK-NEXT:    stablehlo.add
// CHECK-NEXT:    stablehlo.slice %[[P]] [0:1, 1:12:2, 0:14:2, 0:3]
// CHECK-NEXT:    stablehlo.slice %arg1 [1:7:2, 0:7:2, 0:3, 0:8]
// CHECK-NEXT:    stablehlo.convolution
// CHECK-NEXT:    stablehlo.add
// CHECK-NEXT:    stablehlo.slice %[[P]] [0:1, 1:12:2, 1:12:2, 0:3]
// CHECK-NEXT:    stablehlo.slice %arg1 [1:7:2, 1:7:2, 0:3, 0:8] {{.*}} -> tensor<3x3x3x8xf32>
// CHECK-NEXT:    stablehlo.convolution
// CHECK-NEXT:    %[[SUM:.*]] = stablehlo.add
// CHECK-NEXT:    return %[[SUM]]
func.func @pad_and_stride_nhwc(%x: tensor<1x8x8x3xf32>, %w: tensor<7x7x3x8xf32>) -> tensor<1x4x4x8xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[3, 3], [3, 3]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]} : (tensor<1x8x8x3xf32>, tensor<7x7x3x8xf32>) -> tensor<1x4x4x8xf32>
  return %0 : tensor<1x4x4x8xf32>
}

// -----

// NCHW/OIHW: the pad and the slices act on dims 2 and 3; the layout is kept.
// CHECK-LABEL: func.func @pad_and_stride_nchw
// CHECK:         %[[P:.*]] = stablehlo.pad %arg0, %{{.*}}, low = [0, 0, 1, 1], high = [0, 0, 1, 1], interior = [0, 0, 0, 0] {{.*}} -> tensor<2x3x10x10xf32>
// CHECK-NEXT:    stablehlo.slice %[[P]] [0:2, 0:3, 0:10:2, 0:10:2]
// CHECK-NEXT:    stablehlo.slice %arg1 [0:4, 0:3, 0:3:2, 0:3:2]
// CHECK-NEXT:    stablehlo.convolution{{.*}}dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = {{\[\[}}0, 0], [0, 0]]}
// CHECK-COUNT-3: stablehlo.convolution{{.*}}dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1]
// CHECK-NOT:     stablehlo.transpose
func.func @pad_and_stride_nchw(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x4x4xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [2, 2], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
}

// -----

// A permuted layout ([f, 0, 1, b]x[1, o, 0, i]->[0, b, f, 1]): spatial dims located through
// the dimension numbers, which are copied verbatim; no transpose.
// CHECK-LABEL: func.func @pad_and_stride_permuted
// CHECK:         %[[P:.*]] = stablehlo.pad %arg0, %{{.*}}, low = [0, 1, 0, 0], high = [0, 0, 2, 0], interior = [0, 0, 0, 0] {{.*}} -> tensor<2x9x11x1xf32>
// CHECK-NEXT:    stablehlo.slice %[[P]] [0:2, 0:9:2, 0:11:3, 0:1]
// CHECK-NEXT:    stablehlo.slice %arg1 [0:1, 0:4, 0:3:2, 0:2]
// CHECK-NEXT:    stablehlo.convolution{{.*}}dim_numbers = [f, 0, 1, b]x[1, o, 0, i]->[0, b, f, 1], window = {stride = [1, 1], pad = {{\[\[}}0, 0], [0, 0]]}{{.*}} -> tensor<4x1x4x4xf32>
// CHECK-COUNT-3: stablehlo.convolution{{.*}}dim_numbers = [f, 0, 1, b]x[1, o, 0, i]->[0, b, f, 1]
// CHECK-NOT:     stablehlo.transpose
func.func @pad_and_stride_permuted(%x: tensor<2x8x9x1xf32>, %w: tensor<2x4x3x2xf32>) -> tensor<4x1x4x4xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [f, 0, 1, b]x[1, o, 0, i]->[0, b, f, 1], window = {stride = [2, 3], pad = [[1, 0], [0, 2]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x8x9x1xf32>, tensor<2x4x3x2xf32>) -> tensor<4x1x4x4xf32>
  return %0 : tensor<4x1x4x4xf32>
}

// -----

// Negative padding stays a pad (negative edges crop).
// CHECK-LABEL: func.func @negative_padding
// CHECK:         %[[P:.*]] = stablehlo.pad %arg0, %{{.*}}, low = [0, -1, 2, 0], high = [0, 0, -1, 0], interior = [0, 0, 0, 0] {{.*}} -> tensor<1x7x9x2xf32>
// CHECK-NEXT:    stablehlo.convolution(%[[P]], %arg1) {{.*}} window = {pad = {{\[\[}}0, 0], [0, 0]]} {{.*}} -> tensor<1x5x7x2xf32>
func.func @negative_padding(%x: tensor<1x8x8x2xf32>, %w: tensor<3x3x2x2xf32>) -> tensor<1x5x7x2xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[-1, 0], [2, -1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x5x7x2xf32>
  return %0 : tensor<1x5x7x2xf32>
}

// -----

// lhs_dilation with padding: the pad's interior padding is lhs_dilation - 1 and the rebuilt
// conv's lhs_dilation is 1 (conv's own definition of its padded input).
// CHECK-LABEL: func.func @lhs_dilation
// CHECK:         %[[P:.*]] = stablehlo.pad %arg0, %{{.*}}, low = [0, 2, 2, 0], high = [0, 1, 1, 0], interior = [0, 1, 1, 0] {{.*}} -> tensor<1x10x10x2xf32>
// CHECK-NEXT:    stablehlo.convolution(%[[P]], %arg1) {{.*}} window = {pad = {{\[\[}}0, 0], [0, 0]], lhs_dilate = [1, 1]} {{.*}} -> tensor<1x8x8x2xf32>
func.func @lhs_dilation(%x: tensor<1x4x4x2xf32>, %w: tensor<3x3x2x2xf32>) -> tensor<1x8x8x2xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[2, 1], [2, 1]], lhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x8x8x2xf32>
  return %0 : tensor<1x8x8x2xf32>
}

// -----

// rhs_dilation 2 with stride 2: every tap reads phase 0, so one unit-stride conv of the
// strided slice with the whole kernel at rhs_dilation 2 / 2 = 1.
// CHECK-LABEL: func.func @rhs_dilation_divisible
// CHECK:         %[[S:.*]] = stablehlo.slice %arg0 [0:1, 0:9:2, 0:9:2, 0:2]
// CHECK-NEXT:    stablehlo.convolution(%[[S]], %arg1) {{.*}} window = {stride = [1, 1], rhs_dilate = [1, 1]} {{.*}} -> tensor<1x3x3x2xf32>
// CHECK-NOT:     stablehlo.add
func.func @rhs_dilation_divisible(%x: tensor<1x9x9x2xf32>, %w: tensor<3x3x2x2xf32>) -> tensor<1x3x3x2xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], rhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x9x9x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x3x3x2xf32>
  return %0 : tensor<1x3x3x2xf32>
}

// -----

// window_reversal: the conv reads w[3 - t]; phase {0, 2} of the reversed window is w[3], w[1],
// i.e. the kernel slice [1:4:2] still reversed; phase {1, 3} is [0:4:2].
// CHECK-LABEL: func.func @window_reversal
// CHECK:         stablehlo.slice %arg0 [0:1, 0:7:2, 0:8, 0:2]
// CHECK-NEXT:    stablehlo.slice %arg1 [1:4:2, 0:1, 0:2, 0:2]
// CHECK-NEXT:    stablehlo.convolution{{.*}}window = {stride = [1, 1], reverse = [true, false]}
// CHECK-NEXT:    stablehlo.slice %arg0 [0:1, 1:9:2, 0:8, 0:2]
// CHECK-NEXT:    stablehlo.slice %arg1 [0:4:2, 0:1, 0:2, 0:2]
// CHECK-NEXT:    stablehlo.convolution{{.*}}window = {stride = [1, 1], reverse = [true, false]}
// CHECK-NEXT:    stablehlo.add
func.func @window_reversal(%x: tensor<1x9x8x2xf32>, %w: tensor<4x1x2x2xf32>) -> tensor<1x3x8x2xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], reverse = [true, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x9x8x2xf32>, tensor<4x1x2x2xf32>) -> tensor<1x3x8x2xf32>
  return %0 : tensor<1x3x8x2xf32>
}

// -----

// Depthwise (MobileNetV2 3x3/s2 shape): feature_group_count copied onto every partial conv.
// CHECK-LABEL: func.func @depthwise
// CHECK:         stablehlo.pad %arg0, %{{.*}}, low = [0, 0, 0, 0], high = [0, 1, 1, 0]
// CHECK-COUNT-4: stablehlo.convolution{{.*}}window = {stride = [1, 1], pad = {{\[\[}}0, 0], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 4 : i64}
func.func @depthwise(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x1x4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 4 : i64} : (tensor<1x8x8x4xf32>, tensor<3x3x1x4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// Already zero-padding and unit-stride: untouched.
// CHECK-LABEL: func.func @already_canonical
// CHECK-NOT:     stablehlo.pad
// CHECK-NOT:     stablehlo.slice
// CHECK:         stablehlo.convolution(%arg0, %arg1) {{.*}} window = {stride = [1, 1], pad = {{\[\[}}0, 0], [0, 0]]}
// CHECK-NEXT:    return
func.func @already_canonical(%x: tensor<1x8x8x2xf32>, %w: tensor<3x3x2x2xf32>) -> tensor<1x6x6x2xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[0, 0], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x6x6x2xf32>
  return %0 : tensor<1x6x6x2xf32>
}

// -----

// Gated out: rank 3 (one spatial dim).
// CHECK-LABEL: func.func @gated_rank3
// CHECK-NOT:     stablehlo.pad
// CHECK-NOT:     stablehlo.slice
// CHECK:         stablehlo.convolution(%arg0, %arg1) {{.*}} window = {stride = [2], pad = {{\[\[}}1, 1]]}
func.func @gated_rank3(%x: tensor<1x8x2xf32>, %w: tensor<3x2x2xf32>) -> tensor<1x4x2xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [2], pad = [[1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x2xf32>, tensor<3x2x2xf32>) -> tensor<1x4x2xf32>
  return %0 : tensor<1x4x2xf32>
}

// -----

// Gated out: rank 5 (three spatial dims).
// CHECK-LABEL: func.func @gated_rank5
// CHECK-NOT:     stablehlo.slice
// CHECK:         stablehlo.convolution(%arg0, %arg1) {{.*}} window = {stride = [2, 2, 2]}
func.func @gated_rank5(%x: tensor<1x6x6x6x2xf32>, %w: tensor<2x2x2x2x2xf32>) -> tensor<1x3x3x3x2xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, 2, f]x[0, 1, 2, i, o]->[b, 0, 1, 2, f], window = {stride = [2, 2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x6x6x6x2xf32>, tensor<2x2x2x2x2xf32>) -> tensor<1x3x3x3x2xf32>
  return %0 : tensor<1x3x3x3x2xf32>
}

// -----

// Gated out: dynamic shape.
// CHECK-LABEL: func.func @gated_dynamic
// CHECK-NOT:     stablehlo.pad
// CHECK:         stablehlo.convolution(%arg0, %arg1) {{.*}} window = {stride = [2, 2], pad = {{\[\[}}1, 1], [1, 1]]}
func.func @gated_dynamic(%x: tensor<?x8x8x2xf32>, %w: tensor<3x3x2x2xf32>) -> tensor<?x4x4x2xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x8x8x2xf32>, tensor<3x3x2x2xf32>) -> tensor<?x4x4x2xf32>
  return %0 : tensor<?x4x4x2xf32>
}

// -----

// Gated out: a stride above the seed's bound 31.
// CHECK-LABEL: func.func @gated_over_bound
// CHECK-NOT:     stablehlo.slice
// CHECK:         stablehlo.convolution(%arg0, %arg1) {{.*}} window = {stride = [32, 2]}
func.func @gated_over_bound(%x: tensor<1x40x8x2xf32>, %w: tensor<3x3x2x2xf32>) -> tensor<1x2x3x2xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [32, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x40x8x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x2x3x2xf32>
  return %0 : tensor<1x2x3x2xf32>
}

// -----

// Gated out: a spatial extent of 1.
// CHECK-LABEL: func.func @gated_spatial_extent_1
// CHECK-NOT:     stablehlo.slice
// CHECK:         stablehlo.convolution(%arg0, %arg1) {{.*}} window = {stride = [1, 2]}
func.func @gated_spatial_extent_1(%x: tensor<1x1x8x2xf32>, %w: tensor<1x3x2x2xf32>) -> tensor<1x1x3x2xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x8x2xf32>, tensor<1x3x2x2xf32>) -> tensor<1x1x3x2xf32>
  return %0 : tensor<1x1x3x2xf32>
}

// -----

// Spatial extent 3: only with canonicalize-small-extents (off by default).
// CHECK-LABEL: func.func @small_extent
// CHECK-NOT:     stablehlo.pad
// CHECK:         stablehlo.convolution(%arg0, %arg1) {{.*}} window = {stride = [2, 2], pad = {{\[\[}}1, 1], [0, 0]]}
// SMALL-LABEL: func.func @small_extent
// SMALL:         %[[P:.*]] = stablehlo.pad %arg0, %{{.*}}, low = [0, 1, 0, 0], high = [0, 1, 0, 0]
// SMALL-COUNT-4: stablehlo.convolution{{.*}}window = {stride = [1, 1], pad = {{\[\[}}0, 0], [0, 0]]}
func.func @small_extent(%x: tensor<1x3x8x2xf32>, %w: tensor<3x3x2x2xf32>) -> tensor<1x2x3x2xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x3x8x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x2x3x2xf32>
  return %0 : tensor<1x2x3x2xf32>
}

// -----

// The pad path needs an exact zero of the element type: f8E8M0FNU has none (NCC_EUET001).
func.func @no_exact_zero(%x: tensor<1x8x8x2xf8E8M0FNU>, %w: tensor<3x3x2x2xf8E8M0FNU>) -> tensor<1x8x8x2xf8E8M0FNU> {
  // expected-error @+1 {{'stablehlo.convolution' op NCC_EUET001: unsupported element type f8E8M0FNU}}
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x2xf8E8M0FNU>, tensor<3x3x2x2xf8E8M0FNU>) -> tensor<1x8x8x2xf8E8M0FNU>
  return %0 : tensor<1x8x8x2xf8E8M0FNU>
}

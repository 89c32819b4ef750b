// RUN: penguin-opt %s -p 'stablehlo-canonicalize-for-penguin{all-functions=true},stablehlo-canonicalize-conv' --penguin-readiness 2>&1 >/dev/null | filecheck %s --check-prefix=ALL,MEAN,PASS,CHECK
// RUN: penguin-opt %s --penguin-readiness 2>&1 >/dev/null | filecheck %s --check-prefix=ALL,MEAN,RAW
// RUN: penguin-opt %s -p 'stablehlo-canonicalize-for-penguin{all-functions=true resize-nearest-grad-mode=sum},stablehlo-canonicalize-conv{canonicalize-small-extents=true max-stride-or-padding=32}' --penguin-readiness 2>&1 >/dev/null | filecheck %s --check-prefix=ALL,PASS,OPT

// --penguin-readiness on StableHLO: every finding kind, pinned line by line, with its near
// misses beside it. One program (findings are reported per program, not per
// --split-input-file chunk), a function per case; the report lists the findings of the
// module after the pipeline in program order, then the hazards of the input.
// Prefixes: CHECK the for-penguin + conv pipeline on every function; RAW no pipeline (the
// input as it is); OPT the pipeline with other options (resize sum mode, conv gate
// options); ALL every run, MEAN runs with the default gate and mean mode, PASS the runs
// with a pipeline.

// A ResizeNearestGrad of integers is left in mean mode (sum mode lowers it).
func.func @resize_nearest_grad_of_integers_is_left(%arg0: tensor<1x4x4x1xi32>) -> tensor<1x2x2x1xi32> {
  // MEAN-LABEL: penguin_readiness.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [resize-nearest-grad] 'stablehlo.custom_call' @ResizeNearestGrad left (lowerResizeNearestGrad skips the mean of a non-float gradient): Neuron's next stage fails with "op ResizeNearestGrad operation should be lowered to supported operations before reaching this stage"
  // OPT-NOT: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %0 = stablehlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<1x4x4x1xi32>) -> tensor<1x2x2x1xi32>
  return %0 : tensor<1x2x2x1xi32>
}

// A legacy broadcast with a dynamic result stays (and its shape is dynamic).
// ALL-LABEL: penguin_readiness.mlir:[[# @LINE + 1]]:1: warning: [dynamic-shape] @broadcast_of_a_dynamic_operand_is_left has dynamic or unranked types in its signature (argument 0: tensor<?xf32>, result 0: tensor<2x?xf32>): the Penguin tensorizer is a static-shape IR
func.func @broadcast_of_a_dynamic_operand_is_left(%arg0: tensor<?xf32>) -> tensor<2x?xf32> {
  // ALL: penguin_readiness.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [broadcast] legacy 'stablehlo.broadcast' left (replaceBroadcastsWithBroadcastInDim skips a dynamic result): the tensorizer only accepts the canonical broadcast_in_dim
  // ALL-NEXT: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [dynamic-shape] 'stablehlo.broadcast' has a dynamic or unranked result (tensor<2x?xf32>): the Penguin tensorizer is a static-shape IR
  %0 = "stablehlo.broadcast"(%arg0) {broadcast_sizes = array<i64: 2>} : (tensor<?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// Near miss: a static legacy broadcast becomes broadcast_in_dim.
func.func @broadcast_static_is_rewritten(%arg0: tensor<2xf32>) -> tensor<4x2xf32> {
  // RAW: penguin_readiness.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [broadcast] legacy 'stablehlo.broadcast' left (replaceBroadcastsWithBroadcastInDim rewrites it: run stablehlo-canonicalize-for-penguin on @broadcast_static_is_rewritten): the tensorizer only accepts the canonical broadcast_in_dim
  // PASS-NOT: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %0 = "stablehlo.broadcast"(%arg0) {broadcast_sizes = array<i64: 4>} : (tensor<2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// A returned tuple stays.
func.func @tuple_returned_is_left(%arg0: tensor<2xf32>, %arg1: tensor<i32>) -> tuple<tensor<2xf32>, tensor<i32>> {
  // ALL-LABEL: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [tuple] 'stablehlo.tuple' left (used by 'func.return'): the tensorizer is a flat-value IR with no first-class tuples
  %0 = stablehlo.tuple %arg0, %arg1 : tuple<tensor<2xf32>, tensor<i32>>
  return %0 : tuple<tensor<2xf32>, tensor<i32>>
}

// get_tuple_element of a tuple argument stays.
func.func @tuple_element_of_an_argument_is_left(%arg0: tuple<tensor<2xf32>>) -> tensor<2xf32> {
  // ALL-LABEL: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [tuple] 'stablehlo.get_tuple_element' of a block argument left (canonicalizeTupleOp folds only get_tuple_element(tuple(...))): the tensorizer is a flat-value IR with no first-class tuples
  %0 = stablehlo.get_tuple_element %arg0[0] : (tuple<tensor<2xf32>>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// Near miss: get_tuple_element(tuple) folds and the tuple is erased.
func.func @tuple_element_of_a_tuple_is_folded(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  // RAW: penguin_readiness.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [tuple] 'stablehlo.tuple' left (canonicalizeTupleOp folds the get_tuple_element users of it: run stablehlo-canonicalize-for-penguin on @tuple_element_of_a_tuple_is_folded): the tensorizer is a flat-value IR with no first-class tuples
  // PASS-NOT: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %0 = stablehlo.tuple %arg0 : tuple<tensor<2xf32>>
  // RAW: penguin_readiness.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [tuple] 'stablehlo.get_tuple_element' of a 'stablehlo.tuple' left (canonicalizeTupleOp folds it: run stablehlo-canonicalize-for-penguin on @tuple_element_of_a_tuple_is_folded): the tensorizer is a flat-value IR with no first-class tuples
  // PASS-NOT: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %1 = stablehlo.get_tuple_element %0[0] : (tuple<tensor<2xf32>>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// get_dimension_size of a dynamic dimension stays; of a static one it folds.
// ALL-LABEL: penguin_readiness.mlir:[[# @LINE + 1]]:1: warning: [dynamic-shape] @get_dimension_size_of_a_dynamic_dimension_is_left has dynamic or unranked types in its signature (argument 0: tensor<?x4xf32>): the Penguin tensorizer is a static-shape IR
func.func @get_dimension_size_of_a_dynamic_dimension_is_left(%arg0: tensor<?x4xf32>) -> (tensor<i32>, tensor<i32>) {
  // ALL: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [get-dimension-size] 'stablehlo.get_dimension_size' of dynamic dimension 0 of tensor<?x4xf32>: the Penguin tensorizer is a static-shape IR with no run-time dimension-read op
  %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  // RAW: penguin_readiness.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [get-dimension-size] 'stablehlo.get_dimension_size' of static dimension 1 of tensor<?x4xf32>; replaceGetDimensionSize folds it: run stablehlo-canonicalize-for-penguin on @get_dimension_size_of_a_dynamic_dimension_is_left: the Penguin tensorizer is a static-shape IR with no run-time dimension-read op
  // PASS-NOT: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %1 = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<?x4xf32>) -> tensor<i32>
  return %0, %1 : tensor<i32>, tensor<i32>
}

// Dynamic and unranked shapes: in signatures and op results; a static result is fine.
// ALL-LABEL: penguin_readiness.mlir:[[# @LINE + 1]]:1: warning: [dynamic-shape] @opaque has dynamic or unranked types in its signature (argument 0: tensor<*xf32>, result 0: tensor<*xf32>): the Penguin tensorizer is a static-shape IR
func.func private @opaque(tensor<*xf32>) -> tensor<*xf32>

// ALL: penguin_readiness.mlir:[[# @LINE + 1]]:1: warning: [dynamic-shape] @dynamic_and_unranked_results_are_left has dynamic or unranked types in its signature (argument 0: tensor<?x4xf32>, argument 1: tensor<*xf32>, result 0: tensor<?x4xf32>, result 1: tensor<*xf32>): the Penguin tensorizer is a static-shape IR
func.func @dynamic_and_unranked_results_are_left(%arg0: tensor<?x4xf32>, %arg1: tensor<*xf32>) -> (tensor<?x4xf32>, tensor<*xf32>, tensor<4xf32>) {
  // ALL: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [dynamic-shape] 'stablehlo.abs' has a dynamic or unranked result (tensor<?x4xf32>): the Penguin tensorizer is a static-shape IR
  %0 = stablehlo.abs %arg0 : tensor<?x4xf32>
  // ALL: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [dynamic-shape] 'func.call' has a dynamic or unranked result (tensor<*xf32>): the Penguin tensorizer is a static-shape IR
  %1 = func.call @opaque(%arg1) : (tensor<*xf32>) -> tensor<*xf32>
  // ALL-NOT: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %2 = stablehlo.constant dense<1.0> : tensor<4xf32>
  return %0, %1, %2 : tensor<?x4xf32>, tensor<*xf32>, tensor<4xf32>
}

// An AwsNeuronErf config with bytes the Erf handler cannot parse (the pass replaces it).
func.func @erf_backend_config_is_replaced(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // RAW: penguin_readiness.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [erf-backend-config] 'stablehlo.custom_call' @AwsNeuronErf backend_config '{mode: 1}' has bytes the tensorizer's Erf handler cannot parse (' ', ':', '{', '}'; it takes ASCII letters, digits and '"'; replaceInvalidBackendConfigs replaces it: run stablehlo-canonicalize-for-penguin on @erf_backend_config_is_replaced)
  // PASS-NOT: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [
  %0 = stablehlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "{mode: 1}"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Near misses: alphanumeric and '"' configs, none, a dictionary, another target.
func.func @erf_backend_config_alphanumeric_quoted_or_typed_is_fine(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // ALL-NOT: [erf-backend-config]
  %0 = stablehlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "None"} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = stablehlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "a\"1\""} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = stablehlo.custom_call @AwsNeuronErf(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = stablehlo.custom_call @AwsNeuronErf(%arg0) {api_version = 4 : i32, backend_config = {mode = 1 : i32}} : (tensor<4xf32>) -> tensor<4xf32>
  %4 = stablehlo.custom_call @NotErf(%arg0) {backend_config = "{mode: 1}"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Convolutions the gate rejects keep their stride or padding, with the gate's reason.
func.func @conv_1d_strided_is_left_rank_not_4(%arg0: tensor<1x8x1xf32>, %arg1: tensor<3x1x1xf32>) -> tensor<1x3x1xf32> {
  // ALL-LABEL: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [conv-padding-stride] 'stablehlo.convolution' has window_strides [2] (stablehlo-canonicalize-conv gate: rank-not-4): the conv device lowering expects zero-padding, unit-stride convs
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x1xf32>, tensor<3x1x1xf32>) -> tensor<1x3x1xf32>
  return %0 : tensor<1x3x1xf32>
}

func.func @conv_3d_padded_is_left_rank_not_4(%arg0: tensor<1x4x4x4x1xf32>, %arg1: tensor<3x3x3x1x1xf32>) -> tensor<1x4x4x4x1xf32> {
  // ALL-LABEL: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [conv-padding-stride] 'stablehlo.convolution' has padding {{\[\[}}1, 1], [1, 1], [1, 1]] (stablehlo-canonicalize-conv gate: rank-not-4): the conv device lowering expects zero-padding, unit-stride convs
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, 2, f]x[0, 1, 2, i, o]->[b, 0, 1, 2, f], window = {pad = [[1, 1], [1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x4x1xf32>, tensor<3x3x3x1x1xf32>) -> tensor<1x4x4x4x1xf32>
  return %0 : tensor<1x4x4x4x1xf32>
}

// Over the bound (31) by default; max-stride-or-padding=32 rewrites it.
func.func @conv_stride_over_the_bound_is_left(%arg0: tensor<1x40x8x1xf32>, %arg1: tensor<1x1x1x1xf32>) -> tensor<1x2x8x1xf32> {
  // MEAN-LABEL: penguin_readiness.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [conv-padding-stride] 'stablehlo.convolution' has window_strides [32, 1] (stablehlo-canonicalize-conv gate: over-bound): the conv device lowering expects zero-padding, unit-stride convs
  // OPT-NOT: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [32, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x40x8x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x2x8x1xf32>
  return %0 : tensor<1x2x8x1xf32>
}

// Small spatial extents need canonicalize-small-extents=true.
func.func @conv_small_extent_is_left_with_the_flag_off(%arg0: tensor<1x3x3x1xf32>, %arg1: tensor<3x3x1x1xf32>) -> tensor<1x3x3x1xf32> {
  // MEAN-LABEL: penguin_readiness.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [conv-padding-stride] 'stablehlo.convolution' has padding {{\[\[}}1, 1], [1, 1]] (stablehlo-canonicalize-conv gate: small-extent-flag-off): the conv device lowering expects zero-padding, unit-stride convs
  // OPT-NOT: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x3x3x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x3x3x1xf32>
  return %0 : tensor<1x3x3x1xf32>
}

// ALL-LABEL: penguin_readiness.mlir:[[# @LINE + 1]]:1: warning: [dynamic-shape] @conv_dynamic_batch_is_left has dynamic or unranked types in its signature (argument 0: tensor<?x8x8x1xf32>, result 0: tensor<?x3x3x1xf32>): the Penguin tensorizer is a static-shape IR
func.func @conv_dynamic_batch_is_left(%arg0: tensor<?x8x8x1xf32>, %arg1: tensor<3x3x1x1xf32>) -> tensor<?x3x3x1xf32> {
  // ALL: penguin_readiness.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [conv-padding-stride] 'stablehlo.convolution' has window_strides [2, 2] (stablehlo-canonicalize-conv gate: dynamic-shape): the conv device lowering expects zero-padding, unit-stride convs
  // ALL-NEXT: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [dynamic-shape] 'stablehlo.convolution' has a dynamic or unranked result (tensor<?x3x3x1xf32>): the Penguin tensorizer is a static-shape IR
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<?x8x8x1xf32>, tensor<3x3x1x1xf32>) -> tensor<?x3x3x1xf32>
  return %0 : tensor<?x3x3x1xf32>
}

// The gate accepts it, but several phases of an i8 x i8 -> i32 conv would not sum exactly.
func.func @conv_mixed_integer_polyphase_is_left(%arg0: tensor<1x8x8x1xi8>, %arg1: tensor<3x3x1x1xi8>) -> tensor<1x3x3x1xi32> {
  // ALL-LABEL: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [conv-padding-stride] 'stablehlo.convolution' has window_strides [2, 2] (stablehlo-canonicalize-conv explicitlyStride: mixed-integer-accumulation): the conv device lowering expects zero-padding, unit-stride convs
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x1xi8>, tensor<3x3x1x1xi8>) -> tensor<1x3x3x1xi32>
  return %0 : tensor<1x3x3x1xi32>
}

// Near misses: a strided conv the gate accepts is rewritten; a canonical conv is fine.
func.func @conv_strided_inside_the_gate_is_rewritten(%arg0: tensor<1x8x8x1xf32>, %arg1: tensor<3x3x1x1xf32>) -> tensor<1x3x3x1xf32> {
  // RAW: penguin_readiness.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [conv-padding-stride] 'stablehlo.convolution' has window_strides [2, 2] (stablehlo-canonicalize-conv's gate accepts it: run stablehlo-canonicalize-conv): the conv device lowering expects zero-padding, unit-stride convs
  // PASS-NOT: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x3x3x1xf32>
  return %0 : tensor<1x3x3x1xf32>
}

func.func @conv_unit_stride_zero_padding_is_fine(%arg0: tensor<1x8x8x1xf32>, %arg1: tensor<3x3x1x1xf32>) -> tensor<1x6x6x1xf32> {
  // ALL-NOT: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[0, 0], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x6x6x1xf32>
  return %0 : tensor<1x6x6x1xf32>
}

// A sort whose index operand is an iota seen through a reshape: fuseIotaSort misses it.
func.func @iota_sort_through_reshape_is_left(%arg0: tensor<1x8xf32>) -> tensor<1x8xi32> {
  %0 = stablehlo.iota dim = 0 : tensor<8xi32>
  %1 = stablehlo.reshape %0 : (tensor<8xi32>) -> tensor<1x8xi32>
  // ALL-LABEL: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [iota-sort] 'stablehlo.sort' index operand is the positions along sort dimension 1, an iota through stablehlo.reshape (fuseIotaSort matches only an iota operand): the tensorizer tracks the permuted indices intrinsically, an explicit index operand is dead weight
  %2:2 = "stablehlo.sort"(%arg0, %1) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %3 = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %3 : tensor<i1>
  }) : (tensor<1x8xf32>, tensor<1x8xi32>) -> (tensor<1x8xf32>, tensor<1x8xi32>)
  return %2#1 : tensor<1x8xi32>
}

// Through a convert (to a type that holds the positions) and a broadcast_in_dim.
func.func @iota_sort_through_convert_and_broadcast_in_dim_is_left(%arg0: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %0 = stablehlo.iota dim = 0 : tensor<8xi32>
  %1 = stablehlo.convert %0 : (tensor<8xi32>) -> tensor<8xf32>
  %2 = stablehlo.broadcast_in_dim %1, dims = [1] : (tensor<8xf32>) -> tensor<3x8xf32>
  // ALL-LABEL: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [iota-sort] 'stablehlo.sort' index operand is the positions along sort dimension 1, an iota through stablehlo.convert -> stablehlo.broadcast_in_dim (fuseIotaSort matches only an iota operand): the tensorizer tracks the permuted indices intrinsically, an explicit index operand is dead weight
  %3:2 = "stablehlo.sort"(%arg0, %2) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>):
    %4 = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %4 : tensor<i1>
  }) : (tensor<3x8xf32>, tensor<3x8xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>)
  return %3#1 : tensor<3x8xf32>
}

// Near misses, not positions along the sort dimension: a reshape that mixes dimensions
// (row-major 0..7 as 2x4), a convert that wraps (300 positions in i8), an iota along the
// other dimension.
func.func @iota_sort_near_misses_are_fine(%arg0: tensor<2x4xf32>, %arg1: tensor<300xf32>, %arg2: tensor<3x8xf32>) -> (tensor<2x4xi32>, tensor<300xi8>, tensor<3x8xi32>) {
  %0 = stablehlo.iota dim = 0 : tensor<8xi32>
  %1 = stablehlo.reshape %0 : (tensor<8xi32>) -> tensor<2x4xi32>
  // ALL-NOT: penguin_readiness.mlir:[[# @LINE + 1]]:
  %2:2 = "stablehlo.sort"(%arg0, %1) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %9 = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %9 : tensor<i1>
  }) : (tensor<2x4xf32>, tensor<2x4xi32>) -> (tensor<2x4xf32>, tensor<2x4xi32>)
  %3 = stablehlo.iota dim = 0 : tensor<300xi32>
  %4 = stablehlo.convert %3 : (tensor<300xi32>) -> tensor<300xi8>
  // ALL-NOT: penguin_readiness.mlir:[[# @LINE + 1]]:
  %5:2 = "stablehlo.sort"(%arg1, %4) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i8>, %d: tensor<i8>):
    %9 = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %9 : tensor<i1>
  }) : (tensor<300xf32>, tensor<300xi8>) -> (tensor<300xf32>, tensor<300xi8>)
  %6 = stablehlo.iota dim = 0 : tensor<3xi32>
  %7 = stablehlo.broadcast_in_dim %6, dims = [0] : (tensor<3xi32>) -> tensor<3x8xi32>
  // ALL-NOT: penguin_readiness.mlir:[[# @LINE + 1]]:
  %8:2 = "stablehlo.sort"(%arg2, %7) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %9 = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %9 : tensor<i1>
  }) : (tensor<3x8xf32>, tensor<3x8xi32>) -> (tensor<3x8xf32>, tensor<3x8xi32>)
  return %2#1, %5#1, %8#1 : tensor<2x4xi32>, tensor<300xi8>, tensor<3x8xi32>
}

// Near miss: an iota operand fuseIotaSort drops (the penguin-form sort is fine).
func.func @iota_sort_direct_is_fused(%arg0: tensor<8xf32>) -> tensor<8xi32> {
  %0 = stablehlo.iota dim = 0 : tensor<8xi32>
  // RAW: penguin_readiness.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [iota-sort] 'stablehlo.sort' index operand is an iota along the sort dimension (fuseIotaSort fuses it: run stablehlo-canonicalize-for-penguin on @iota_sort_direct_is_fused): the tensorizer tracks the permuted indices intrinsically, an explicit index operand is dead weight
  // PASS-NOT: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %2 = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  }) : (tensor<8xf32>, tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>)
  return %1#1 : tensor<8xi32>
}

// A zero-sized add: removeDeadZeroSizedTensorOps replaces it by an empty constant.
func.func @zero_sized_add_is_removed(%arg0: tensor<0x4xf32>) -> tensor<0x4xf32> {
  // RAW: penguin_readiness.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [zero-sized] 'stablehlo.add' has only zero-element results (tensor<0x4xf32>; removeDeadZeroSizedTensorOps replaces it by an empty constant: run stablehlo-canonicalize-for-penguin on @zero_sized_add_is_removed): Neuron's next stages expect no zero-sized tensors
  // PASS-NOT: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %0 = stablehlo.add %arg0, %arg0 : tensor<0x4xf32>
  return %0 : tensor<0x4xf32>
}

// Near miss: constants and custom calls are not removed (nor reported).
func.func @zero_sized_constant_and_custom_call_are_fine(%arg0: tensor<0x4xf32>) -> (tensor<0x4xf32>, tensor<0x4xf32>) {
  // ALL-NOT: [zero-sized]
  %0 = stablehlo.constant dense<> : tensor<0x4xf32>
  %1 = stablehlo.custom_call @foo(%arg0) : (tensor<0x4xf32>) -> tensor<0x4xf32>
  return %0, %1 : tensor<0x4xf32>, tensor<0x4xf32>
}

// Near miss (hazard): a factor-1 ResizeNearestGrad divides by 1.
func.func @resize_nearest_grad_factor_1_is_no_hazard(%arg0: tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32> {
  // RAW: penguin_readiness.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [resize-nearest-grad] 'stablehlo.custom_call' @ResizeNearestGrad left (lowerResizeNearestGrad lowers it: run stablehlo-canonicalize-for-penguin on @resize_nearest_grad_factor_1_is_no_hazard): Neuron's next stage fails with "op ResizeNearestGrad operation should be lowered to supported operations before reaching this stage"
  // PASS-NOT: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %0 = stablehlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  return %0 : tensor<1x2x2x1xf32>
}

// Hazards of the input, after every finding. A float ResizeNearestGrad is lowered; the
// seed divides the window sum by the window volume (6).
func.func @resize_nearest_grad_of_floats_is_lowered(%arg0: tensor<1x4x6x1xf32>) -> tensor<1x2x2x1xf32> {
  // RAW: penguin_readiness.mlir:[[# @LINE + 5]]:{{[0-9]+}}: warning: [resize-nearest-grad] 'stablehlo.custom_call' @ResizeNearestGrad left (lowerResizeNearestGrad lowers it: run stablehlo-canonicalize-for-penguin on @resize_nearest_grad_of_floats_is_lowered)
  // PASS-NOT: penguin_readiness.mlir:[[# @LINE + 4]]:{{[0-9]+}}: warning
  // CHECK-LABEL: penguin_readiness.mlir:[[# @LINE + 3]]:{{[0-9]+}}: remark: [hazard: resize-nearest-grad-mean] 'stablehlo.custom_call' @ResizeNearestGrad, upsampling factor 1x2x3x1 (window volume 6): Neuron lowers it to the window mean, the window sum divided by 6, where the gradient of nearest upsampling is the window sum; the pipeline's resize-nearest-grad-mode=mean lowers it as the seed does (as read: 000_25e9a1dd83ab8682.txt lowerResizeNearestGrad: "the gradient w.r.t. each input pixel is therefore the mean of the scale^ndim co-located output gradients" / "div = create(DivOp::build(rw, volB))")
  // RAW-LABEL: penguin_readiness.mlir:[[# @LINE + 2]]:{{[0-9]+}}: remark: [hazard: resize-nearest-grad-mean] 'stablehlo.custom_call' @ResizeNearestGrad, upsampling factor 1x2x3x1 (window volume 6): Neuron lowers it to the window mean, the window sum divided by 6, where the gradient of nearest upsampling is the window sum (as read: 000_25e9a1dd83ab8682.txt lowerResizeNearestGrad: "the gradient w.r.t. each input pixel is therefore the mean of the scale^ndim co-located output gradients" / "div = create(DivOp::build(rw, volB))")
  // OPT-LABEL: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: remark: [hazard: resize-nearest-grad-mean] 'stablehlo.custom_call' @ResizeNearestGrad, upsampling factor 1x2x3x1 (window volume 6): Neuron lowers it to the window mean, the window sum divided by 6, where the gradient of nearest upsampling is the window sum; the pipeline's resize-nearest-grad-mode=sum lowers it to the window sum (as read:
  %0 = stablehlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<1x4x6x1xf32>) -> tensor<1x2x2x1xf32>
  return %0 : tensor<1x2x2x1xf32>
}

// convert(constant) i64 -> f64: the seed's float path rounds through f32 (16777217 and
// -16777219 are not f32 values).
func.func @convert_fold_i64_to_f64_differs_as_read() -> tensor<3xf64> {
  %0 = stablehlo.constant dense<[3, 16777217, -16777219]> : tensor<3xi64>
  // ALL: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: remark: [hazard: convert-fold] 'stablehlo.convert' of a constant (tensor<3xi64> -> tensor<3xf64>): 2 of 3 elements fold differently as read, e.g. [1]: 16777217 -> 16777216.0, where convert gives 16777217.0 (as read: 000_25e9a1dd83ab8682.txt replaceConvertsWithConstants: "vals = [ (double)e for e in srcAttr.getValues<float>() ]" (float results) / "vals = srcAttr.getValues<int>()" (integer results))
  %1 = stablehlo.convert %0 : (tensor<3xi64>) -> tensor<3xf64>
  return %1 : tensor<3xf64>
}

// A splat f32 -> i64 beyond the 32-bit int of the seed's integer path: every element.
func.func @convert_fold_splat_f32_out_of_int_range_differs_as_read() -> tensor<1000xi64> {
  %0 = stablehlo.constant dense<3.0e9> : tensor<1000xf32>
  // ALL: penguin_readiness.mlir:[[# @LINE + 1]]:{{[0-9]+}}: remark: [hazard: convert-fold] 'stablehlo.convert' of a constant (tensor<1000xf32> -> tensor<1000xi64>): 1000 of 1000 elements fold differently as read, e.g. [0]: 3000000000.0 -> -2147483648, where convert gives 3000000000 (as read:
  %1 = stablehlo.convert %0 : (tensor<1000xf32>) -> tensor<1000xi64>
  return %1 : tensor<1000xi64>
}

// Near misses: folds both paths compute alike (one f32 rounding then exact widening and
// narrowing; in-range truncation; bf16 -> f32; i32 -> i8 wraps either way; f32 -> f64).
func.func @convert_fold_same_under_both_paths_is_fine() -> (tensor<2xf32>, tensor<3xi32>, tensor<2xf32>, tensor<2xi8>, tensor<2xf64>) {
  // ALL-NOT: [hazard: convert-fold]
  %0 = stablehlo.constant dense<[16777217, -9007199254740993]> : tensor<2xi64>
  %1 = stablehlo.convert %0 : (tensor<2xi64>) -> tensor<2xf32>
  %2 = stablehlo.constant dense<[-2.5, 7.9, 2.0e9]> : tensor<3xf32>
  %3 = stablehlo.convert %2 : (tensor<3xf32>) -> tensor<3xi32>
  %4 = stablehlo.constant dense<[0.1, -3.0]> : tensor<2xbf16>
  %5 = stablehlo.convert %4 : (tensor<2xbf16>) -> tensor<2xf32>
  %6 = stablehlo.constant dense<[300, -129]> : tensor<2xi32>
  %7 = stablehlo.convert %6 : (tensor<2xi32>) -> tensor<2xi8>
  %8 = stablehlo.constant dense<[0.1, 1.0e30]> : tensor<2xf32>
  %9 = stablehlo.convert %8 : (tensor<2xf32>) -> tensor<2xf64>
  return %1, %3, %5, %7, %9 : tensor<2xf32>, tensor<3xi32>, tensor<2xf32>, tensor<2xi8>, tensor<2xf64>
}

// CHECK: {{^}}penguin readiness: 22 findings: dynamic-shape 9, conv-padding-stride 6, iota-sort 2, tuple 2, broadcast 1, get-dimension-size 1, resize-nearest-grad 1; 3 hazards: convert-fold 2, resize-nearest-grad-mean 1{{$}}
// RAW: {{^}}penguin readiness: 32 findings: dynamic-shape 9, conv-padding-stride 7, tuple 4, iota-sort 3, resize-nearest-grad 3, broadcast 2, get-dimension-size 2, erf-backend-config 1, zero-sized 1; 3 hazards: convert-fold 2, resize-nearest-grad-mean 1{{$}}
// OPT: {{^}}penguin readiness: 19 findings: dynamic-shape 9, conv-padding-stride 4, iota-sort 2, tuple 2, broadcast 1, get-dimension-size 1; 3 hazards: convert-fold 2, resize-nearest-grad-mean 1{{$}}

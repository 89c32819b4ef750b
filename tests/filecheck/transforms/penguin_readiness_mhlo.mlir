// RUN: penguin-opt %s -p 'canonicalize-for-penguin{all-functions=true},canonicalize-conv' --penguin-readiness 2>&1 >/dev/null | filecheck %s --check-prefix=ALL,PASS,CHECK
// RUN: penguin-opt %s --penguin-readiness 2>&1 >/dev/null | filecheck %s --check-prefix=ALL,RAW

// --penguin-readiness on MHLO: every finding kind, pinned line by line, with its near
// misses beside it (the StableHLO twin: penguin_readiness.mlir). One program, a function
// per case; findings of the module after the pipeline in program order, then the hazards
// of the input. Prefixes: CHECK canonicalize-for-penguin + canonicalize-conv on every
// function, RAW no pipeline, ALL both runs, PASS the run with the pipeline.

// A ResizeNearestGrad of integers is left in mean mode.
func.func @resize_nearest_grad_of_integers_is_left(%arg0: tensor<1x4x4x1xi32>) -> tensor<1x2x2x1xi32> {
  // ALL-LABEL: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [resize-nearest-grad] 'mhlo.custom_call' @ResizeNearestGrad left (lowerResizeNearestGrad skips the mean of a non-float gradient): Neuron's next stage fails with "op ResizeNearestGrad operation should be lowered to supported operations before reaching this stage"
  %0 = mhlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<1x4x4x1xi32>) -> tensor<1x2x2x1xi32>
  return %0 : tensor<1x2x2x1xi32>
}

// A legacy broadcast with a dynamic result stays; a static one is rewritten.
// ALL-LABEL: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:1: warning: [dynamic-shape] @broadcast_of_a_dynamic_operand_is_left has dynamic or unranked types in its signature (argument 0: tensor<?xf32>, result 0: tensor<2x?xf32>): the Penguin tensorizer is a static-shape IR
func.func @broadcast_of_a_dynamic_operand_is_left(%arg0: tensor<?xf32>, %arg1: tensor<2xf32>) -> (tensor<2x?xf32>, tensor<4x2xf32>) {
  // ALL: penguin_readiness_mhlo.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [broadcast] legacy 'mhlo.broadcast' left (replaceBroadcastsWithBroadcastInDim skips a dynamic result): the tensorizer only accepts the canonical broadcast_in_dim
  // ALL-NEXT: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [dynamic-shape] 'mhlo.broadcast' has a dynamic or unranked result (tensor<2x?xf32>): the Penguin tensorizer is a static-shape IR
  %0 = "mhlo.broadcast"(%arg0) <{broadcast_sizes = dense<2> : tensor<1xi64>}> : (tensor<?xf32>) -> tensor<2x?xf32>
  // RAW: penguin_readiness_mhlo.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [broadcast] legacy 'mhlo.broadcast' left (replaceBroadcastsWithBroadcastInDim rewrites it: run canonicalize-for-penguin on @broadcast_of_a_dynamic_operand_is_left): the tensorizer only accepts the canonical broadcast_in_dim
  // PASS-NOT: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %1 = "mhlo.broadcast"(%arg1) <{broadcast_sizes = dense<4> : tensor<1xi64>}> : (tensor<2xf32>) -> tensor<4x2xf32>
  return %0, %1 : tensor<2x?xf32>, tensor<4x2xf32>
}

// A returned tuple and get_tuple_element of an argument stay; get_tuple_element(tuple)
// folds.
func.func @tuple_returned_and_element_of_an_argument_are_left(%arg0: tensor<2xf32>, %arg1: tuple<tensor<2xf32>>) -> (tuple<tensor<2xf32>, tensor<2xf32>>, tensor<2xf32>, tensor<2xf32>) {
  // ALL-LABEL: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [tuple] 'mhlo.tuple' left (used by 'func.return'): the tensorizer is a flat-value IR with no first-class tuples
  %0 = mhlo.tuple %arg0, %arg0 : tuple<tensor<2xf32>, tensor<2xf32>>
  // ALL: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [tuple] 'mhlo.get_tuple_element' of a block argument left (canonicalizeTupleOp folds only get_tuple_element(tuple(...))): the tensorizer is a flat-value IR with no first-class tuples
  %1 = mhlo.get_tuple_element %arg1[0] : (tuple<tensor<2xf32>>) -> tensor<2xf32>
  // RAW: penguin_readiness_mhlo.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [tuple] 'mhlo.tuple' left (canonicalizeTupleOp folds the get_tuple_element users of it: run canonicalize-for-penguin on @tuple_returned_and_element_of_an_argument_are_left)
  // PASS-NOT: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %2 = mhlo.tuple %arg0 : tuple<tensor<2xf32>>
  // RAW: penguin_readiness_mhlo.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [tuple] 'mhlo.get_tuple_element' of a 'mhlo.tuple' left (canonicalizeTupleOp folds it: run canonicalize-for-penguin on @tuple_returned_and_element_of_an_argument_are_left)
  // PASS-NOT: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %3 = mhlo.get_tuple_element %2[0] : (tuple<tensor<2xf32>>) -> tensor<2xf32>
  return %0, %1, %3 : tuple<tensor<2xf32>, tensor<2xf32>>, tensor<2xf32>, tensor<2xf32>
}

// get_dimension_size of a dynamic dimension stays; of a static one it folds.
// ALL-LABEL: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:1: warning: [dynamic-shape] @get_dimension_size_of_a_dynamic_dimension_is_left has dynamic or unranked types in its signature (argument 0: tensor<?x4xf32>, result 2: tensor<?x4xf32>): the Penguin tensorizer is a static-shape IR
func.func @get_dimension_size_of_a_dynamic_dimension_is_left(%arg0: tensor<?x4xf32>) -> (tensor<i32>, tensor<i32>, tensor<?x4xf32>) {
  // ALL: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [get-dimension-size] 'mhlo.get_dimension_size' of dynamic dimension 0 of tensor<?x4xf32>: the Penguin tensorizer is a static-shape IR with no run-time dimension-read op
  %0 = "mhlo.get_dimension_size"(%arg0) <{dimension = 0 : i64}> : (tensor<?x4xf32>) -> tensor<i32>
  // RAW: penguin_readiness_mhlo.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [get-dimension-size] 'mhlo.get_dimension_size' of static dimension 1 of tensor<?x4xf32>; replaceGetDimensionSize folds it: run canonicalize-for-penguin on @get_dimension_size_of_a_dynamic_dimension_is_left: the Penguin tensorizer is a static-shape IR with no run-time dimension-read op
  // PASS-NOT: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %1 = "mhlo.get_dimension_size"(%arg0) <{dimension = 1 : i64}> : (tensor<?x4xf32>) -> tensor<i32>
  // ALL: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [dynamic-shape] 'mhlo.abs' has a dynamic or unranked result (tensor<?x4xf32>): the Penguin tensorizer is a static-shape IR
  %2 = mhlo.abs %arg0 : tensor<?x4xf32>
  return %0, %1, %2 : tensor<i32>, tensor<i32>, tensor<?x4xf32>
}

// An AwsNeuronErf config the Erf handler cannot parse; near misses: alphanumeric, '"'.
func.func @erf_backend_config_is_replaced(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // RAW: penguin_readiness_mhlo.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [erf-backend-config] 'mhlo.custom_call' @AwsNeuronErf backend_config '{mode: 1}' has bytes the tensorizer's Erf handler cannot parse (' ', ':', '{', '}'; it takes ASCII letters, digits and '"'; replaceInvalidBackendConfigs replaces it: run canonicalize-for-penguin on @erf_backend_config_is_replaced)
  // PASS-NOT: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [
  %0 = mhlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "{mode: 1}"} : (tensor<4xf32>) -> tensor<4xf32>
  // ALL-NOT: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:
  %1 = mhlo.custom_call @AwsNeuronErf(%arg0) {backend_config = "a\"1\""} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// A 1-D conv keeps its stride (rank-not-4); a dynamic_conv its constant padding (the pass
// rewrites only convolution); near misses: padding no constant gives, a canonical conv.
func.func @conv_1d_strided_is_left_rank_not_4(%arg0: tensor<1x8x1xf32>, %arg1: tensor<3x1x1xf32>) -> tensor<1x3x1xf32> {
  // ALL-LABEL: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [conv-padding-stride] 'mhlo.convolution' has window_strides [2] (canonicalize-conv gate: rank-not-4): the conv device lowering expects zero-padding, unit-stride convs
  %0 = mhlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x1xf32>, tensor<3x1x1xf32>) -> tensor<1x3x1xf32>
  return %0 : tensor<1x3x1xf32>
}

func.func @conv_dynamic_conv_padding_is_left(%arg0: tensor<1x8x8x1xf32>, %arg1: tensor<3x3x1x1xf32>, %arg2: tensor<4xi32>) -> (tensor<1x8x8x1xf32>, tensor<1x8x8x1xf32>, tensor<1x6x6x1xf32>) {
  %pad = mhlo.constant dense<1> : tensor<4xi32>
  // ALL-LABEL: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [conv-padding-stride] 'mhlo.dynamic_conv' has padding {{\[\[}}1, 1], [1, 1]] (canonicalize-conv rewrites only 'mhlo.convolution'): the conv device lowering expects zero-padding, unit-stride convs
  %0 = "mhlo.dynamic_conv"(%arg0, %arg1, %pad) {batch_group_count = 1 : i64, dimension_numbers = #mhlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, rhs_dilation = dense<1> : tensor<2xi64>, window_strides = dense<1> : tensor<2xi64>} : (tensor<1x8x8x1xf32>, tensor<3x3x1x1xf32>, tensor<4xi32>) -> tensor<1x8x8x1xf32>
  // ALL-NOT: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:
  %1 = "mhlo.dynamic_conv"(%arg0, %arg1, %arg2) {batch_group_count = 1 : i64, dimension_numbers = #mhlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, rhs_dilation = dense<1> : tensor<2xi64>, window_strides = dense<1> : tensor<2xi64>} : (tensor<1x8x8x1xf32>, tensor<3x3x1x1xf32>, tensor<4xi32>) -> tensor<1x8x8x1xf32>
  // ALL-NOT: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:
  %2 = mhlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x6x6x1xf32>
  return %0, %1, %2 : tensor<1x8x8x1xf32>, tensor<1x8x8x1xf32>, tensor<1x6x6x1xf32>
}

// Near miss: a strided conv the gate accepts is rewritten.
func.func @conv_strided_inside_the_gate_is_rewritten(%arg0: tensor<1x8x8x1xf32>, %arg1: tensor<3x3x1x1xf32>) -> tensor<1x3x3x1xf32> {
  // RAW: penguin_readiness_mhlo.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [conv-padding-stride] 'mhlo.convolution' has window_strides [2, 2] (canonicalize-conv's gate accepts it: run canonicalize-conv): the conv device lowering expects zero-padding, unit-stride convs
  // PASS-NOT: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %0 = mhlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x3x3x1xf32>
  return %0 : tensor<1x3x3x1xf32>
}

// A sort whose index operand is an iota through a reshape (the HLO import of an argsort);
// near misses: a direct iota is fused, a reshape that mixes dimensions is no index ramp.
func.func @iota_sort_through_reshape_is_left(%arg0: tensor<1x8xf32>, %arg1: tensor<8xf32>, %arg2: tensor<2x4xf32>) -> (tensor<1x8xi32>, tensor<8xi32>, tensor<2x4xi32>) {
  %0 = "mhlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<8xi32>
  %1 = mhlo.reshape %0 : (tensor<8xi32>) -> tensor<1x8xi32>
  // ALL-LABEL: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [iota-sort] 'mhlo.sort' index operand is the positions along sort dimension 1, an iota through mhlo.reshape (fuseIotaSort matches only an iota operand): the tensorizer tracks the permuted indices intrinsically, an explicit index operand is dead weight
  %2:2 = "mhlo.sort"(%arg0, %1) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %9 = mhlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    mhlo.return %9 : tensor<i1>
  }) : (tensor<1x8xf32>, tensor<1x8xi32>) -> (tensor<1x8xf32>, tensor<1x8xi32>)
  %3 = "mhlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<8xi32>
  // RAW: penguin_readiness_mhlo.mlir:[[# @LINE + 2]]:{{[0-9]+}}: warning: [iota-sort] 'mhlo.sort' index operand is an iota along the sort dimension (fuseIotaSort fuses it: run canonicalize-for-penguin on @iota_sort_through_reshape_is_left)
  // PASS-NOT: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning
  %4:2 = "mhlo.sort"(%arg1, %3) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %9 = mhlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    mhlo.return %9 : tensor<i1>
  }) : (tensor<8xf32>, tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>)
  %5 = mhlo.reshape %3 : (tensor<8xi32>) -> tensor<2x4xi32>
  // ALL-NOT: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:
  %6:2 = "mhlo.sort"(%arg2, %5) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %9 = mhlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    mhlo.return %9 : tensor<i1>
  }) : (tensor<2x4xf32>, tensor<2x4xi32>) -> (tensor<2x4xf32>, tensor<2x4xi32>)
  return %2#1, %4#1, %6#1 : tensor<1x8xi32>, tensor<8xi32>, tensor<2x4xi32>
}

// Zero-sized ops stay in MHLO (no twin of removeDeadZeroSizedTensorOps); near misses: a
// constant, a custom call.
func.func @zero_sized_add_is_left(%arg0: tensor<0x4xf32>) -> (tensor<0x4xf32>, tensor<0x4xf32>, tensor<0x4xf32>) {
  // ALL-LABEL: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: warning: [zero-sized] 'mhlo.add' has only zero-element results (tensor<0x4xf32>; the MHLO twin has no removeDeadZeroSizedTensorOps): Neuron's next stages expect no zero-sized tensors
  %0 = mhlo.add %arg0, %arg0 : tensor<0x4xf32>
  // ALL-NOT: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:
  %1 = mhlo.constant dense<> : tensor<0x4xf32>
  // ALL-NOT: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:
  %2 = mhlo.custom_call @foo(%arg0) : (tensor<0x4xf32>) -> tensor<0x4xf32>
  return %0, %1, %2 : tensor<0x4xf32>, tensor<0x4xf32>, tensor<0x4xf32>
}

// Hazards of the input, after every finding: a float ResizeNearestGrad (window volume 6),
// a convert(constant) whose float path rounds through f32; near miss: i64 -> f32.
func.func @resize_nearest_grad_and_convert_fold_hazards(%arg0: tensor<1x4x6x1xf32>) -> (tensor<1x2x2x1xf32>, tensor<3xf64>, tensor<2xf32>) {
  // RAW: penguin_readiness_mhlo.mlir:[[# @LINE + 4]]:{{[0-9]+}}: warning: [resize-nearest-grad] 'mhlo.custom_call' @ResizeNearestGrad left (lowerResizeNearestGrad lowers it: run canonicalize-for-penguin on @resize_nearest_grad_and_convert_fold_hazards)
  // PASS-NOT: penguin_readiness_mhlo.mlir:[[# @LINE + 3]]:{{[0-9]+}}: warning
  // CHECK-LABEL: penguin_readiness_mhlo.mlir:[[# @LINE + 2]]:{{[0-9]+}}: remark: [hazard: resize-nearest-grad-mean] 'mhlo.custom_call' @ResizeNearestGrad, upsampling factor 1x2x3x1 (window volume 6): Neuron lowers it to the window mean, the window sum divided by 6, where the gradient of nearest upsampling is the window sum; the pipeline's resize-nearest-grad-mode=mean lowers it as the seed does (as read: 000_25e9a1dd83ab8682.txt lowerResizeNearestGrad: "the gradient w.r.t. each input pixel is therefore the mean of the scale^ndim co-located output gradients" / "div = create(DivOp::build(rw, volB))")
  // RAW-LABEL: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: remark: [hazard: resize-nearest-grad-mean] 'mhlo.custom_call' @ResizeNearestGrad, upsampling factor 1x2x3x1 (window volume 6): Neuron lowers it to the window mean, the window sum divided by 6, where the gradient of nearest upsampling is the window sum (as read:
  %0 = mhlo.custom_call @ResizeNearestGrad(%arg0) : (tensor<1x4x6x1xf32>) -> tensor<1x2x2x1xf32>
  %1 = mhlo.constant dense<[3, 16777217, -16777219]> : tensor<3xi64>
  // ALL: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:{{[0-9]+}}: remark: [hazard: convert-fold] 'mhlo.convert' of a constant (tensor<3xi64> -> tensor<3xf64>): 2 of 3 elements fold differently as read, e.g. [1]: 16777217 -> 16777216.0, where convert gives 16777217.0 (as read: 000_25e9a1dd83ab8682.txt replaceConvertsWithConstants: "vals = [ (double)e for e in srcAttr.getValues<float>() ]" (float results) / "vals = srcAttr.getValues<int>()" (integer results))
  %2 = mhlo.convert %1 : (tensor<3xi64>) -> tensor<3xf64>
  %3 = mhlo.constant dense<[16777217, -9007199254740993]> : tensor<2xi64>
  // ALL-NOT: penguin_readiness_mhlo.mlir:[[# @LINE + 1]]:
  %4 = mhlo.convert %3 : (tensor<2xi64>) -> tensor<2xf32>
  return %0, %2, %4 : tensor<1x2x2x1xf32>, tensor<3xf64>, tensor<2xf32>
}

// CHECK: {{^}}penguin readiness: 13 findings: dynamic-shape 4, conv-padding-stride 2, tuple 2, broadcast 1, get-dimension-size 1, iota-sort 1, resize-nearest-grad 1, zero-sized 1; 2 hazards: convert-fold 1, resize-nearest-grad-mean 1{{$}}
// RAW: {{^}}penguin readiness: 21 findings: dynamic-shape 4, tuple 4, conv-padding-stride 3, broadcast 2, get-dimension-size 2, iota-sort 2, resize-nearest-grad 2, erf-backend-config 1, zero-sized 1; 2 hazards: convert-fold 1, resize-nearest-grad-mean 1{{$}}

// RUN: penguin-opt %s -p inline --split-input-file | filecheck %s

// A JAX-style private helper is inlined and erased.
// CHECK-LABEL: func.func @inline_private_argsort_helper
// CHECK-NOT:     call
// CHECK:         %[[I:.*]] = stablehlo.iota dim = 0 : tensor<8xi32>
// CHECK:         "stablehlo.sort"(%arg0, %[[I]])
// CHECK-NOT:     func.func private @argsort
func.func @inline_private_argsort_helper(%arg0: tensor<8xf32>) -> tensor<8xi32> {
  %0 = call @argsort(%arg0) : (tensor<8xf32>) -> tensor<8xi32>
  return %0 : tensor<8xi32>
}
func.func private @argsort(%arg0: tensor<8xf32>) -> tensor<8xi32> {
  %0 = stablehlo.iota dim = 0 : tensor<8xi32>
  %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %2 = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  }) : (tensor<8xf32>, tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>)
  return %1#1 : tensor<8xi32>
}

// -----

// Nested calls inline through; a public callee stays; a recursive one is left alone.
// CHECK-LABEL: func.func @inline_nested_keep_public_and_recursive
// CHECK:         stablehlo.add %arg0, %arg0
// CHECK:         call @rec
// CHECK-LABEL: func.func public @pub
// CHECK-LABEL: func.func private @rec
// CHECK-NOT:     func.func private @inner
func.func @inline_nested_keep_public_and_recursive(%arg0: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0 = call @pub(%arg0) : (tensor<f32>) -> tensor<f32>
  %1 = call @rec(%arg0) : (tensor<f32>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}
func.func public @pub(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = call @inner(%arg0) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @inner(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<f32>
  return %0 : tensor<f32>
}
func.func private @rec(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = call @rec(%arg0) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Inlined callees still referenced elsewhere (here by called_computations) stay, in
// place; a private function that was never called stays too.
// CHECK-LABEL: func.func @inline_keeps_referenced_and_uncalled_private
// CHECK:         stablehlo.abs
// CHECK:         stablehlo.negate
// CHECK:         stablehlo.custom_call @x({{.*}}called_computations = [@negate_referenced, @abs_referenced]
// CHECK:       func.func private @abs_referenced
// CHECK:       func.func private @never_called
// CHECK:       func.func private @negate_referenced
func.func @inline_keeps_referenced_and_uncalled_private(%a: tensor<f32>) -> tensor<f32> {
  %0 = call @abs_referenced(%a) : (tensor<f32>) -> tensor<f32>
  %1 = call @negate_referenced(%0) : (tensor<f32>) -> tensor<f32>
  %2 = stablehlo.custom_call @x(%1) {called_computations = [@negate_referenced, @abs_referenced]} : (tensor<f32>) -> tensor<f32>
  return %2 : tensor<f32>
}
func.func private @abs_referenced(%a: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.abs %a : tensor<f32>
  return %0 : tensor<f32>
}
func.func private @never_called(%a: tensor<f32>) -> tensor<f32> {
  return %a : tensor<f32>
}
func.func private @negate_referenced(%a: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.negate %a : tensor<f32>
  return %0 : tensor<f32>
}

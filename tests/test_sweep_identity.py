"""The sweep knows an op as the same op after earlier rewriters changed it.

In these bindings ``hash(op)`` is no identity: it changes when an operand of the op is
replaced or an attribute set. The sweep's canonical objects (through which ops are
erased, and by which erased ops are recognized) are keyed by the op's address instead.
"""

from __future__ import annotations

from jaxlib.mlir import ir

import penguin_opt
from penguin_opt import _compat
from penguin_opt.dialect import STABLEHLO
from penguin_opt.ir_util import defining_op_of
from penguin_opt.passes.base import RunState
from penguin_opt.passes.sweep import Sweep, collect

TEXT = """func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<i32>, tensor<i32>) {
  %t = stablehlo.tuple %a, %b : tuple<tensor<2x3xf32>, tensor<2x3xf32>>
  %x = stablehlo.get_tuple_element %t[1] : (tuple<tensor<2x3xf32>, tensor<2x3xf32>>) -> tensor<2x3xf32>
  %n = stablehlo.get_dimension_size %x, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>
  %m = stablehlo.abs %n : tensor<i32>
  return %n, %m : tensor<i32>, tensor<i32>
}
"""


def _sweep(module):
    main = module.regions[0].blocks[0].operations[0].operation
    names = ["stablehlo.get_dimension_size", "stablehlo.abs"]
    return Sweep(STABLEHLO, "test", RunState(), collect([main], names))


def test_op_id_is_the_op_not_the_python_object():
    module = penguin_opt.parse(TEXT)
    with module.context:
        block = module.regions[0].blocks[0].operations[0].regions[0].blocks[0]
        first, again = block.operations[3].operation, block.operations[3].operation
        assert first is not again
        assert _compat.op_id(first) == _compat.op_id(again)
        before = _compat.op_id(first)
        first.attributes["tag"] = ir.UnitAttr.get()
        assert _compat.op_id(again) == before
        assert _compat.op_id(block.operations[2].operation) != before


def test_canonical_object_survives_an_operand_replaced_and_an_attribute_set():
    module = penguin_opt.parse(TEXT)
    with module.context:
        sweep = _sweep(module)
        gds = sweep.worklists["stablehlo.get_dimension_size"][0]
        abs_op = sweep.worklists["stablehlo.abs"][0]
        # what canonicalizeTupleOp does to the get_dimension_size: RAUW of its operand
        gte = defining_op_of(gds.operands[0])
        tup = defining_op_of(gte.operands[0])
        sweep.replace(gte, [tup.operands[1]])
        gds.attributes["tag"] = ir.UnitAttr.get()
        # reached again from a use, the op is the worklist's object
        assert sweep.canonical(defining_op_of(abs_op.operands[0])) is gds
        # erased through an object reached from elsewhere, the worklist entry is erased
        user = next(u.owner for u in gds.results[0].uses if u.owner.name == "stablehlo.abs")
        assert user.operation is not abs_op
        sweep.replace(user.operation, [gds.results[0]])
        assert sweep.is_erased(abs_op)
        assert not sweep.is_erased(gds)


def test_reassociating_rewriters_are_derived_from_their_declaration():
    from penguin_opt.passes import REASSOCIATING, CanonicalizeForPenguin
    from penguin_opt.passes.canonicalize_conv import CanonicalizeConv

    declared = {
        r.name
        for r in (*CanonicalizeForPenguin().rewriters(), *CanonicalizeConv.rewriters())
        if not r.exact
    }
    assert REASSOCIATING == declared == {"lowerResizeNearestGrad", "explicitlyStride"}

"""Dense elements attributes <-> numpy arrays: bits kept, splats exactly when uniform.

Both ways of telling a uniform array (as bytes up to ``_SMALL_BYTES``, with numpy above
it) are exercised at and around that size, for every element type but complex (whose
attributes must not reach Python).
"""

from __future__ import annotations

import numpy as np
import pytest
from jaxlib.mlir import ir

import penguin_opt
from penguin_opt import elements
from penguin_opt.elements import DTYPES, make_elements, read_elements, splat_view, type_key

KEYS = [k for k in DTYPES if not k.startswith("complex")]


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a).reshape(-1)
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    if a.dtype in (DTYPES["i2"], DTYPES["i4"], DTYPES["ui2"], DTYPES["ui4"]):
        return a.astype(np.int16)
    return a.view(f"u{a.dtype.itemsize}")


def _uniform_values(key: str, n: int) -> np.ndarray:
    """``n`` equal values of type ``key``: the bit pattern 1 (a nonzero value in every
    type)."""
    dtype = DTYPES[key]
    if dtype == np.bool_:
        return np.ones(n, np.bool_)
    if key in ("i2", "i4", "ui2", "ui4"):
        return np.ones(n, np.int8).astype(dtype)
    return np.full(n, 1, f"u{dtype.itemsize}").view(dtype)


def _other(key: str) -> np.ndarray:
    dtype = DTYPES[key]
    if dtype == np.bool_:
        return np.zeros(1, np.bool_)
    return np.zeros(1, np.int8).astype(dtype) if dtype.itemsize == 1 else np.zeros(1, dtype)


def _sizes(key: str) -> list[int]:
    item = DTYPES[key].itemsize
    small = elements._SMALL_BYTES // item
    return [2, 7, small, small + 1, 3 * small]


@pytest.mark.parametrize("key", KEYS)
def test_arrays_are_stored_bit_for_bit_and_only_uniform_ones_as_splats(key):
    with penguin_opt.make_context(), ir.Location.unknown():
        for n in _sizes(key):
            t = ir.RankedTensorType.get([n], ir.Type.parse(key))
            uniform = _uniform_values(key, n)
            for where, arr in (
                ("uniform", uniform),
                ("last differs", np.concatenate([uniform[:-1], _other(key)])),
                ("first differs", np.concatenate([_other(key), uniform[1:]])),
                (
                    "middle differs",
                    np.concatenate([uniform[: n // 2], _other(key), uniform[n // 2 + 1 :]]),
                ),
            ):
                attr = make_elements(arr, t)
                assert attr.is_splat == (where == "uniform"), (key, n, where)
                back = read_elements(attr)
                assert back.shape == (n,)
                assert np.array_equal(_bits(back), _bits(arr)), (key, n, where)


@pytest.mark.parametrize("key", ["f32", "i1", "i8", "bf16", "ui4"])
def test_broadcast_and_strided_views_are_stored_as_their_values(key):
    with penguin_opt.make_context(), ir.Location.unknown():
        base = np.concatenate([_uniform_values(key, 3), _other(key)])
        t = ir.RankedTensorType.get([5, 4], ir.Type.parse(key))
        broadcast = np.broadcast_to(base, (5, 4))
        attr = make_elements(broadcast, t)
        assert not attr.is_splat
        assert np.array_equal(_bits(read_elements(attr)), _bits(broadcast))
        one = np.broadcast_to(base[:1].reshape(()), (5, 4))  # every stride 0
        splat = make_elements(one, t)
        assert splat.is_splat
        assert np.array_equal(_bits(read_elements(splat)), _bits(one))
        column = np.ascontiguousarray(np.broadcast_to(base, (4, 4)).T)[:, ::-1][:, :4]
        tt = ir.RankedTensorType.get([4, 4], ir.Type.parse(key))
        assert np.array_equal(_bits(read_elements(make_elements(column, tt))), _bits(column))


@pytest.mark.parametrize("key", ["f32", "f64", "i1", "i32", "ui8", "f16", "bf16", "f8E4M3FN"])
def test_reading_with_the_callers_type_info_reads_the_same(key):
    with penguin_opt.make_context(), ir.Location.unknown():
        arr = np.concatenate([_uniform_values(key, 5), _other(key)]).reshape(2, 3)
        t = ir.RankedTensorType.get([2, 3], ir.Type.parse(key))
        for attr in (
            make_elements(arr, t),
            make_elements(_uniform_values(key, 6).reshape(2, 3), t),
        ):
            key_of = type_key(ir.ShapedType(attr.type).element_type)
            plain, given = read_elements(attr), read_elements(attr, key_of, (2, 3))
            assert given.shape == plain.shape == (2, 3)
            assert np.array_equal(_bits(given), _bits(plain))


def test_a_splat_view_is_read_only_and_holds_the_one_value_everywhere():
    view = splat_view(np.array([2.5], np.float32), (3, 0, 2))
    assert view.shape == (3, 0, 2)
    view = splat_view(np.float32(2.5).reshape(()), (3, 2))
    assert view.shape == (3, 2)
    assert not any(view.strides)
    assert (view == np.float32(2.5)).all()
    with pytest.raises(ValueError, match="read-only"):
        view[0, 0] = 1

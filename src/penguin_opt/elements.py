"""Dense elements attributes <-> numpy arrays, for every element type jaxlib can parse.

Reading uses the attribute's buffer where the bindings offer one (i1, 8-64 bit integers,
f16/f32/f64); for the other types (bf16, the f8/f6/f4 kinds, i2/i4, complex) it reads the
printer's text, which is hex for attributes of more than 100 elements and round-trippable
decimal (or hex bit patterns for NaN/Inf) below that. Writing always goes through a raw
bit-castable buffer, so values are stored bit for bit. No per-element Python work happens
for large attributes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir

_FLOAT_DTYPES: dict[str, np.dtype] = {
    "f64": np.dtype(np.float64),
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "f8E4M3FNUZ": np.dtype(ml_dtypes.float8_e4m3fnuz),
    "f8E5M2FNUZ": np.dtype(ml_dtypes.float8_e5m2fnuz),
    "f8E4M3B11FNUZ": np.dtype(ml_dtypes.float8_e4m3b11fnuz),
    "f8E4M3": np.dtype(ml_dtypes.float8_e4m3),
    "f8E3M4": np.dtype(ml_dtypes.float8_e3m4),
    "f8E8M0FNU": np.dtype(ml_dtypes.float8_e8m0fnu),
    "f6E2M3FN": np.dtype(ml_dtypes.float6_e2m3fn),
    "f6E3M2FN": np.dtype(ml_dtypes.float6_e3m2fn),
    "f4E2M1FN": np.dtype(ml_dtypes.float4_e2m1fn),
}
_INT_DTYPES: dict[str, np.dtype] = {
    "i1": np.dtype(np.bool_),
    "i2": np.dtype(ml_dtypes.int2),
    "i4": np.dtype(ml_dtypes.int4),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "ui2": np.dtype(ml_dtypes.uint2),
    "ui4": np.dtype(ml_dtypes.uint4),
    "ui8": np.dtype(np.uint8),
    "ui16": np.dtype(np.uint16),
    "ui32": np.dtype(np.uint32),
    "ui64": np.dtype(np.uint64),
}
_COMPLEX_DTYPES: dict[str, np.dtype] = {
    "complex<f32>": np.dtype(np.complex64),
    "complex<f64>": np.dtype(np.complex128),
}
DTYPES: dict[str, np.dtype] = {**_FLOAT_DTYPES, **_INT_DTYPES, **_COMPLEX_DTYPES}


class UnsupportedElementType(ValueError):
    """The element type has no numpy counterpart here (e.g. index, tf32, quantized)."""


# The spelling of the element types that have a Python class of their own, by class:
# printing a type through the bindings costs microseconds, a dict lookup nanoseconds.
_KEY_BY_CLASS: dict[type, str] = {
    cls: key
    for cls, key in (
        (getattr(ir, name, None), key)
        for name, key in (
            ("F64Type", "f64"),
            ("F32Type", "f32"),
            ("F16Type", "f16"),
            ("BF16Type", "bf16"),
            ("Float8E4M3FNType", "f8E4M3FN"),
            ("Float8E5M2Type", "f8E5M2"),
            ("Float8E4M3FNUZType", "f8E4M3FNUZ"),
            ("Float8E5M2FNUZType", "f8E5M2FNUZ"),
            ("Float8E4M3B11FNUZType", "f8E4M3B11FNUZ"),
            ("Float8E4M3Type", "f8E4M3"),
            ("Float8E3M4Type", "f8E3M4"),
            ("Float8E8M0FNUType", "f8E8M0FNU"),
            ("Float6E2M3FNType", "f6E2M3FN"),
            ("Float6E3M2FNType", "f6E3M2FN"),
            ("Float4E2M1FNType", "f4E2M1FN"),
            ("FloatTF32Type", "tf32"),
            ("IndexType", "index"),
        )
    )
    if cls is not None
}


def type_key(element_type: ir.Type) -> str:
    """Canonical spelling of an element type: 'f32', 'ui8', 'complex<f32>'; si* -> i*."""
    cls = type(element_type)
    key = _KEY_BY_CLASS.get(cls)
    if key is not None:
        return key
    if cls is ir.IntegerType:
        width = element_type.width
        return f"ui{width}" if element_type.is_unsigned else f"i{width}"
    text = str(element_type)
    if text.startswith("si"):
        text = text[1:]
    return text


def dtype_of(element_type: ir.Type) -> np.dtype:
    try:
        return DTYPES[type_key(element_type)]
    except KeyError:
        raise UnsupportedElementType(f"element type {element_type} is not supported") from None


def is_float_key(key: str) -> bool:
    return key in _FLOAT_DTYPES


# The sub-byte integers: stored one per byte, so their storage is a cast, not a view.
_SUB_BYTE_INTS = frozenset(_INT_DTYPES[k] for k in ("i2", "i4", "ui2", "ui4"))


def _storage_dtype(dtype: np.dtype) -> np.dtype:
    """The numpy dtype whose bytes are MLIR's raw storage for one element."""
    if dtype == np.bool_:
        return np.dtype(np.bool_)
    if dtype.kind == "c":
        return np.dtype(np.float32 if dtype.itemsize == 8 else np.float64)
    if dtype in _SUB_BYTE_INTS:
        return np.dtype(np.int8 if dtype in (_INT_DTYPES["i2"], _INT_DTYPES["i4"]) else np.uint8)
    return np.dtype(f"u{dtype.itemsize}")


def _from_storage(raw: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype == np.bool_:
        return raw.astype(np.bool_)
    if dtype.kind == "c":
        return raw.view(dtype)
    if dtype in _SUB_BYTE_INTS:
        return raw.astype(dtype)
    return raw.view(dtype)


_NATIVE_BUFFER_KEYS = {
    "i1",
    "i8",
    "i16",
    "i32",
    "i64",
    "ui8",
    "ui16",
    "ui32",
    "ui64",
    "f16",
    "f32",
    "f64",
}
_BODY = re.compile(r"^dense<(.*)>\s*:\s*[^:]+$", re.S)


def _parse_body(body: str, key: str, dtype: np.dtype) -> np.ndarray:
    """Parse the text inside ``dense<...>`` (decimal, per-element hex, or raw hex)."""
    storage = _storage_dtype(dtype)
    if body.startswith('"0x'):
        raw = np.frombuffer(bytes.fromhex(body[3:-1]), dtype=storage)
        if dtype.kind == "c":
            return raw.view(dtype)
        return _from_storage(raw, dtype)
    flat = body.replace("[", "").replace("]", "")
    if dtype.kind == "c":
        pairs = re.findall(r"\(([^,()]+),([^,()]+)\)", flat)
        parts = np.array([_scalar(t.strip(), key[8:-1]) for pair in pairs for t in pair])
        comp = _FLOAT_DTYPES[key[8:-1]]
        return parts.astype(comp).view(dtype)
    tokens = [t.strip() for t in flat.split(",")] if flat.strip() else []
    if dtype == np.bool_:
        return np.array([t == "true" or t == "1" for t in tokens], dtype=np.bool_)
    if dtype.kind in "iu" or key in ("i2", "i4", "ui2", "ui4"):
        return np.array([int(t, 0) for t in tokens], dtype=object).astype(dtype)
    values = [_scalar(t, key) for t in tokens]
    return np.array(values, dtype=dtype) if values else np.zeros(0, dtype)


def _scalar(token: str, key: str) -> np.generic:
    """One float token: decimal (round-trippable in its own type) or a hex bit pattern."""
    dtype = _FLOAT_DTYPES[key]
    if token.startswith("0x") or token.startswith("0X"):
        bits = np.array([int(token, 16)], dtype=np.uint64).astype(_storage_dtype(dtype))
        return bits.view(dtype)[0]
    return dtype.type(np.float64(token))


def read_elements(
    attr: ir.Attribute, key: str | None = None, shape: tuple[int, ...] | None = None
) -> np.ndarray:
    """The values of a DenseElementsAttr as a numpy array of the attribute's shape.

    ``key`` and ``shape``: the attribute type's element type key (``type_key``) and shape,
    if the caller has them at hand (both, or neither).
    """
    dense = attr if isinstance(attr, ir.DenseElementsAttr) else ir.DenseElementsAttr(attr)
    if key is None or shape is None:
        shaped = ir.ShapedType(dense.type)
        shape = tuple(shaped.shape)
        key = type_key(shaped.element_type)
    dtype = DTYPES.get(key)
    if dtype is None:
        raise UnsupportedElementType(f"element type {key} is not supported")
    if key in _NATIVE_BUFFER_KEYS:
        # A read-only view of the attribute's storage (it lives as long as the context,
        # which the view keeps alive): folds copy only what they produce.
        arr = np.asarray(dense)
        if arr.dtype != dtype:
            arr = arr.view(dtype) if arr.dtype.itemsize == dtype.itemsize else arr.astype(dtype)
        if arr.shape == shape:
            return arr
        if dense.is_splat:
            return splat_view(arr.reshape(-1)[:1], shape)
        return arr.reshape(shape)
    match = _BODY.match(str(dense))
    if match is None:
        raise UnsupportedElementType(f"cannot read elements of {dense.type}")
    flat = _parse_body(match.group(1).strip(), key, dtype)
    size = int(np.prod(shape, dtype=np.int64))
    if flat.size == 1 and size != 1:
        return splat_view(flat, shape)
    return flat.reshape(shape)


def make_elements(array: np.ndarray, shaped_type: ir.Type) -> ir.DenseElementsAttr:
    """A DenseElementsAttr of ``shaped_type`` holding ``array``'s values bit for bit.

    A uniform array becomes a splat (one stored element), as MLIR's own folders do.
    """
    shaped = ir.ShapedType(shaped_type)
    element_type = shaped.element_type
    dtype = dtype_of(element_type)
    arr = np.asarray(array)
    if arr.dtype != dtype:
        raise TypeError(f"array dtype {arr.dtype} does not match {element_type}")
    storage_dtype, widen, may_splat = _STORAGE[dtype]
    if may_splat and arr.size > 1 and not any(arr.strides):
        # A broadcast of one element (every stride 0): a splat, without materializing it.
        flat = arr[(slice(0, 1),) * arr.ndim].reshape(1)
    elif arr.flags.c_contiguous:
        flat = arr.reshape(-1)
    else:
        # ascontiguousarray: numpy's fast copy of a strided view (reshape(-1) of a
        # broadcast view copies element by element)
        flat = np.ascontiguousarray(arr).reshape(-1)
    storage = flat.astype(storage_dtype) if widen else flat.view(storage_dtype)
    if may_splat and storage.size > 1 and _uniform(storage):
        storage = storage[:1]
    return ir.DenseElementsAttr.get(storage, type=element_type, shape=shaped.shape)


# By dtype: (its storage dtype, whether the storage is a cast rather than a view, whether
# a uniform array becomes a splat (not complex ones)).
_STORAGE: dict[np.dtype, tuple[np.dtype, bool, bool]] = {
    dt: (_storage_dtype(dt), dt in _SUB_BYTE_INTS, dt.kind != "c") for dt in DTYPES.values()
}
# Arrays of at most this many bytes are compared as bytes objects: numpy's per-call cost
# is most of the work for them.
_SMALL_BYTES = 4096


def _uniform(storage: np.ndarray) -> bool:
    """Whether every element of a 1-D storage array (unsigned integers, or bools or bytes
    for the types stored so) has the same bits. Most arrays differ early, so a prefix is
    compared first and the whole array only when the prefix is uniform."""
    if storage.nbytes <= _SMALL_BYTES:
        raw = storage.tobytes()
        return raw == raw[: storage.itemsize] * storage.size
    first = storage[0]
    if not (storage[:64] == first).all():
        return False
    return bool((storage == first).all())


def splat_view(one: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """A read-only array of ``shape`` whose every element is ``one``'s single element,
    without materializing it (every stride 0, as ``np.broadcast_to`` makes, cheaper)."""
    flat = np.ascontiguousarray(one).reshape(1)
    view = np.ndarray(tuple(shape), flat.dtype, flat, 0, (0,) * len(shape))
    view.flags.writeable = False
    return view


_VALUE_ATTR = re.compile(r"value = (dense<.*?>\s*:\s*tensor<[^>]*>>?)")


def constant_value(op: ir.Operation) -> np.ndarray | None:
    """The values of a ``*.constant`` op (None unless its attribute is a dense one).

    Complex constants are read from the op's printed form: the bindings abort the process
    when a complex-typed elements attribute is converted to a Python object.
    """
    result_type = op.results[0].type
    element = ir.ShapedType(result_type).element_type
    if type_key(element).startswith("complex"):
        copy = op.clone()  # printed detached: in place, printing numbers the whole function
        try:
            text = copy.get_asm(print_generic_op_form=True)
        finally:
            copy.erase()
        match = _VALUE_ATTR.search(text)
        if match is None:
            return None
        body = _BODY.match(match.group(1))
        if body is None:
            return None
        shape = tuple(ir.ShapedType(result_type).shape)
        flat = _parse_body(body.group(1).strip(), type_key(element), dtype_of(element))
        if flat.size == 1 and int(np.prod(shape, dtype=np.int64)) != 1:
            return splat_view(flat, shape)
        return flat.reshape(shape)
    attr = op.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr):
        return None
    return read_elements(attr)


# A resource elements attribute (``dense_resource<key>``) and the blobs a module carries
# (``{-# dialect_resources: { builtin: { key: "0x<alignment, 4 bytes><data>" } } #-}``)
_RESOURCE_HANDLE = re.compile(r'dense_resource<([\w.$-]+|"(?:[^"\\]|\\.)*")>')
_RESOURCE_BLOB = re.compile(
    r'^[ \t]*([\w.$-]+|"(?:[^"\\]|\\.)*")[ \t]*:[ \t]*"0x([0-9A-Fa-f]*)"', re.M
)


_CONSTANT_OPS = ("stablehlo.constant", "mhlo.constant", "arith.constant", "chlo.constant")


def is_complex_tensor(t: ir.Type) -> bool:
    """A ranked tensor of complex elements (whose elements attributes must not reach
    Python: the bindings abort on them, see ``constant_value``)."""
    return isinstance(t, ir.RankedTensorType) and isinstance(t.element_type, ir.ComplexType)


class ResourceError(ValueError):
    """A ``dense_resource`` constant whose values cannot be had (the message names it)."""


def inline_resources(module: ir.Operation) -> None:
    """Constants whose value is a ``dense_resource`` (torch-mlir's and IREE's weights, the
    constants MLIR's printer elides) get the same values as a dense attribute: XLA refuses
    a resource, the reference interpreter reads one as whatever memory it finds (complex
    ones through MLIR's hex form: their values must not reach Python, see
    ``constant_value``). ResourceError for a resource the module has no values for
    (``dense_resource<__elided__>``: elided when it was printed) or of the wrong size."""
    from .io import module_text
    from .ir_util import ops_named

    constants, complex_constants = [], []
    for op in ops_named(module, _CONSTANT_OPS):
        if len(op.results) != 1 or "value" not in op.attributes:
            continue
        if is_complex_tensor(op.results[0].type):
            if "dense_resource<" in str(op):  # (its printed form: the attribute is no
                complex_constants.append(op)  # Python object to read, see constant_value)
            continue
        value = op.attributes["value"]
        if type(value) is not ir.Attribute:
            continue  # (the bindings give the kinds they know as their own classes)
        try:
            ir.DenseResourceElementsAttr(value)
        except ValueError:
            continue
        constants.append(op)
    if not constants and not complex_constants:
        return
    text = module_text(module)
    marker = text.rfind("{-#")
    blobs = dict(_RESOURCE_BLOB.findall(text, marker)) if marker >= 0 else {}

    def data_of(key: str, shaped: ir.ShapedType, itemsize: int) -> bytes:
        if key not in blobs:
            # (a context renames a key parsed twice: __elided___1)
            shown = re.sub(r"^__elided__(_\d+)*$", "__elided__", key)
            raise ResourceError(
                f"the values of 'dense_resource<{shown}>' are not in the program (elided "
                "when it was printed)"
            )
        data = bytes.fromhex(blobs[key])[4:]  # after the blob's alignment
        if len(data) != math.prod(shaped.shape) * itemsize:
            raise ResourceError(
                f"'dense_resource<{key}>' holds {len(data)} bytes, not {shaped.shape} x {itemsize}"
            )
        return data

    for op in constants:
        attr = ir.DenseResourceElementsAttr(op.attributes["value"])
        key = _RESOURCE_HANDLE.search(str(attr))[1]
        shaped = ir.ShapedType(attr.type)
        try:
            dtype = dtype_of(shaped.element_type)
        except UnsupportedElementType as err:
            raise ResourceError(f"'dense_resource<{key}>': {err}") from None
        data = data_of(key, shaped, dtype.itemsize)
        values = np.frombuffer(data, dtype=dtype).reshape(shaped.shape)
        op.attributes["value"] = make_elements(values, attr.type)
    for op in complex_constants:
        # The blob's bytes as MLIR's hex form of the same data, in a copy of the op made
        # from its text: a complex elements attribute is no Python object to hand over.
        generic = op.get_asm(print_generic_op_form=True, enable_debug_info=True)
        handle = _RESOURCE_HANDLE.search(generic)
        t = ir.RankedTensorType(op.results[0].type)
        part = ir.ComplexType(t.element_type).element_type
        data = data_of(handle[1], t, 2 * dtype_of(part).itemsize)
        text = (
            f'{generic[: handle.start()]}dense<"0x{data.hex().upper()}">{generic[handle.end() :]}'
        )
        dense = ir.Operation.parse(text)
        ir.InsertionPoint(op).insert(dense)
        op.results[0].replace_all_uses_with(dense.results[0])
        op.erase()


__all__ = [
    "DTYPES",
    "ResourceError",
    "UnsupportedElementType",
    "constant_value",
    "dtype_of",
    "inline_resources",
    "is_complex_tensor",
    "is_float_key",
    "make_elements",
    "read_elements",
    "splat_view",
    "type_key",
]

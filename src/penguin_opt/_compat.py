"""Every private jax/jaxlib/MLIR-bindings interface penguin-opt uses, in one place.

The MLIR Python bindings (``jaxlib.mlir.ir``, ``passmanager``, ``dialects``) are the IR and
are imported where they are used. What is *not* a public API lives here, with one small
shim per version difference, so a new jaxlib breaks this module and nothing else:

* ``jaxlib.mlir._mlir_libs._jax_mlir_ext``: jaxlib's dialect registration and
  ``inlined_func_call`` (jaxlib < 0.10.1 takes the block to append to, newer ones insert
  at the current insertion point).
* ``jaxlib.mlir._mlir_libs._mlir.rewrite``: the pattern set and MLIR's walk-and-apply
  driver (no public module re-exports it in jaxlib).
* HLO import: ``jaxlib._jax.mlir.hlo_to_stablehlo`` and the HLO module class
  (``jaxlib._hlo`` from 0.10.2 on, ``jaxlib._jax`` before).
* HLO export: ``jaxlib._jax.mlir.mlir_module_to_xla_computation`` (what jax's
  ``Lowered.compiler_ir("hlo")`` calls; the same signature from 0.9.2 through 0.12.0.1,
  its ``XlaComputation`` in ``jaxlib._hlo`` from 0.10.2 on, ``jaxlib._jax`` before).
* ``op_id``: an op's identity, the pointer in its ``_CAPIPtr`` capsule (``hash(op)`` is
  not one in these bindings: it changes when an operand is replaced or an attribute set,
  and each access hands out a new Python object).
* ``native_library_path``: jaxlib's shared library holding MLIR (``--list-passes`` reads
  its strings for pass names).
* XLA CPU compile-and-run for the equivalence oracle: the backend through the public
  ``jax.extend.backend``; ``DeviceList``/``CompileOptions`` from ``jaxlib.xla_client``.
  ``initialize_cpu_lapack``: ``jaxlib.lapack._lapack.initialize``, which jax calls before
  it lowers a linear-algebra op (the LAPACK custom calls crash until it has run).

Supported: jax/jaxlib 0.10.0 through 0.12.x (see ``pyproject.toml``).
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
from jaxlib.mlir._mlir_libs._mlir import rewrite

if TYPE_CHECKING:
    from pathlib import Path
    from types import ModuleType

    from jaxlib.xla_client import Device, LoadedExecutable, XlaComputation

__all__ = [
    "E8M0_CONVERTS_AS_MODELLED",
    "JAXLIB_VERSION",
    "cpu_compile_and_load",
    "export_back_compat_modules",
    "hlo_module_class",
    "hlo_text_to_proto",
    "hlo_to_stablehlo",
    "inlined_func_call",
    "mlir_to_xla_computation",
    "native_library_path",
    "op_id",
    "primitive_test_harnesses",
    "refine_polymorphic_shapes",
    "register_dialects",
    "rewrite",
]


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split(".")[:3]:
        match = re.match(r"\d+", piece)  # "0rc1" -> 0
        parts.append(int(match.group()) if match else 0)
    return tuple(parts)


def _jaxlib_version() -> tuple[int, ...]:
    from jaxlib import version

    return _version_tuple(version.__version__)


JAXLIB_VERSION: tuple[int, ...] = _jaxlib_version()

# jaxlib 0.10.1 renamed inlined_func_call's block argument away (it now inserts at the
# current insertion point) and moved the HLO module class from jaxlib._jax to jaxlib._hlo
# in 0.10.2.
_INLINE_TAKES_BLOCK = JAXLIB_VERSION < (0, 10, 1)
_HLO_MODULE_IN_JAX = JAXLIB_VERSION < (0, 10, 2)

# The reference interpreter's f8E8M0FNU conversions (LLVM's APFloat) changed after
# jaxlib 0.10.2: a negative value used to keep a sign bit in bit 7 (what convert_math
# reproduces, measured on 0.9.2 and 0.10.2) and loses it in 0.12.0.1; the NaN 0xff reads
# as NaN instead of inf from 0.11.2 on (measured), while 0.11.2 still converts to
# f8E8M0FNU as 0.10.2 did. Where the installed interpreter is not known to match convert_math,
# replaceConvertsWithConstants leaves f8E8M0FNU converts alone (results unchanged).
E8M0_CONVERTS_AS_MODELLED: bool = JAXLIB_VERSION <= (0, 10, 2)


def register_dialects(registry: ir.DialectRegistry) -> None:
    """Register every upstream dialect jaxlib ships (func, arith, tensor, shape, ...)."""
    _jax_mlir_ext.register_dialects(registry)


def inlined_func_call(
    callee: ir.Operation, args: Sequence[ir.Value], call: ir.Operation
) -> list[ir.Value]:
    """A copy of ``callee``'s single-block body, inserted right before ``call`` with
    ``args`` for its arguments; returns the values of the copied ``return``."""
    callee, call = callee.operation, call.operation
    if not _INLINE_TAKES_BLOCK:
        with ir.InsertionPoint(call), call.location:
            return list(_jax_mlir_ext.inlined_func_call(callee, list(args)))
    # Old signature: the copy is appended to ``block``; move it in front of the call.
    block = call.block
    count = len(block.operations)
    with call.location:
        values = list(_jax_mlir_ext.inlined_func_call(callee, list(args), block))
    operations = block.operations
    for index in range(count, len(operations)):
        operations[index].move_before(call)
    return values


@functools.cache
def _hlo_module_owner() -> ModuleType:
    return importlib.import_module("jaxlib._jax" if _HLO_MODULE_IN_JAX else "jaxlib._hlo")


def hlo_module_class() -> type:
    """jaxlib's ``HloModule`` (``from_serialized_hlo_module_proto``, ...)."""
    return _hlo_module_owner().HloModule


def hlo_text_to_proto(text: str) -> bytes:
    """A serialized ``HloModuleProto`` from HLO text (raises on invalid text)."""
    return _hlo_module_owner().hlo_module_from_text(text).as_serialized_hlo_module_proto()


def hlo_to_stablehlo(proto: bytes) -> bytes:
    """XLA's HLO importer: a serialized HloModuleProto in, StableHLO bytecode out."""
    from jaxlib import _jax

    return _jax.mlir.hlo_to_stablehlo(proto)


def mlir_to_xla_computation(program: bytes | str) -> XlaComputation:
    """XLA's MLIR->HLO converter: StableHLO/MHLO/CHLO bytecode or text (entry ``@main``)
    in, an ``XlaComputation`` (``as_hlo_text``, ``as_serialized_hlo_module_proto``) out;
    raises an XLA status error (``JaxRuntimeError``) naming what it cannot convert."""
    from jaxlib import _jax

    return _jax.mlir.mlir_module_to_xla_computation(
        program, use_tuple_args=False, return_tuple=False
    )


def refine_polymorphic_shapes(bytecode: bytes) -> bytes:
    """jax's shape refinement, what it runs before it executes a shape-polymorphic export:
    a module (bytecode) whose @main has static argument types in, the module with shapes
    propagated through it out (StableHLO's refine-shapes extended with jax's shape custom
    calls, e.g. ``stablehlo.dynamic_top_k``, then canonicalize-dynamism; jax's shape
    assertions checked and dropped). Raises an XLA status error (``JaxRuntimeError``)
    naming what failed, e.g. a false shape assertion. ``jaxlib._jax.mlir.
    refine_polymorphic_shapes`` (0.9.2 through 0.12.0.1)."""
    from jaxlib import _jax

    return _jax.mlir.refine_polymorphic_shapes(
        bytecode, enable_shape_assertions=True, validate_static_shapes=False
    )


def cpu_compile_and_load(text: str) -> tuple[LoadedExecutable, Device]:
    """Compile StableHLO ``text`` for XLA CPU; returns (executable, device)."""
    from jax.extend import backend as jex_backend
    from jaxlib import xla_client

    backend = jex_backend.get_backend("cpu")
    devices = backend.devices()[:1]
    exe = backend.compile_and_load(
        text.encode(), xla_client.DeviceList(tuple(devices)), xla_client.CompileOptions()
    )
    return exe, devices[0]


def initialize_cpu_lapack() -> None:
    """Load the LAPACK and BLAS functions behind jaxlib's CPU custom calls
    (``lapack_sgetrf_ffi``, ...). jax does it when it first lowers a linear-algebra op;
    an executable compiled from text that calls them before that dies by SIGSEGV when it
    runs. ``jaxlib.lapack._lapack.initialize`` (0.9.2 through 0.12.0.1)."""
    from jaxlib import lapack

    lapack._lapack.initialize()


def primitive_test_harnesses() -> list | None:
    """jax's table of primitive test harnesses (``jax._src.internal_test_util.
    test_harnesses.all_harnesses``, written for jax2tf), or None in a jax without it.
    Only ``tools.corpus.harnesses`` reads it (a sweep tool, not the package's work)."""
    try:
        from jax._src.internal_test_util import test_harnesses
    except ImportError:
        return None
    return list(test_harnesses.all_harnesses)


def export_back_compat_modules() -> list[ModuleType]:
    """The modules of jax's export backward-compatibility test data (``jax._src.
    internal_test_util.export_back_compat_test_data``: programs jax exported over the
    years, each a dict with ``mlir_module_text``), those that import; empty in a jax
    without them. Only ``tools.corpus.back_compat`` reads them (a sweep tool)."""
    import pkgutil

    try:
        from jax._src.internal_test_util import export_back_compat_test_data as data
    except ImportError:
        return []
    modules = []
    for info in pkgutil.walk_packages(data.__path__, data.__name__ + "."):
        try:
            modules.append(importlib.import_module(info.name))
        except Exception:  # a data module this jax cannot import
            continue
    return modules


def native_library_path() -> Path:
    """The shared library of jaxlib that holds MLIR and its passes."""
    from pathlib import Path

    import jaxlib

    return Path(jaxlib.__file__).parent / "libjax_common.so"


_CAPSULE_POINTER = ctypes.pythonapi.PyCapsule_GetPointer
_CAPSULE_POINTER.restype = ctypes.c_void_p
_CAPSULE_POINTER.argtypes = [ctypes.py_object, ctypes.c_char_p]
_CAPSULE_NAME = ctypes.pythonapi.PyCapsule_GetName
_CAPSULE_NAME.restype = ctypes.c_char_p
_CAPSULE_NAME.argtypes = [ctypes.py_object]
_op_capsule_name: list[bytes] = []


def op_id(op: ir.Operation) -> int:
    """The address of the MLIR operation behind ``op`` (stable while the op lives; an
    erased op's address may be reused). Raises RuntimeError for an invalidated object."""
    capsule = op._CAPIPtr
    if not _op_capsule_name:
        _op_capsule_name.append(_CAPSULE_NAME(capsule))
    return _CAPSULE_POINTER(capsule, _op_capsule_name[0])

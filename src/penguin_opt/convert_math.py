"""Elementwise ``stablehlo.convert``, bit for bit as the StableHLO reference interpreter does it.

``convert_array(values, src_key, dst_key)`` reproduces ``convert`` in
``stablehlo/reference/Element.cpp`` (LLVM ``APFloat``/``APInt`` underneath) with vectorized
numpy. Every (source, destination) pair of the 30 element types in ``elements.DTYPES`` is
supported: the interpreter accepts all 900 and none aborts. The rules below were read from
the interpreter's source and checked against ``stablehlo.eval_module`` bit for bit
(``tests/test_convert_math.py``):

Same element type
    The identity, bit for bit. ``APFloat::convert`` returns early for equal semantics, so
    even a signalling NaN is left alone (this holds for complex<f32> <-> f32 parts too).

Integer -> integer (``i1`` excluded)
    The source is sign-extended (signed) or zero-extended (unsigned) to 64 bits, then
    truncated to the destination width (``APInt::extOrTrunc``): two's complement wrap.

Anything -> ``i1``
    ``value != 0``. For floats NaN -> true and -0.0 -> false; f8E8M0FNU has no zero, so
    every value is true. A complex source tests only its real part.

``i1`` -> anything
    false/true -> 0/1 (0.0/1.0; (0, +0)/(1, +0) for complex).

Integer -> float (``APFloat::convertFromAPInt``, round to nearest even)
    One correct rounding of the exact integer, with the destination's overflow rule.

Float -> integer (``APFloat::convertToInteger``, round toward zero)
    Truncation toward zero; out-of-range values saturate to the destination's min/max
    (so negative values become 0 in unsigned types); NaN -> 0.

Float -> float (``APFloat::convert``, round to nearest even)
    One correct rounding of the exact source value, never a double rounding through an
    intermediate type. By destination kind:

    * IEEE (f64 f32 f16 bf16 f8E5M2 f8E4M3 f8E3M4): overflow -> ±inf; a NaN keeps its
      sign and the top bits of its payload, and is made quiet (top significand bit set).
    * f8E4M3FN (NaN is S.1111.111, no inf): overflow, ±inf and NaN -> NaN of the same
      sign (0x7f/0xff); a value rounding up to 480 (the NaN encoding) overflows.
    * FNUZ (f8E4M3FNUZ f8E5M2FNUZ f8E4M3B11FNUZ; NaN is 0x80, no inf, no -0): overflow,
      ±inf and NaN -> 0x80; -0.0 and negative underflow -> +0.
    * Finite-only (f6E2M3FN f6E3M2FN f4E2M1FN): overflow saturates to ±max finite;
      ±inf and NaN become a zero of the same sign.
    * f8E8M0FNU (powers of two 2^-127..2^127, 0xff is NaN, no zero, no sign): rounding
      to nearest with ties up (1.5 * 2^k -> 2^(k+1), as the significand "1" is odd);
      zero and underflow -> 0x00 (2^-127); overflow, ±inf and NaN -> 0xff. A negative
      value keeps APFloat's sign in bit 7: the byte is ``0x80 | biased_exponent`` (so
      -2.0 -> 0x80 and -1.0 -> 0xff), unless it underflows to 0x00.

    Source NaNs of the non-IEEE kinds: an FNUZ NaN becomes +NaN in IEEE types but the
    negative NaN 0xff in f8E4M3FN; the f8E8M0FNU NaN has no significand bits, so IEEE
    types read it as +inf; an f8E4M3FN NaN converts like an IEEE NaN with payload 0b111.

Complex
    complex -> real type: the real part is converted, the imaginary part ignored.
    real/integer/i1 -> complex: the value is converted to the element type, imaginary
    part +0.0. complex -> complex: both parts are converted as floats.

Implementation: sources of at most 16 bits are converted by a cached lookup table over all
their bit patterns, built with an exact binary64 -> format encoder. Wide float sources use
the FPU/ml_dtypes where those round once (f32 -> bf16/f16, f64 -> f32), and otherwise
round to odd into an intermediate type with at least two spare significand bits
(f64 -> f32, f32 -> bf16), which makes the final round-to-nearest-even exact. No Python
loop runs per element.

Fast paths (``_FAST_PATHS``): where numpy's or ml_dtypes' own cast already is ``convert``
(integer -> f32/f64, integers of at most 16 bits -> bf16, integer -> integer, in-range
float -> integer, f32 -> bf16/f16 and bf16 -> f32/f64 but for NaNs), the cast is done in
one pass, with a reduction or two to find what it would not do exactly (NaNs, values out
of an integer's range), which goes the exact way above. Each fast path is used only after
matching that exact way bit for bit on its pair's edge cases, once per process.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .elements import _SUB_BYTE_INTS, DTYPES

__all__ = ["NO_INF_OR_NAN", "convert_array", "differing", "executors_agree"]

# Float types without an inf or a NaN (or both), where a convert of an inf, a NaN or a
# value beyond the range is each executor's choice: the reference interpreter and XLA
# CPU differ on some (inf -> f4E2M1FN: 0 against 6; 0.0 -> f8E8M0FNU: 2^-127 against
# NaN), so replaceConvertsWithConstants folds such a convert only where they agree.
NO_INF_OR_NAN = frozenset(
    (
        "f4E2M1FN",
        "f6E2M3FN",
        "f6E3M2FN",
        "f8E4M3FN",
        "f8E4M3FNUZ",
        "f8E5M2FNUZ",
        "f8E4M3B11FNUZ",
        "f8E8M0FNU",
    )
)


@dataclass(frozen=True)
class _FloatFormat:
    """A binary floating point format, in ``APFloat``'s terms."""

    bits: int  # encoding width
    precision: int  # significand bits, including the implicit one
    emin: int  # exponent of the smallest normal number
    emax: int  # exponent of the largest finite binade
    kind: str  # "ieee", "fn" (all-ones NaN, no inf), "fnuz", "finite" or "e8m0"

    @property
    def mant_bits(self) -> int:
        return self.precision - 1

    @property
    def bias(self) -> int:
        return -self.emin if self.kind == "e8m0" else 1 - self.emin

    @property
    def sign_bit(self) -> int:
        return 0 if self.kind == "e8m0" else 1 << (self.bits - 1)

    @property
    def exp_mask(self) -> int:
        """The exponent field with every bit set."""
        return (1 << self.bits) - 1 - self.sign_bit - ((1 << self.mant_bits) - 1)

    @property
    def max_finite(self) -> int:
        """Encoding of the largest finite value."""
        if self.kind == "ieee":
            return self.exp_mask - 1
        if self.kind == "fn":
            return self.exp_mask | ((1 << self.mant_bits) - 2)
        if self.kind == "e8m0":
            return 0xFE
        return self.sign_bit - 1  # fnuz and finite: every unsigned pattern is finite

    @property
    def storage(self) -> np.dtype:
        """The unsigned integer type holding one encoding (a byte for sub-byte types)."""
        return np.dtype(f"u{max(1, self.bits // 8)}")


_FORMATS: dict[str, _FloatFormat] = {
    "f64": _FloatFormat(64, 53, -1022, 1023, "ieee"),
    "f32": _FloatFormat(32, 24, -126, 127, "ieee"),
    "f16": _FloatFormat(16, 11, -14, 15, "ieee"),
    "bf16": _FloatFormat(16, 8, -126, 127, "ieee"),
    "f8E5M2": _FloatFormat(8, 3, -14, 15, "ieee"),
    "f8E4M3": _FloatFormat(8, 4, -6, 7, "ieee"),
    "f8E3M4": _FloatFormat(8, 5, -2, 3, "ieee"),
    "f8E4M3FN": _FloatFormat(8, 4, -6, 8, "fn"),
    "f8E4M3FNUZ": _FloatFormat(8, 4, -7, 7, "fnuz"),
    "f8E5M2FNUZ": _FloatFormat(8, 3, -15, 15, "fnuz"),
    "f8E4M3B11FNUZ": _FloatFormat(8, 4, -10, 4, "fnuz"),
    "f8E8M0FNU": _FloatFormat(8, 1, -127, 127, "e8m0"),
    "f6E2M3FN": _FloatFormat(6, 4, 0, 2, "finite"),
    "f6E3M2FN": _FloatFormat(6, 3, -2, 4, "finite"),
    "f4E2M1FN": _FloatFormat(4, 2, 0, 2, "finite"),
}
_COMPLEX_PART: dict[str, str] = {"complex<f32>": "f32", "complex<f64>": "f64"}
_LUT_MAX_BITS = 16

_U64 = np.uint64
_F64_SIGN = _U64(1 << 63)
_F64_EXP = _U64(0x7FF << 52)
_F64_PAYLOAD = _U64((1 << 52) - 1)
_F64_QUIET = _U64(1 << 51)


def _is_signed_key(key: str) -> bool:
    return key.startswith("i")


def _int_bits(key: str) -> int:
    return int(key.lstrip("ui"))


def _key_bits(key: str) -> int:
    """Width of one element's encoding (complex: both parts)."""
    if key in _FORMATS:
        return _FORMATS[key].bits
    if key in _COMPLEX_PART:
        return 2 * _FORMATS[_COMPLEX_PART[key]].bits
    return _int_bits(key)


# --------------------------------------------------------------------------------------
# The exact encoder / decoder between binary64 and every float format.
# --------------------------------------------------------------------------------------


def _encode_from_f64(x: np.ndarray, fmt: _FloatFormat) -> np.ndarray:
    """Encodings (uint64) in ``fmt`` of the binary64 values ``x``, rounded once (RNE).

    ``x`` holds the exact values to convert; a NaN carries the sign and the payload
    (aligned to the top of the binary64 significand) the result's NaN should get.
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    raw = x.view(_U64)
    neg = (raw & _F64_SIGN) != 0
    nan = np.isnan(x)
    inf = np.isinf(x)
    a = np.where(nan | inf, 0.0, np.abs(x))
    p = fmt.precision
    _, e = np.frexp(a)  # a = f * 2**e, f in [0.5, 1), so a lies in binade e - 1
    te = np.maximum(e - 1, fmt.emin)
    sig = np.rint(np.ldexp(a, (p - 1) - te))  # exact scaling, one RNE rounding
    carry = sig == float(1 << p)
    te = te + carry
    sig = np.where(carry, float(1 << (p - 1)), sig).astype(_U64)
    normal = sig >= _U64(1 << (p - 1))
    overflow = te > fmt.emax
    if fmt.kind == "fn":  # the all-ones significand of the top binade is the NaN
        overflow |= (te == fmt.emax) & (sig == _U64((1 << p) - 1))
    biased = np.where(normal, te + fmt.bias, 0).astype(_U64)
    out = (biased << _U64(fmt.mant_bits)) | (sig & _U64((1 << fmt.mant_bits) - 1))
    zero = sig == 0
    sign = np.where(neg, _U64(fmt.sign_bit), _U64(0))

    if fmt.kind == "ieee":
        shift = _U64(52 - fmt.mant_bits)
        quiet = _U64(1 << (fmt.mant_bits - 1))
        nan_bits = _U64(fmt.exp_mask) | quiet | ((raw & _F64_PAYLOAD) >> shift)
        out = np.where(overflow | inf, _U64(fmt.exp_mask), out)
        out = np.where(nan, nan_bits, out) | sign
    elif fmt.kind == "fn":
        out = np.where(overflow | inf | nan, _U64(fmt.max_finite + 1), out) | sign
    elif fmt.kind == "fnuz":
        out = out | np.where(zero, _U64(0), sign)
        out = np.where(overflow | inf | nan, _U64(fmt.sign_bit), out)
    elif fmt.kind == "finite":
        out = np.where(overflow, _U64(fmt.max_finite), out)
        out = np.where(inf | nan, _U64(0), out) | sign
    else:  # e8m0
        out = np.where(neg & ~zero, out | _U64(0x80), out)
        out = np.where(overflow | inf | nan, _U64(0xFF), out)
    return out


def _encode(x: np.ndarray, key: str) -> np.ndarray:
    """``_encode_from_f64`` viewed as the numpy dtype of ``key``."""
    fmt = _FORMATS[key]
    return _encode_from_f64(x, fmt).astype(fmt.storage).view(DTYPES[key])


def _decode_to_f64(bits: np.ndarray, fmt: _FloatFormat) -> np.ndarray:
    """Exact binary64 values of ``fmt`` encodings, NaNs as ``_encode_from_f64`` takes them.

    A NaN becomes the binary64 NaN APFloat converts it to: sign and payload kept and the
    quiet bit set (IEEE and f8E4M3FN), or +NaN (FNUZ, f8E8M0FNU).
    """
    b = bits.astype(_U64)
    mant_mask = (1 << fmt.mant_bits) - 1
    mant = b & _U64(mant_mask)
    if fmt.kind == "e8m0":
        biased = b
        normal = np.ones(b.shape, dtype=bool)
    else:
        biased = (b & _U64(fmt.exp_mask)) >> _U64(fmt.mant_bits)
        normal = biased != 0
    neg = (b & _U64(fmt.sign_bit)) != 0
    sig = (mant | (normal.astype(_U64) << _U64(fmt.mant_bits))).astype(np.float64)
    exp = np.where(normal, biased.astype(np.int64), 1) - fmt.bias - fmt.mant_bits
    val = np.ldexp(sig, exp)
    val = np.where(neg, -val, val)
    signed_nan = (
        _F64_EXP | _F64_QUIET | (mant << _U64(52 - fmt.mant_bits)) | (neg.astype(_U64) << _U64(63))
    ).view(np.float64)
    if fmt.kind == "ieee":
        special = (b & _U64(fmt.exp_mask)) == _U64(fmt.exp_mask)
        val = np.where(special, np.where(neg, -np.inf, np.inf), val)
        val = np.where(special & (mant != 0), signed_nan, val)
    elif fmt.kind == "fn":
        val = np.where((b & ~_U64(fmt.sign_bit)) == _U64(fmt.max_finite + 1), signed_nan, val)
    elif fmt.kind == "fnuz":
        val = np.where(b == _U64(fmt.sign_bit), np.nan, val)
    elif fmt.kind == "e8m0":
        val = np.where(b == _U64(0xFF), np.nan, val)
    return val


# --------------------------------------------------------------------------------------
# Float destinations.
# --------------------------------------------------------------------------------------


def _round_to_odd_f32(x: np.ndarray) -> np.ndarray:
    """binary64 -> binary32 rounded to odd (a NaN keeps its truncated, quieted payload).

    Exact values round to themselves; inexact ones to the neighbour toward zero with an
    odd significand (overflow gives the largest finite value). Any later RNE rounding to a
    format with at most 22 significand bits and f32's exponent range is then exact.
    """
    y = x.astype(np.float32)  # RNE; FPU NaN narrowing matches APFloat's
    back = y.astype(np.float64)
    bits = y.view(np.uint32)
    bits -= (np.abs(back) > np.abs(x)).astype(np.uint32)  # rounded away -> toward 0
    bits |= (back != x).astype(np.uint32)  # inexact -> odd (only low payload on NaN)
    return y


def _f32_to_narrow(x: np.ndarray, dst_key: str) -> np.ndarray:
    """binary32 -> a float type of at most 16 bits, with one RNE rounding."""
    dtype = DTYPES[dst_key]
    if dst_key in ("bf16", "f16"):
        # ml_dtypes (bf16) and numpy (f16) round binary32 once, but make NaNs their own
        # way: redo those.
        out = x.astype(dtype)
        nan = np.isnan(x)
        if nan.any():
            idx = np.flatnonzero(nan)
            out[idx] = _encode(x[idx].astype(np.float64), dst_key)
        return out
    # Round to odd into bf16 (8 significand bits, f32's exponent range), then look the
    # result up in the exact bf16 -> dst table (destinations have at most 5 bits).
    u = x.view(np.uint32)
    odd = (u >> np.uint32(16)) | ((u & np.uint32(0xFFFF)) != 0).astype(np.uint32)
    return _lookup_table("bf16", dst_key)[odd]


def _wide_float_to_float(x: np.ndarray, dst_key: str) -> np.ndarray:
    """binary32/64 values -> float ``dst_key`` (``x.dtype`` is the source semantics)."""
    dtype = DTYPES[dst_key]
    if x.dtype == dtype:  # same semantics: APFloat::convert is the identity
        return x.copy()
    if dst_key == "f64":
        return x.astype(np.float64)  # exact; the FPU quiets NaNs like APFloat
    if dst_key == "f32":
        return x.astype(np.float32)  # one RNE rounding; NaNs truncated and quieted
    if x.dtype == np.float64:
        x = _round_to_odd_f32(x)
    return _f32_to_narrow(x, dst_key)


def _exact_to_float(x: np.ndarray, dst_key: str) -> np.ndarray:
    """Exact binary64 values (decoded narrow floats) -> float ``dst_key``."""
    if dst_key == "f64":
        return x
    if dst_key == "f32":
        return x.astype(np.float32)  # narrow-float values fit f32 exactly
    return _encode(x, dst_key)


# --------------------------------------------------------------------------------------
# Integers.
# --------------------------------------------------------------------------------------


def _float_to_int(x: np.ndarray, dst_key: str) -> np.ndarray:
    """Truncate toward zero, saturate, NaN -> 0 (``APFloat::convertToInteger``)."""
    width = _int_bits(dst_key)
    signed = _is_signed_key(dst_key)
    lo = -(1 << (width - 1)) if signed else 0
    hi = (1 << (width - 1)) - 1 if signed else (1 << width) - 1
    wide = np.int64 if signed else np.uint64
    t = np.trunc(x)
    too_big = t >= x.dtype.type(hi + 1)  # a power of two: exact in f32 and f64
    too_small = t < x.dtype.type(lo)
    bad = too_big | too_small | np.isnan(t)
    res = np.where(bad, 0, t).astype(wide)
    np.putmask(res, too_big, wide(hi))
    np.putmask(res, too_small, wide(lo))
    return _wrap_int(res, dst_key)


def _wrap_int(v: np.ndarray, dst_key: str) -> np.ndarray:
    """int64/uint64 values -> ``dst_key``, keeping the low bits (two's complement)."""
    dtype = DTYPES[dst_key]
    width = _int_bits(dst_key)
    if width >= 8:
        return v.astype(dtype)  # numpy integer casts wrap
    low = (v.astype(np.uint64) & _U64((1 << width) - 1)).astype(np.int16)
    if _is_signed_key(dst_key):
        low = np.where(low >= (1 << (width - 1)), low - (1 << width), low)
    return low.astype(dtype)


def _int_to_sticky_f64(v: np.ndarray) -> np.ndarray:
    """int64/uint64 -> binary64 holding the top 52-53 bits of ``|v|`` plus a sticky bit.

    Any RNE rounding of the result to at most 50 significand bits equals that of ``v``.
    """
    if v.size == 0 or (int(v.min()) >= -(1 << 53) and int(v.max()) <= 1 << 53):
        return v.astype(np.float64)  # exact
    u = v.astype(np.uint64)
    neg = v < 0 if v.dtype.kind == "i" else np.zeros(v.shape, dtype=bool)
    mag = np.where(neg, ~u + _U64(1), u)
    # float(mag)'s biased exponent is bit_length(mag) + 1022, or one more if it rounded up
    biased = (mag.astype(np.float64).view(_U64) >> _U64(52)).astype(np.int64)
    s = np.maximum(biased - (1022 + 53), 0).astype(_U64)
    kept = (mag >> s) | ((mag & ((_U64(1) << s) - _U64(1))) != 0).astype(_U64)
    scale = ((s + _U64(1023)) << _U64(52)).view(np.float64)  # 2.0 ** s
    val = kept.astype(np.float64) * scale  # exact: kept has at most 53 bits
    return np.where(neg, -val, val)


def _int_to_float(v: np.ndarray, dst_key: str) -> np.ndarray:
    """int64/uint64 -> float ``dst_key`` with one RNE rounding."""
    if dst_key == "f64":
        return v.astype(np.float64)  # the FPU's integer -> double conversion is RNE
    return _wide_float_to_float(_int_to_sticky_f64(v), dst_key)


# --------------------------------------------------------------------------------------
# Dispatch.
# --------------------------------------------------------------------------------------


def _convert_widened(values: np.ndarray, tag: str, dst_key: str) -> np.ndarray:
    """Convert flat ``values`` described by ``tag`` (see ``_widen``) to ``dst_key``."""
    if dst_key in _COMPLEX_PART:
        part = _COMPLEX_PART[dst_key]
        out = np.zeros(values.shape, dtype=DTYPES[dst_key])
        if tag in _COMPLEX_PART:
            src_part = _COMPLEX_PART[tag]
            out.real = _convert_widened(np.ascontiguousarray(values.real), src_part, part)
            out.imag = _convert_widened(np.ascontiguousarray(values.imag), src_part, part)
        else:
            out.real = _convert_widened(values, tag, part)  # imaginary part +0.0
        return out
    if tag in _COMPLEX_PART:
        return _convert_widened(np.ascontiguousarray(values.real), _COMPLEX_PART[tag], dst_key)
    if dst_key == "i1":
        return values != 0
    if tag in ("int64", "uint64"):
        if dst_key in _FORMATS:
            return _int_to_float(values, dst_key)
        return _wrap_int(values, dst_key)
    if dst_key not in _FORMATS:
        return _float_to_int(values, dst_key)
    if tag == "exact":
        return _exact_to_float(values, dst_key)
    return _wide_float_to_float(values, dst_key)


def _widen(values: np.ndarray, src_key: str) -> tuple[np.ndarray, str]:
    """Flat source values as one of the forms ``_convert_widened`` takes, with its tag.

    Tags: "f32"/"f64"/complex keys (the values themselves), "int64"/"uint64" (integers
    sign- or zero-extended; i1 as 0/1) and "exact" (a narrow float decoded to binary64).
    """
    if src_key in ("f32", "f64") or src_key in _COMPLEX_PART:
        return values, src_key
    if src_key in _FORMATS:
        fmt = _FORMATS[src_key]
        bits = values.view(fmt.storage) & fmt.storage.type((1 << fmt.bits) - 1)
        return _decode_to_f64(bits, fmt), "exact"
    if src_key == "i1":
        return values.astype(np.uint64), "uint64"
    if _is_signed_key(src_key):
        return values.astype(np.int64), "int64"
    return values.astype(np.uint64), "uint64"


def _all_patterns(src_key: str) -> np.ndarray:
    """Every value of a source type of at most 16 bits, indexed by its bit pattern."""
    dtype = DTYPES[src_key]
    n = _key_bits(src_key)
    raw = np.arange(1 << n, dtype=np.int64)
    if src_key == "i1":
        return raw.astype(np.bool_)
    if src_key in _FORMATS:
        return raw.astype(_FORMATS[src_key].storage).view(dtype)
    if _is_signed_key(src_key):
        raw = np.where(raw >= (1 << (n - 1)), raw - (1 << n), raw)
    return raw.astype(dtype)


def _pattern_index(values: np.ndarray, src_key: str) -> np.ndarray:
    """Bit pattern of each flat source element: its row in the lookup table."""
    n = _key_bits(src_key)
    if src_key == "i1":
        return (values.view(np.uint8) != 0).astype(np.intp)
    raw = values.view(np.dtype(f"u{max(1, n // 8)}"))
    # sub-byte types take a byte each and keep the pattern in the low bits
    return raw & np.uint8((1 << n) - 1) if n < 8 else raw


def _patch_source_nans(table: np.ndarray, src_key: str, dst_key: str) -> None:
    """Fix the rows of source NaNs that no binary64 NaN stands in for."""
    src = _FORMATS.get(src_key)
    dst = _FORMATS.get(_COMPLEX_PART.get(dst_key, dst_key))
    if src is None or dst is None:
        return
    if src.kind == "fnuz" and dst.kind == "fn":
        # APFloat decodes the FNUZ NaN with its sign set; a NaN-only destination keeps
        # that sign (IEEE destinations get a fresh +NaN instead).
        table[src.sign_bit] = _encode(np.array([-np.nan]), dst_key)[0]
    if src.kind == "e8m0" and dst.kind == "ieee":
        # The E8M0 NaN has no significand bits; IEEE encodings read it as +inf.
        table[0xFF] = np.inf


@functools.cache
def _lookup_table(src_key: str, dst_key: str) -> np.ndarray:
    """``convert`` of every bit pattern of a source of at most 16 bits (read-only)."""
    widened, tag = _widen(_all_patterns(src_key), src_key)
    table = np.asarray(_convert_widened(widened, tag, dst_key), dtype=DTYPES[dst_key])
    _patch_source_nans(table, src_key, dst_key)
    table.setflags(write=False)
    return table


def _exact_convert(flat: np.ndarray, src_key: str, dst_key: str) -> np.ndarray:
    """The general path: flat ``src_key`` values -> ``dst_key`` (the fast paths' oracle)."""
    if _key_bits(src_key) <= _LUT_MAX_BITS:
        return _lookup_table(src_key, dst_key)[_pattern_index(flat, src_key)]
    widened, tag = _widen(flat, src_key)
    return np.asarray(_convert_widened(widened, tag, dst_key), dtype=DTYPES[dst_key])


# --------------------------------------------------------------------------------------
# Fast paths: numpy's (or ml_dtypes') own cast where it already is ``convert``.
# --------------------------------------------------------------------------------------
#
# Each fast path is one cast, plus cheap checks that send what the cast does not do
# exactly (NaN encodings, out-of-range float -> int) the exact way. Which casts are exact
# depends on numpy's and ml_dtypes' loops on this machine (an integer -> float cast done
# through a wider float would round twice), so a fast path is used only after it has
# matched ``_exact_convert`` bit for bit on a probe of that pair's edge cases: every bit
# pattern of a 16-bit or narrower source; for wider ones the integer rounding midpoints
# (with sticky bits below the binary64 precision), limits and float specials.


def _cast(x: np.ndarray, src_key: str, dst_key: str) -> np.ndarray:
    """The plain cast: exact where integer -> float rounds once to nearest even (or is
    exact) and integer -> integer wraps in two's complement."""
    return x.astype(DTYPES[dst_key])


def _has_nan(x: np.ndarray) -> bool:
    """Whether a float array holds a NaN: one reduction (max propagates NaNs), no mask."""
    return x.size > 0 and math.isnan(x.max())


def _f32_to_half(x: np.ndarray, src_key: str, dst_key: str) -> np.ndarray:
    """binary32 -> bf16/f16: ml_dtypes and numpy round once (to nearest even) but make
    NaNs their own way; those are redone exactly (``_f32_to_narrow`` with one reduction
    instead of a NaN mask when there is none)."""
    out = x.astype(DTYPES[dst_key])
    if _has_nan(x):
        idx = np.flatnonzero(np.isnan(x))
        out[idx] = _exact_convert(x[idx], src_key, dst_key)
    return out


def _half_to_wide(x: np.ndarray, src_key: str, dst_key: str) -> np.ndarray:
    """bf16 -> f32/f64: exact widening, but ml_dtypes does not quiet a signalling NaN;
    NaNs are redone exactly."""
    out = x.astype(DTYPES[dst_key])
    if _has_nan(out):
        idx = np.flatnonzero(np.isnan(out))
        out[idx] = _exact_convert(x[idx], src_key, dst_key)
    return out


def _float_to_int_fast(x: np.ndarray, src_key: str, dst_key: str) -> np.ndarray | None:
    """binary32/64 -> integer: truncation toward zero, saturation, NaN -> 0.

    All values in [lo, hi + 1) (NaN is not): the cast truncates, exactly. Otherwise the
    values are clipped to [lo, hi] in a float type holding both bounds exactly (NaN stays
    NaN, then becomes 0) and cast. None (the exact path) for 64-bit destinations then.
    """
    dtype = DTYPES[dst_key]
    lo, hi = _INT_RANGE[dst_key]
    # lo and hi + 1 are 0 or powers of two: exact as floats, so the comparisons are too
    if x.size == 0 or (x.min() >= float(lo) and x.max() < float(hi + 1)):
        return x.astype(dtype)
    ftype = x.dtype.type
    if hi.bit_length() <= np.finfo(x.dtype).nmant + 1:
        t = np.clip(x, ftype(lo), ftype(hi))
    elif hi.bit_length() <= 53:
        t = x.astype(np.float64)
        np.clip(t, np.float64(lo), np.float64(hi), out=t)
    else:
        return None
    nan = np.isnan(t)
    if nan.any():
        t[nan] = 0
    return t.astype(dtype)


_INT_KEYS = ("i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64")
_INT_RANGE = {
    key: (
        (-(1 << (_int_bits(key) - 1)), (1 << (_int_bits(key) - 1)) - 1)
        if _is_signed_key(key)
        else (0, (1 << _int_bits(key)) - 1)
    )
    for key in _INT_KEYS
}


# A fast path: (flat values, source key, destination key) -> the converted values, or None
# where it cannot take these values (the exact way then does).
_FastPath = Callable[[np.ndarray, str, str], np.ndarray | None]


def _fast_paths() -> dict[tuple[str, str], _FastPath]:
    """The pairs with a fast path. Not f16 but from f32: numpy's float16 casts are slower
    than the lookup tables of the 16-bit sources; not integers wider than 16 bits to bf16:
    ml_dtypes goes through f32 and rounds twice."""
    paths: dict[tuple[str, str], _FastPath] = {}
    for src in _INT_KEYS:
        for dst in _INT_KEYS:
            if src != dst:
                paths[src, dst] = _cast
        for dst in ("f64", "f32"):
            paths[src, dst] = _cast
        if _int_bits(src) <= 16:  # exact in f32, so ml_dtypes rounds once
            paths[src, "bf16"] = _cast
    for src in ("f32", "f64"):
        for dst in _INT_KEYS:
            paths[src, dst] = _float_to_int_fast
    for dst in ("bf16", "f16"):
        paths["f32", dst] = _f32_to_half
    for dst in ("f32", "f64"):
        paths["bf16", dst] = _half_to_wide
    return paths


_FAST_PATHS = _fast_paths()


def _probe_values(src_key: str) -> list[np.ndarray]:
    """Edge-case inputs of a source type, each array run through a fast path on its own."""
    dtype = DTYPES[src_key]
    if _key_bits(src_key) <= 16:
        every = _all_patterns(src_key)
        return [every, every[1:], every[::-1].copy()]
    if src_key in _INT_RANGE:
        lo, hi = _INT_RANGE[src_key]
        width = _int_bits(src_key)
        vals = {lo, hi, lo + 1, hi - 1, 0, 1, -1, 2, 3}
        for k in range(width + 1):
            vals.update(s * (1 << k) + d for d in (-2, -1, 0, 1, 2) for s in (1, -1))
            for p in (8, 11, 24, 53):  # rounding midpoints of bf16, f16, f32, f64
                if k - p - 1 >= 0:
                    for m in (
                        (1 << k) + (1 << (k - p)),
                        (1 << k) + 3 * (1 << (k - p)),
                        (1 << k) + (1 << (k - p - 1)) + 1,
                    ):
                        vals.update(s * m + d for d in (-2, -1, 0, 1, 2) for s in (1, -1))
        ints = np.array(sorted(v for v in vals if lo <= v <= hi), dtype=object).astype(dtype)
        return [ints, ints[1:], ints[::-1].copy()]
    # binary32/64: specials, NaN payloads, and every integer limit with its neighbours
    info = np.finfo(dtype)
    utype = np.dtype(f"u{dtype.itemsize}")
    bits = dtype.itemsize * 8
    mant = info.nmant
    quiet = 1 << (mant - 1)
    exp = ((1 << (bits - 1)) - 1) ^ ((1 << mant) - 1)
    sign = 1 << (bits - 1)
    nans = [exp | quiet, exp | 1, exp | (quiet - 1), sign | exp | quiet, sign | exp | 1]
    specials = np.concatenate(
        [
            np.array(
                [
                    0.0,
                    -0.0,
                    np.inf,
                    -np.inf,
                    info.max,
                    -info.max,
                    info.tiny,
                    -info.tiny,
                    info.smallest_subnormal,
                    -info.smallest_subnormal,
                    0.5,
                    -0.5,
                    0.99,
                    -0.99,
                    1.0,
                    -1.0,
                    1.5,
                    -1.5,
                    2.5,
                    -2.5,
                ],
                dtype,
            ),
            np.array(nans, dtype=np.uint64).astype(utype).view(dtype),
        ]
    )
    edges = []
    for key in _INT_KEYS:
        for bound in _INT_RANGE[key]:
            for b in (bound, bound + 1):
                c = np.array([b - 1, b - 0.5, b, b + 0.5], dtype=np.float64).astype(dtype)
                edges += [
                    c,
                    np.nextafter(c, dtype.type(np.inf)),
                    np.nextafter(c, dtype.type(-np.inf)),
                ]
    edges = np.concatenate(edges)
    full = np.concatenate([specials, edges])
    in_range = edges[np.isfinite(edges) & (np.abs(edges) < 1)]
    return [full, full[::-1].copy(), in_range, specials[:8]]


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == np.bool_:
        return bool(np.array_equal(a, b))
    u = f"u{a.dtype.itemsize}"
    return bool(np.array_equal(np.ascontiguousarray(a).view(u), np.ascontiguousarray(b).view(u)))


@functools.cache
def _fast_path_exact(src_key: str, dst_key: str) -> bool:
    """Whether the pair's fast path matches ``_exact_convert`` on the pair's probe."""
    fast = _FAST_PATHS[src_key, dst_key]
    with np.errstate(all="ignore"):
        for probe in _probe_values(src_key):
            got = fast(probe, src_key, dst_key)
            if got is not None and not _same_bits(got, _exact_convert(probe, src_key, dst_key)):
                return False
        # the float -> int range fast path: every probe value that fits, at once
        if fast is _float_to_int_fast:
            full = _probe_values(src_key)[0]
            lo, hi = _INT_RANGE[dst_key]
            fits = full[(full >= lo) & (full < hi + 1)]
            got = fast(fits, src_key, dst_key)
            if not _same_bits(got, _exact_convert(fits, src_key, dst_key)):
                return False
    return True


def _fast_path(src_key: str, dst_key: str) -> _FastPath | None:
    """The pair's fast path, if it has one that matched the exact way on its probe."""
    fast = _FAST_PATHS.get((src_key, dst_key))
    return fast if fast is not None and _fast_path_exact(src_key, dst_key) else None


def convert_array(values: np.ndarray, src_key: str, dst_key: str) -> np.ndarray:
    """``stablehlo.convert`` of ``values`` (dtype ``DTYPES[src_key]``) to ``dst_key``.

    Returns a new array of dtype ``DTYPES[dst_key]`` and the shape of ``values``, bit for
    bit what the StableHLO reference interpreter computes. Raises ``ValueError`` for a key
    outside ``DTYPES`` or an array whose dtype is not ``DTYPES[src_key]``.
    """
    if src_key not in DTYPES or dst_key not in DTYPES:
        raise ValueError(f"unsupported convert {src_key} -> {dst_key}")
    arr = np.asarray(values)
    if arr.dtype != DTYPES[src_key]:
        raise ValueError(f"array dtype {arr.dtype} does not match element type {src_key}")
    if src_key == dst_key:
        return arr.copy()
    flat = arr.reshape(-1) if arr.flags.c_contiguous else np.ascontiguousarray(arr).reshape(-1)
    fast = _fast_path(src_key, dst_key)
    if fast is _cast:  # integer sources: no floating-point errors to silence
        out = _cast(flat, src_key, dst_key)
    else:
        with np.errstate(all="ignore"):  # NaN/inf/overflow are handled explicitly
            out = None if fast is None else fast(flat, src_key, dst_key)  # None: not these
            if out is None:
                out = _exact_convert(flat, src_key, dst_key)
    return out if out.shape == arr.shape else out.reshape(arr.shape)


def differing(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where two arrays of one dtype differ: integers and bools by value, floats and
    complex numbers by their bits, except that a NaN equals a NaN (its payload is not a
    value any program can rely on; XLA normalizes it)."""
    if a.dtype.kind in "biu":
        return a != b
    width = a.dtype.itemsize
    if a.dtype.kind == "c":  # both parts, each as a float of half the width
        half = np.dtype(f"f{width // 2}")
        flat_a, flat_b = a.reshape(-1), b.reshape(-1)  # (a 0-d array cannot be viewed so)
        pa, pb = flat_a.view(half).reshape(-1, 2), flat_b.view(half).reshape(-1, 2)
        return differing(pa, pb).any(axis=-1).reshape(a.shape)
    bits = np.dtype(f"u{width}")
    mask = a.view(bits) != b.view(bits)
    if mask.any():
        with np.errstate(invalid="ignore"):
            both_nan = np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))
        mask &= ~both_nan
    return mask


def executors_agree(values: np.ndarray, folded: np.ndarray) -> bool:
    """Whether ``folded`` (``convert_array``: the reference interpreter's convert of
    ``values``) is what XLA CPU computes too (ml_dtypes' cast, through f32 where ml_dtypes
    has no direct one: exact for the narrow types that lack it) in every element, NaNs
    equal. For f8E8M0FNU (no zero, no sign, 0xff its NaN) the two differ on a zero, a
    negative and the NaN (0.0 -> 2^-127 against NaN, 0xff -> inf against NaN)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)  # (the real part)
        if folded.dtype.kind in "biu" or folded.dtype in _SUB_BYTE_INTS:
            plain = _xla_float_to_int(values, folded.dtype)  # numpy's cast wraps
        else:
            try:
                plain = values.astype(folded.dtype)
            except TypeError:
                plain = values.astype(np.float32).astype(folded.dtype)
    return not differing(plain, folded).any()


def _xla_float_to_int(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """XLA CPU's convert of floats to an integer type: toward zero, saturating at the
    type's range, NaN to 0; to bool: nonzero (NaN too)."""
    import ml_dtypes

    wide = values.astype(np.float64)
    if dtype == np.bool_:
        return wide != 0
    info = ml_dtypes.iinfo(dtype) if dtype in _SUB_BYTE_INTS else np.iinfo(dtype)
    exact = np.clip(np.trunc(np.nan_to_num(wide, nan=0.0)), info.min, info.max)
    return exact.astype(np.int64 if info.min < 0 else np.uint64).astype(dtype)

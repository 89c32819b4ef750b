"""The shared public corpus (``../shared/corpus/public``): upstream test programs.

Every ``.mlir`` file listed in ``manifest.json`` is split on ``// -----`` (mlir-opt's
``-split-input-file``); a chunk with ``expected-error``/``-warning``/``-remark``
annotations is a negative test of some other tool and is skipped. Every other chunk is
loaded, run through the pipelines of both dialects, verified, and checked:

* StableHLO chunks: ``inline,stablehlo-canonicalize-for-penguin{all-functions=true},
  stablehlo-canonicalize-conv`` and ``inline,stablehlo-legalize-to-hlo,
  canonicalize-for-penguin{all-functions=true},canonicalize-conv``;
* MHLO chunks: ``inline,canonicalize-for-penguin{all-functions=true},canonicalize-conv``
  and ``inline,hlo-legalize-to-stablehlo,stablehlo-canonicalize-for-penguin{...},...``.

``all-functions=true`` because most upstream test files hold many public functions and no
``@main``; the passes would otherwise visit none of them. A chunk is MHLO when one of its
ops is (JAX exports carry ``mhlo.*`` attributes on StableHLO programs).

``python -m tools.corpus.shared PATH...`` applies the same rules to every ``.mlir`` file
under any folder (no manifest needed).

**Expectations.** The interpreter tests assert results with ``check.expect_*`` ops, a
dialect jaxlib does not ship; before loading, each is rewritten into
``stablehlo.custom_call @check.<kind>.<n>(%actual, %expected)`` (the constant of a
``*_const`` form becomes a ``stablehlo.constant``), which the passes leave alone; the
testdata programs' own ``custom_call @check.expect_*`` get the same numbering, and so do
IREE's e2e tests' check calls (``check.expect_eq_const(%x, dense<..> : T) : T``), whose
``util.unfoldable_constant`` is read as ``stablehlo.constant``.
``expect_serialized_eq`` (compares with probe files on disk) keeps only its operand.

**Checks**, per public function of a chunk (with only its callees kept, renamed ``@main``):

1. equivalence: the function returns its results plus every checked operand; the program
   before and after the pipeline must agree bitwise, or within the checker's derived
   tolerance when canonicalize-conv decomposed a strided convolution (summation order);
2. expectations: after the pipeline, a program returning the actual operands is compared
   with one returning the expected ones, exactly for ``expect_eq*``, with ``tolerance``
   (default 1e-4, absolute) for ``expect_almost_eq*`` and ``max_ulp_difference`` (default
   3) times the type's epsilon, relative, for ``expect_close``. Only when that fails is
   the program before the pipeline evaluated the same way: an expectation that already
   fails before the passes is counted as such, not as a mismatch.

**Oracles and limits.** Programs with a tensor over 65536 elements go to the XLA oracle
(the interpreter runs element by element), compared within the derived tolerance; others
run on the interpreter, with XLA deciding what the interpreter cannot run (``auto``).
Functions whose random inputs would exceed 4M elements (byteir's whole-model programs) are
not checked. A native prefix (``inline`` and the dialect conversion) that fails or leaves
IR that does not verify makes that variant not checkable (e.g. ``hlo-legalize-to-stablehlo``
emits a 1-D ``dynamic_conv`` padding that StableHLO's verifier rejects); an error from our
passes, or our passes leaving IR that does not verify, fails the chunk. A chunk MLIR's own
parser rejects (unregistered dialects such as ``ccl`` or ``quant``) is counted as rejected;
one that MLIR parses but ``penguin_opt.load`` rejects fails.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from penguin_opt import api, isolated
from penguin_opt.cli_common import one_line
from penguin_opt.diagnostics_check import expectations, split_chunks
from penguin_opt.equivalence import NotCheckable, check
from penguin_opt.ir_util import functions, is_public, symbol_name
from penguin_opt.passes import REASSOCIATING
from penguin_opt.passes.base import PassError

_SH_PASSES = "stablehlo-canonicalize-for-penguin{all-functions=true},stablehlo-canonicalize-conv"
_MHLO_PASSES = "canonicalize-for-penguin{all-functions=true},canonicalize-conv"
# variant -> (the native prefix, verified on its own, then our passes)
STABLEHLO_PIPELINES = {
    "stablehlo": ("inline", _SH_PASSES),
    "mhlo": ("inline,stablehlo-legalize-to-hlo", _MHLO_PASSES),
}
MHLO_PIPELINES = {
    "mhlo": ("inline", _MHLO_PASSES),
    "stablehlo": ("inline,hlo-legalize-to-stablehlo", _SH_PASSES),
}
_CHECK_TARGET = re.compile(r"^check\.(\w+)\.(\d+)$")


def default_root() -> Path:
    """``<workspace>/shared/corpus/public`` next to the repository (may be absent)."""
    return Path(__file__).resolve().parents[3] / "shared" / "corpus" / "public"


# ---------------------------------------------------------------------------- chunks


@dataclass(frozen=True)
class Case:
    file: str  # path relative to the corpus root
    index: int  # chunk number in the file
    text: str  # the chunk (padded so line numbers are those of the file)

    @property
    def id(self) -> str:
        return f"{self.file}#{self.index}"

    def digest(self) -> int:
        return int(hashlib.sha1(self.id.encode()).hexdigest()[:8], 16)


def cases(root: Path) -> list[Case]:
    """Every chunk of every ``.mlir`` file the corpus's ``manifest.json`` lists."""
    manifest = json.loads((root / "manifest.json").read_text())
    return [c for rel in sorted(manifest) if rel.endswith(".mlir") for c in _file_cases(root, rel)]


def cases_under(paths: list[Path]) -> list[Case]:
    """Every chunk of every ``.mlir`` file under ``paths`` (files or directories, no
    manifest needed: e.g. an upstream snapshot), ids relative to the folder."""
    out = []
    for path in paths:
        files = [path] if path.is_file() else sorted(path.rglob("*.mlir"))
        base = path.parent if path.is_file() else path
        for f in files:
            out += _file_cases(base, str(f.relative_to(base)))
    return out


def _file_cases(base: Path, rel: str) -> list[Case]:
    text = (base / rel).read_text(errors="replace")
    return [Case(rel, i, chunk.text) for i, chunk in enumerate(split_chunks(text))]


def sample(all_cases: list[Case], every: int) -> list[Case]:
    """A deterministic subset: about one chunk in ``every`` (by a hash of its id)."""
    return [c for c in all_cases if c.digest() % every == 0]


# ---------------------------------------------------------------------------- check ops


@dataclass(frozen=True)
class Expectation:
    kind: str  # expect_eq, expect_eq_const, expect_almost_eq(_const), expect_close, observe
    tolerance: float | None = None  # almost_eq
    max_ulp: int | None = None  # close

    @property
    def exact(self) -> bool:
        return self.kind in ("expect_eq", "expect_eq_const")


_PRETTY_CHECK = re.compile(r"check\.(expect_[a-z_]+)")
_CUSTOM_CHECK = re.compile(r"@check\.(expect_[a-z_]+)\(")


def _balanced(text: str, start: int) -> int:
    """Index just past the bracket (``<``, ``(``, ``[`` or ``{``) closing the one at
    ``text[start]``; strings are skipped and ``->`` is no bracket."""
    closing = {"(": ")", "<": ">", "[": "]", "{": "}"}
    stack = []
    i = start
    while i < len(text):
        ch = text[i]
        if ch == '"':
            i = text.index('"', i + 1)
        elif ch in closing:
            stack.append(closing[ch])
        elif ch in ")>]}" and not (ch == ">" and text[i - 1] == "-"):
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    raise ValueError(f"unbalanced '{text[start]}'")


def _types(text: str, pos: int) -> tuple[list[str], int]:
    """Comma-separated ``tensor<...>`` types starting at ``pos``."""
    types = []
    while True:
        m = re.compile(r"\s*(tensor)<").match(text, pos)
        if not m:
            raise ValueError("expected a tensor type")
        end = _balanced(text, m.end() - 1)
        types.append(text[m.start(1) : end])
        pos = end
        m = re.compile(r"\s*,\s*(?=tensor<)").match(text, pos)
        if not m:
            return types, pos
        pos = m.end()


_VALUE = r"%[\w#.$-]+"


# IREE's e2e tests: check ops written as calls, `check.expect_eq_const(%x, dense<..> : T) : T`
# (a tolerance third: `check.expect_almost_eq_const(%x, dense<..> : T, 1.0e-4) : T`), and
# constants IREE's compiler does not fold, which mean what stablehlo.constant means
_CALL_CHECK = re.compile(r"check\.(expect_[a-z_]+)\(")
_UNFOLDABLE = re.compile(r"\butil\.unfoldable_constant\b")


def _iree_forms(text: str) -> str:
    """IREE's check-op calls in the pretty form :func:`convert_check_ops` reads, and its
    ``util.unfoldable_constant`` as ``stablehlo.constant``."""
    text = _UNFOLDABLE.sub("stablehlo.constant", text)
    out, pos = [], 0
    for m in _CALL_CHECK.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if m.start() < pos or text[line_start : m.start()].strip():
            continue  # (an @check.expect_x( custom call's callee)
        close = _balanced(text, m.end() - 1) - 1
        args = _top_level_split(text[m.end() : close])
        kind = m.group(1)
        if kind.endswith("_const"):  # the literal's own type goes: the op's type follows
            args[1] = re.sub(r"\s*:\s*tensor<.*>\s*$", "", args[1], flags=re.S)
        if len(args) == 3:
            args[2] = f"tolerance = {args[2]}"
        out += [text[pos : m.start()], f"check.{kind} {', '.join(args)}"]
        pos = close + 1
    out.append(text[pos:])
    return "".join(out)


def _top_level_split(text: str) -> list[str]:
    """``text`` split at the commas outside brackets, each part stripped."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}" and not (ch == ">" and text[i - 1] == "-"):
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def convert_check_ops(text: str) -> tuple[str, list[Expectation]]:
    """``text`` with every ``check.expect_*`` op (pretty form, or IREE's call form) and
    every ``custom_call @check.expect_*`` turned into a numbered ``custom_call
    @check.<kind>.<n>``, and the expectations by number. Raises ValueError on a form it
    does not know."""
    text = _iree_forms(text)
    table: list[Expectation] = []
    out, pos = [], 0
    for m in _PRETTY_CHECK.finditer(text):
        if m.start() < pos:
            continue
        line_start = text.rfind("\n", 0, m.start()) + 1
        if text[line_start : m.start()].strip() or text[m.end() : m.end() + 1] not in " \t":
            continue  # not an op at the start of a statement (e.g. @check.expect_close)
        kind = m.group(1)
        i = m.end()
        operands = []
        for _ in range(2):
            v = re.compile(r"\s*,?\s*(" + _VALUE + ")").match(text, i)
            if not v:
                break
            operands.append(v.group(1))
            i = v.end()
        literal = None
        if kind.endswith("_const"):
            d = re.compile(r"\s*,\s*dense<").match(text, i)
            if not d:
                raise ValueError(f"{kind}: expected a dense literal")
            end = _balanced(text, d.end() - 1)
            literal = text[d.end() - len("dense<") : end]
            i = end
        options = {}
        while True:
            o = re.compile(r"\s*,\s*(\w+)\s*=\s*(\"[^\"]*\"|[-+\w.]+)").match(text, i)
            if not o:
                break
            options[o.group(1)] = o.group(2)
            i = o.end()
        c = re.compile(r"\s*:").match(text, i)
        if not c:
            raise ValueError(f"{kind}: expected ':'")
        types, i = _types(text, c.end())
        a = re.compile(r"[ \t]*\{([^}]*)\}").match(text, i)
        if a:
            for kv in a.group(1).split(","):
                key, _, value = kv.partition("=")
                options[key.strip()] = value.split(":")[0].strip()
            i = a.end()
        n = len(table)
        table.append(_expectation(kind, options))
        indent = text[line_start : m.start()]
        out.append(text[pos : m.start()])
        if kind == "expect_serialized_eq":
            out.append(
                f"stablehlo.custom_call @check.observe.{n}({operands[0]}) "
                f"{{has_side_effect = true}} : ({types[0]}) -> ()"
            )
        elif literal is not None:
            t = types[0]
            out.append(
                f"%__expected_{n} = stablehlo.constant {literal} : {t}\n{indent}"
                f"stablehlo.custom_call @check.{kind}.{n}({operands[0]}, "
                f"%__expected_{n}) {{has_side_effect = true}} : ({t}, {t}) -> ()"
            )
        else:
            ts = types if len(types) == 2 else types * 2
            out.append(
                f"stablehlo.custom_call @check.{kind}.{n}({operands[0]}, {operands[1]}) "
                f"{{has_side_effect = true}} : ({ts[0]}, {ts[1]}) -> ()"
            )
        pos = i
    out.append(text[pos:])
    text = "".join(out)

    def number(m: re.Match) -> str:
        table.append(_expectation(m.group(1), {}))
        return f"@check.{m.group(1)}.{len(table) - 1}("

    return _CUSTOM_CHECK.sub(number, text), table


def _expectation(kind: str, options: dict[str, str]) -> Expectation:
    if kind == "expect_serialized_eq":
        return Expectation("observe")
    if kind in ("expect_almost_eq", "expect_almost_eq_const"):
        return Expectation(kind, tolerance=float(options.get("tolerance", "1e-4")))
    if kind == "expect_close":
        return Expectation(kind, max_ulp=int(options.get("max_ulp_difference", "3")))
    if kind in ("expect_eq", "expect_eq_const"):
        return Expectation(kind)
    raise ValueError(f"unknown check op '{kind}'")


# ---------------------------------------------------------------------------- programs


def _walk(op):
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                yield child.operation
                yield from _walk(child.operation)


def _check_calls(func) -> list:
    from jaxlib.mlir import ir

    calls = []
    for op in _walk(func):
        if op.name.endswith(".custom_call"):
            target = ir.StringAttr(op.attributes["call_target_name"]).value
            m = _CHECK_TARGET.match(target)
            if m:
                calls.append((op, int(m.group(2))))
    return calls


def entry_program(
    text: str, entry: str, mode: str, select: frozenset[int] | None = None, *, context=None
) -> tuple[str, list[int]]:
    """A module whose @main is function ``entry`` of ``text`` (with only its callees),
    every check call erased, returning:

    * ``mode="equiv"``: its results, then every operand of its top-level check calls;
    * ``mode="actual"`` / ``"expected"``: operand 0 / 1 of the check calls numbered in
      ``select`` (those in the function body's top level).

    Also returns the numbers of the check calls whose operands were returned."""
    from jaxlib.mlir import ir

    module = api.load(text, context=context)
    with module.context, ir.Location.unknown(module.context):
        funcs = {symbol_name(f): f for f in functions(module)}
        target = funcs[entry]
        _refuse_large_inputs(target)
        keep = _reachable(funcs, entry)
        for name, f in funcs.items():
            if name not in keep:
                f.erase()
        if entry != "main":
            if "main" in keep:
                _rename(module, funcs["main"], "main", "__corpus_main")
            _rename(module, target, entry, "main")
        blocks = list(target.regions[0].blocks)
        ret = blocks[-1].operations[len(blocks[-1].operations) - 1].operation
        top = [
            (op, n)
            for op, n in _check_calls(target)
            if len(blocks) == 1 and op.parent.name == "func.func"
        ]
        values, used = [], []
        if mode == "equiv":
            values = list(ret.operands)
            for op, n in top:
                values += list(op.operands)
                used.append(n)
        else:
            k = 0 if mode == "actual" else 1
            for op, n in top:
                if select is None or n in select:
                    if len(op.operands) > k:
                        values.append(op.operands[k])
                        used.append(n)
        for f in functions(module):
            for op, _ in _check_calls(f):
                op.erase()
        if values != list(ret.operands):
            if len(blocks) != 1:
                raise NotCheckable("checks in a function with several blocks")
            ir.Operation.create(
                "func.return", operands=values, ip=ir.InsertionPoint(ret), loc=ret.location
            )
            ret.erase()
            ftype = ir.FunctionType(ir.TypeAttr(target.attributes["function_type"]).value)
            target.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(list(ftype.inputs), [v.type for v in values])
            )
            if "res_attrs" in target.attributes:
                del target.attributes["res_attrs"]
        return api.to_text(module), used


MAX_INPUT_ELEMENTS = 1 << 22


def _refuse_large_inputs(func) -> None:
    """Random inputs for byteir's whole-model programs run to gigabytes: not checked."""
    from jaxlib.mlir import ir

    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    total = 0
    for t in ftype.inputs:
        if isinstance(t, ir.RankedTensorType) and t.has_static_shape:
            n = 1
            for d in t.shape:
                n *= d
            total += n
    if total > MAX_INPUT_ELEMENTS:
        raise NotCheckable(f"inputs too large for the sweep ({total:.2g} elements)")


_SYMBOL_REF = re.compile(r'@(?:"([^"]*)"|([\w.$-]+))')  # @name or @"any name" (JAX's @"<lambda>")


def _reachable(funcs: dict, entry: str) -> set[str]:
    seen, todo = {entry}, [entry]
    while todo:
        body = str(funcs[todo.pop()])
        for quoted, bare in _SYMBOL_REF.findall(body):
            ref = quoted or bare
            if ref in funcs and ref not in seen:
                seen.add(ref)
                todo.append(ref)
    return seen


def _rename(module, func, old: str, new: str) -> None:
    from jaxlib.mlir import ir

    ir.SymbolTable.replace_all_symbol_uses(old, new, module)
    func.attributes["sym_name"] = ir.StringAttr.get(new)


# ---------------------------------------------------------------------------- outcomes


@dataclass
class ChunkResult:
    case: str
    status: str = "ok"  # ok | skipped: ... | rejected: ... | error: ... | MISMATCH
    dialect: str = ""
    rewrites: Counter = field(default_factory=Counter)
    checked: int = 0  # (function, variant) pairs checked for equivalence
    not_checkable: Counter = field(default_factory=Counter)  # reason -> count
    checker_errors: Counter = field(default_factory=Counter)  # the checker raised
    mismatches: list[str] = field(default_factory=list)
    expectations_held: int = 0
    expectations_failed_before: int = 0  # failing already before the passes
    expectations_broken: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return bool(self.mismatches or self.expectations_broken) or self.status.startswith(
            ("error", "MISMATCH")
        )


def _reason(err: Exception) -> str:
    text = one_line(err)
    text = re.sub(r"^(interpreter|xla): ", "", text)
    # what MLIR puts before the message that tells reasons apart
    text = re.sub(r'Failure while executing pass pipeline: error: ("program":\d+:\d+: )?', "", text)
    text = re.sub(r"tensor<[^>]*>", "tensor<...>", text)
    text = re.sub(r"\d+", "N", text)
    return text[:90]


def _is_mhlo(module) -> bool:
    """Whether any op of ``module`` is an MHLO op. Attributes do not count: every JAX export
    carries ``mhlo.num_partitions``, ``mhlo.layout_mode`` and the like on StableHLO ops."""
    return any(op.name.startswith("mhlo.") for op in _walk(module.operation))


def run_case(case: Case, *, trials: int = 1) -> ChunkResult:
    from jaxlib.mlir import ir

    from penguin_opt.context import make_context
    from penguin_opt.io import InputError

    res = ChunkResult(case.id)
    ctx = make_context()
    baseline: dict = {}
    t0 = time.perf_counter()
    try:
        if expectations(case.text):
            res.status = "skipped: expected-diagnostics chunk"
            return res
        if not re.sub(r"//[^\n]*", "", case.text).strip():  # after a trailing // -----
            res.status = "skipped: empty chunk"
            return res
        try:
            text, table = convert_check_ops(case.text)
        except ValueError as err:
            res.status = f"error: cannot convert check ops: {err}"
            return res
        try:
            with _stage("MLIR's parser"):  # jaxlib's parser segfaults on a few inputs
                module = api.load(text, name=case.file, context=ctx)
        except InputError as err:
            res.status = "rejected: " + _mlir_reason(text, err)
            return res
        try:
            with module.context:
                module.verify()
        except ir.MLIRError as err:
            res.status = "rejected: input does not verify: " + _diag_reason(err)
            return res
        before = api.to_text(module)
        with module.context:
            res.dialect = "mhlo" if _is_mhlo(module) else "stablehlo"
            entries = [symbol_name(f) for f in functions(module) if is_public(f)]
        pipelines = MHLO_PIPELINES if res.dialect == "mhlo" else STABLEHLO_PIPELINES
        for variant, (prefix, ours) in pipelines.items():
            m = api.load(before, name=case.file, context=ctx)
            try:
                # named if a native pass aborts, or leaves IR that crashes the printer
                with _stage(f"{variant}: {prefix}"):
                    stats = api.run(m, prefix).statistics
                    api.to_text(m)
                with m.context:
                    m.verify()
            except ir.MLIRError as err:
                res.not_checkable[f"{prefix}: {_diag_reason(err)}"] += 1
                continue
            except PassError as err:  # the native conversion produced invalid IR
                res.not_checkable[f"{prefix}: {_diag_reason(err)}"] += 1
                continue
            with m.context:  # e.g. a function folded into the region of the op calling it
                kept = {symbol_name(f) for f in functions(m)}
            for entry in entries:
                if entry not in kept:
                    res.not_checkable[f"{prefix}: erased public function"] += 1
            try:
                stats.update(api.run(m, ours).statistics)
            except Exception as err:
                message = one_line(err)
                res.status = f"error: {variant}: {type(err).__name__}: {message[:300]}"
                return res
            reordered = False
            for pass_name, rewriters in stats.items():
                for rewriter, st in rewriters.items():
                    if pass_name != "inline" and st.rewritten:
                        res.rewrites[rewriter] += st.rewritten
                        reordered |= rewriter in REASSOCIATING
            after = api.to_text(m)
            for entry in (e for e in entries if e in kept):
                _check_entry(
                    res, variant, before, after, entry, table, reordered, trials, ctx, baseline
                )
    except Exception as err:  # anything unforeseen fails this chunk, not the sweep
        res.status = f"error: {type(err).__name__}: {' '.join(str(err).split())[:300]}"
        return res
    finally:
        res.seconds = time.perf_counter() - t0
    if res.mismatches or res.expectations_broken:
        res.status = "MISMATCH"
    return res


def _mlir_reason(text: str, err: Exception) -> str:
    """Why the chunk does not load: MLIR's own parser must agree, else it is our bug."""
    from jaxlib.mlir import ir

    from penguin_opt.context import make_context

    ctx = make_context()
    try:
        with ctx, ir.Location.unknown(ctx):
            ir.Module.parse(text)
    except ir.MLIRError as mlir_err:
        return "MLIR parser: " + _diag_reason(mlir_err)
    raise AssertionError(f"MLIR parses the chunk but penguin_opt.load rejects it: {err}")


INTERPRETER_MAX_ELEMENTS = 1 << 16
_TENSOR = re.compile(r"tensor<((?:\d+x)+)")


def pick_oracle(text: str) -> str:
    """ "xla" for programs with a tensor too big for the reference interpreter (it runs
    element by element), else "auto" (the interpreter, XLA for what it cannot run)."""
    biggest = 0
    for m in _TENSOR.finditer(text):
        n = 1
        for d in m.group(1)[:-1].split("x"):
            n *= int(d)
        biggest = max(biggest, n)
    return "xla" if biggest > INTERPRETER_MAX_ELEMENTS else "auto"


_STAGE_ENV = "PENGUIN_CORPUS_STAGE_FILE"


@contextlib.contextmanager
def _stage(what: str):
    """Record in the worker's stage file that ``what`` (a native conversion the chunk goes
    through before our passes) is running, so that when it aborts the process the parent
    can tell the conversion from our passes."""
    path = os.environ.get(_STAGE_ENV)
    if path:
        Path(path).write_text(what)
    try:
        yield
    finally:
        if path:
            Path(path).write_text("")


def run_case_isolated(case: Case) -> ChunkResult:
    """``run_case`` in a worker process: a chunk that aborts the process (LLVM ERROR,
    signal) fails as a chunk instead of ending the sweep or the test session."""
    stage_file = Path(tempfile.gettempdir()) / f"penguin-corpus-stage-{os.getpid()}"
    os.environ[_STAGE_ENV] = str(stage_file)  # inherited by the worker
    try:
        return isolated.call(_WORKER_KIND, run_case, case)
    except isolated.ChildDied:
        stage = stage_file.read_text() if stage_file.exists() else ""
        stage_file.unlink(missing_ok=True)
        res = ChunkResult(case.id, dialect="?")
        if stage:  # a native conversion before our passes, not our passes
            res.status = f"rejected: {stage} crashed the process (an LLVM abort or a signal)"
        else:
            res.status = "error: the process aborted (LLVM ERROR or a signal) on this chunk"
        return res


_WORKER_KIND = "corpus-chunk"


def shutdown_worker() -> None:
    """Stop the worker of ``run_case_isolated``. It closes its oracle processes first: a
    worker killed with their pools open leaves the pools' semaphores registered with
    multiprocessing's resource tracker, which warns of them at the sweep's exit."""
    if isolated.running(_WORKER_KIND):
        with contextlib.suppress(Exception):
            isolated.call(_WORKER_KIND, isolated.close_all, timeout=60)
    isolated.kill(_WORKER_KIND)


def _diag_reason(err) -> str:
    diags = getattr(err, "error_diagnostics", None) or []
    msg = diags[0].message if diags else str(err)
    msg = re.sub(r"'[^']*'", "'...'", one_line(msg))
    return re.sub(r"tensor<[^>]*>", "tensor<...>", msg)[:100]


# Seconds an oracle may take on one program of the sweep (the checker's default is 600):
# test suites hold programs that never end (stablehlo's verify_while.mlir loops forever).
ORACLE_TIMEOUT = 60.0
_check = functools.partial(check, timeout=ORACLE_TIMEOUT)

# The size of every dynamic dimension of an entry's arguments in the sweep's random inputs
# (the programs are specialized to it, see equivalence._specialize).
DYNAMIC_DIM_SIZE = 3


def _check_entry(
    res: ChunkResult,
    variant: str,
    before: str,
    after: str,
    entry: str,
    table: list[Expectation],
    reordered: bool,
    trials: int,
    ctx,
    baseline: dict,
) -> None:
    where = f"{res.case} @{entry} [{variant}]"
    try:
        prog_b, _ = entry_program(before, entry, "equiv", context=ctx)
        prog_a, used = entry_program(after, entry, "equiv", context=ctx)
        oracle = pick_oracle(prog_b)

        def run(oracle: str, rtol: float | None = None, atol: float | None = None):
            return _check(
                prog_b,
                prog_a,
                seed=0,
                trials=trials,
                rtol=rtol,
                atol=atol,
                oracle=oracle,
                dynamic_dim_size=DYNAMIC_DIM_SIZE,
            )

        if oracle == "xla":  # XLA compiles the two programs differently: no bitwise
            report = run("xla")
            exact = False
        else:
            report = run("auto", 0.0, 0.0)
            exact = report.ok and report.oracle == "interpreter"
            if not report.ok and (reordered or report.oracle != "interpreter"):
                report = run("auto")
    except NotCheckable as err:
        res.not_checkable[_reason(err)] += 1
        return
    except Exception as err:  # the checker itself failed: not a verdict on the passes
        res.checker_errors[f"{type(err).__name__}: {_reason(err)}"] += 1
        return
    res.checked += 1
    if not report.ok:
        res.mismatches.append(f"{where}:\n{report.table()}")
        return
    groups: dict[tuple, list[int]] = {}
    for n in used:
        e = table[n]
        if e.kind != "observe":
            groups.setdefault((e.exact, e.tolerance, e.max_ulp), []).append(n)
    for key, numbers in groups.items():
        sel = frozenset(numbers)
        if (entry, key) not in baseline:  # the expectations on the program as written
            baseline[(entry, key)] = _expectations_hold(before, entry, sel, *key, ctx)
        held_before = baseline[(entry, key)]
        # bitwise-equal results keep the verdict; otherwise evaluate the result
        held_after = held_before if exact else _expectations_hold(after, entry, sel, *key, ctx)
        if held_after:
            res.expectations_held += len(numbers)
        elif not held_before:
            res.expectations_failed_before += len(numbers)
        else:
            res.expectations_broken.append(f"{where}: expectations {sorted(numbers)}")


def _expectations_hold(
    text: str,
    entry: str,
    select: frozenset[int],
    exact: bool,
    tol: float | None,
    ulp: int | None,
    ctx=None,
) -> bool:
    try:
        actual, _ = entry_program(text, entry, "actual", select, context=ctx)
        expected, _ = entry_program(text, entry, "expected", select, context=ctx)
    except NotCheckable:
        return False
    oracle = pick_oracle(actual)
    if exact:
        return _check(expected, actual, rtol=0.0, atol=0.0, oracle=oracle).ok
    if tol is not None:
        return _check(expected, actual, rtol=0.0, atol=tol, oracle=oracle).ok
    # expect_close: max_ulp_difference ulps, as a relative bound at the type's epsilon
    first = _check(expected, actual, rtol=0.0, atol=0.0, oracle=oracle)
    if first.ok:
        return True
    eps = max((_eps(o.dtype) for o in first.outputs), default=0.0)
    return _check(expected, actual, rtol=max(ulp or 0, 1) * eps, atol=0.0, oracle=oracle).ok


def _eps(dtype_name: str) -> float:
    import ml_dtypes
    import numpy as np

    try:
        return float(ml_dtypes.finfo(np.dtype(dtype_name)).eps)
    except (TypeError, ValueError):
        return 0.0


# ---------------------------------------------------------------------------- summary


@dataclass
class Summary:
    files: int = 0
    chunks: int = 0
    skipped: Counter = field(default_factory=Counter)
    loaded: int = 0
    rejected: Counter = field(default_factory=Counter)
    rewritten: int = 0
    checked: int = 0
    mismatches: int = 0
    errors: int = 0
    not_checkable: Counter = field(default_factory=Counter)
    checker_errors: Counter = field(default_factory=Counter)
    expectations_held: int = 0
    expectations_failed_before: int = 0
    expectations_broken: int = 0
    seconds: float = 0.0

    def lines(self) -> list[str]:
        out = [
            f"files: {self.files}, chunks: {self.chunks}, loaded: {self.loaded}, "
            f"rewritten: {self.rewritten}, checked (function x variant): {self.checked}, "
            f"mismatches: {self.mismatches}, errors: {self.errors}, "
            f"time: {self.seconds:.0f} s",
            f"expectations: held {self.expectations_held}, broken by the pipeline "
            f"{self.expectations_broken}, failing before the pipeline too "
            f"{self.expectations_failed_before}",
        ]
        for title, counter in (
            ("skipped", self.skipped),
            ("rejected", self.rejected),
            ("not checkable", self.not_checkable),
            ("checker errors", self.checker_errors),
        ):
            out.append(f"{title}: {sum(counter.values())}")
            out += [f"  {n:5d}  {reason}" for reason, n in counter.most_common()]
        return out


def summarize(results: list[ChunkResult], seconds: float) -> Summary:
    s = Summary(
        files=len({r.case.rsplit("#", 1)[0] for r in results}), chunks=len(results), seconds=seconds
    )
    for r in results:
        if r.status.startswith("skipped"):
            s.skipped[r.status.split(": ", 1)[1]] += 1
            continue
        if r.status.startswith("rejected"):
            s.rejected[r.status.split(": ", 1)[1]] += 1
            continue
        if r.status.startswith("error") and not r.dialect:
            s.errors += 1
            continue
        s.loaded += 1
        s.rewritten += bool(r.rewrites)
        s.checked += r.checked
        s.mismatches += len(r.mismatches)
        s.errors += r.status.startswith("error")
        s.not_checkable.update(r.not_checkable)
        s.checker_errors.update(r.checker_errors)
        s.expectations_held += r.expectations_held
        s.expectations_failed_before += r.expectations_failed_before
        s.expectations_broken += len(r.expectations_broken)
    return s


def sweep(
    todo: list[Case], each: Callable[[int, ChunkResult], None] | None = None
) -> tuple[list[ChunkResult], Summary]:
    """Every case through ``run_case_isolated`` in order (``each(n, result)`` after each,
    counting from 1), then the worker stopped; the results and their summary."""
    results, t0 = [], time.perf_counter()
    try:
        for n, case in enumerate(todo, 1):
            results.append(run_case_isolated(case))
            if each is not None:
                each(n, results[-1])
    finally:
        shutdown_worker()
    return results, summarize(results, time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    """``python -m tools.corpus.shared PATH... [--every N] [--jsonl FILE]``: the sweep's
    rules on any programs (every ``.mlir`` file under each PATH, each chunk in its own
    worker). Prints each failure as it happens, then the summary; exit 1 if any failed."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m tools.corpus.shared", description=main.__doc__)
    ap.add_argument("paths", nargs="+", type=Path)
    ap.add_argument("--every", type=int, default=1, help="about one chunk in N (by its id)")
    ap.add_argument("--jsonl", type=Path, help="one line per chunk: its id, status, counts")
    args = ap.parse_args(argv)
    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        ap.error(f"no such file or directory: {', '.join(missing)}")
    todo = cases_under(args.paths)
    todo = sample(todo, args.every) if args.every > 1 else todo
    log = args.jsonl.open("w") if args.jsonl else None

    def each(n: int, r: ChunkResult) -> None:
        if log:
            row = {"case": r.case, "status": r.status, "checked": r.checked}
            row |= {"rewrites": dict(r.rewrites), "not_checkable": dict(r.not_checkable)}
            log.write(json.dumps(row) + "\n")
            log.flush()
        if r.failed:
            details = " | ".join([*r.mismatches, *r.expectations_broken])[:500]
            print(f"[{n}/{len(todo)}] {r.case}: {r.status} {details}", flush=True)

    try:
        results, summary = sweep(todo, each)
    finally:
        if log:
            log.close()
    print("\n".join(summary.lines()))
    return 1 if any(r.failed for r in results) else 0


if __name__ == "__main__":  # through the module's own name: its workers unpickle run_case
    from tools.corpus.shared import main as _main

    raise SystemExit(_main())

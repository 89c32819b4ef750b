"""What each rewrite did, op by op: remarks, remark files and the change view.

With a :class:`Recorder` on the run's state (``RunState.recorder``), every rewriter's
outcome on every op it visits is a :class:`Remark`: the pass, the rewriter, ``rewrite`` or
``skip`` (with the skip reason), the op's name and location, and what the rewrite created.
With ``changes`` the op is also printed before the rewrite and each op it created after
it, in isolation (not a module diff: SSA names do not shift). Counting and recording
happen in one place, :meth:`penguin_opt.passes.rewriter.Rewriter.record`'s callers, so
there is one rewrite remark per rewrite the statistics count.

Rewrites the zero-sized rewriter counts without visiting the op (ops that are not
side-effect-free or not zero-sized: the statistics' bulk skip counts) have no skip remark.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import TextIO

from jaxlib.mlir import ir

from .passes.sweep import Sweep

__all__ = ["Recorder", "Remark", "print_changes", "remarks_yaml"]

# What one rewrite of each rewriter does, for its remark ({op}: the rewritten op's name).
DOES = {
    "inlineCall": "inlined {op}",
    "fuseIotaSort": "dropped the iota index operand of {op}",
    "canonicalizeTupleOp": "forwarded the tuple element that {op} reads to its uses",
    "replaceGetDimensionSize": "replaced {op} of a static dimension by its constant",
    "replaceConvertsWithConstants": "folded {op} of a constant",
    "replaceInvalidBackendConfigs": "rewrote the backend_config of {op} that the Erf "
    "handler cannot parse",
    "lowerResizeNearestGrad": "lowered {op} (ResizeNearestGrad) to supported ops",
    "replaceBroadcastsWithBroadcastInDim": "rewrote {op} as broadcast_in_dim",
    "replaceBroadcastInDimWithConstants": "folded {op} of a constant",
    "removeDeadZeroSizedTensorOps": "replaced zero-sized {op} by an empty constant",
    "explicitlyPad": "moved the padding of {op} into an explicit pad",
    "explicitlyStride": "moved the strides of {op} into strided slices",
}
_CHANGE_LIMIT = 16  # constants of more elements print elided in the change view


@dataclass
class Remark:
    pass_name: str
    rewriter: str
    kind: str  # "rewrite" or "skip"
    op: str
    location: str  # file:line:col, or the op's location text when it has none
    reason: str | None = None
    created: list[str] = field(default_factory=list)
    before: str | None = None  # the op, printed (with changes)
    after: list[str] = field(default_factory=list)  # the ops created, printed
    note: str | None = None  # said instead of the created ops (inline: what was inlined)

    @property
    def message(self) -> str:
        if self.kind == "skip":
            return f"[{self.rewriter}] skipped {self.op}: {self.reason}"
        text = DOES.get(self.rewriter, "rewrote {op}").format(op=self.op)
        if self.note:
            return f"[{self.rewriter}] {text}: {self.note}"
        made = ", ".join(_counted(self.created)) if self.created else "nothing"
        return f"[{self.rewriter}] {text}; created {made}"

    def render(self) -> str:
        return f"{self.location}: remark: {self.message}"

    def to_dict(self) -> dict:
        data = asdict(self)
        data["message"] = self.message
        return data


def _counted(names: list[str]) -> list[str]:
    counts: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    return [n if c == 1 else f"{c} {n}" for n, c in counts.items()]


class Recorder:
    """Collects remarks during a run. ``skips``: skip remarks too; ``changes``: print the
    ops before and after each rewrite; ``name``: what locations without a file say."""

    def __init__(self, *, skips: bool = False, changes: bool = False, name: str = "-") -> None:
        self.skips, self.changes, self.name = skips, changes, name
        self.remarks: list[Remark] = []

    def before(self, op: ir.Operation) -> tuple:
        """What must be read of ``op`` before a rewriter touches it."""
        text = _asm(op) if self.changes else None
        return op.name, self.location(op.location, op.name), text

    def add(
        self,
        pass_name: str,
        rewriter: str,
        seen: tuple,
        reason: str | None,
        created: list[ir.Operation] | None,
        *,
        note: str | None = None,
    ) -> None:
        """The outcome of one visit (``seen`` from :meth:`before`; ``created``: the ops
        the rewrite made; ``note``: what else the remark says, instead of the list)."""
        name, location, text = seen
        if reason is not None:
            if self.skips:
                self.remarks.append(Remark(pass_name, rewriter, "skip", name, location, reason))
            return
        alive = [op for op in created or () if not Sweep.is_erased(op)]
        remark = Remark(
            pass_name,
            rewriter,
            "rewrite",
            name,
            location,
            created=[op.name for op in alive],
            before=text,
            note=note,
        )
        if self.changes:
            remark.after = [_asm(op) for op in alive] or ([f"// {note}"] if note else [])
        self.remarks.append(remark)

    def location(self, loc: ir.Location, kind: str | None = None) -> str:
        from .passes.base import location_triple_text

        return location_triple_text(str(loc), self.name, kind) or self.name


def _asm(op: ir.Operation) -> str:
    return op.get_asm(large_elements_limit=_CHANGE_LIMIT, assume_verified=True).rstrip()


def select(remarks: list[Remark], pattern: str | None, *, skips: bool) -> list[Remark]:
    """The remarks ``--remarks[=REGEX]`` shows: rewrites of the rewriters ``pattern``
    matches (None, "" or "all": every rewriter), and their skips with ``skips``."""
    regex = None if pattern in (None, "", "all") else re.compile(pattern)
    return [
        r
        for r in remarks
        if (r.kind == "rewrite" or skips) and (regex is None or regex.search(r.rewriter))
    ]


def print_changes(remarks: list[Remark], out: TextIO) -> None:
    """``--print-changes``: each rewrite's op before and ops after, grouped by rewriter in
    pipeline order."""
    groups: dict[tuple[str, str], list[Remark]] = {}
    for r in remarks:
        if r.kind == "rewrite":
            groups.setdefault((r.pass_name, r.rewriter), []).append(r)
    for (pass_name, rewriter), group in groups.items():
        plural = "" if len(group) == 1 else "s"
        print(f"// ===== {pass_name}: {rewriter} ({len(group)} rewrite{plural}) =====", file=out)
        for r in group:
            print(f"// ----- {r.location}", file=out)
            print("// before:", file=out)
            print(r.before or f"<{r.op}>", file=out)
            print("// after:", file=out)
            print("\n".join(r.after) if r.after else "// (nothing: the op was erased)", file=out)


def remarks_yaml(remarks: list[Remark]) -> str:
    """LLVM's optimization-remark YAML: a ``--- !Passed`` / ``--- !Missed`` document per
    remark (strings JSON-quoted, which YAML reads)."""
    docs = []
    for r in remarks:
        file, line, col = _split_location(r.location)
        lines = [
            "--- !Passed" if r.kind == "rewrite" else "--- !Missed",
            f"Pass: {json.dumps(r.pass_name)}",
            f"Name: {json.dumps(r.rewriter)}",
            f"DebugLoc: {{ File: {json.dumps(file)}, Line: {line}, Column: {col} }}",
            f"Op: {json.dumps(r.op)}",
        ]
        if r.reason is not None:
            lines.append(f"Reason: {json.dumps(r.reason)}")
        lines.append("Created: [" + ", ".join(json.dumps(c) for c in r.created) + "]")
        lines.append(f"Message: {json.dumps(r.message)}")
        docs.append("\n".join(lines) + "\n...\n")
    return "".join(docs)


def _split_location(location: str) -> tuple[str, int, int]:
    match = re.fullmatch(r"(.*):(\d+):(\d+)", location)
    if match is None:
        return location, 0, 0
    return match.group(1), int(match.group(2)), int(match.group(3))

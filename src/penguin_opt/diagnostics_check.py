"""``--split-input-file`` and ``--verify-diagnostics``, as in mlir-opt.

Chunks are separated by lines ``// -----``; each chunk is parsed on its own but keeps the
line numbers of the whole file. ``// expected-error {{text}}`` (also -warning, -remark)
expects a diagnostic containing ``text`` on its own line, ``@+N``/``@-N`` lines away.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_MARKER = "// -----"
_EXPECTED = re.compile(r"expected-(error|warning|remark)\s*(@[+-]\d+)?\s*\{\{(.*?)\}\}")
_DIAG_LINE = re.compile(r"^(.*?):(\d+):(\d+): (error|warning|remark): (.*)$")


@dataclass
class Chunk:
    text: str  # padded with newlines so line numbers match the whole file
    first_line: int


def split_chunks(text: str, marker: str = DEFAULT_MARKER) -> list[Chunk]:
    """The chunks between lines that are ``marker`` (trailing whitespace allowed)."""
    pattern = re.compile(rf"^{re.escape(marker)}[ \t\r]*$", re.M)
    chunks, start, line = [], 0, 1
    for match in pattern.finditer(text):
        body = text[start : match.start()]
        chunks.append(Chunk("\n" * (line - 1) + body, line))
        line += body.count("\n") + 1
        start = match.end() + 1
    body = text[start:]
    chunks.append(Chunk("\n" * (line - 1) + body, line))
    return chunks


@dataclass(frozen=True)
class Expected:
    severity: str
    line: int
    text: str


def expectations(text: str) -> list[Expected]:
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        for m in _EXPECTED.finditer(line):
            offset = int(m.group(2)[1:]) if m.group(2) else 0
            found.append(Expected(m.group(1), number + offset, m.group(3)))
    return found


def verify(
    rendered: list[str], expected: list[Expected], file_name: str, *, only_expected: bool = False
) -> list[str]:
    """Problems (one line each) between emitted diagnostics and the expectations: an
    expectation not produced, and (unless ``only_expected``, mlir-opt's
    ``--verify-diagnostics=only-expected``) a diagnostic of any severity not expected."""
    problems = []
    remaining = list(expected)
    for line in rendered:
        m = _DIAG_LINE.match(line)
        if not m:
            if not only_expected:
                problems.append(
                    f"{file_name}: error: unexpected diagnostic without location: {line}"
                )
            continue
        _, lineno, _, severity, message = m.groups()
        hit = next(
            (
                e
                for e in remaining
                if e.severity == severity and e.line == int(lineno) and e.text in message
            ),
            None,
        )
        if hit is not None:
            remaining.remove(hit)
        elif not only_expected:
            problems.append(f"{file_name}:{lineno}: error: unexpected {severity}: {message}")
    for e in remaining:
        problems.append(
            f'{file_name}:{e.line}: error: expected {e.severity} "{e.text}" was not produced'
        )
    return problems


__all__ = [
    "DEFAULT_MARKER",
    "Chunk",
    "Expected",
    "expectations",
    "split_chunks",
    "verify",
]

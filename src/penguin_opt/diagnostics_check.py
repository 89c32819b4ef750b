"""``--split-input-file`` and ``--verify-diagnostics``, as in mlir-opt.

Chunks are separated by lines ``// -----``; each chunk is parsed on its own but keeps the
line numbers of the whole file. The expectations are MLIR's
(``SourceMgrDiagnosticVerifierHandler``): ``// expected-error {{text}}`` (also
``-warning``, ``-remark``, ``-note``) expects a diagnostic of that severity whose message
contains ``text``, on the comment's own line, or ``@+N``/``@-N`` lines away, ``@above``
(the last line that is not an expectation), ``@below`` (the next such line) or
``@unknown`` (a diagnostic without a location). ``expected-error-re {{a {{[0-9]+}} b}}``
matches the ``{{...}}`` parts inside the text as regular expressions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

DEFAULT_MARKER = "// -----"
# MLIR's own pattern, matched against each line without its trailing whitespace; the
# text is everything between the first ``{{`` and the ``}}`` ending the line.
_EXPECTED = re.compile(
    r"expected-(error|note|remark|warning)(-re)? *(@([+-][0-9]+|above|below|unknown))? *"
    r"\{\{(.*)\}\}$"
)
# A rendered diagnostic: ``file:line:col: severity: message`` (or ``file: severity:`` for
# one without a position).
_DIAG_LINE = re.compile(r"^(.*?):(\d+):(\d+): (error|warning|remark|note): (.*)$")
_NO_POSITION = re.compile(r"^(.*?): (error|warning|remark|note): (.*)$")
# POSIX bracket classes of LLVM's regular expressions, in Python's spelling.
_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "digit": "0-9",
    "lower": "a-z",
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
}


@dataclass(frozen=True)
class Chunk:
    body: str  # the chunk's own text
    first_line: int  # the line of the file it begins on

    @property
    def text(self) -> str:
        """The body after ``first_line - 1`` newlines, so that MLIR's line numbers are the
        file's (made when asked: the padding of every chunk of a file at once would be
        quadratic in its lines)."""
        return "\n" * (self.first_line - 1) + self.body

    def program(self, *, several: bool) -> Chunk:
        """The chunk as a program: of ``several`` chunks, a blank one is an empty module
        (a marker at the end, two in a row), as in mlir-opt; only a whole input that is
        blank is refused."""
        if several and (not self.body or self.body.isspace()):
            return Chunk(self.body + "module {\n}\n", self.first_line)
        return self


def split_chunks(text: str, marker: str = DEFAULT_MARKER) -> list[Chunk]:
    """The chunks between lines that are ``marker`` (trailing whitespace allowed)."""
    pattern = re.compile(rf"^{re.escape(marker)}[ \t\r]*$", re.M)
    chunks, start, line = [], 0, 1
    for match in pattern.finditer(text):
        body = text[start : match.start()]
        chunks.append(Chunk(body, line))
        line += body.count("\n") + 1
        start = match.end() + 1
    body = text[start:]
    chunks.append(Chunk(body, line))
    return chunks


@dataclass(eq=False)
class Expected:
    """One ``expected-*`` comment: what it expects, and where the comment is (``at``:
    line and column of its ``expected-``, where mlir-opt reports it)."""

    severity: str
    line: int | None  # the line the diagnostic must be on; None: @unknown (no location)
    text: str
    at: tuple[int, int]
    pattern: re.Pattern[str] | None = None  # -re: the text as a regular expression
    error: str | None = None  # why the comment is malformed (an -re with a bad regex)
    matched: bool = field(default=False, compare=False)

    def match(self, message: str) -> bool:
        if self.pattern is not None:
            return self.pattern.search(message) is not None
        return self.text in message


def _regex(text: str) -> re.Pattern[str]:
    """An ``-re`` text as one regular expression: the parts outside ``{{...}}`` literal,
    those inside as written (LLVM's POSIX syntax, its bracket classes translated).
    Raises ValueError with mlir-opt's words for a malformed one."""
    parts, rest = [], text
    while rest:
        start = rest.find("{{")
        if start < 0:
            parts.append(re.escape(rest))
            break
        parts.append(re.escape(rest[:start]))
        rest = rest[start + 2 :]
        end = rest.find("}}")
        if end < 0:
            raise ValueError("found start of regex with no end '}}'")
        inner = re.sub(
            r"\[:([a-z]+):\]", lambda m: _POSIX_CLASSES.get(m.group(1), m.group(0)), rest[:end]
        )
        try:
            re.compile(inner)
        except re.error as err:
            raise ValueError(f"invalid regex: {err}") from None
        parts.append(f"({inner})")
        rest = rest[end + 2 :]
    return re.compile("".join(parts))


def expectations(text: str, first_line: int = 1) -> list[Expected]:
    """The ``expected-*`` comments of ``text`` (a chunk's body, which begins at line
    ``first_line`` of its file), in order; their lines are the file's."""
    found: list[Expected] = []
    below: list[Expected] = []  # waiting for the next line that is not an expectation
    last_plain = 0  # the last line (0-based) that is not an expectation
    lines = text.split("\n")
    shift = first_line - 1
    for number, line in enumerate(lines):
        m = _EXPECTED.search(line.rstrip()) if "expected-" in line else None
        if m is None:
            for e in below:
                e.line = number + 1 + shift
            below.clear()
            last_plain = number
            continue
        severity, regex, _, where, body = m.groups()
        e = Expected(severity, number + 1 + shift, body, (number + 1 + shift, m.start() + 1))
        if regex:
            try:
                e.pattern = _regex(body)
            except ValueError as err:
                e.error = str(err)
        if where is None:
            pass
        elif where[0] in "+-":
            e.line += int(where)
        elif where == "unknown":
            e.line = None
        elif where == "above":
            e.line = last_plain + 1 + shift
        else:  # below: the next plain line (the chunk's last line if none follows)
            e.line = len(lines) + shift
            below.append(e)
        found.append(e)
    return found


def _parsed(line: str, file_name: str) -> tuple[str, int | None, str, str] | None:
    """(position text, line, severity, message) of a rendered diagnostic of
    ``file_name`` (line None: no position); None for a line of another form or a position
    in another file."""
    m = _DIAG_LINE.match(line)
    if m is not None:
        file, lineno, col, severity, message = m.groups()
        if file != file_name:
            return None
        return f"{file}:{lineno}:{col}", int(lineno), severity, message
    m = _NO_POSITION.match(line)
    if m is not None and m.group(1) == file_name:
        return file_name, None, m.group(2), m.group(3)
    return None


def verify(
    rendered: list[str], expected: list[Expected], file_name: str, *, only_expected: bool = False
) -> list[str]:
    """Problems (one line each) between emitted diagnostics and the expectations, as
    mlir-opt reports them: a malformed expectation, an expectation not produced, a
    diagnostic whose text an expectation of another severity on its line wanted, and
    (unless ``only_expected``, mlir-opt's ``--verify-diagnostics=only-expected``) a
    diagnostic of any severity not expected. An expectation may match several
    diagnostics."""
    problems = [f"{file_name}:{e.at[0]}:{e.at[1]}: error: {e.error}" for e in expected if e.error]
    usable = [e for e in expected if not e.error]
    for line in rendered:
        parsed = _parsed(line, file_name)
        if parsed is None:
            if not only_expected:
                problems.append(f"{file_name}: error: unexpected diagnostic: {line}")
            continue
        where, lineno, severity, message = parsed
        near = None
        for e in usable:
            # No position: an unknown location, or line 0 (an implicit module's).
            if (e.line == lineno or (lineno is None and e.line == 0)) and e.match(message):
                if e.severity == severity:
                    e.matched = True
                    break
                near = e
        else:
            if only_expected:
                continue
            if near is not None:
                problems.append(
                    f"{file_name}:{near.at[0]}:{near.at[1]}: error: '{severity}' diagnostic"
                    f" emitted when expecting a '{near.severity}'"
                )
            else:
                problems.append(f"{where}: error: unexpected {severity}: {message}")
    for e in usable:
        if not e.matched:
            problems.append(
                f"{file_name}:{e.at[0]}:{e.at[1]}: error: expected {e.severity}"
                f' "{e.text}" was not produced'
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

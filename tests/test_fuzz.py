"""Mutations of real inputs through the CLI: whatever the bytes, the promises hold.

Seeds are the bundled examples and the FileCheck cases (one program per chunk). Each
mutant (a line deleted, duplicated or swapped, a character replaced by MLIR punctuation,
a truncation, inserted bytes that are not UTF-8) runs through both dialects' pipelines;
the run must exit 0 or 1, never by a signal, without a traceback or internal error, with
one error line on failure, no output file after a failure and the input unchanged.
CI runs ``PENGUIN_FUZZ_N`` mutants (default 40); ``-m slow`` runs 2,000.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from support.hostile import ROOT, assert_kept_promises, run

from penguin_opt.diagnostics_check import split_chunks

SEEDS_DIRS = [ROOT / "examples", ROOT / "tests" / "filecheck" / "transforms"]
PUNCTUATION = list('%()[]{}<>:=,@#"\\ -!^x0123456789.')


def seeds() -> list[str]:
    found = []
    for folder in SEEDS_DIRS:
        for path in sorted(folder.glob("*.mlir")):
            for chunk in split_chunks(path.read_text()):
                text = chunk.text.strip("\n")
                if "func.func" in text:
                    found.append(text + "\n")
    return found


def mutate(text: str, rng: random.Random) -> bytes:
    lines = text.split("\n")
    kind = rng.randrange(6)
    if kind == 0 and len(lines) > 1:
        del lines[rng.randrange(len(lines))]
    elif kind == 1:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    elif kind == 2 and len(lines) > 1:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == 3:
        data = bytearray("\n".join(lines).encode())
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] = ord(rng.choice(PUNCTUATION))
        return bytes(data)
    elif kind == 4:
        data = "\n".join(lines).encode()
        return data[: rng.randrange(1, len(data))]
    else:
        data = bytearray("\n".join(lines).encode())
        at = rng.randrange(len(data))
        data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
        return bytes(data)
    return "\n".join(lines).encode()


def pipeline_for(text: str) -> str:
    if '"mhlo.' in text or " mhlo." in text:
        return "canonicalize-for-penguin{all-functions=true},canonicalize-conv"
    return (
        "inline,stablehlo-canonicalize-for-penguin{all-functions=true},stablehlo-canonicalize-conv"
    )


def check_mutants(tmp_path: Path, count: int, seed: int) -> None:
    rng = random.Random(seed)
    pool = seeds()
    assert len(pool) > 50
    for index in range(count):
        text = rng.choice(pool)
        data = mutate(text, rng)
        src = tmp_path / f"mutant{index}.mlir"
        src.write_bytes(data)
        out = tmp_path / f"out{index}.mlir"
        proc = run(src, "-p", pipeline_for(text), "-o", out, timeout=120)
        try:
            assert_kept_promises(proc, codes=(0, 1))
            assert src.read_bytes() == data
            if proc.returncode != 0:
                assert not out.exists()
        except AssertionError as err:
            raise AssertionError(f"mutant {index} (kept at {src}): {err}") from None
        src.unlink()
        out.unlink(missing_ok=True)
    assert not list(tmp_path.glob(".penguin-opt-*"))


def test_mutants_keep_the_promises(tmp_path):
    check_mutants(tmp_path, int(os.environ.get("PENGUIN_FUZZ_N", "40")), seed=20261201)


@pytest.mark.slow
def test_many_mutants_keep_the_promises(tmp_path):
    check_mutants(tmp_path, 2000, seed=7)

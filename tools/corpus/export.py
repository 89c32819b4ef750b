"""Lowering corpus models to StableHLO (and HLO text/proto), with an on-disk cache.

Programs are written to ``$PENGUIN_CORPUS_DIR`` (default ``~/.cache/penguin-opt-corpus``),
never into the repository: ``<name>/model.mlir`` (StableHLO), ``model.hlo.txt`` and
``model.hlo.pb`` (HLO text and serialized HloModuleProto, for static programs),
``inputs.npz`` (``arg0, arg1, ...``: the arguments @main is run on) and ``meta.json``.
A cache entry is reused while the library versions and this package's source are the same.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from penguin_opt.equivalence import ProgressTicker

from .models import ModelSpec

CACHE_VERSION = 1


def cache_root() -> Path:
    env = os.environ.get("PENGUIN_CORPUS_DIR")
    return Path(env) if env else Path.home() / ".cache" / "penguin-opt-corpus"


@dataclass
class Program:
    name: str
    stablehlo: str
    inputs: list[np.ndarray]
    hlo_text: str | None = None
    hlo_proto: bytes | None = None
    export_seconds: float = 0.0
    cached: bool = False


def _fingerprint(spec: ModelSpec) -> str:
    import importlib.metadata as md

    versions = {}
    for dist in ("jax", "jaxlib", "keras", "keras-hub", "numpy"):
        try:
            versions[dist] = md.version(dist)
        except md.PackageNotFoundError:
            versions[dist] = None
    build = spec.build
    cells = [repr(c.cell_contents) for c in (build.__closure__ or ())]
    try:
        source = inspect.getsource(build)
    except (OSError, TypeError):
        source = build.__qualname__
    h = hashlib.sha256(
        json.dumps([CACHE_VERSION, spec.name, spec.x64, versions, cells, source]).encode()
    )
    return h.hexdigest()[:16]


def lower(spec: ModelSpec, status: Callable[[str], None] | None = None) -> Program:
    """Build the model and lower it (no cache). ``status`` is told each stage as it
    starts ("building the model", "lowering to StableHLO", ...)."""
    import jax

    t0 = time.perf_counter()
    with jax.enable_x64(True) if spec.x64 else contextlib.nullcontext():
        return _lower(spec, t0, status or (lambda text: None))


def _lower(spec: ModelSpec, t0: float, status: Callable[[str], None]) -> Program:
    import jax

    status("building the model")
    built = spec.build()
    leaves = [np.asarray(a) for a in jax.tree_util.tree_leaves(built.args)]
    if built.symbolic_specs is not None:
        from jax import export

        status("exporting with symbolic shapes (jax.export)")
        exported = export.export(jax.jit(built.fn))(*built.symbolic_specs)
        text = exported.mlir_module()
        hlo_text = hlo_proto = None
    else:
        status("lowering to StableHLO")
        lowered = jax.jit(built.fn, keep_unused=True).lower(*built.args)
        text = lowered.as_text()
        hlo_text, hlo_proto = None, None
        if spec.hlo:
            from penguin_opt._compat import hlo_text_to_proto

            status("converting to HLO text and proto")
            hlo_text = lowered.compiler_ir("hlo").as_hlo_text()
            hlo_proto = hlo_text_to_proto(hlo_text)
    return Program(spec.name, text, leaves, hlo_text, hlo_proto, time.perf_counter() - t0)


HEARTBEAT = 15.0  # seconds between progress lines of an export that is still running


def load_or_lower(
    spec: ModelSpec, *, use_cache: bool = True, progress: Callable[[str], None] | None = None
) -> Program:
    """The model's program from the cache, lowering (and caching) it when needed.
    ``progress``, if given, receives lines while an export runs: one when it starts, one
    per stage and one every ``HEARTBEAT`` seconds (``"NAME: exporting: STAGE, N s"``);
    nothing for a program read from the cache."""
    directory = cache_root() / spec.name
    meta_path = directory / "meta.json"
    key = _fingerprint(spec)
    if use_cache and meta_path.exists():
        try:
            meta = json.loads(meta_path.read_text())
            if meta.get("fingerprint") == key:
                return _read(spec, directory, meta)
        except (OSError, ValueError, KeyError):
            pass
    if progress is None:
        ticker = contextlib.nullcontext(None)
    else:
        ticker = ProgressTicker(
            lambda line: progress(f"{spec.name}: exporting: {line}"),
            delay=0.0,
            every=HEARTBEAT,
            min_gap=0.0,
        )
    with ticker as tick:
        status = tick.status if tick is not None else None
        program = lower(spec, status)
        if use_cache:
            if status is not None:
                status("writing the cache")
            _write(program, directory, key)
    return program


def _read(spec: ModelSpec, directory: Path, meta: dict) -> Program:
    text = (directory / "model.mlir").read_text()
    with np.load(directory / "inputs.npz") as data:
        inputs = [data[f"arg{i}"] for i in range(meta["num_inputs"])]
    hlo_text = hlo_proto = None
    if (directory / "model.hlo.txt").exists():
        hlo_text = (directory / "model.hlo.txt").read_text()
        hlo_proto = (directory / "model.hlo.pb").read_bytes()
    return Program(
        spec.name,
        text,
        inputs,
        hlo_text,
        hlo_proto,
        meta.get("export_seconds", 0.0),
        cached=True,
    )


def _write(program: Program, directory: Path, key: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "model.mlir").write_text(program.stablehlo)
    np.savez(directory / "inputs.npz", **{f"arg{i}": a for i, a in enumerate(program.inputs)})
    for name in ("model.hlo.txt", "model.hlo.pb"):
        (directory / name).unlink(missing_ok=True)
    if program.hlo_text is not None:
        (directory / "model.hlo.txt").write_text(program.hlo_text)
        (directory / "model.hlo.pb").write_bytes(program.hlo_proto)
    meta = {
        "fingerprint": key,
        "num_inputs": len(program.inputs),
        "export_seconds": program.export_seconds,
    }
    (directory / "meta.json").write_text(json.dumps(meta, indent=1))

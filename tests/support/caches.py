"""A directory shaped like what Neuron users hold: a neuronx-cc compile cache with HLO
protos and HLO text, an XLA dump (``--xla_dump_hlo_as_proto``), a torch-xla two-graph dump,
a ``jax.export`` blob, a garbage file and the companions a cache keeps (NEFF, JSON).

Every program is made here, by jax and XLA, from small functions (an argsort, a strided
conv, a broadcast): nothing is a stored copy.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

# The programs' sources: built in a child process for the XLA dump (XLA_FLAGS is read once
# per process) and here for the others.
FUNCTIONS = textwrap.dedent(
    """
    import jax, jax.numpy as jnp

    def argsort(x):
        return jnp.argsort(x) * 2

    def strided_conv(x, w):
        return jax.lax.conv_general_dilated(x, w, (2, 2), [(1, 1), (1, 1)])

    def scaled(x):
        return jnp.tanh(x) * jnp.float32(3.0) + jnp.ones((4, 4), jnp.float32)
    """
)

PROGRAMS = {  # what the fixture holds besides the XLA dump -> what a batch makes of it
    "neuronxcc-2.0/MODULE_1/model.hlo_module.pb": "ok",
    "neuronxcc-2.0/MODULE_2/model.hlo_module.pb": "ok",
    "neuronxcc-2.0/MODULE_3/model.hlo": "ok",
    "torch_xla_graphs.txt#graph0": "ok",
    "torch_xla_graphs.txt#graph1": "ok",
    "exported.jax": "ok",
    "garbage.bin": "error",
}
SKIPPED = (
    "neuronxcc-2.0/MODULE_1/compile_flags.json",
    "neuronxcc-2.0/MODULE_1/model.neff",
)


def xla_dump_programs(root: Path) -> set[str]:
    """The programs of the XLA dump under ``root`` (relative paths): the HloProto of the
    module before XLA's optimizations and the StableHLO module XLA dumps beside it; every
    other file of the dump is a companion, skipped."""
    dump = root / "xla_dump"
    found = {
        p
        for p in dump.rglob("*")
        if p.is_file()
        and (p.name.endswith("before_optimizations.hlo.pb") or p.name == "module.mlir")
    }
    return {str(p.relative_to(root)) for p in found}


def _functions():
    namespace: dict = {}
    exec(FUNCTIONS, namespace)
    return namespace


def torch_xla_dump(hlo_texts: list[str]) -> str:
    """A torch-xla ``XLA_SAVE_TENSORS_FILE`` (``XLA_SAVE_TENSORS_FMT=hlo``), in the layout of
    torch-xla's DebugUtil::SaveTensorsGraphInfo and SaveGraphHash."""
    parts = []
    for i, text in enumerate(hlo_texts):
        parts.append(
            f"[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n  forward (model.py:{10 + i})\n"
            f"  <module> (train.py:3)\n\nRoot Hashes: (5f2e{i:04x})\n\n## BEGIN_GRAPH\n{text}\n\n"
            f"Graph Hash: 9a0c{i:04x}\n\n## END_GRAPH\n\n"
        )
    return "".join(parts)


def xla_dump(directory: Path) -> Path:
    """XLA's own dump of jitting the argsort (``--xla_dump_hlo_as_proto``): its
    ``before_optimizations.hlo.pb`` HloProto and every other file XLA writes beside it."""
    directory.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "XLA_FLAGS": f"--xla_dump_to={directory} --xla_dump_hlo_as_proto",
        "JAX_PLATFORMS": "cpu",
        "TF_CPP_MIN_LOG_LEVEL": "3",
    }
    script = FUNCTIONS + "\nimport numpy as np\nprint(jax.jit(argsort)(np.arange(8.0)))\n"
    subprocess.run([sys.executable, "-c", script], env=env, check=True, capture_output=True)
    return directory


def build(root: Path) -> Path:
    """The mixed directory under ``root`` (see :data:`PROGRAMS`)."""
    import jax
    import jax.numpy as jnp
    from jax import export

    f = _functions()
    x8 = jnp.zeros(8, jnp.float32)
    image, kernel = jnp.zeros((1, 3, 9, 9), jnp.float32), jnp.zeros((4, 3, 3, 3), jnp.float32)
    cache = root / "neuronxcc-2.0"
    for name in ("MODULE_1", "MODULE_2", "MODULE_3"):
        (cache / name).mkdir(parents=True)
    argsort = jax.jit(f["argsort"]).lower(x8)
    (cache / "MODULE_1/model.hlo_module.pb").write_bytes(
        argsort.compiler_ir("hlo").as_serialized_hlo_module_proto()
    )
    (cache / "MODULE_1/compile_flags.json").write_text('["--target=trn1"]\n')
    (cache / "MODULE_1/model.neff").write_bytes(b"NEFF\x00" + bytes(64))
    conv = jax.jit(f["strided_conv"]).lower(image, kernel)
    (cache / "MODULE_2/model.hlo_module.pb").write_bytes(
        conv.compiler_ir("hlo").as_serialized_hlo_module_proto()
    )
    scaled = jax.jit(f["scaled"]).lower(jnp.zeros((4, 4), jnp.float32))
    (cache / "MODULE_3/model.hlo").write_text(scaled.as_text(dialect="hlo"))
    xla_dump(root / "xla_dump")
    (root / "torch_xla_graphs.txt").write_text(
        torch_xla_dump([argsort.as_text(dialect="hlo"), conv.as_text(dialect="hlo")])
    )
    exported = export.export(jax.jit(f["argsort"]))(jax.ShapeDtypeStruct((8,), jnp.float32))
    (root / "exported.jax").write_bytes(exported.serialize())
    (root / "garbage.bin").write_bytes(np.random.default_rng(7).bytes(4096))
    return root

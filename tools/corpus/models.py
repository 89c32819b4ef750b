"""The corpus: real architectures from public libraries, random init, small inputs.

Every entry builds a function and its arguments (weights included, as arguments, so the
programs stay small and the checker runs the model on its real initial weights) and
lowers it with JAX. Nothing is downloaded: Keras applications are built with
``weights=None``, keras-hub backbones from their constructor arguments (no presets).

Families:

* ``jax`` - written here with ``jax.lax``/``jax.numpy`` only (a small CNN training step,
  nearest upsampling forward and training step, top_k/argsort, a Gaussian-process step
  whose linear algebra is LAPACK custom calls, a symbolic-batch export).
  They need nothing beyond penguin-opt's own dependencies and are the CI subset.
* ``keras`` - ``keras.applications`` (JAX backend): inference, and training steps
  (``jax.value_and_grad`` through ``stateless_call``) so backward convolutions appear.
* ``keras-hub`` - BERT and GPT-2 backbones with a few small layers, and a GPT-2
  next-token step ending in ``jax.lax.top_k``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

SEED = 0


@dataclass
class Built:
    """A function and the arguments to lower and to run it on."""

    fn: Callable
    args: tuple
    # symbolic export: the jax.ShapeDtypeStruct specs (the checker specializes both
    # programs to the shapes of ``args``)
    symbolic_specs: tuple | None = None


@dataclass(frozen=True)
class ModelSpec:
    name: str
    family: str  # "jax", "keras", "keras-hub"
    description: str
    build: Callable[[], Built] = field(repr=False)
    requires: tuple[str, ...] = ()
    # "interpreter" (the StableHLO reference interpreter), "xla" (XLA CPU through jax) or
    # "auto" (the checker's choice: the interpreter up to equivalence.AUTO_XLA_WORK element
    # operations, XLA above), chosen by how long the interpreter takes (see docs/corpus.md)
    oracle: str = "interpreter"
    ci: bool = False  # part of the CI subset
    hlo: bool = False  # also sweep the program imported from its HLO text
    x64: bool = False  # lower with 64-bit types enabled (float64 models)
    # absolute tolerance per float output, as a fraction of the output's largest magnitude
    # (None: the checker's derived tolerance)
    atol: float | None = None

    def available(self) -> str | None:
        """None when the packages it needs are importable, else why not."""
        import importlib.util

        for mod in self.requires:
            if importlib.util.find_spec(mod) is None:
                return f"needs '{mod}' (pip install -e '.[corpus]')"
        return None


def _rng(offset: int = 0) -> np.random.Generator:
    return np.random.default_rng(SEED + offset)


def _normal(shape, offset: int = 0, scale: float = 1.0) -> np.ndarray:
    return (_rng(offset).standard_normal(shape) * scale).astype(np.float32)


# ---------------------------------------------------------------------------- jax family


def _cnn_params():
    # HWIO kernels; conv2 is depthwise (feature_group_count), conv3 dilated
    return {
        "c1": _normal((3, 3, 3, 8), 1, 0.3),
        "c2": _normal((3, 3, 1, 8), 2, 0.3),
        "c3": _normal((3, 3, 8, 16), 3, 0.2),
        "c4": _normal((1, 1, 16, 16), 4, 0.2),
        "w": _normal((16, 10), 5, 0.2),
        "b": _normal((10,), 6, 0.1),
    }


def _cnn_forward(params, x):
    import jax
    import jax.numpy as jnp

    dn = ("NHWC", "HWIO", "NHWC")
    conv = jax.lax.conv_general_dilated
    y = jax.nn.relu(conv(x, params["c1"], (2, 2), "SAME", dimension_numbers=dn))
    y = jax.nn.relu(
        conv(y, params["c2"], (1, 1), ((1, 1), (1, 1)), dimension_numbers=dn, feature_group_count=8)
    )
    y = jax.nn.relu(
        conv(y, params["c3"], (2, 2), ((1, 2), (2, 1)), rhs_dilation=(2, 1), dimension_numbers=dn)
    )
    y = conv(y, params["c4"], (1, 1), "VALID", dimension_numbers=dn)
    y = jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "SAME")
    y = jnp.mean(y, axis=(1, 2))
    return y @ params["w"] + params["b"]


def _xent(logits, labels):
    import jax
    import jax.numpy as jnp

    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


def _sgd_step(loss_fn, lr: float = 0.01):
    import jax

    def step(params, *batch):
        loss, grads = jax.value_and_grad(loss_fn)(params, *batch)
        new = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
        return loss, new

    return step


def build_cnn_train() -> Built:
    x = _normal((2, 16, 16, 3), 10)
    y = _rng(11).integers(0, 10, (2,)).astype(np.int32)
    step = _sgd_step(lambda p, x, y: _xent(_cnn_forward(p, x), y))
    return Built(step, (_cnn_params(), x, y))


def _upsample_nearest(x, scale: int = 2):
    """Keras UpSampling2D(interpolation="nearest"): repeat rows and columns."""
    import jax.numpy as jnp

    return jnp.repeat(jnp.repeat(x, scale, axis=1), scale, axis=2)


def build_upsample_forward() -> Built:
    import jax

    def fn(x):
        a = _upsample_nearest(x)
        b = jax.image.resize(x, (x.shape[0], 2 * x.shape[1], 3 * x.shape[2], x.shape[3]), "nearest")
        return a, b

    return Built(fn, (_normal((1, 6, 5, 4), 20),))


def build_upsample_train() -> Built:
    import jax
    import jax.numpy as jnp

    dn = ("NHWC", "HWIO", "NHWC")

    def loss(p, x, t):
        y = jax.nn.relu(
            jax.lax.conv_general_dilated(x, p["k1"], (2, 2), "SAME", dimension_numbers=dn)
        )
        y = _upsample_nearest(y)
        y = jax.image.resize(y, (y.shape[0], y.shape[1] * 2, y.shape[2] * 2, y.shape[3]), "nearest")
        y = jax.lax.conv_general_dilated(y, p["k2"], (1, 1), "SAME", dimension_numbers=dn)
        return jnp.mean((y - t) ** 2)

    params = {"k1": _normal((3, 3, 3, 4), 21, 0.3), "k2": _normal((3, 3, 4, 2), 22, 0.3)}
    return Built(_sgd_step(loss), (params, _normal((1, 8, 8, 3), 23), _normal((1, 16, 16, 2), 24)))


def build_topk_argsort() -> Built:
    import jax
    import jax.numpy as jnp

    def fn(x, i):
        vals, idx = jax.lax.top_k(x, 5)
        a = jnp.argsort(x, axis=-1)
        b = jnp.argsort(x, axis=0, stable=True, descending=True)
        c = jnp.argsort(i, axis=1)
        s0, s1 = jax.lax.sort((x[:, :8], i), dimension=1, num_keys=1)
        return vals, idx, a, b, c, s0, s1

    x = _normal((4, 16), 30)
    i = _rng(31).integers(-4, 4, (4, 8)).astype(np.int32)
    return Built(fn, (x, i))


def build_gp_train() -> Built:
    """Gaussian-process regression: an SGD step on the negative log marginal likelihood
    (RBF kernel, Cholesky factor, triangular solves and their gradients), then the
    posterior mean at new points. Lowered for CPU, the linear algebra is jax's LAPACK
    custom calls, which only XLA runs."""
    import jax.numpy as jnp
    from jax.scipy.linalg import cho_solve

    def kernel(p, a, b):
        d = (a[:, None, :] - b[None, :, :]) / jnp.exp(p["log_ls"])
        return jnp.exp(p["log_amp"]) * jnp.exp(-0.5 * jnp.sum(d * d, axis=-1))

    def factor(p, x):
        noise = jnp.exp(p["log_noise"]) + 1e-3
        return jnp.linalg.cholesky(kernel(p, x, x) + noise * jnp.eye(x.shape[0]))

    def nll(p, x, y):
        chol = factor(p, x)
        return 0.5 * y @ cho_solve((chol, True), y) + jnp.sum(jnp.log(jnp.diag(chol)))

    step = _sgd_step(nll, 0.05)

    def fn(p, x, y, xs):
        loss, new = step(p, x, y)
        mean = kernel(new, xs, x) @ cho_solve((factor(new, x), True), y)
        return loss, new, mean

    params = {
        "log_ls": np.zeros((2,), np.float32),
        "log_amp": np.float32(0.0),
        "log_noise": np.float32(-2.0),
    }
    x = _normal((16, 2), 50)
    y = np.sin(x[:, 0]) + 0.1 * _normal((16,), 51)
    return Built(fn, (params, x, y.astype(np.float32), _normal((4, 2), 52)))


def build_dynamic_batch() -> Built:
    """A small CNN + MLP exported by ``jax.export`` with a symbolic batch dimension ``b``."""
    import jax
    import jax.numpy as jnp
    from jax import export

    dn = ("NHWC", "HWIO", "NHWC")

    def fn(x, k, w):
        y = jax.nn.relu(jax.lax.conv_general_dilated(x, k, (2, 2), "SAME", dimension_numbers=dn))
        y = y.reshape(y.shape[0], -1) @ w
        return jax.nn.softmax(y) * y.shape[0]

    (b,) = export.symbolic_shape("b")
    specs = (
        jax.ShapeDtypeStruct((b, 8, 8, 3), jnp.float32),
        jax.ShapeDtypeStruct((3, 3, 3, 4), jnp.float32),
        jax.ShapeDtypeStruct((64, 10), jnp.float32),
    )
    args = (_normal((2, 8, 8, 3), 40), _normal((3, 3, 3, 4), 41, 0.3), _normal((64, 10), 42, 0.2))
    return Built(
        fn,
        args,
        symbolic_specs=specs,
    )


# ---------------------------------------------------------------------------- keras family


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    import keras

    if keras.backend.backend() != "jax":
        raise RuntimeError("the corpus needs KERAS_BACKEND=jax (set before importing keras)")
    keras.utils.set_random_seed(SEED)
    return keras


def _values(variables) -> list[np.ndarray]:
    return [np.asarray(v.value) for v in variables]


def _keras_app(ctor_name: str, size: int, **kwargs):
    keras = _keras()
    ctor = getattr(keras.applications, ctor_name)
    return ctor(weights=None, input_shape=(size, size, 3), classes=10, **kwargs)


def keras_inference(ctor_name: str, size: int) -> Callable[[], Built]:
    def build() -> Built:
        model = _keras_app(ctor_name, size)

        def fn(tv, ntv, x):
            y, _ = model.stateless_call(tv, ntv, x, training=False)
            return y

        x = _normal((1, size, size, 3), 50)
        return Built(
            fn, (_values(model.trainable_variables), _values(model.non_trainable_variables), x)
        )

    return build


def keras_train(
    ctor_name: str, size: int, batch: int = 8, lr: float = 0.1, bn_training: bool = True
) -> Callable[[], Built]:
    """A training step returning the loss and the SGD-updated weights and statistics.

    Conditioning matters for a numerical check. With batch 2 at 32x32, ResNet50's
    training-mode batch norm normalizes 2 samples at 1x1 in its last stage, and a 1e-7
    relative change of the input moves the loss from 2.65 to 4.0; even at batch 8 (or 16,
    or 64x64 inputs) some updated weights move by 4-13% of their range. Keras computes
    batch norm in float32 even in a float64 model, so float64 does not help either: the
    ResNet50 step is taken with frozen batch norm (``bn_training=False``: moving
    statistics, as when fine-tuning), which keeps every backward convolution.
    Zero-initialized weights (biases, BN offsets) are given small random values: the
    gradient of a conv bias feeding a batch norm is mathematically zero, so its computed
    value is pure rounding noise, and ``bias - lr * noise`` from a zero bias would compare
    noise with noise."""

    def build() -> Built:
        import jax

        model = _keras_app(ctor_name, size, classifier_activation=None)
        tv = _values(model.trainable_variables)
        tv = [v if np.any(v) else _normal(v.shape, 62 + i, 0.05) for i, v in enumerate(tv)]

        def step(tv, ntv, x, y):
            def loss_fn(tv):
                logits, new_ntv = model.stateless_call(tv, ntv, x, training=bn_training)
                return _xent(logits, y), new_ntv

            (loss, new_ntv), grads = jax.value_and_grad(loss_fn, has_aux=True)(tv)
            new_tv = [w - lr * g for w, g in zip(tv, grads, strict=True)]
            return loss, new_tv, new_ntv

        x = _normal((batch, size, size, 3), 60)
        y = _rng(61).integers(0, 10, (batch,)).astype(np.int32)
        return Built(step, (tv, _values(model.non_trainable_variables), x, y))

    return build


# ---------------------------------------------------------------------------- keras-hub


_HUB_SIZES = dict(
    vocabulary_size=1000,
    num_layers=2,
    num_heads=2,
    hidden_dim=64,
    intermediate_dim=128,
    max_sequence_length=32,
)
_SEQ = 16


def _token_inputs(vocab: int, batch: int = 2) -> tuple[np.ndarray, np.ndarray]:
    ids = _rng(70).integers(0, vocab, (batch, _SEQ)).astype(np.int32)
    mask = np.ones((batch, _SEQ), np.int32)
    mask[1, _SEQ - 4 :] = 0  # the second sequence is padded
    return ids, mask


def build_bert() -> Built:
    _keras()
    import keras_hub

    model = keras_hub.models.BertBackbone(**_HUB_SIZES, num_segments=2)
    ids, mask = _token_inputs(_HUB_SIZES["vocabulary_size"])
    segments = np.zeros_like(ids)
    segments[:, _SEQ // 2 :] = 1

    def fn(tv, ntv, ids, segments, mask):
        out, _ = model.stateless_call(
            tv,
            ntv,
            {"token_ids": ids, "segment_ids": segments, "padding_mask": mask},
            training=False,
        )
        return out["sequence_output"], out["pooled_output"]

    return Built(
        fn,
        (
            _values(model.trainable_variables),
            _values(model.non_trainable_variables),
            ids,
            segments,
            mask,
        ),
    )


def build_gpt2_topk() -> Built:
    """GPT-2 next-token step: logits of the last position (tied embeddings), top-k 8."""
    _keras()
    import jax
    import keras_hub

    backbone = keras_hub.models.GPT2Backbone(**_HUB_SIZES)
    lm = keras_hub.models.GPT2CausalLM(backbone=backbone, preprocessor=None)
    ids, mask = _token_inputs(_HUB_SIZES["vocabulary_size"])

    def fn(tv, ntv, ids, mask):
        logits, _ = lm.stateless_call(
            tv, ntv, {"token_ids": ids, "padding_mask": mask}, training=False
        )
        last = logits[:, -1, :]
        vals, idx = jax.lax.top_k(last, 8)
        return vals, idx

    return Built(
        fn, (_values(lm.trainable_variables), _values(lm.non_trainable_variables), ids, mask)
    )


# ---------------------------------------------------------------------------- registry

_KERAS = ("keras", "jax")
_HUB = ("keras", "keras_hub")

MODELS: list[ModelSpec] = [
    ModelSpec(
        "cnn_train",
        "jax",
        "small CNN (strided, depthwise, dilated convs) SGD step",
        build_cnn_train,
        oracle="auto",
        ci=True,
        hlo=True,
    ),
    ModelSpec(
        "upsample_nearest",
        "jax",
        "nearest upsampling x2 (repeat) and 2x3 (jax.image.resize)",
        build_upsample_forward,
        oracle="auto",
        ci=True,
        hlo=True,
    ),
    ModelSpec(
        "upsample_nearest_train",
        "jax",
        "conv, nearest upsampling x4, conv: SGD step",
        build_upsample_train,
        oracle="auto",
        ci=True,
    ),
    ModelSpec(
        "topk_argsort",
        "jax",
        "lax.top_k, argsort (3 ways), 2-operand lax.sort",
        build_topk_argsort,
        oracle="auto",
        ci=True,
        hlo=True,
    ),
    ModelSpec(
        "gp_train",
        "jax",
        "Gaussian-process regression step (Cholesky, triangular solves: LAPACK custom calls)",
        build_gp_train,
        oracle="auto",
        ci=True,
    ),
    ModelSpec(
        "dynamic_batch",
        "jax",
        "jax.export with a symbolic batch dimension",
        build_dynamic_batch,
        oracle="auto",
        ci=True,
    ),
    ModelSpec(
        "ResNet50",
        "keras",
        "keras.applications.ResNet50, 32x32",
        keras_inference("ResNet50", 32),
        _KERAS,
        oracle="xla",
        hlo=True,
    ),
    ModelSpec(
        "MobileNetV2",
        "keras",
        "keras.applications.MobileNetV2, 32x32",
        keras_inference("MobileNetV2", 32),
        _KERAS,
        oracle="xla",
    ),
    ModelSpec(
        "EfficientNetB0",
        "keras",
        "keras.applications.EfficientNetB0, 32x32",
        keras_inference("EfficientNetB0", 32),
        _KERAS,
        oracle="xla",
    ),
    ModelSpec(
        "DenseNet121",
        "keras",
        "keras.applications.DenseNet121, 32x32",
        keras_inference("DenseNet121", 32),
        _KERAS,
        oracle="xla",
    ),
    ModelSpec(
        "ConvNeXtTiny",
        "keras",
        "keras.applications.ConvNeXtTiny, 32x32",
        keras_inference("ConvNeXtTiny", 32),
        _KERAS,
        oracle="xla",
    ),
    ModelSpec(
        "InceptionV3",
        "keras",
        "keras.applications.InceptionV3, 75x75 (its minimum)",
        keras_inference("InceptionV3", 75),
        _KERAS,
        oracle="xla",
    ),
    ModelSpec(
        "Xception",
        "keras",
        "keras.applications.Xception, 71x71 (its minimum)",
        keras_inference("Xception", 71),
        _KERAS,
        oracle="xla",
    ),
    ModelSpec(
        "NASNetMobile",
        "keras",
        "keras.applications.NASNetMobile, 32x32",
        keras_inference("NASNetMobile", 32),
        _KERAS,
        oracle="xla",
    ),
    ModelSpec(
        "VGG16",
        "keras",
        "keras.applications.VGG16, 32x32",
        keras_inference("VGG16", 32),
        _KERAS,
        oracle="xla",
        hlo=True,
    ),
    ModelSpec(
        "ResNet50_train",
        "keras",
        "ResNet50 SGD step, frozen batch norm (batch 8, 32x32)",
        keras_train("ResNet50", 32, bn_training=False),
        _KERAS,
        oracle="xla",
    ),
    ModelSpec(
        "MobileNetV2_train",
        "keras",
        "MobileNetV2 SGD step (batch 8, 32x32)",
        keras_train("MobileNetV2", 32),
        _KERAS,
        oracle="xla",
    ),
    ModelSpec(
        "BERT_tiny",
        "keras-hub",
        "keras_hub BertBackbone, 2 layers, hidden 64, seq 16",
        build_bert,
        _HUB,
        oracle="xla",
    ),
    ModelSpec(
        "GPT2_tiny_topk",
        "keras-hub",
        "keras_hub GPT2CausalLM, 2 layers, hidden 64: last-position logits and top_k(8)",
        build_gpt2_topk,
        _HUB,
        oracle="xla",
    ),
]

BY_NAME = {m.name: m for m in MODELS}

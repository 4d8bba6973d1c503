"""The workloads of the performance targets (issues #9 and #24), and how their results are checked.

Shared by `benchmarks/run.py` and the processes it starts through `benchmarks/timing.py` (JAX's
worker, fresh first-call processes). Nothing here imports justjax or jax: every workload is written
once against a library module `lib` (`lib.jit`, `lib.numpy`, ...) and once in plain NumPy.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

F32 = np.float32


@dataclass(frozen=True)
class Target:
    """A target ratio: justjax time over JAX's and/or over NumPy's (None: no target)."""
    vs_jax: float | None = None
    vs_numpy: float | None = None

    def text(self) -> str:
        parts = []
        if self.vs_jax is not None:
            parts.append(f"≤ {self.vs_jax:.1f}× jax")
        if self.vs_numpy is not None:
            parts.append(f"≤ {self.vs_numpy:.1f}× numpy")
        return "; ".join(parts)


@dataclass(frozen=True)
class Workload:
    """One row (or two, with a first-call target) of the targets table.

    `inputs(rng)` makes the NumPy inputs; `build(lib)` returns the jitted function of `lib`
    taking them as device arrays; `numpy(*inputs)` computes the same in plain NumPy.
    `per_call` workloads measure dispatch: many calls per sample, blocking only on the last.
    Results must be allclose to NumPy's with `rtol` and an `atol` relative to the largest
    magnitude of NumPy's result (the seed chain's gradient is ~1e-22 everywhere).
    """
    name: str
    label: str
    inputs: Callable[[np.random.Generator], tuple[np.ndarray, ...]]
    build: Callable[[Any], Callable]
    numpy: Callable[..., Any]
    target: Target
    first_call: Target | None = None
    per_call: bool = False
    rtol: float = 1e-5
    atol: float = 1e-6
    # OpenBLAS's pin (run.py's `--pin`) changes this row's figure: it is also shown with the pin,
    # and with `pin_target` the target holds with the pin too.
    pin_figures: bool = False
    pin_target: bool = False


# ----------------------------------------------------------------------------- seed grad chain
def _chain_step(lib_numpy: Any, y: Any) -> Any:
    return lib_numpy.sin(y) + 0.1 * lib_numpy.cos(y ** 2) - lib_numpy.tanh(y)


def _seed_inputs(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    return (np.linspace(-2, 2, 1_000_000, dtype=F32),)


def _seed_build(lib: Any) -> Callable:
    def f(y):
        for _ in range(10):
            y = _chain_step(lib.numpy, y)
        return lib.numpy.sum(y)
    return lib.jit(lib.grad(f))


def _seed_numpy(x: np.ndarray) -> np.ndarray:
    """d/dx of sum(step^10(x)), by the chain rule written out: the product of each step's
    derivative at its input."""
    ys = [x]
    for _ in range(9):
        ys.append(_chain_step(np, ys[-1]))
    grad = np.ones_like(x)
    for y in reversed(ys):
        t = np.tanh(y)
        grad = grad * (np.cos(y) - 0.2 * y * np.sin(y * y) - (1 - t * t))
    return grad


# ----------------------------------------------------------------------------- relu(x @ w + b)
def _dense_inputs(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    return (rng.standard_normal((128, 784), F32), (rng.standard_normal((784, 256), F32) * 0.05),
            (rng.standard_normal(256, F32) * 0.1))


def _dense_build(lib: Any) -> Callable:
    return lib.jit(lambda x, w, b: lib.nn.relu(x @ w + b))


def _dense_numpy(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.maximum(x @ w + b, 0)


# ----------------------------------------------------------------------------- MLP train step
LEARNING_RATE = 0.01


def _mlp_inputs(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    labels = rng.integers(0, 10, 128)
    return (rng.standard_normal((784, 256), F32) * F32(0.05), np.zeros(256, F32),
            rng.standard_normal((256, 10), F32) * F32(0.05), np.zeros(10, F32),
            rng.standard_normal((128, 784), F32), np.eye(10, dtype=F32)[labels])


def _mlp_build(lib: Any) -> Callable:
    jnp = lib.numpy

    def loss(params, x, y):
        w1, b1, w2, b2 = params
        logits = lib.nn.relu(x @ w1 + b1) @ w2 + b2
        return -jnp.mean(jnp.sum(y * lib.nn.log_softmax(logits), axis=-1))

    def train_step(w1, b1, w2, b2, x, y):
        value, grads = lib.value_and_grad(loss)((w1, b1, w2, b2), x, y)
        params = lib.tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, (w1, b1, w2, b2), grads)
        return value, params
    return lib.jit(train_step)


def _mlp_numpy(w1, b1, w2, b2, x, y) -> tuple:
    """Forward, the cross-entropy's gradient (softmax - labels) / batch, and backward by hand."""
    pre = x @ w1 + b1
    h = np.maximum(pre, 0)
    logits = h @ w2 + b2
    shifted = logits - logits.max(axis=-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    value = -np.mean(np.sum(y * logp, axis=-1))
    d_logits = (np.exp(logp) - y) / x.shape[0]
    d_h = (d_logits @ w2.T) * (pre > 0)
    grads = (x.T @ d_h, d_h.sum(axis=0), h.T @ d_logits, d_logits.sum(axis=0))
    params = tuple(p - LEARNING_RATE * g for p, g in zip((w1, b1, w2, b2), grads, strict=True))
    return value, params


# ----------------------------------------------------------------------------- fma + exp
def _fma_inputs(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    n = 1_000_000
    return (rng.uniform(-1, 1, n).astype(F32), rng.uniform(-0.5, 0.5, n).astype(F32),
            rng.uniform(0.5, 1.0, n).astype(F32))


def _fma_exp(lib_numpy: Any, r: Any, a: Any, b: Any) -> Any:
    for _ in range(4):
        r = r * b + a
    return lib_numpy.exp(r)


def _fma_build(lib: Any) -> Callable:
    return lib.jit(lambda r, a, b: _fma_exp(lib.numpy, r, a, b))


# ----------------------------------------------------------------------------- softmax cross-entropy
def _xent_inputs(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    return (rng.standard_normal((256, 1000), F32) * F32(2), rng.integers(0, 1000, 256).astype(np.int32))


def _xent(lib_numpy: Any, logits: Any, labels: Any) -> Any:
    shifted = logits - lib_numpy.max(logits, axis=-1, keepdims=True)
    logp = shifted - lib_numpy.log(lib_numpy.sum(lib_numpy.exp(shifted), axis=-1, keepdims=True))
    return -lib_numpy.mean(lib_numpy.take_along_axis(logp, labels[:, None], axis=-1))


def _xent_build(lib: Any) -> Callable:
    return lib.jit(lambda logits, labels: _xent(lib.numpy, logits, labels))


# ----------------------------------------------------------------------------- layernorm
def _layernorm_inputs(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    return (rng.standard_normal((512, 1024), F32), rng.uniform(0.5, 1.5, 1024).astype(F32),
            rng.standard_normal(1024, F32) * F32(0.1))


def _layernorm(lib_numpy: Any, x: Any, gamma: Any, beta: Any) -> Any:
    centered = x - lib_numpy.mean(x, axis=-1, keepdims=True)
    var = lib_numpy.mean(centered * centered, axis=-1, keepdims=True)
    return centered / lib_numpy.sqrt(var + 1e-5) * gamma + beta


def _layernorm_build(lib: Any) -> Callable:
    return lib.jit(lambda x, gamma, beta: _layernorm(lib.numpy, x, gamma, beta))


# ----------------------------------------------------------------------------- RNN scan
def _rnn_inputs(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    return (np.zeros(128, F32), rng.standard_normal((128, 128), F32) * F32(128 ** -0.5),
            rng.standard_normal((100, 128), F32) * F32(0.5))


def _rnn_build(lib: Any) -> Callable:
    def rnn(h0, w, xs):
        def step(h, x):
            h = lib.numpy.tanh(h @ w + x)
            return h, h
        return lib.lax.scan(step, h0, xs)
    return lib.jit(rnn)


def _rnn_numpy(h0: np.ndarray, w: np.ndarray, xs: np.ndarray) -> tuple:
    h = h0
    hs = np.empty_like(xs)
    for t in range(xs.shape[0]):
        h = np.tanh(h @ w + xs[t])
        hs[t] = h
    return h, hs


# ----------------------------------------------------------------------------- 1024² matmul
def _matmul_inputs(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    return (rng.standard_normal((1024, 1024), F32), rng.standard_normal((1024, 1024), F32))


# ----------------------------------------------------------------------------- small CNN train step
CNN_BATCH, CNN_SIDE, CNN_CHANNELS, CNN_CLASSES = 64, 28, 32, 10


def _cnn_inputs(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    pooled = (CNN_SIDE // 2) ** 2 * CNN_CHANNELS
    labels = rng.integers(0, CNN_CLASSES, CNN_BATCH)
    return (rng.standard_normal((3, 3, 1, CNN_CHANNELS), F32) * F32(1 / 3),
            np.zeros(CNN_CHANNELS, F32),
            rng.standard_normal((pooled, CNN_CLASSES), F32) * F32(pooled ** -0.5),
            np.zeros(CNN_CLASSES, F32),
            rng.standard_normal((CNN_BATCH, CNN_SIDE, CNN_SIDE, 1), F32),
            np.eye(CNN_CLASSES, dtype=F32)[labels])


def _mean_pool_2x2(lib_numpy: Any, h: Any) -> Any:
    """2x2 average pooling of an NHWC batch (a reshape and a mean, as JAX users write it)."""
    n, height, width, c = h.shape
    return lib_numpy.mean(h.reshape(n, height // 2, 2, width // 2, 2, c), axis=(2, 4))


def _cnn_build(lib: Any) -> Callable:
    jnp = lib.numpy

    def loss(params, x, y):
        kernel, bias, w, b = params
        h = lib.lax.conv_general_dilated(x, kernel, window_strides=(1, 1), padding="SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = _mean_pool_2x2(jnp, lib.nn.relu(h + bias))
        logits = h.reshape(h.shape[0], -1) @ w + b
        return -jnp.mean(jnp.sum(y * lib.nn.log_softmax(logits), axis=-1))

    def train_step(kernel, bias, w, b, x, y):
        value, grads = lib.value_and_grad(loss)((kernel, bias, w, b), x, y)
        params = lib.tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, (kernel, bias, w, b),
                                        grads)
        return value, params
    return lib.jit(train_step)


def _conv_patches(x: np.ndarray) -> np.ndarray:
    """The 3x3 'SAME' patches of an NHWC batch as rows: [N*H*W, 3*3*C] (HWIO's order)."""
    n, height, width, c = x.shape
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))
    # windows: [N, H, W, C, 3, 3] -> [N, H, W, 3, 3, C]
    return windows.transpose(0, 1, 2, 4, 5, 3).reshape(n * height * width, 9 * c)


def _cnn_numpy(kernel, bias, w, b, x, y) -> tuple:
    """Forward by im2col, the cross-entropy's gradient, and backward by hand (the input is data:
    no gradient flows into it)."""
    n, height, width, _ = x.shape
    patches = _conv_patches(x)
    pre = (patches @ kernel.reshape(-1, kernel.shape[-1])).reshape(n, height, width, -1) + bias
    act = np.maximum(pre, 0)
    pooled = _mean_pool_2x2(np, act)
    flat = pooled.reshape(n, -1)
    logits = flat @ w + b
    shifted = logits - logits.max(axis=-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    value = -np.mean(np.sum(y * logp, axis=-1))
    d_logits = (np.exp(logp) - y) / n
    d_pooled = (d_logits @ w.T).reshape(pooled.shape)
    d_act = np.repeat(np.repeat(d_pooled, 2, axis=1), 2, axis=2) * F32(0.25)
    d_pre = (d_act * (pre > 0)).reshape(n * height * width, -1)
    grads = ((patches.T @ d_pre).reshape(kernel.shape), d_pre.sum(axis=0), flat.T @ d_logits,
             d_logits.sum(axis=0))
    params = tuple(p - LEARNING_RATE * g
                   for p, g in zip((kernel, bias, w, b), grads, strict=True))
    return value, params


# ----------------------------------------------------------------------------- attention fwd+bwd
HEADS, SEQUENCE, HEAD_SIZE = 8, 256, 64


def _attention_inputs(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    d = HEADS * HEAD_SIZE
    scale = F32(d ** -0.5)
    return (*(rng.standard_normal((d, d), F32) * scale for _ in range(3)),
            rng.standard_normal((SEQUENCE, d), F32))


def _attention_build(lib: Any) -> Callable:
    jnp = lib.numpy

    def loss(wq, wk, wv, x):
        s, d = x.shape
        q, k, v = ((x @ w).reshape(s, HEADS, HEAD_SIZE) for w in (wq, wk, wv))
        logits = jnp.einsum("qhd,khd->hqk", q, k) / np.sqrt(HEAD_SIZE).astype(F32)
        out = jnp.einsum("hqk,khd->qhd", lib.nn.softmax(logits, axis=-1), v)
        return jnp.mean(out.reshape(s, d) ** 2)
    return lib.jit(lib.value_and_grad(loss, argnums=(0, 1, 2)))


def _attention_numpy(wq, wk, wv, x) -> tuple:
    """Forward and backward by hand, heads first ([H, S, head size]) so that every product is
    a batched matmul."""
    s, d = x.shape
    scale = F32(1 / np.sqrt(HEAD_SIZE))
    q, k, v = ((x @ w).reshape(s, HEADS, HEAD_SIZE).transpose(1, 0, 2) for w in (wq, wk, wv))
    logits = q @ k.transpose(0, 2, 1) * scale
    p = np.exp(logits - logits.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    out = p @ v
    value = np.mean(out ** 2)
    d_out = out * F32(2 / out.size)
    d_p = d_out @ v.transpose(0, 2, 1)
    d_v = p.transpose(0, 2, 1) @ d_out
    d_logits = p * (d_p - np.sum(d_p * p, axis=-1, keepdims=True)) * scale
    d_q, d_k = d_logits @ k, d_logits.transpose(0, 2, 1) @ q
    grads = tuple(x.T @ g.transpose(1, 0, 2).reshape(s, d) for g in (d_q, d_k, d_v))
    return value, grads


# ----------------------------------------------------------------------------- per-example grads
def _per_example_inputs(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    labels = rng.integers(0, 10, 128)
    return (rng.standard_normal((64, 128), F32) * F32(0.125), np.zeros(128, F32),
            rng.standard_normal((128, 10), F32) * F32(128 ** -0.5), np.zeros(10, F32),
            rng.standard_normal((128, 64), F32), np.eye(10, dtype=F32)[labels])


def _per_example_build(lib: Any) -> Callable:
    jnp = lib.numpy

    def loss(params, x, y):
        w1, b1, w2, b2 = params
        logits = lib.nn.relu(x @ w1 + b1) @ w2 + b2
        return -jnp.sum(y * lib.nn.log_softmax(logits))

    def per_example_grads(w1, b1, w2, b2, x, y):
        return lib.vmap(lib.grad(loss), in_axes=(None, 0, 0))((w1, b1, w2, b2), x, y)
    return lib.jit(per_example_grads)


def _per_example_numpy(w1, b1, w2, b2, x, y) -> tuple:
    """Each example's gradient by hand: the batch's backward pass without the sum over it."""
    pre = x @ w1 + b1
    h = np.maximum(pre, 0)
    logits = h @ w2 + b2
    p = np.exp(logits - logits.max(axis=-1, keepdims=True))
    d_logits = p / p.sum(axis=-1, keepdims=True) - y
    d_pre = (d_logits @ w2.T) * (pre > 0)
    return (x[:, :, None] * d_pre[:, None, :], d_pre, h[:, :, None] * d_logits[:, None, :],
            d_logits)


# ----------------------------------------------------------------------------- scan of 1,000 steps
def _long_scan_inputs(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    return (np.zeros(8, F32), rng.standard_normal((1000, 8), F32))


def _long_scan_build(lib: Any) -> Callable:
    def decay(c0, xs):
        return lib.lax.scan(lambda c, x: (c * F32(0.9) + x, c), c0, xs)
    return lib.jit(decay)


def _long_scan_numpy(c0: np.ndarray, xs: np.ndarray) -> tuple:
    c = c0
    cs = np.empty_like(xs)
    for t in range(xs.shape[0]):
        cs[t] = c
        c = c * F32(0.9) + xs[t]
    return c, cs


# ----------------------------------------------------------------------------- cached jit call
def _call_inputs(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    return tuple(np.full(8, v, F32) for v in (1.0, 2.0, 3.0))


WORKLOADS: dict[str, Workload] = {w.name: w for w in [
    Workload("seed_grad_chain", "seed grad chain f32[1e6]", _seed_inputs, _seed_build, _seed_numpy,
             Target(vs_jax=0.3), first_call=Target(vs_jax=0.5), rtol=1e-3, atol=1e-3),
    Workload("mlp_train_step", "MLP train step, batch 128 (784-256-10)", _mlp_inputs,
             _mlp_build, _mlp_numpy, Target(vs_jax=1.0), first_call=Target(vs_jax=0.5),
             rtol=1e-4, atol=1e-5, pin_figures=True),
    Workload("relu_dense", "relu MLP predict: relu(x @ w + b) 128x784 @ 784x256", _dense_inputs,
             _dense_build, _dense_numpy, Target(vs_jax=1.0), rtol=1e-4, atol=1e-4,
             pin_figures=True),
    Workload("cnn_train_step", "small CNN train step: conv 3x3, 32 channels, batch 64 of 28x28 "
             "(NHWC), grad + SGD", _cnn_inputs, _cnn_build, _cnn_numpy, Target(vs_jax=1.3),
             rtol=1e-4, atol=1e-5),
    Workload("attention", "attention fwd+bwd: 8 heads, sequence 256, head size 64",
             _attention_inputs, _attention_build, _attention_numpy, Target(vs_jax=1.2),
             rtol=1e-4, atol=1e-5),
    Workload("per_example_grads", "per-example grads: vmap(grad) over 128, MLP 64-128-10",
             _per_example_inputs, _per_example_build, _per_example_numpy, Target(vs_jax=1.2),
             rtol=1e-4, atol=1e-5),
    Workload("matmul", "1024² float32 matmul", _matmul_inputs,
             lambda lib: lib.jit(lambda a, b: a @ b), lambda a, b: a @ b, Target(vs_jax=1.1),
             rtol=1e-4, atol=1e-5, pin_figures=True),
    Workload("scan_1000", "scan of 1,000 steps: c * 0.9 + x, c f32[8]", _long_scan_inputs,
             _long_scan_build, _long_scan_numpy, Target(vs_jax=1.0), rtol=1e-4, atol=1e-5),
    Workload("rnn_scan", "RNN scan 100 steps tanh(h @ W + x), hidden 128", _rnn_inputs, _rnn_build,
             _rnn_numpy, Target(vs_jax=1.0), rtol=1e-4, atol=1e-5, pin_figures=True,
             pin_target=True),
    Workload("fma_exp", "4 x (r = r*b + a); exp(r) f32[1e6]", _fma_inputs, _fma_build,
             lambda r, a, b: _fma_exp(np, r, a, b), Target(vs_jax=0.6, vs_numpy=0.2)),
    Workload("softmax_xent", "softmax cross-entropy f32[256,1000]", _xent_inputs, _xent_build,
             lambda logits, labels: _xent(np, logits, labels), Target(vs_jax=1.2), rtol=1e-5),
    Workload("layernorm", "layernorm f32[512,1024]", _layernorm_inputs, _layernorm_build,
             lambda x, gamma, beta: _layernorm(np, x, gamma, beta), Target(vs_jax=1.2),
             rtol=1e-4, atol=1e-5),
    Workload("jit_call", "cached jit call, 3 args f32[8]", _call_inputs,
             lambda lib: lib.jit(lambda x, y, z: x * y + z), lambda x, y, z: x * y + z,
             Target(vs_jax=1.5), per_call=True),
]}


# ----------------------------------------------------------------------------- checking results
def flatten(tree: Any) -> list[np.ndarray]:
    """The leaves of a result (tuples, lists, dicts by sorted key) as NumPy arrays."""
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in flatten(tree[key])]
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in flatten(item)]
    return [np.asarray(tree)]


def mismatch(workload: Workload, got: Sequence[np.ndarray], want: Sequence[np.ndarray]) -> str | None:
    """Why `got` disagrees with `want` (shape, dtype or allclose), or None when they agree."""
    if len(got) != len(want):
        return f"{len(got)} results, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"result {i}: {g.dtype}{list(g.shape)}, expected {w.dtype}{list(w.shape)}"
        atol = workload.atol * float(np.max(np.abs(w), initial=0))
        if not np.allclose(g, w, rtol=workload.rtol, atol=atol):
            worst = np.max(np.abs(g.astype(np.float64) - w) / (atol + workload.rtol * np.abs(w)))
            return f"result {i}: not allclose (worst error {worst:.3g}x the tolerance)"
    return None

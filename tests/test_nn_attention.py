"""justjax.nn.dot_product_attention: JAX's values, a NumPy reference for every mask kind,
gradients against finite differences, jit, vmap, shapes and JAX's errors."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax.test_util import check_grads
from tests.harness import x64_mode

B, T, S, N, K, H = 2, 3, 4, 4, 2, 3
dpa = jax.nn.dot_product_attention


def _arr(shape: tuple[int, ...], phase: float, dtype: type = np.float32) -> np.ndarray:
    """Deterministic test data, reproducible anywhere."""
    return np.sin(np.arange(np.prod(shape)) * 0.7 + phase).reshape(shape).astype(dtype)


Q, KEY, VALUE = _arr((B, T, N, H), 0.0), _arr((B, S, K, H), 1.0), _arr((B, S, K, H), 2.0)
BIAS = _arr((1, N, T, S), 3.0)
MASK = (np.arange(B * N * T * S).reshape(B, N, T, S) % 3) != 1
Q_LENGTHS = np.array([2, 3], np.int32)
KV_LENGTHS = np.array([3, 1], np.int32)


def reference(q, k, v, bias=None, mask=None, *, scale=None, is_causal=False, q_lengths=None,
              kv_lengths=None, window=None):
    """Attention in float64 NumPy, each query head reading key/value head n // G."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    groups = q.shape[2] // k.shape[2]
    k, v = np.repeat(k, groups, axis=2), np.repeat(v, groups, axis=2)
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    logits = np.einsum("btnh,bsnh->bnts", q, k) * scale
    if bias is not None:
        logits = logits + bias
    keep = np.ones(logits.shape, bool)
    t_pos, s_pos = np.arange(q.shape[1])[:, None], np.arange(k.shape[1])[None, :]
    if mask is not None:
        keep &= mask
    if is_causal:
        keep &= s_pos <= t_pos
    if window is not None:
        keep &= (t_pos <= s_pos + window[0]) & (t_pos >= s_pos - window[1])
    if q_lengths is not None:
        keep &= (np.arange(q.shape[1])[None, :, None] < q_lengths[:, None, None])[:, None]
    if kv_lengths is not None:
        keep &= (np.arange(k.shape[1])[None, None, :] < kv_lengths[:, None, None])[:, None]
    logits = np.where(keep, logits, -0.7 * np.finfo(np.float32).max)
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    out = np.einsum("bnts,bsnh->btnh", probs, v)
    if q_lengths is not None:
        out *= (np.arange(q.shape[1])[None, :] < q_lengths[:, None])[:, :, None, None]
    return out


CASES = {
    "mha": (lambda a: dpa(a["q"], a["k_full"], a["v_full"]), {}),
    "gqa": (lambda a: dpa(a["q"], a["k"], a["v"]), {}),
    "mqa": (lambda a: dpa(a["q"], a["k"][:, :, :1], a["v"][:, :, :1]), {"mqa": True}),
    "bias": (lambda a: dpa(a["q"], a["k"], a["v"], BIAS), {"bias": BIAS}),
    "mask": (lambda a: dpa(a["q"], a["k"], a["v"], mask=MASK), {"mask": MASK}),
    "causal_scale": (lambda a: dpa(a["q"], a["k"], a["v"], is_causal=True, scale=0.3),
                     {"is_causal": True, "scale": 0.3}),
    "window": (lambda a: dpa(a["q"], a["k"], a["v"], local_window_size=(1, 0)),
               {"window": (1, 0)}),
    "window_int": (lambda a: dpa(a["q"], a["k"], a["v"], local_window_size=1,
                                 implementation="xla"), {"window": (1, 1)}),
    "lengths": (lambda a: dpa(a["q"], a["k"], a["v"], query_seq_lengths=Q_LENGTHS,
                              key_value_seq_lengths=KV_LENGTHS),
                {"q_lengths": Q_LENGTHS, "kv_lengths": KV_LENGTHS}),
    "everything": (lambda a: dpa(a["q"], a["k"], a["v"], BIAS, MASK, is_causal=True,
                                 local_window_size=(2, 0), query_seq_lengths=Q_LENGTHS),
                   {"bias": BIAS, "mask": MASK, "is_causal": True, "window": (2, 0),
                    "q_lengths": Q_LENGTHS}),
}


def _arrays() -> dict[str, np.ndarray]:
    return {"q": Q, "k": KEY, "v": VALUE, "k_full": _arr((B, S, N, H), 4.0),
            "v_full": _arr((B, S, N, H), 5.0)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_numpy_reference(name: str) -> None:
    call, options = CASES[name]
    arrays = _arrays()
    out = call({k: jnp.asarray(v) for k, v in arrays.items()})
    assert out.shape == (B, T, N, H) and out.dtype == np.float32
    options = dict(options)
    if options.pop("mqa", False):
        k, v = arrays["k"][:, :, :1], arrays["v"][:, :, :1]
    elif name == "mha":
        k, v = arrays["k_full"], arrays["v_full"]
    else:
        k, v = arrays["k"], arrays["v"]
    bias, mask = options.pop("bias", None), options.pop("mask", None)
    np.testing.assert_allclose(np.asarray(out), reference(Q, k, v, bias, mask, **options),
                               atol=2e-6)


# Recorded from JAX 0.10.2: every fifth element of the flattened output.
RECORDED = {
    "gqa": ([0.585199, -0.22365, 0.147681, -0.293827, -0.051204, -0.166621, -0.126151,
             -0.189877, 0.038545, 0.593892, -0.029528, 0.311857, -0.268717, 0.201531,
             -0.161832], lambda: dpa(Q, KEY, VALUE)),
    "bias_mask_causal": ([0.909297, -0.255541, -0.996165, -0.083089, -0.271761, 0.535754,
                          0.369279, -0.664357, 0.60554, 0.887157, -0.66891, 0.618835,
                          -0.352257, 0.421841, 0.548525],
                         lambda: dpa(Q, KEY, VALUE, BIAS, MASK, is_causal=True, scale=0.5)),
    "window_lengths": ([0.583293, 0.061597, 0.165781, -0.380587, 0.025405, 0.0, -0.0, -0.0,
                        0.60554, 0.887157, 0.975821, 0.381251, -0.008102, 0.242397, 0.090501],
                       lambda: dpa(Q, KEY, VALUE, local_window_size=(1, 1),
                                   query_seq_lengths=Q_LENGTHS,
                                   key_value_seq_lengths=KV_LENGTHS)),
    "residual": ([1.540495, 1.315537, 1.33807, 1.586893, 1.675024],
                 lambda: dpa(Q, KEY, VALUE, mask=MASK, return_residual=True)[1]),
    "grad_q": ([0.0, 0.0, 0.0, -0.244335, 0.305393, -0.114742, 0.09236, -0.222225, 0.0, 0.0,
                -0.474144, 0.105796, 0.049078, 0.202138, -0.12628],
               lambda: jax.grad(lambda a: (dpa(a, KEY, VALUE, is_causal=True) ** 2).sum())(Q)),
}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_matches_jax(name: str) -> None:
    expected, call = RECORDED[name]
    np.testing.assert_allclose(np.asarray(call()).ravel()[::5], expected, atol=2e-6)


def test_residual_is_the_logsumexp_of_the_logits() -> None:
    out, lse = dpa(Q, KEY, VALUE, BIAS, return_residual=True)
    assert out.shape == (B, T, N, H) and lse.shape == (B, T, N)
    kq = np.repeat(KEY.astype(np.float64), N // K, axis=2)
    logits = np.einsum("btnh,bsnh->btns", Q.astype(np.float64), kq) / np.sqrt(H)
    logits += np.transpose(BIAS, (0, 2, 1, 3))
    expected = np.log(np.exp(logits).sum(-1))
    np.testing.assert_allclose(np.asarray(lse), expected, atol=2e-6)


def test_unbatched_inputs() -> None:
    out = dpa(Q[0], KEY[0], VALUE[0], is_causal=True)
    assert out.shape == (T, N, H)
    np.testing.assert_allclose(np.asarray(out), np.asarray(dpa(Q, KEY, VALUE, is_causal=True))[0],
                               atol=1e-6)
    out, lse = dpa(Q[0], KEY[0], VALUE[0], return_residual=True)
    assert lse.shape == (T, N)


def test_half_precision() -> None:
    bf16 = [a.astype(ml_dtypes.bfloat16) for a in (Q, KEY, VALUE)]
    out = dpa(*bf16)
    assert out.dtype == ml_dtypes.bfloat16
    np.testing.assert_allclose(np.asarray(out, np.float32), reference(*bf16), atol=2e-2)
    # As JAX on CPU: float16 logits cannot use F16_F16_F32 there, so an eager call falls
    # back to the default precision; a jitted one fails when the program is compiled.
    f16 = [jnp.asarray(a.astype(np.float16)) for a in (Q, KEY, VALUE)]
    assert dpa(*f16).dtype == np.float16
    with pytest.raises(ValueError, match="F16_F16_F32"):
        jax.jit(dpa)(*f16)


def test_jit_and_vmap_match_eager() -> None:
    eager = dpa(Q, KEY, VALUE, BIAS, query_seq_lengths=Q_LENGTHS)
    jitted = jax.jit(lambda q, k, v: dpa(q, k, v, BIAS, query_seq_lengths=Q_LENGTHS))(
        Q, KEY, VALUE)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), atol=1e-6)
    batched = jax.vmap(lambda q, k, v: dpa(q, k, v, is_causal=True))(Q, KEY, VALUE)
    for i in range(B):
        np.testing.assert_allclose(np.asarray(batched[i]),
                                   np.asarray(dpa(Q[i], KEY[i], VALUE[i], is_causal=True)),
                                   atol=1e-6)


def test_gradients_against_finite_differences() -> None:
    with x64_mode(True):
        q, k, v = (a.astype(np.float64)[:1] for a in (Q, KEY, VALUE))
        bias = BIAS.astype(np.float64)

        def attention(q, k, v, bias):
            return dpa(q, k, v, bias, MASK[:1], is_causal=True)

        # The softmax runs in float32 whatever the input dtype (as in JAX): the finite
        # differences carry float32 rounding, hence the larger step and tolerance.
        check_grads(attention, (q, k, v, bias), order=2, modes=("fwd", "rev"), eps=1e-3,
                    atol=1e-3, rtol=1e-3)


ERRORS = [
    (lambda: dpa(Q, KEY, _arr((B, S, N, H), 0.0)), ValueError,
     "value shape should be [2, 4, 2, 3]: but got (2, 4, 4, 3)"),
    (lambda: dpa(Q, KEY, VALUE.astype(np.float16)), ValueError,
     "value dtype should be float32, but got float16"),
    (lambda: dpa(Q[..., :2], KEY, VALUE), ValueError,
     "query shape should be [2, -1, -1, 3]: but got (2, 3, 4, 2)"),
    (lambda: dpa(Q[:, :, :3], KEY, VALUE), ValueError,
     "The number of query heads must be a multiple of key/value heads, but got 3 vs 2"),
    (lambda: dpa(Q, KEY, VALUE, mask=MASK.astype(np.int32)), ValueError,
     "mask dtype should be bool, but got int32"),
    (lambda: dpa(Q, KEY, VALUE, mask=np.ones((2, 1, 1, 1, 1), bool)), ValueError,
     "mask ndim should be 4, but got 5"),
    (lambda: dpa(Q, KEY, VALUE, query_seq_lengths=np.array([1.0, 2.0])), ValueError,
     "query_seq_lengths dtype should be int32, but got float32"),
    (lambda: dpa(Q, KEY, VALUE, key_value_seq_lengths=np.array([1, 2, 3], np.int32)),
     ValueError, "key_value_seq_lengths shape should be [2]: but got (3,)"),
    (lambda: dpa(Q, KEY, VALUE, implementation="flash"), ValueError,
     "Unsupported implementation option: flash"),
    (lambda: dpa(Q, KEY, VALUE, implementation="cudnn"), RuntimeError, "cuDNN is not detected."),
    (lambda: dpa(Q, KEY, VALUE, implementation="cudnn", local_window_size=(2, 1)), ValueError,
     "cuDNN doesn't support right window: 1 when causal mask is not used."),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_are_jax_errors(index: int) -> None:
    call, error, message = ERRORS[index]
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message

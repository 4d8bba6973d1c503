"""Differentiation programs whose printed jaxprs and values real JAX recorded.

`PRELUDE` is executed with `jax`, `jnp`, `lax` and `np` bound (to real JAX when recording, to
justjax in the tests); each case is `(title, function source, arguments source, what)`, where
`what` is "jaxpr" (compare `make_jaxpr(function)(*arguments)` text), "value" (compare
`function(*arguments)`) or "both".
"""
from __future__ import annotations

PRELUDE = '''
def chain(x):
    return jnp.tanh(jnp.cos(jnp.sin(x))).sum()

def mlp_loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return jnp.mean((out - y) ** 2)

def xent(logits, labels):
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

def layernorm(x, scale, bias):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return ((x - mean) * lax.rsqrt(var + 1e-5) * scale + bias).sum()

def attention(q, k, v):
    scores = q @ k.T / jnp.sqrt(q.shape[-1])
    return (jax.nn.softmax(scores, axis=-1) @ v).sum()

def kinks(x):
    return jnp.where(x > 0, x, 0.1 * x).sum() + jnp.max(x) + jnp.abs(x).sum() + \\
        jnp.maximum(x, 0.5).sum()

def hvp(f, x, v):
    return jax.jvp(jax.grad(f), (x,), (v,))[1]

def arange_f32(*shape):
    return (jnp.arange(int(np.prod(shape)), dtype=jnp.float32).reshape(shape) - 3.0) / 7.0

MLP_PARAMS = lambda: {"w1": arange_f32(3, 4), "b1": arange_f32(4), "w2": arange_f32(4, 2),
                      "b2": arange_f32(2)}
'''

CASES = [
    ("sin/cos/tanh chain", "jax.grad(chain)", "(jnp.ones(3),)", "both"),
    ("sum of squares", "jax.grad(lambda x: jnp.sum(x ** 2))", "(jnp.ones(3),)", "both"),
    ("value_and_grad x*x", "jax.value_and_grad(lambda x: (x * x).sum())", "(jnp.ones(2),)",
     "both"),
    ("grad of scalar sin", "jax.grad(jnp.sin)", "(1.0,)", "both"),
    ("grad of grad tanh", "jax.grad(jax.grad(jnp.tanh))", "(0.5,)", "both"),
    ("third derivative", "jax.grad(jax.grad(jax.grad(lambda x: x ** 4)))", "(0.5,)", "value"),
    ("jvp in jaxpr", "lambda x: jax.jvp(jnp.sin, (x,), (x,))", "(jnp.ones(3),)", "both"),
    ("linearize applied", "lambda x: jax.linearize(chain, x)[1](x)", "(jnp.ones(3),)", "both"),
    ("dense layer", "jax.grad(lambda w, x: jnp.tanh(x @ w).sum())",
     "(arange_f32(3, 4), arange_f32(2, 3))", "both"),
    ("mlp loss grad", "jax.grad(mlp_loss)",
     "(MLP_PARAMS(), arange_f32(5, 3), arange_f32(5, 2))", "both"),
    ("mlp value_and_grad argnums", "jax.value_and_grad(mlp_loss, argnums=(0, 1))",
     "(MLP_PARAMS(), arange_f32(5, 3), arange_f32(5, 2))", "value"),
    ("softmax cross-entropy", "jax.grad(xent)",
     "(arange_f32(4, 5), jnp.array([0, 3, 1, 4]))", "both"),
    ("layernorm", "jax.grad(layernorm, argnums=(0, 1, 2))",
     "(arange_f32(3, 4), 1.0 + arange_f32(4), arange_f32(4))", "both"),
    ("attention", "jax.grad(attention, argnums=(0, 1, 2))",
     "(arange_f32(3, 4), arange_f32(5, 4), arange_f32(5, 2))", "both"),
    ("where/max/abs/maximum kinks", "jax.grad(kinks)",
     "(jnp.array([-1.0, 0.0, 0.5, 2.0, 2.0]),)", "both"),
    ("relu at zero", "jax.grad(lambda x: jax.nn.relu(x).sum())",
     "(jnp.array([-1.0, 0.0, 1.0]),)", "both"),
    ("hessian-vector product", "lambda x, v: hvp(chain, x, v)",
     "(arange_f32(3), jnp.ones(3))", "both"),
    ("jacfwd", "jax.jacfwd(lambda x: jnp.sin(x) * x[0])", "(arange_f32(3),)", "value"),
    ("jacrev", "jax.jacrev(lambda x: jnp.sin(x) * x[0])", "(arange_f32(3),)", "value"),
    ("hessian", "jax.hessian(chain)", "(arange_f32(3),)", "value"),
    ("hessian mlp", "jax.hessian(lambda x: mlp_loss(MLP_PARAMS(), x, arange_f32(2, 2)))",
     "(arange_f32(2, 3),)", "value"),
    ("jacrev pytree", "jax.jacrev(lambda d: {'s': d['a'] * d['b'], 't': d['a'].sum()})",
     "({'a': arange_f32(2), 'b': arange_f32(2)},)", "value"),
    ("grad has_aux", "jax.grad(lambda x: (jnp.sin(x).sum(), x * 2), has_aux=True)",
     "(arange_f32(3),)", "value"),
    ("grad allow_int", "jax.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)",
     "(2.0, 3)", "value"),
    ("vjp pytree out", "lambda x: jax.vjp(lambda y: (jnp.sin(y), {'c': y ** 2}), x)[1]("
     "(jnp.ones(3), {'c': jnp.ones(3)}))", "(arange_f32(3),)", "both"),
    ("stop_gradient", "jax.grad(lambda x: lax.stop_gradient(x) * x)", "(1.0,)", "both"),
    ("cumsum sort", "jax.grad(lambda x: (jnp.cumsum(jnp.sort(x)) ** 2).sum())",
     "(jnp.array([3.0, 1.0, 2.0]),)", "both"),
    ("indexing", "jax.grad(lambda x: (x[1:3] ** 2).sum() + x[jnp.array([0, 0, 2])].sum())",
     "(arange_f32(4),)", "both"),
    ("at set", "jax.grad(lambda x: x.at[1].set(3.0).prod())", "(1.0 + arange_f32(4),)",
     "both"),
    ("conv", "jax.grad(lambda x, w: jnp.tanh(lax.conv(x, w, (1, 1), 'SAME')).sum(), "
     "argnums=(0, 1))", "(arange_f32(1, 2, 5, 5), arange_f32(3, 2, 3, 3))", "value"),
    ("max pool", "jax.grad(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2), "
     "'VALID').sum())", "(arange_f32(4, 4) ** 2,)", "value"),
    ("logsumexp", "jax.grad(lambda x: jax.nn.logsumexp(x))", "(arange_f32(5),)", "both"),
    ("integer_pow and pow", "jax.grad(lambda x: (x ** 3 + x ** 0.5).sum())",
     "(1.0 + arange_f32(3) ** 2,)", "both"),
    ("complex holomorphic", "jax.grad(lambda z: z ** 2 + jnp.sin(z), holomorphic=True)",
     "(jnp.complex64(1.0 + 2.0j),)", "value"),
    ("complex to real", "jax.grad(lambda z: jnp.abs(z) ** 2 + jnp.real(z * z))",
     "(jnp.complex64(1.0 + 2.0j),)", "value"),
]

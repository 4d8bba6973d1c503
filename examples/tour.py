"""A first tour of justjax: a function, its jaxpr, and its result.

Run with `.venv/bin/python examples/tour.py` (the main example, `make demo`, is
`train_digits.py`). It shows tracing, eager evaluation, JAX's dtype rules, vmap of grad, and
jit: the StableHLO a function lowers to and its compiled call.
"""
import numpy as np

import justjax as jax
import justjax.numpy as jnp


def predict(params, x):
    """A two-layer perceptron with a softmax output."""
    (w1, b1), (w2, b2) = params
    hidden = jax.nn.relu(x @ w1 + b1)
    return jax.nn.softmax(hidden @ w2 + b2)


def main() -> None:
    rng = np.random.default_rng(0)
    params = [
        (jnp.asarray(rng.normal(size=(4, 8)), dtype=jnp.float32), jnp.zeros(8)),
        (jnp.asarray(rng.normal(size=(8, 3)), dtype=jnp.float32), jnp.zeros(3)),
    ]
    x = jnp.asarray(rng.normal(size=(2, 4)), dtype=jnp.float32)

    print("The function, traced to a jaxpr:\n")
    print(jax.make_jaxpr(predict)(params, x))

    print("\nIts result, computed eagerly:\n")
    probs = predict(params, x)
    print(probs)
    print("\nRows sum to one:", jnp.sum(probs, axis=1))

    print("\nJAX's promotion rules, weak types included:")
    for expr, value in [("int32 array + 1.5", jnp.arange(3) + 1.5),
                        ("bfloat16 array * 2", jnp.ones(2, jnp.bfloat16) * 2),
                        ("uint8 + int8", jnp.ones(2, jnp.uint8) + jnp.ones(2, jnp.int8))]:
        print(f"  {expr:22s} -> {value.dtype}")

    print("\nIndexed updates are functional:")
    y = jnp.zeros(5).at[1:3].set(7.0).at[-1].add(1.0)
    print(" ", y)

    labels = jnp.array([0, 2])

    def loss(params, x, label):
        return -jnp.log(predict(params, x[None])[0, label])

    print("\nvmap batches a function: a vector-matrix product becomes one dot_general:\n")
    print(jax.make_jaxpr(jax.vmap(jnp.dot, in_axes=(0, None)))(x, params[0][0]))

    print("\nPer-example gradients, vmap(grad(loss)), equal the gradients one by one:")
    per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(params, x, labels)
    first = jax.grad(loss)(params, x[0], labels[0])
    same = all(bool(jnp.allclose(batched[0], one, atol=1e-6)) for batched, one in
               zip(jax.tree_util.tree_leaves(per_example), jax.tree_util.tree_leaves(first)))
    print("  shapes:", jax.tree_util.tree_map(lambda g: g.shape, per_example))
    print("  example 0 matches grad(loss) on its own:", same)

    print("\njit lowers the function to StableHLO (the first lines):\n")
    lowered = jax.jit(predict).lower(params, x)
    text = lowered.as_text()
    print("\n".join(text.splitlines()[:8]) + "\n  ...")
    ops = [line for line in text.splitlines() if " = stablehlo." in line or " = call" in line]
    print(f"\n{len(ops)} operations; cost analysis: {lowered.cost_analysis()}")
    compiled = lowered.compile()
    print("The compiled call gives the eager result:",
          bool(jnp.allclose(compiled(params, x), probs, atol=1e-6)))

if __name__ == "__main__":
    main()

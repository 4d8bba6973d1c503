"""A first tour of justjax: a function, its jaxpr, and its result.

Run with `make demo`. Later issues grow this into the main example (training a network with
a jitted train step and a look at every stage of the compiler).
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


if __name__ == "__main__":
    main()

"""`jax.debug.visualize_array_sharding`: the table of blocks and devices, as JAX 0.10.2 prints it
without colors (each expected table was printed by real JAX for the same array)."""
from __future__ import annotations

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

TWO_BY_TWO = """\
┌──────────┬──────────┐
│          │          │
│  CPU 0   │  CPU 1   │
│          │          │
│          │          │
├──────────┼──────────┤
│          │          │
│  CPU 2   │  CPU 3   │
│          │          │
│          │          │
└──────────┴──────────┘"""

ROWS_ONE_D = """\
┌───────┬───────┐
│CPU 0,1│CPU 2,3│
└───────┴───────┘"""

MINOR_AXIS_FIRST = """\
┌──────────┐
│  CPU 0   │
├──────────┤
│  CPU 2   │
├──────────┤
│  CPU 1   │
├──────────┤
│  CPU 3   │
└──────────┘"""

# Wider than the 80 columns of the console: narrowed, the labels no longer fit.
TOO_WIDE = """\
┌───────────────────────────────────────┬──────────────────────────────────────┐
│                                       │                                      │
├───────────────────────────────────────┼──────────────────────────────────────┤
│                                       │                                      │
├───────────────────────────────────────┼──────────────────────────────────────┤
│                                       │                                      │
├───────────────────────────────────────┼──────────────────────────────────────┤
│                                       │                                      │
└───────────────────────────────────────┴──────────────────────────────────────┘"""


@pytest.mark.parametrize("devices, mesh_shape, spec, shape, want", [
    (4, (2, 2), P("x", "y"), (8, 8), TWO_BY_TWO),
    (4, (2, 2), P("x"), (8,), ROWS_ONE_D),
    (4, (2, 2), P(("y", "x")), (8, 4), MINOR_AXIS_FIRST),
    (8, (4, 2), P("x", "y"), (8, 200), TOO_WIDE),
])
def test_tables_as_jax_prints_them(capsys, devices, mesh_shape, spec, shape, want):
    with jax.config.override("jax_num_cpu_devices", devices):
        mesh = Mesh(np.array(jax.devices()).reshape(mesh_shape), ("x", "y"),
                    axis_types=(AxisType.Auto,) * 2)
        x = jax.device_put(jnp.zeros(shape), NamedSharding(mesh, spec))
        jax.debug.visualize_array_sharding(x)
    assert capsys.readouterr().out == want + "\n"


def test_one_device_and_bad_ranks(capsys):
    jax.debug.visualize_array_sharding(jnp.zeros((4, 4)), use_color=False)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "┌" + "─" * 23 + "┐" and lines[5] == "│         CPU 0         │"
    assert len(lines) == 11
    with pytest.raises(ValueError, match="only works for shapes with 1 and 2 dimensions"):
        jax.debug.visualize_array_sharding(jnp.zeros((2, 2, 2)))

"""Records tests/golden/linalg.json: the text each `case_*` of tests/test_linalg.py prints with
real JAX (run with JAX importable, e.g. PYTHONPATH=<jax site-packages>)."""
from __future__ import annotations

import json
import pathlib

GOLDEN = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden" / "linalg.json"


def main() -> None:
    if not GOLDEN.exists():
        GOLDEN.write_text("{}\n")
    import jax
    import jax.lax.linalg  # noqa: F401
    import jax.numpy as jnp
    from tests import test_linalg
    texts = {name: case(jax, jnp) for name, case in sorted(test_linalg.CASES.items())}
    GOLDEN.write_text(json.dumps(texts, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(texts)} texts to {GOLDEN}")


if __name__ == "__main__":
    main()

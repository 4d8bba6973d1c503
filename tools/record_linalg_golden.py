"""Records the golden texts of the linear-algebra tests: the text each `case_*` of
tests/test_linalg.py (tests/golden/linalg.json) and tests/test_linalg_general.py
(tests/golden/linalg_general.json) prints with real JAX (run with JAX importable, e.g.
PYTHONPATH=<jax site-packages>)."""
from __future__ import annotations

import importlib
import json
import pathlib

GOLDEN_DIR = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden"
# Test module -> its golden file.
GOLDEN_FILES = {"tests.test_linalg": "linalg.json",
                "tests.test_linalg_general": "linalg_general.json"}


def main() -> None:
    import jax
    import jax.lax.linalg  # noqa: F401
    import jax.numpy as jnp
    for module_name, file_name in GOLDEN_FILES.items():
        golden = GOLDEN_DIR / file_name
        if not golden.exists():
            golden.write_text("{}\n")
        module = importlib.import_module(module_name)
        texts = {name: case(jax, jnp) for name, case in sorted(module.CASES.items())}
        golden.write_text(json.dumps(texts, indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(texts)} texts to {golden}")


if __name__ == "__main__":
    main()

"""`python -m justjax run SCRIPT.py | -m MODULE [ARGS]` and `python -m justjax explain ...`."""
import sys

if sys.argv[1:2] == ["run"]:
    from justjax._src.jax_alias import run_main
    sys.exit(run_main(sys.argv[2:]))

from justjax._src.explain.cli import main

sys.exit(main())

"""`python -m justjax explain MODULE:FUNCTION --arg 'f32[128,784]' ... [--html out.html]`."""
import sys

from justjax._src.explain_cli import main

sys.exit(main())

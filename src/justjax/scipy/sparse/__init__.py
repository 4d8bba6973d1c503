"""`justjax.scipy.sparse`: sparse linear algebra. Re-exports only."""
from justjax.scipy.sparse import linalg as linalg

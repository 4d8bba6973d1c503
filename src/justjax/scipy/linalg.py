"""`justjax.scipy.linalg`: SciPy's linear algebra (`jax.scipy.linalg`). Re-exports only."""
from justjax._src.scipy.linalg import (
    cho_factor as cho_factor,
    cho_solve as cho_solve,
    cholesky as cholesky,
    det as det,
    eigh as eigh,
    hessenberg as hessenberg,
    inv as inv,
    lu as lu,
    lu_factor as lu_factor,
    lu_solve as lu_solve,
    qr as qr,
    qr_multiply as qr_multiply,
    schur as schur,
    solve as solve,
    solve_triangular as solve_triangular,
    svd as svd,
)
from justjax._src.scipy.linalg_matfuncs import (
    expm as expm,
    expm_frechet as expm_frechet,
    funm as funm,
    polar as polar,
    rsf2csf as rsf2csf,
    solve_sylvester as solve_sylvester,
    sqrtm as sqrtm,
)
from justjax._src.scipy.linalg_tridiagonal import (
    eigh_tridiagonal as eigh_tridiagonal,
)
from justjax._src.scipy.linalg_special import (
    block_diag as block_diag,
    circulant as circulant,
    companion as companion,
    convolution_matrix as convolution_matrix,
    dft as dft,
    fiedler as fiedler,
    fiedler_companion as fiedler_companion,
    hadamard as hadamard,
    hankel as hankel,
    helmert as helmert,
    hilbert as hilbert,
    invhilbert as invhilbert,
    invpascal as invpascal,
    leslie as leslie,
    pascal as pascal,
    toeplitz as toeplitz,
)

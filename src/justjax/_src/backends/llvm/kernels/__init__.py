"""Native kernels of the ops that are not elementwise loops, one module per op family: `dot`
(dot_general through BLAS or loops, output fusions), `conv` (convolution), `sort` (sort,
top_k) and `window` (reduce_window, select_and_scatter, reduce outside fusions). Each
registers its emitters with `codegen.program.register` on import.
"""

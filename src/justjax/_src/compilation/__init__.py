"""From a traced function to a running program: jit and its call primitives, the AOT stages
(`stages`), the compile driver (`compiler`: pipeline, backend, cache), a compiled call's
execution (`execution`) and eager dispatch (`dispatch`).
"""

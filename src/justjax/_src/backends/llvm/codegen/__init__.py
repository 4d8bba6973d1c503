"""Code generation: an optimized HLO module becomes LLVM IR.

`program` builds the one native entry point of a module (buffers, schedule, kernel calls,
fallbacks to the reference backend); `emitter` is the elemental emitter that turns each loop
fusion into a loop nest, extended by `reductions`, `indexing`, `complexmath` and
`elementwise_extra`; `control_flow` emits `stablehlo.while` and `stablehlo.case` natively;
`collectives` emits the all-reduces a program does by calling MPI itself (between processes).
"""

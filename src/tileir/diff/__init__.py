"""Layer 2: each op family on the GPU against the host reference, with mutants that must fail it.

``families`` (the kernels, corpora, judgements and the ledger's layer-2 column), ``corpora``
(the values), ``exact`` (independent exact answers), ``judge`` (one output's comparison),
``mutants`` (deliberately wrong lowerings behind hooks in the lowering and generic layer) and
``run`` (the runner, ``python -m tileir.diff run``). Kept import-light: the lowering imports
``tileir.diff.mutants`` for its hooks.
"""

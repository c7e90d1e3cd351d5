"""Layer 2: each op family on the GPU against the host reference, with mutants that must fail it.

``families`` (the kernels, corpora, judgements and the ledger's layer-2 column), ``corpora``
(the values), ``exact`` (independent exact answers), ``judge`` (one output's comparison),
``mutants`` (deliberately wrong lowerings, patched into the lowering's and the generic layer's
tables from outside), ``run`` (the runner, ``python -m tileir.diff run``), and ``ledger`` (layer 3,
``tileir ledger``).

This package is the verification beside the runtime: it imports the runtime, and nothing in the
runtime imports it (tests/test_diff.py checks that).
"""

"""attnkit: the small helper library shared by the chapters of *Attention, step by step*.

- ``core``: attention in NumPy (softmax in two forms, dot-product attention, masks,
  self-attention, scaled dot-product, multi-head and grouped-query attention, positional
  encoding, sliding-window masks)
- ``modules``: the same in PyTorch (``nn.Module``), checked against torch's own
- ``rules``: every input rule, written once and called by ``core`` and ``modules``
- ``plots``: matplotlib heatmaps of attention weights
- ``heatmap``: the interactive attention heatmap (anywidget; computed in the browser)
- ``reversal``: the capstone's task and tiny Transformer, built from ``modules``
- ``streaming``: attention computed block by block over the keys (the online softmax)
- ``decoding``: a key-value cache and a tiny decoder that generates with or without it
- ``exercises``: ``check_*`` functions for the coding exercises, one module per chapter
- ``recorded``: benchmark figures recorded on a named machine (``data/``), shown by chapter 7
"""

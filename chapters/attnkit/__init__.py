"""attnkit: the small helper library shared by the chapters of *Attention, step by step*.

- ``core``: attention in NumPy (softmax in two forms, dot-product attention, masks,
  self-attention, scaled dot-product, multi-head and grouped-query attention, RMSNorm,
  positional encoding, sliding-window masks)
- ``modules``: the same in PyTorch (``nn.Module``; an encoder layer post-norm or pre-norm,
  with LayerNorm or RMSNorm, and QK-norm), checked against torch's own
- ``relative_position``: positions in the score, in NumPy: rotary position embedding (both
  layouts of its pairs, its frequencies and their rescaling for long contexts) and ALiBi
- ``relative_position_modules``: the same in PyTorch (``nn.Module``), checked against torch's
  complex arithmetic and ``F.scaled_dot_product_attention``
- ``rules``: every input rule, written once and called by ``core`` and ``modules``
- ``plots``: matplotlib heatmaps of attention weights; ``figure_text``: a figure's words in
  another language, from the catalogue of figure labels (``locales/``); ``translated``: where
  an output carries its renderings in the book's other languages
- ``heatmap``: the interactive attention heatmap (anywidget; computed in the browser)
- ``reversal``: the capstone's task and tiny Transformer, built from ``modules``
- ``transformer``: the encoder-decoder Transformer (decoder layers with cross-attention),
  built from ``modules`` and checked against ``nn.Transformer``
- ``transformer_numpy``: its forward pass in NumPy, composed from ``core``
- ``streaming``: attention computed block by block over the keys (the online softmax)
- ``decoding``: a key-value cache and a tiny decoder that generates with or without it
- ``gpt``: chapter 8's tiny GPT (RoPE, pre-norm RMSNorm blocks, causal multi-head or
  grouped-query attention, tied embeddings), its corpus (Python's standard library), training,
  counting baselines, top-k generation and the shipped weights (``data/tiny_gpt.pt``);
  ``gpt_train`` trains it again and writes them
- ``induction``: chapter 9's two-layer attention-only model, its task (random tokens that
  repeat with a random period), training that records the heads as they form, head ablation,
  the scores of previous-token and induction heads, composition scores and OV circuits;
  ``induction_train`` trains it again and writes its record (``data/induction_heads.json``);
  ``induction_gpt`` trains chapter 8's GPT longer and on repeated text and records what forms
  (``data/induction_gpt.json``)
- ``scrubber``: a slider over a recorded training run, every head's attention at each step
  beside the loss curves (anywidget; drawn in the browser)
- ``kv_calculator``: the key-value cache's size, the bytes a decoding step reads and the largest
  batch that fits in memory, as a formula and as an interactive calculator (anywidget; computed
  in the browser)
- ``trace``: what a function does to every named axis, step by step, and where it went wrong;
  ``attnkit.trace(fn, "B T d_model", 3)`` runs it
- ``exercises``: ``check_*`` functions for the coding exercises, one module per chapter
- ``recorded``: benchmark figures recorded on a named machine (``data/``), shown by chapter 7
"""


def __getattr__(name):
    # attnkit.trace is callable (attnkit.trace(fn, ...)) and imported when first used
    if name == "trace":
        import importlib

        return importlib.import_module(".trace", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

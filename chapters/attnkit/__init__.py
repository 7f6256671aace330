"""attnkit: the small helper library shared by the chapters of *Attention, step by step*.

- ``core``: attention in NumPy (softmax in two forms, dot-product attention)
- ``plots``: matplotlib heatmaps of attention weights
- ``widgets``: interactive explorers (ipywidgets)
- ``exercises``: ``check_*`` functions for the coding exercises
"""

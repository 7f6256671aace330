"""The book's own tools: the libraries and scripts that its build (the Sphinx extensions of
``_ext/``), its grader (``assignments/``), its tests and its benchmarks share.

Not a part of attnkit, and never shipped with it: ``make book`` installs it editable into the
book's environment (``booktools/pyproject.toml``), and everything imports it as ``booktools.x``.
"""

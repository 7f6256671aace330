"""The book wing: the built site, its editions, its notebooks run alone, a graded class, JupyterLab."""

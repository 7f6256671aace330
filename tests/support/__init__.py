"""Helpers shared by the test modules, their fixtures and the benchmarks.

Test modules import from here, never from each other or from conftest.py: ``book`` knows the
repository, its table of contents and how to build it; ``browser`` serves and drives a page.
"""

"""The book's tests. A package, so that tests and benchmarks import shared helpers as
``tests.support``, whatever else on the path is named ``tests``."""

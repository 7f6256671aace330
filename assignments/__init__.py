"""Otter-Grader assignments built from the chapters' own sources (``make assignments``).

:mod:`assignments.exercises` reads a chapter's coding exercises, :mod:`assignments.master`
writes them as an Otter master notebook, and :mod:`assignments.build` runs ``otter assign`` on
it for every chapter that has coding exercises.
"""

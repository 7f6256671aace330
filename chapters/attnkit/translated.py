"""Outputs in the book's other languages.

The book runs its cells once, in English. An output that has words (a figure, a trace's
drawing) carries its rendering in each of :data:`TRANSLATED_INTO`'s languages in the output's
metadata, under :data:`TRANSLATIONS` (and, for a figure, the labels the catalogue lacks under
:data:`UNTRANSLATED`), and the book's edition in that language shows it
(``_ext/translated_outputs.py``).
"""

TRANSLATED_INTO = ("ja",)
TRANSLATIONS = "translations"
UNTRANSLATED = "untranslated"

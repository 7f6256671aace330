"""The tracer's own words in each language it speaks (``en``, ``ja``): the kinds of operation,
where a step's line is, and the table's headings, so that a trace reads in the language of the
page or notebook that shows it. (The flags' advice is in :mod:`.flags`.)"""

from __future__ import annotations

WORDS = {
    "en": {
        "heads": ("Step", "Operation", "Axes in", "Axes out", "Line", "Flag"),
        "summary": "Table of the {steps} steps of {name} ({flagged} flagged)",
        "title": "trace of {name}: {steps} steps, {flagged} flagged",
        "result": "result: {axes}",
        "line": "line {line}",
        "kinds": {},  # the kinds are named in English
    },
    "ja": {
        "heads": ("手順", "演算", "入力の軸", "出力の軸", "行", "指摘"),
        "summary": "{name} の {steps} 手順の表（指摘 {flagged} 件）",
        "title": "{name} のトレース：{steps} 手順、指摘 {flagged} 件",
        "result": "結果：{axes}",
        "line": "{line} 行目",
        "kinds": {
            "matmul": "行列積",
            "einsum": "縮約",
            "reshape": "形状変更",
            "transpose": "転置",
            "reduction": "集約",
            "softmax": "ソフトマックス",
            "elementwise": "要素ごと",
            "masking": "マスク",
            "indexing": "添字",
            "concatenation": "連結",
            "other": "その他",
        },
    },
}


def words(code: str) -> dict:
    """The words of ``code``'s language, English where it has none."""
    return WORDS.get(code, WORDS["en"])


def kind(name: str, code: str) -> str:
    return words(code)["kinds"].get(name, name)

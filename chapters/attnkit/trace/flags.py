"""What the tracer flags, and one sentence of advice for each, in English and Japanese.

The sentences are a table of their own rather than entries of the checks' catalogue
(``attnkit/exercises/locales``): that catalogue is extracted from the checks' package alone, and
these six sentences are read beside their translations here, in the book's terms (注目度 …). They
follow the checks' choice of language (``ATTNKIT_LANGUAGE``, :func:`attnkit.exercises.wording.language`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..exercises.wording import language

ADVICE = {
    "mixed": (
        "This reshape mixes {axes}, which are not next to each other here: move them together "
        "with a transpose first (view(b, n, h, d_k).transpose(1, 2), not view(b, h, n, d_k)).",
        "この reshape は隣り合っていない {axes} を混ぜています。先に transpose で並べ替えてください"
        "（view(b, h, n, d_k) ではなく view(b, n, h, d_k).transpose(1, 2)）。",
    ),
    "merge_order": (
        "This merges {axes} in the order {got}, but {name} is {want}: put the head axis before "
        "its columns (transpose to (b, n, h, d_v)) before merging.",
        "この統合は {axes} を {got} の順に並べていますが、{name} は {want} です。統合の前に"
        "ヘッドの軸をその列の前に置いてください（(b, n, h, d_v) に transpose）。",
    ),
    "softmax_axis": (
        "This normalises along {axis}, but each query's attention weights run along the keys' "
        "axis {keys}: use axis=-1 (dim=-1) for scores laid out (…, queries, keys).",
        "これは {axis} に沿って正規化していますが、各クエリの注目度はキーの軸 {keys} に沿って"
        "並んでいます。（…, クエリ, キー）と並ぶスコアには axis=-1（dim=-1）を使ってください。",
    ),
    "scale": (
        "This scales the scores by {got}, but scaled dot-product attention divides them by "
        "√{want}, the width of the vectors whose dot products they are.",
        "これはスコアを {got} でスケールしていますが、スケール化内積注意では内積を取ったベクトルの"
        "幅 {want} の平方根 √{want} で割ります。",
    ),
    "mask_axis": (
        "This mask lines up {mask} against the scores' {scores}: a mask hides keys, so it must "
        "vary along the keys' axis {keys} (a padding mask of shape (…, 1, n_keys), a causal "
        "mask indexed [query, key]).",
        "このマスクは {mask} をスコアの {scores} に重ねています。マスクはキーを隠すので、キーの軸 "
        "{keys} に沿って変わる必要があります（パディングマスクなら形状 (…, 1, n_keys)、"
        "因果マスクなら [クエリ, キー] の順）。",
    ),
    "contraction": (
        "This product sums {left} against {right}: a matrix product must pair the same axis on "
        "both sides (the keys' axis of the weights with the values' tokens).",
        "この積は {left} と {right} を掛け合わせて和を取っています。行列積では両側で同じ軸を"
        "組にしてください（注目度のキーの軸と、値のトークンの軸）。",
    ),
    "contract": (
        "The result's axes are {got}, but they should be {want}.",
        "結果の軸は {got} ですが、{want} であるべきです。",
    ),
}


@dataclass(frozen=True)
class Flag:
    """A mistake the tracer saw: its kind (a key of :data:`ADVICE`), the names that fill its
    sentence, and the step and source line where it happened (set when it is recorded)."""

    kind: str
    fields: dict = field(default_factory=dict, compare=False)
    step: int = 0
    line: int = 0
    file: str = ""

    def advice(self, code: str | None = None) -> str:
        """The advice in ``code``'s language (``en`` or ``ja``; by default the checks')."""
        japanese = (code or language()) == "ja"
        template = ADVICE[self.kind][japanese]
        conjunction = " と " if japanese else " and "
        return template.format(
            **{
                name: conjunction.join(value) if isinstance(value, tuple) else value
                for name, value in self.fields.items()
            }
        )

    def __str__(self) -> str:
        return self.advice()

"""Checks for the coding exercises: they say whether an answer is right, and why not.

Each ``check_*`` runs the student's function on several inputs, edge cases and inputs
chosen to expose typical mistakes included, in float64 and float32, and returns a
:class:`CheckResult` whose text names the first problem found in plain words. A function that
raises is reported, never re-raised, so an unfinished exercise does not stop the notebook. A
result is true only when the check passed; a notebook shows it marked ✓ or ✗, and a failed
result that nobody looked at warns (:class:`CheckFailedWarning`), so a script cannot miss it.

One module per chapter, named after the chapter's file, in the book's order:

- ``attention``: ``check_softmax``, ``check_single_query_attention``
- ``self_attention``: ``check_causal_mask``, ``check_masked_self_attention``,
  ``check_padding_mask``
- ``qkv_attention``: ``check_scaled_dot_product_attention``, ``check_mask_forms``
- ``multi_head_attention``: ``check_split_heads``, ``check_merge_heads``
- ``positional_encoding``: ``check_positional_encoding``, ``check_rotary_embedding``
- ``tiny_transformer``: ``check_diagonal_mass``
- ``attention_at_scale``: ``check_online_softmax_attention``, ``check_grouped_query_attention``,
  ``check_merge_attention_states``
- ``tiny_gpt``: ``check_causal_rope_attention``, ``check_top_k_probabilities``
- ``induction_heads``: ``check_induction_score``, ``check_k_composition``

They are built on ``harness``: calling the student's function safely, comparing answers
with a tolerance that follows their dtype, and turning a check's body into a
:class:`CheckResult`. Every check is also importable from here. Their messages are in English,
or in Japanese where ``ATTNKIT_LANGUAGE=ja`` (``wording``; a Japanese notebook sets it). A
check about axes shows the trace of an answer it rejects where the tracer flags a step
(``tracing``, :mod:`attnkit.trace`). The line an exercise's stub raises is in the student's
language too (``stub``).
"""

from .attention import check_single_query_attention, check_softmax
from .attention_at_scale import (
    check_grouped_query_attention,
    check_merge_attention_states,
    check_online_softmax_attention,
)
from .harness import CheckFailed, CheckFailedWarning, CheckResult
from .induction_heads import check_induction_score, check_k_composition
from .multi_head_attention import check_merge_heads, check_split_heads
from .positional_encoding import check_positional_encoding, check_rotary_embedding
from .qkv_attention import check_mask_forms, check_scaled_dot_product_attention
from .self_attention import check_causal_mask, check_masked_self_attention, check_padding_mask
from .tiny_gpt import check_causal_rope_attention, check_top_k_probabilities
from .tiny_transformer import check_diagonal_mass

__all__ = [
    "CheckResult",
    "CheckFailed",
    "CheckFailedWarning",
    "check_softmax",
    "check_single_query_attention",
    "check_causal_mask",
    "check_masked_self_attention",
    "check_padding_mask",
    "check_scaled_dot_product_attention",
    "check_mask_forms",
    "check_split_heads",
    "check_merge_heads",
    "check_positional_encoding",
    "check_rotary_embedding",
    "check_diagonal_mass",
    "check_online_softmax_attention",
    "check_grouped_query_attention",
    "check_merge_attention_states",
    "check_causal_rope_attention",
    "check_top_k_probabilities",
    "check_induction_score",
    "check_k_composition",
]

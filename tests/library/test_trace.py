"""attnkit.trace: the right flag at the right line on the wrong answers whose mistake is about
axes, no flag on the right ones, and the same trace in NumPy and PyTorch."""

import inspect
import math

import numpy as np
import pytest
import torch

import attnkit
import attnkit.exercises.qkv_attention
from attnkit.exercises.calling import Remote
from attnkit.exercises.harness import verdict_html
from attnkit.exercises.multi_head_attention import check_split_heads
from attnkit.exercises.tracing import CONTRACTS, packed, traced, unpacked
from attnkit.modules import MultiHeadAttention
from attnkit.trace import SIZES, diagnose, example, trace
from attnkit.trace.draw import html
from attnkit.trace.result import where
from attnkit.translated import TRANSLATIONS
from tests.support.answers import multi_head_attention as heads_answers
from tests.support.answers import qkv_attention as qkv_answers
from tests.support.answers import self_attention as self_answers

H = SIZES["H"]
SPLIT = CONTRACTS["check_split_heads"]
MERGE = CONTRACTS["check_merge_heads"]
SDPA = CONTRACTS["check_scaled_dot_product_attention"]
MASKED = CONTRACTS["check_masked_self_attention"]


def line_of(fn, fragment: str) -> int:
    """The line of ``fn``'s source, in its file, that holds ``fragment``."""
    lines, first = inspect.getsourcelines(fn)
    first = first or 1
    return next(first + i for i, line in enumerate(lines) if fragment in line)


def flagged(fn, args, expect, kind: str, fragment: str, **options):
    flags = diagnose(fn, args, expect=expect, **options)
    line = line_of(fn, fragment)
    assert any(f.kind == kind and f.line == line for f in flags), (
        f"no {kind} flag at line {line}: {[(f.kind, f.line) for f in flags]}"
    )


# --- the checks' catalogues: wrong answers about axes -------------------------------------------

CATALOGUED = [
    # (answers, wrong answer, (args, expect), flag, the flagged line)
    (heads_answers.SPLIT, "straight to (b, h, n, d_k)", SPLIT, "mixed", "reshape"),
    (heads_answers.SPLIT, "every h-th column", SPLIT, "mixed", "reshape"),
    (heads_answers.SPLIT, "no transpose", SPLIT, "contract", "reshape"),
    (heads_answers.SPLIT, "tokens and columns swapped", SPLIT, "contract", "transpose"),
    (heads_answers.MERGE, "straight to (b, n, h*d_v)", MERGE, "mixed", "reshape"),
    (heads_answers.MERGE, "interleaved", MERGE, "merge_order", "reshape"),
    (heads_answers.MERGE, "not concatenated", MERGE, "contract", "transpose"),
    (qkv_answers.SDPA, "scaled by sqrt(d_v)", SDPA, "scale", "Q @ K.T"),
    (qkv_answers.SDPA, "scaled by sqrt(n)", SDPA, "scale", "Q @ K.T"),
    (qkv_answers.SDPA, "scaled by sqrt(m)", SDPA, "scale", "Q @ K.T"),
    (qkv_answers.SDPA, "multiplied by sqrt(d_k)", SDPA, "scale", "Q @ K.T"),
    (self_answers.MASKED_SELF_ATTENTION, "mask.T", MASKED, "mask_axis", "np.where"),
    (self_answers.MASKED_SELF_ATTENTION, "output weights.T @ X", MASKED, "contraction", ".T @ X"),
]


@pytest.mark.parametrize(
    "answers, name, contract, kind, fragment",
    CATALOGUED,
    ids=[f"{a.name}: {name}" for a, name, *_ in CATALOGUED],
)
def test_catalogued_wrong_answers_are_flagged_at_their_line(
    answers, name, contract, kind, fragment
):
    args, expect = contract
    flagged(answers.wrong[name].fn, args, expect, kind, fragment)


# every catalogue whose check traces the answers it rejects (attnkit.exercises.tracing)
RIGHT = [
    (answers, CONTRACTS[answers.name])
    for module in (heads_answers, qkv_answers, self_answers)
    for answers in module.ANSWERS
    if answers.name in CONTRACTS
]


@pytest.mark.parametrize(
    "answers, name, contract",
    [(a, name, contract) for a, contract in RIGHT for name in a.right],
    ids=[f"{a.name}: {name}" for a, _ in RIGHT for name in a.right],
)
def test_right_answers_trace_clean(answers, name, contract):
    args, expect = contract
    found = trace(answers.right[name], *args, expect=expect)
    assert found.flags == [], str(found)


# --- wrong answers of our own, NumPy and PyTorch ------------------------------------------------


def mha_numpy(
    X, W_Q, W_K, W_V, W_O, h, *, softmax_axis=-1, wide_scale=False, mixed=False, mask=None
):
    """Multi-head self-attention written out in NumPy, with one mistake on request."""
    b, n, d_model = X.shape
    d_k = d_model // h

    def split(Z):
        if mixed:
            return Z.reshape(b, h, n, d_k)  # the view without the transpose
        return Z.reshape(b, n, h, d_k).transpose(0, 2, 1, 3)

    q, k, v = split(X @ W_Q), split(X @ W_K), split(X @ W_V)  # (b, h, n, d_k)
    width = d_model if wide_scale else d_k
    scores = q @ k.swapaxes(-1, -2) / math.sqrt(width)  # (b, h, n, n)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=softmax_axis, keepdims=True))
    weights = e / e.sum(axis=softmax_axis, keepdims=True)
    heads = (weights @ v).transpose(0, 2, 1, 3).reshape(b, n, d_model)  # (b, n, d_model)
    return heads @ W_O


def mha_torch(
    X, W_Q, W_K, W_V, W_O, h, *, softmax_axis=-1, wide_scale=False, mixed=False, mask=None
):
    """The same in PyTorch, step for step."""
    b, n, d_model = X.shape
    d_k = d_model // h

    def split(Z):
        if mixed:
            return Z.view(b, h, n, d_k)  # the view without the transpose
        return Z.view(b, n, h, d_k).transpose(1, 2)

    q, k, v = split(X @ W_Q), split(X @ W_K), split(X @ W_V)  # (b, h, n, d_k)
    width = d_model if wide_scale else d_k
    scores = q @ k.transpose(-1, -2) / math.sqrt(width)  # (b, h, n, n)
    if mask is not None:
        scores = scores.masked_fill(~mask, -torch.inf)
    e = torch.exp(scores - scores.amax(dim=softmax_axis, keepdim=True))
    weights = e / e.sum(dim=softmax_axis, keepdim=True)
    heads = (weights @ v).transpose(1, 2).reshape(b, n, d_model)  # (b, n, d_model)
    return heads @ W_O


LAYER = ("B T d_model", *["d_model d_model"] * 4, H)
MISTAKES = [
    # (mistake, flag, the flagged line of each version)
    ({}, None, None),
    ({"mixed": True}, "mixed", "the view without"),
    ({"softmax_axis": -2}, "softmax_axis", "e = "),
    ({"wide_scale": True}, "scale", "scores = q @"),
]


@pytest.mark.parametrize(
    "mistake, kind, fragment", MISTAKES, ids=["right", *[m[1] for m in MISTAKES[1:]]]
)
@pytest.mark.parametrize(
    "fn, use_torch", [(mha_numpy, False), (mha_torch, True)], ids=["numpy", "torch"]
)
def test_own_wrong_layers_are_flagged_at_their_line(fn, use_torch, mistake, kind, fragment):
    found = trace(fn, *LAYER, torch=use_torch, expect="B T d_model", **mistake)
    if kind is None:
        assert found.flags == [], str(found)
    else:
        first = found.flags[0]  # where it went wrong first
        assert (first.kind, first.line) == (kind, line_of(fn, fragment)), str(found)


def steps(found):
    return [(step.kind, step.inputs, step.output) for step in found.steps]


@pytest.mark.parametrize(
    "mistake", [m[0] for m in MISTAKES], ids=["right", "mixed", "softmax", "scale"]
)
def test_numpy_and_pytorch_give_the_same_trace(mistake):
    in_numpy = trace(mha_numpy, *LAYER, expect="B T d_model", **mistake)
    in_torch = trace(mha_torch, *LAYER, torch=True, expect="B T d_model", **mistake)
    assert steps(in_numpy) == steps(in_torch)
    assert [(f.kind, f.fields) for f in in_numpy.flags] == [
        (f.kind, f.fields) for f in in_torch.flags
    ]


def test_a_padding_mask_along_the_queries_is_flagged_at_its_line():
    along_keys = example("bool B T'", torch=True)[:, None, None, :]  # (B, 1, 1, T')
    along_queries = along_keys.transpose(-1, -2)  # (B, 1, T, 1)
    right = trace(mha_torch, *LAYER, torch=True, mask=along_keys)
    assert right.flags == [], str(right)
    wrong = trace(mha_torch, *LAYER, torch=True, mask=along_queries).flags
    assert [(f.kind, f.line) for f in wrong] == [("mask_axis", line_of(mha_torch, "masked_fill"))]


def test_the_book_layer_traces_clean_through_its_modules():
    torch.manual_seed(0)
    found = trace(
        MultiHeadAttention(SIZES["H"] * SIZES["d_k"], H),
        "float32 B T d_model",
        torch=True,
        expect="B T d_model",
    )
    assert found.flags == [], str(found)
    kinds = [step.kind for step in found.steps]
    assert kinds.count("matmul") == 6 and "softmax" in kinds  # 4 projections, scores, weights
    assert str(found.output) and found.result[0].shape == (2, 5, 21)


# --- what a trace holds and how it reads --------------------------------------------------------


def test_every_step_names_its_axes_and_its_line():
    found = attnkit.trace(heads_answers.split_reference, "B T d_model", H)
    assert [(s.kind, s.output) for s in found.steps][1][0] == "transpose"
    reshape, transpose = found.steps
    assert [a.name for a in reshape.output] == ["B", "T", "H", "d_k"]
    assert [a.name for a in transpose.output] == ["B", "H", "T", "d_k"]
    assert reshape.line == line_of(heads_answers.split_reference, "reshape")
    text = str(found)
    assert "(B, T, d_model) -> (B, T, H, d_k)" in text and "pieces = X.reshape" in text


def test_results_come_back_as_plain_arrays():
    numpy_result = trace(heads_answers.split_reference, "B T d_model", H).result
    assert type(numpy_result) is np.ndarray and numpy_result.shape == (2, 3, 5, 7)
    torch_result = trace(lambda x: x.softmax(-1), "B T", torch=True).result
    assert type(torch_result) is torch.Tensor


def test_a_flag_gives_its_advice_in_english_and_japanese(monkeypatch):
    (flag,) = diagnose(heads_answers.split_mixing_tokens, SPLIT[0])
    assert "mixes T and H" in flag.advice("en")
    assert "T and H" not in flag.advice("ja") and "T と H" in flag.advice("ja")
    monkeypatch.setenv("ATTNKIT_LANGUAGE", "ja")
    assert str(flag) == flag.advice("ja")


def test_bad_names_and_sizes_raise_value_errors():
    with pytest.raises(ValueError, match="unknown axis name 'Q'"):
        trace(np.sum, "B Q")
    with pytest.raises(ValueError, match="size of its own"):
        trace(np.sum, "B T", sizes={"T": 7})


def test_axes_of_no_known_name_are_split_and_merged_without_a_flag():
    torch.manual_seed(0)
    layer = MultiHeadAttention(24, 4)  # 24 = 4 × 6: sizes the tracer has no names for
    found = trace(layer, torch.randn(1, 16, 24), torch=True)
    assert found.flags == [], str(found)
    reshapes = [step.output for step in found.steps if step.kind == "reshape"]
    assert [a.size for a in reshapes[0]] == [1, 16, 4, 6]
    assert not any(axis.mixed for axes in reshapes for axis in axes)


def test_the_drawing_speaks_the_checks_language(monkeypatch):
    wrong = trace(heads_answers.split_mixing_tokens, *SPLIT[0], expect=SPLIT[1])
    english = wrong._repr_html_()
    assert (
        'lang="en"' in english and "Table of the 1 steps" in english and "mixes T and H" in english
    )
    monkeypatch.setenv("ATTNKIT_LANGUAGE", "ja")
    japanese = wrong._repr_html_()
    assert (
        'lang="ja"' in japanese and "1 手順の表（指摘 2 件）" in japanese and "T と H" in japanese
    )
    assert japanese.count('data-flagged="true"') == english.count('data-flagged="true"') == 1


def test_a_trace_shown_in_a_notebook_carries_its_japanese_drawing(monkeypatch):
    """The book runs its cells in English; its Japanese pages show the drawing the output
    carries (_ext/translated_outputs.py), its steps, lines and table in Japanese."""
    wrong = trace(heads_answers.split_mixing_tokens, *SPLIT[0], expect=SPLIT[1])
    data, metadata = wrong._repr_mimebundle_()
    assert data["text/html"] == wrong._repr_html_() and data["text/plain"] == str(wrong)
    japanese = metadata["text/html"][TRANSLATIONS]["ja"]
    assert japanese == html(wrong, "ja") and 'lang="ja"' in japanese
    assert "<span>形状変更 <code" in japanese  # the kind in Japanese, the call as it is named
    assert "の 1 手順の表" in japanese and "Table of" not in japanese
    assert "のトレース：1 手順、指摘 2 件" in wrong.text("ja") and "結果：" in wrong.text("ja")
    # a notebook whose checks answer in Japanese draws it so, and carries the English one
    monkeypatch.setenv("ATTNKIT_LANGUAGE", "ja")
    data, metadata = wrong._repr_mimebundle_()
    assert data["text/html"] == japanese and metadata == {}


def test_a_step_in_a_notebook_cell_is_placed_in_the_traces_language():
    assert where("/tmp/ipykernel_12/3456.py", 7, "en") == "line 7"
    assert where("/tmp/ipykernel_12/3456.py", 7, "ja") == "7 行目"
    assert where("/book/attention.py", 7, "ja") == "attention.py:7"


# --- attnkit.core keeps traced arrays -----------------------------------------------------------


def test_functions_built_on_attnkit_core_are_traced_inside():
    found = trace(lambda Q, K, V: attnkit.core.scaled_dot_product_attention(Q, K, V)[0], *SDPA[0])
    assert [step.kind for step in found.steps].count("matmul") == 2, str(found)
    assert found.flags == [] and [a.name for a in found.output] == ["m", "d_v"]


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix's own warning
def test_core_turns_the_subclasses_whose_arithmetic_differs_into_plain_arrays():
    for odd in (np.matrix([[1.0, 2.0]]), np.ma.masked_array([[1.0, 2.0]], mask=[[0, 1]])):
        assert type(attnkit.core.as_float_array(odd, "x")) is np.ndarray


# --- the checks show the trace of the answers they reject for their axes ------------------------


def test_the_checks_contracts_name_the_tracers_own_number_of_heads():
    assert SPLIT[0][1] == SIZES["H"] and len(RIGHT) == len(CONTRACTS)


@pytest.mark.parametrize("language", ["en", "ja"])
def test_a_rejected_answer_whose_axes_went_wrong_shows_its_trace(monkeypatch, language):
    monkeypatch.setenv("ATTNKIT_LANGUAGE", language)
    wrong = heads_answers.SPLIT.wrong["straight to (b, h, n, d_k)"].fn
    result = check_split_heads(wrong)
    line = line_of(wrong, "reshape")
    assert not result.passed
    kind = "形状変更" if language == "ja" else "reshape"
    assert f"multi_head_attention.py:{line} {kind}" in result.report  # the step and its line
    assert ("T と H" if language == "ja" else "mixes T and H") in result.report
    assert "trace of" not in result.message  # the check's own words, written in any language
    drawing = result._repr_html_()
    assert drawing.count('data-flagged="true"') == 1 and f'lang="{language}"' in drawing


def test_a_rejected_answer_of_no_axis_mistake_and_a_right_one_show_no_trace():
    unscaled = qkv_answers.SDPA.wrong["not scaled"].fn
    assert "trace of" not in check_split_heads(heads_answers.SPLIT.right["reference"]).report
    rejected = attnkit.exercises.qkv_attention.check_scaled_dot_product_attention(unscaled)
    assert not rejected.passed and "trace of" not in rejected.report


def test_the_book_writes_a_verdicts_trace_in_the_editions_language():
    from translated_verdicts import in_language

    found = traced(heads_answers.SPLIT.wrong["straight to (b, h, n, d_k)"].fn, "check_split_heads")
    english = verdict_html(False, "wrong", "en", found)
    japanese = in_language(english, "ja")
    assert 'lang="en"' in english and 'lang="ja"' in japanese and 'lang="en"' not in japanese
    assert japanese.count("attnkit-verdict-trace") == 1


def test_a_grader_shows_only_a_trace_made_of_strings():
    found = traced(heads_answers.SPLIT.wrong["every h-th column"].fn, "check_split_heads")
    assert unpacked(packed(found)) == found
    assert unpacked(("a",) * 3) is None and unpacked((1, 2, 3, 4)) is None

    class Sandboxed(Remote):
        """A student's process that answers a trace with ``sent``, and each call with a
        wrong shape."""

        def __init__(self, sent):
            self.sent = sent

        def invoke(self, args, forbidden, measure, layout="C", twice=False):
            from attnkit.exercises.calling import Outcome

            return Outcome(result=np.zeros((1,)), args=args)

        def trace(self, check, forbidden):
            return self.sent

    assert "trace of" in check_split_heads(Sandboxed(found)).report
    forged = {"text": {"en": object(), "ja": ""}, "html": {"en": "", "ja": ""}}
    assert "trace of" not in check_split_heads(Sandboxed(forged)).report


def test_the_trace_of_a_check_calls_no_forbidden_helper():
    from attnkit.core import softmax

    def uses_softmax(Q, K, V):
        return softmax(Q @ K.T / np.sqrt(V.shape[-1])) @ V  # scaled by √d_v

    forbidden = ("attnkit.core.softmax",)
    assert traced(uses_softmax, "check_scaled_dot_product_attention", forbidden) is None
    assert traced(uses_softmax, "check_scaled_dot_product_attention") is not None


def test_a_composite_axis_of_its_own_names_grouped_query_attentions_groups():
    groups = {"g": 29, "r": 31, "h": ("g", "r")}  # h query heads, g groups of r
    found = trace(
        attnkit.core.grouped_query_attention,
        *("h T d_k", "g T' d_k", "g T' d_v"),
        sizes=groups,
        expect="h T d_v",
    )
    assert found.flags == [], str(found)
    first = found.steps[0]
    assert (first.kind, [a.name for a in first.output]) == ("reshape", ["g", "r", "T", "d_k"])
    assert first.line == line_of(attnkit.core.grouped_query_attention, "grouped_q = q.reshape")
    with pytest.raises(ValueError, match="made of atomic names"):
        trace(np.sum, "h T", sizes={"h": ("g", "T")})

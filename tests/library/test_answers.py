"""Every check passes every right answer and rejects every wrong one, in each dtype alone.

The answers are listed per chapter in ``tests/support/answers/`` (its docstring says how); the
checks draw fresh random inputs on each run, and each test runs them with its own seeds.
"""

import pkgutil

import pytest

import attnkit.exercises
import tests.support.answers
from tests.support.answers import FAMILIES, Answers, every_answers, every_required, seeds

CHECK_MODULES = sorted(
    m.name
    for m in pkgutil.iter_modules(attnkit.exercises.__path__)
    if m.name not in {"harness", "calling", "pytorch_watch", "inputs", "wording", "tracing", "stub"}
)
ANSWER_MODULES = sorted(m.name for m in pkgutil.iter_modules(tests.support.answers.__path__))
ANSWERS: list[Answers] = every_answers()
RIGHT = [(a, name) for a in ANSWERS for name in a.right]
# A check whose inputs have no float dtype (sizes, lengths) is run once per wrong answer.
WRONG = [
    (a, name, dtype)
    for a in ANSWERS
    for name, wrong in a.wrong.items()
    for dtype in (wrong.dtypes if a.float_inputs else wrong.dtypes[:1])
]


def test_every_check_is_listed_with_every_family_it_must_stand():
    checks = [name for name in attnkit.exercises.__all__ if name.startswith("check_")]
    required = every_required()
    assert sorted(a.name for a in ANSWERS) == sorted(checks) == sorted(required)
    for answers in ANSWERS:
        missing = required[answers.name] - answers.families()
        assert not missing, f"{answers.name} is tried with no wrong answer of {sorted(missing)}"
        assert "reference" in answers.right
        assert set(required[answers.name]) <= set(FAMILIES)


def test_every_module_of_checks_has_its_module_of_answers():
    assert ANSWER_MODULES == CHECK_MODULES


def test_a_check_that_forbids_helpers_is_tried_with_one_of_them():
    for answers in ANSWERS:
        if answers.check.forbids:
            assert "forbidden" in answers.families(), answers.name


@pytest.mark.parametrize("answers, name", RIGHT, ids=[f"{a.name}-{name}" for a, name in RIGHT])
def test_every_right_answer_passes(answers, name):
    for seed in seeds(answers.name, name):
        result = answers.check(answers.right[name], seed=seed)
        assert result.passed, f"seed {seed}: {result.message}"


@pytest.mark.parametrize(
    "answers, name, dtype",
    WRONG,
    ids=[f"{a.name}-{name}-{dtype.__name__}" for a, name, dtype in WRONG],
)
def test_every_wrong_answer_is_rejected_in_each_dtype_with_advice(answers, name, dtype):
    wrong = answers.wrong[name]
    for seed in seeds(answers.name, name, dtype.__name__):
        result = answers.check(wrong.fn, seed=seed, dtypes=(dtype,))
        assert not result.passed, f"seed {seed}: {name} passed"
        assert wrong.advice in result.message, result.message


RUNS = 2  # a second run to compare with the first: what a student sees on running a cell again


@pytest.mark.parametrize("answers", ANSWERS, ids=[a.name for a in ANSWERS])
def test_every_answer_gets_the_same_verdict_word_for_word_on_every_run(answers):
    """With no seed given a check draws its own fixed inputs: a student who runs a cell again
    sees the verdict they saw, whatever the answer."""
    tried = [(name, fn, True) for name, fn in answers.right.items()]
    tried += [(name, wrong.fn, False) for name, wrong in answers.wrong.items()]
    for name, fn, right in tried:
        verdicts = {(r.passed, r.message) for r in (answers.check(fn) for _ in range(RUNS))}
        assert len(verdicts) == 1, f"{name}: {sorted(verdicts)}"
        ((passed, message),) = verdicts
        assert passed == right, f"{name}: {message}"


def test_a_check_draws_its_own_inputs_unless_given_a_seed():
    import attnkit.exercises.harness as harness

    drawn = []

    @harness.check
    def check_drawing(fn):
        drawn.append(harness.random().integers(2**62))
        return "drawn"

    for seed in (None, None, 7, 7, 8):
        check_drawing(None, seed=seed)
    assert drawn[0] == drawn[1] != drawn[2] == drawn[3] != drawn[4]
    assert check_drawing.default_seed == harness.fixed_seed("check_drawing") == 3_749_171_559

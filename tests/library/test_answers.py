"""Every check passes every right answer and rejects every wrong one, in each dtype alone.

The answers are listed per chapter in ``tests/support/answers/`` (its docstring says how); the
checks draw fresh random inputs on each run, and each test runs them with its own seeds.
"""

import pkgutil

import pytest

import attnkit.exercises
import tests.support.answers
from tests.support.answers import FAMILIES, REQUIRED, Answers, every_answers, seeds

CHECK_MODULES = sorted(
    m.name
    for m in pkgutil.iter_modules(attnkit.exercises.__path__)
    if m.name not in {"harness", "calling", "inputs", "wording"}
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
    assert sorted(a.name for a in ANSWERS) == sorted(checks) == sorted(REQUIRED)
    for answers in ANSWERS:
        missing = REQUIRED[answers.name] - answers.families()
        assert not missing, f"{answers.name} is tried with no wrong answer of {sorted(missing)}"
        assert "reference" in answers.right
        assert set(REQUIRED[answers.name]) <= set(FAMILIES)


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

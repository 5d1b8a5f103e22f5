"""Runtime estimates: name stems, shape keys, EASY++'s learned value, precedence, overrun."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler_core.engine.runtimes import (
    DECLARED,
    DEFAULT,
    LEARNED,
    LIMIT,
    OVERRUN,
    Estimate,
    RuntimeHistory,
    estimate,
    learned_runtime,
    name_stem,
    overrun,
    shape_key,
)

GPU = {"cpu": 4000, "nvidia.com/gpu": 1}
CPU = {"cpu": 8000}


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("bert-ft", "bert-ft"),
        ("bert-ft-7", "bert-ft"),  # an index
        ("bert-ft-x8k2q", "bert-ft"),  # generateName's five characters
        ("bert-ft-20240301-1712345678", "bert-ft"),  # a date and an epoch
        ("bert-ft-5f8d9c7b4", "bert-ft"),  # a pod-template hash
        ("bert-ft-0c7e4b1a-9f3d-4e2a-8b6c-1d2e3f4a5b6c", "bert-ft"),  # a UUID
        ("resnet50", "resnet50"),  # digits inside a word are the word's
        ("llama-70b", "llama-70b"),
        ("train-alpha", "train-alpha"),  # a chosen word, with vowels
        ("train-", "train"),
        ("12345", "12345"),  # nothing but a generated segment: kept
        ("job-3-4", "job"),
    ],
)
def test_name_stem_drops_generated_suffixes(name, stem):
    assert name_stem(name) == stem


def test_shape_key_joins_runs_of_the_same_job_only():
    key = shape_key("ana", "research", "bert-ft-1", 4, [GPU, GPU])
    assert key == shape_key("ana", "research", "bert-ft-x8k2q", 4, [dict(reversed(list(GPU.items())))])
    assert len(key) == 64
    assert key != shape_key("bob", "research", "bert-ft-1", 4, [GPU])  # another submitter
    assert key != shape_key("ana", "prod", "bert-ft-1", 4, [GPU])  # another queue
    assert key != shape_key("ana", "research", "gpt-ft-1", 4, [GPU])  # another job
    assert key != shape_key("ana", "research", "bert-ft-1", 8, [GPU])  # another size
    assert key != shape_key("ana", "research", "bert-ft-1", 4, [CPU])  # other pods
    assert key != shape_key("ana", "research", "bert-ft-1", 4, [GPU, CPU])


def test_learned_runtime_is_the_mean_of_the_last_two():
    assert learned_runtime([]) is None
    assert learned_runtime([100.0]) == 100.0
    assert learned_runtime([100.0, 300.0]) == 200.0
    assert learned_runtime([5000.0, 100.0, 300.0]) == 200.0  # the oldest no longer counts


def test_history_learns_per_key():
    history = RuntimeHistory()
    assert history.learned("a") is None
    history.record("a", 60)
    assert history.learned("a") == 60
    for seconds in (600, 100, 300):
        history.record("a", seconds)
    history.record("b", 10)
    assert history.learned("a") == 200
    assert history.learned("b") == 10
    with pytest.raises(ValueError):
        history.record("a", -1)
    with pytest.raises(ValueError):
        history.record("a", math.nan)


def test_precedence_declared_learned_limit_default():
    assert estimate() is None
    assert estimate(default=600) == Estimate(600, DEFAULT)
    assert estimate(limit=7200, default=600) == Estimate(7200, LIMIT)
    assert estimate(learned=900, limit=7200, default=600) == Estimate(900, LEARNED)
    assert estimate(declared=300, learned=900, limit=7200, default=600) == Estimate(300, DECLARED)
    # The submitter's statement is kept as it is, even above the limit.
    assert estimate(declared=9000, limit=7200) == Estimate(9000, DECLARED)
    assert estimate(declared=0) == Estimate(0, DECLARED)


def test_learned_is_capped_at_the_limit():
    assert estimate(learned=9000, limit=7200) == Estimate(7200, LIMIT)
    assert estimate(learned=7200, limit=7200) == Estimate(7200, LEARNED)


def test_estimate_refuses_nonsense():
    with pytest.raises(ValueError):
        Estimate(-1, LIMIT)
    with pytest.raises(ValueError):
        Estimate(10, "guess")


def test_overrun_leaves_an_estimate_not_passed_yet():
    before = Estimate(600, LEARNED)
    assert overrun(before, 0) is before
    assert overrun(before, 600) is before  # ends now: not outlived yet


def test_overrun_doubles_until_past_the_elapsed_time():
    learned = Estimate(600, LEARNED)
    assert overrun(learned, 601) == Estimate(1200, OVERRUN)
    assert overrun(learned, 1199) == Estimate(1200, OVERRUN)  # a step that stays put
    assert overrun(learned, 1200) == Estimate(2400, OVERRUN)
    assert overrun(learned, 5000) == Estimate(9600, OVERRUN)
    assert overrun(Estimate(0, DECLARED), 3) == Estimate(4, OVERRUN)


def test_overrun_stops_at_a_limit_still_ahead():
    learned = Estimate(600, LEARNED)
    assert overrun(learned, 700, limit=1000) == Estimate(1000, LIMIT)
    assert overrun(learned, 700, limit=3600) == Estimate(1200, OVERRUN)  # doubling is below it
    # Past the limit (the cluster has not stopped it yet): doubling alone.
    assert overrun(learned, 1100, limit=1000) == Estimate(1200, OVERRUN)


@given(
    seconds=st.floats(0, 1e7),
    elapsed=st.floats(0, 1e8),
    limit=st.none() | st.floats(0, 1e8),
)
def test_overrun_is_always_past_the_elapsed_time_and_never_smaller(seconds, elapsed, limit):
    before = Estimate(seconds, LEARNED)
    after = overrun(before, elapsed, limit)
    assert after.seconds >= before.seconds
    assert after.seconds >= elapsed
    if elapsed > before.seconds:
        assert after.seconds > elapsed
        if limit is not None and limit > elapsed:
            assert after.seconds <= limit

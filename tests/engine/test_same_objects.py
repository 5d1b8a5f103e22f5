"""``LastIds`` finds where each object was in the last sequence, and ``Moves.carried`` copies
the rows of what stayed, in runs of slices or by index arrays (``same_objects.py``).

Random successions of sequences drop, append, insert and swap objects; every match must be the
one a dictionary by identity gives, and every carried array the one an index copy gives, whether
the kept positions are copied run by run or (past ``MAX_RUNS``) all at once.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler_core.engine.same_objects import LastIds, Moves

STEPS = st.lists(
    st.tuples(st.sampled_from(["drop", "append", "insert", "swap", "clear"]), st.integers(0, 60)),
    max_size=10,
)


def _ids(objects: list) -> np.ndarray:
    return np.fromiter(map(id, objects), np.int64, len(objects))


def _changed(objects: list, kind: str, at: int) -> list:
    objects = list(objects)
    if kind == "drop" and objects:
        del objects[at % len(objects)]
    elif kind == "append":
        objects.extend(object() for _ in range(at % 5 + 1))
    elif kind == "insert":
        objects.insert(at % (len(objects) + 1), object())
    elif kind == "swap" and len(objects) > 1:
        i, j = at % len(objects), (at * 7 + 1) % len(objects)
        objects[i], objects[j] = objects[j], objects[i]
    elif kind == "clear":
        objects = [object() for _ in range(at % 4)]
    return objects


@pytest.mark.parametrize("by_index", [False, True])
@settings(max_examples=150, deadline=None)
@given(size=st.integers(0, 40), steps=STEPS)
def test_matches_and_copies_are_those_an_index_by_identity_gives(by_index, size, steps) -> None:
    objects = [object() for _ in range(size)]
    last_ids = LastIds(_ids(objects))
    rows = np.arange(len(objects) * 2, dtype=np.int64).reshape(-1, 2)
    flags = np.arange(len(objects)) % 3 == 0
    for kind, at in steps:
        new = _changed(objects, kind, at)
        old = last_ids.match(_ids(new))
        where = {id(obj): i for i, obj in enumerate(objects)}
        assert old.tolist() == [where.get(id(obj), -1) for obj in new]
        moves = Moves(old)
        if by_index:
            moves.runs = None  # what more than MAX_RUNS runs would do
        expected_rows = np.full((len(new), 2), -1, np.int64)
        expected_rows[moves.kept] = rows[old[moves.kept]]
        carried = moves.carried(rows, len(new), -1)
        assert carried.dtype == rows.dtype and carried.tolist() == expected_rows.tolist()
        expected_flags = np.zeros(len(new), bool)
        expected_flags[moves.kept] = flags[old[moves.kept]]
        assert moves.carried(flags, len(new), False).tolist() == expected_flags.tolist()
        assert sorted(moves.kept.tolist() + moves.fresh.tolist()) == list(range(len(new)))
        # The next step starts from this one, its fresh rows numbered anew.
        rows = carried
        rows[moves.fresh] = np.arange(len(moves.fresh) * 2).reshape(-1, 2) + 1000 * (at + 1)
        flags = moves.carried(flags, len(new), True)
        objects, last_ids = new, LastIds(_ids(new))


def test_objects_that_kept_their_neighbours_are_copied_as_few_slices() -> None:
    """A sequence with one object gone from the middle and two appended: two runs, not one
    copy per object."""
    objects = [object() for _ in range(1000)]
    new = objects[:400] + objects[401:] + [object(), object()]
    moves = Moves(LastIds(_ids(objects)).match(_ids(new)))
    assert moves.runs == [(0, 0, 400), (400, 401, 599)]
    assert moves.fresh.tolist() == [999, 1000]

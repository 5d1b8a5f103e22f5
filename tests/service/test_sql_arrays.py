"""Long lists packed into one string and split by PostgreSQL (``scheduler_core/db/arrays.py``)."""

import pytest
from django.db import connection

from scheduler_core.db.arrays import UNPACK, packed, packed_lists


@pytest.mark.django_db
@pytest.mark.parametrize("values", [[], [1], list(range(10_000))])
def test_ids_come_back_as_they_went(values):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {UNPACK}::bigint[]", [packed(values)])
        assert cursor.fetchone()[0] == values


@pytest.mark.django_db
def test_names_come_back_as_they_went():
    names = ["n0", "gpu-a.rack-1", "team/train-0", "x,y", "quote'd"]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {UNPACK}", [packed(names)])
        assert cursor.fetchone()[0] == names


@pytest.mark.parametrize("values", [["a\x1fb"], ["a", ""], [""]])
def test_a_value_that_would_split_wrongly_is_refused(values):
    with pytest.raises(ValueError):
        packed(values)


@pytest.mark.django_db
def test_lists_of_lists_come_back_as_they_went():
    lists = [[1, 2, 3], [4], [5, 6]]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT string_to_array(v, chr(30))::bigint[] FROM unnest({UNPACK}) WITH ORDINALITY AS t(v, n)"
            " ORDER BY n",
            [packed_lists(lists)],
        )
        assert [row[0] for row in cursor.fetchall()] == lists


@pytest.mark.parametrize("lists", [[[]], [["a\x1eb"]], [["a", ""]], [["a\x1fb"]]])
def test_an_inner_list_that_would_split_wrongly_is_refused(lists):
    with pytest.raises(ValueError):
        packed_lists(lists)

"""Long lists sent to PostgreSQL as one string and split there, instead of as array parameters.

Django's psycopg backend binds parameters on the client: an array parameter of 10,000 ids or
pod names is turned into SQL text element by element in Python (psycopg's list dumper), which
cost a bind cycle about a quarter of its Python time. ``packed`` joins the values with a
character no Kubernetes name, node name or number contains (the unit separator, chr(31)), one C
call, and the query splits it with ``UNPACK``: ``string_to_array(%s, chr(31))::bigint[]``.

Only for non-empty values that cannot contain the separator (ids, states, Kubernetes names, node
names); ``packed`` refuses, rather than mis-splits, a list where one does not fit.
"""

from __future__ import annotations

from collections.abc import Iterable

SEPARATOR = "\x1f"
#: Between the elements of an inner list of ``packed_lists`` (the record separator, chr(30)).
INNER = "\x1e"

#: The SQL that turns a ``packed`` parameter back into a text[] (cast it as needed).
UNPACK = "string_to_array(%s, chr(31))"


def packed(values: Iterable[object]) -> str:
    """``values`` as one string for ``UNPACK``; '' (an empty array) for none."""
    texts = [str(value) for value in values]
    text = SEPARATOR.join(texts)
    if text.count(SEPARATOR) != max(len(texts) - 1, 0):
        raise ValueError("a value holds the array separator (chr(31)); pass it as an array parameter")
    if "" in texts:  # string_to_array('') is an empty array: [""] would come back as []
        raise ValueError("an empty value cannot be packed; pass it as an array parameter")
    return text


def packed_lists(lists: Iterable[Iterable[object]]) -> str:
    """Non-empty lists as one string: each joined with chr(30), then ``packed``; split each one
    in SQL with ``string_to_array(element, chr(30))``."""
    inner = []
    for values in lists:
        texts = [str(value) for value in values]
        text = INNER.join(texts)
        if not texts or "" in texts or text.count(INNER) != len(texts) - 1:
            raise ValueError("an inner list is empty, holds an empty value or the separator chr(30)")
        inner.append(text)
    return packed(inner)

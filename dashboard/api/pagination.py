"""The API's pagination: keyset (cursor) pages, newest first.

``?pageSize=100`` (50 by default, at most 500) and the opaque ``cursor`` of the ``next`` or
``previous`` link. A page is one indexed range scan from where the last one ended (``created``,
then ``id``), whatever the page's depth, and nothing counts the whole table: the exact ``count``
of page-number pagination was most of a list's cost under load. Answers are
``{"next", "previous", "results"}``; a cursor that does not decode is a 404, as a page past the
last was.
"""

from rest_framework.pagination import CursorPagination, PageNumberPagination


class ApiPagination(CursorPagination):
    page_size = 50
    page_size_query_param = "pageSize"
    max_page_size = 500
    ordering = ("-created", "-id")


class NumberedPagination(PageNumberPagination):
    """``?page=2&pageSize=100``: lists that are short and not polled (simulation runs)."""

    page_size = 50
    page_size_query_param = "pageSize"
    max_page_size = 500

from rest_framework.pagination import PageNumberPagination


class ApiPagination(PageNumberPagination):
    """``?page=2&pageSize=100``: 50 a page by default, at most 500."""

    page_size = 50
    page_size_query_param = "pageSize"
    max_page_size = 500

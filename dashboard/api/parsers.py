"""The API's JSON parser: DRF's, plus the limits of manifests (``MAX_DEPTH`` levels,
``MAX_VALUES`` values, no NUL characters), so hostile JSON is a 400 and never a 500.

Python's decoder raises RecursionError (not a ValueError, which DRF turns into a 400) on a
body nested about a thousand levels deep, and PostgreSQL refuses a NUL character in text and
in jsonb, which every gang's stored declaration is.
"""

from __future__ import annotations

from rest_framework import parsers
from rest_framework.exceptions import ParseError

from scheduler_core.declarations import DeclarationError
from scheduler_core.declarations.documents import MAX_DEPTH, values_check


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"JSON parse error - nested more than {MAX_DEPTH} levels deep") from None
        try:
            values_check([data])
        except DeclarationError as error:
            raise ParseError(f"JSON parse error - {error.reason}") from None
        return data

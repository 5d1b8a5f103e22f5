"""The API's JSON parser (``DEFAULT_PARSER_CLASSES``): DRF's, plus the rules of manifests, so
hostile or ambiguous JSON is a 400 and never a 500 nor a guess:

- a key given twice in one object, at any depth, is refused naming its path (``name``,
  ``pods[0].requests.cpu``), as manifests and the apiserver's strict field validation refuse
  it; Python's decoder would silently keep the last value;
- ``MAX_DEPTH`` levels and ``MAX_VALUES`` values at most, and no NUL character: Python's decoder
  raises RecursionError (not a ValueError, which DRF turns into a 400) on a body nested about a
  thousand levels deep, and PostgreSQL refuses a NUL character in text and in jsonb, which
  every gang's stored declaration is.
"""

from __future__ import annotations

import codecs

from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.utils import json

from scheduler_core.declarations import DeclarationError
from scheduler_core.declarations.documents import (
    MAX_DEPTH,
    repeated_keys_hook,
    repeated_keys_refuse,
    values_check,
)


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        encoding = parsers.get_encoding(parser_context or {})
        repeated: list = []
        try:
            data = json.load(
                codecs.getreader(encoding)(stream),
                parse_constant=json.strict_constant if self.strict else None,
                object_pairs_hook=repeated_keys_hook(repeated),
            )
        except RecursionError:
            raise ParseError(f"JSON parse error - nested more than {MAX_DEPTH} levels deep") from None
        except ValueError as error:
            raise ParseError(f"JSON parse error - {error}") from None
        try:
            repeated_keys_refuse(repeated, [data])
        except DeclarationError as error:
            refusal = ParseError(error.reason)
            refusal.field = error.field
            raise refusal from None
        try:
            values_check([data])
        except DeclarationError as error:
            raise ParseError(f"JSON parse error - {error.reason}") from None
        return data

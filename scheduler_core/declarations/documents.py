"""Manifest text -> documents -> the objects to load, as ``kubectl apply -f`` reads them.

- ``documents_parse(text)``: a multi-document YAML stream (``yaml_stream.py``: size limits,
  repeated keys), or JSON (one object or a stream of objects), refused over
  ``GANGSCHED_MAX_MANIFEST_BYTES``. Text that holds no object (empty, only comments or ``---``)
  is refused, as kubectl refuses it ("no objects passed to apply"): the CLI and the API say the
  same words. JSON's ``NaN``/``Infinity`` extensions and a key given twice in one object are
  refused; JSON gets the limits of depth and size after decoding (its decoder builds no shared
  values).
- ``documents_expand(documents)``: every document must be a mapping with apiVersion and kind;
  ``kind: List`` is replaced by its items. Each object keeps its path (``items[2]``, or
  ``documents[1].items[2]`` when there are several documents) for error messages.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from .validate import INT64_MAX, INT64_MIN, MAX_MANIFEST_BYTES, DeclarationError, join, kind_of, limit, shown
from .yaml_stream import MAX_DEPTH, MAX_VALUES, too_deep, too_many_values, yaml_load

__all__ = [
    "MAX_DEPTH",
    "MAX_VALUES",
    "Manifest",
    "documents_expand",
    "documents_parse",
    "repeated_keys_hook",
    "repeated_keys_refuse",
    "values_check",
]


@dataclass(frozen=True)
class Manifest:
    path: str  # "" for a lone document, else "documents[1]", "items[2]"...
    obj: dict[str, Any]

    @property
    def api_version(self) -> str:
        return self.obj["apiVersion"]

    @property
    def kind(self) -> str:
        return self.obj["kind"]

    @property
    def group(self) -> str:
        return group_of(self.api_version)

    @property
    def name_field(self) -> str:
        """Where the object as a whole is named in errors (``metadata.name``, never empty, so a
        conflict about a lone document still names a field)."""
        return join(self.path, "metadata", "name")


def group_of(api_version: str) -> str:
    """``scheduling.x-k8s.io`` of ``scheduling.x-k8s.io/v1alpha1``; ``""`` for the core group."""
    return api_version.rpartition("/")[0]


def size_check(size: int) -> None:
    maximum = limit("GANGSCHED_MAX_MANIFEST_BYTES", MAX_MANIFEST_BYTES)
    if size > maximum:
        raise DeclarationError("", f"the manifest is {size} bytes, over the limit of {maximum} bytes")


def documents_parse(text: str | bytes) -> list[Any]:
    """The documents of a YAML or JSON manifest (at least one); empty YAML documents (``---``
    alone) are skipped."""
    size_check(len(text) if isinstance(text, bytes) else len(text.encode("utf-8", "surrogatepass")))
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            byte, offset = error.object[error.start], error.start
            reason = f"byte 0x{byte:02x} at offset {offset} cannot start a character"
            raise DeclarationError("", f"the manifest is not UTF-8 text: {reason}") from None
    try:
        documents = _json_stream(text) if text.lstrip().startswith("{") else yaml_load(text)
    except DeclarationError:
        raise  # the YAML limits, a repeated key
    except yaml.YAMLError as error:  # PyYAML calls the text "<unicode string>"
        raise DeclarationError(
            "", f"not valid YAML: {error}".replace('in "<unicode string>", ', "at ")
        ) from None
    except RecursionError:  # JSON nested deeper than Python recurses
        raise too_deep() from None
    except ValueError as error:  # JSON syntax, NaN, integers of more than 4300 digits
        raise DeclarationError("", f"not valid JSON: {error}") from None
    if not documents:
        raise DeclarationError(
            "", "the manifest holds no objects" if text.strip() else "the manifest is empty"
        )
    values_check(documents, json_only=True)
    return documents


_JSON_TYPES = (dict, list, str, int, float, type(None))


def _number_shown(value: int | str) -> str:
    """An integer for a message; Python converts no more than 4,300 digits to text."""
    text = value if isinstance(value, str) else str(value) if value.bit_length() <= 256 else ""
    if not text:
        return f"an integer of {value.bit_length()} bits"
    return text if len(text) <= 24 else f"{text[:24]}... ({len(text)} digits)"


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _json_stream(text: str) -> list[Any]:
    repeated: list[_RepeatedKeys] = []
    decoder = json.JSONDecoder(
        parse_constant=_refuse_constant,
        parse_int=_json_int,
        object_pairs_hook=repeated_keys_hook(repeated),
    )
    documents, position = [], 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            break
        document, position = decoder.raw_decode(text, position)
        documents.append(document)
    repeated_keys_refuse(repeated, documents)
    return documents


def repeated_keys_hook(repeated: list) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    """An ``object_pairs_hook`` for any JSON decoder (the API's parser uses it too): it notes in
    ``repeated`` every object whose text gave a key twice, which json would silently keep the
    last of; ``repeated_keys_refuse`` then refuses the first."""
    return lambda pairs: _json_object(pairs, repeated)


def repeated_keys_refuse(repeated: list, documents: list[Any]) -> None:
    """Refuse the first object ``repeated_keys_hook`` noted, naming the repeated key's path."""
    if repeated:
        key = repeated[0].repeated
        raise DeclarationError(
            join(_path_of(repeated[0], documents), key),
            f"the key {key!r} appears twice in one object: remove one",
        )


class _TooLong(str):
    """A JSON integer of more digits than any int64 has, kept as its text for the error
    (``int()`` of more than 4,300 digits would fail inside the decoder, in Python's words)."""


def _json_int(text: str) -> int | _TooLong:
    return int(text) if len(text) <= 20 else _TooLong(text)


class _RepeatedKeys(dict):
    """A JSON object whose text gave a key twice (``repeated``, the first such key)."""

    repeated = ""


def _json_object(pairs: list[tuple[str, Any]], repeated: list[_RepeatedKeys]) -> dict[str, Any]:
    """json's ``object_pairs_hook``: the object, marked when a key repeats (json keeps the last)."""
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    marked = _RepeatedKeys(obj)
    marked.repeated = next(key for key, _ in pairs if key in seen or seen.add(key))
    repeated.append(marked)
    return marked


def _path_of(target: Any, documents: list[Any]) -> str:
    """The path of ``target`` among the documents, named as ``documents_expand`` names them."""
    prefix = ["" if len(documents) == 1 else f"documents[{index}]" for index in range(len(documents))]
    stack = list(zip(reversed(documents), reversed(prefix), strict=True))
    while stack:
        value, path = stack.pop()
        if value is target or (isinstance(value, dict) and any(key is target for key in value)):
            return path  # a mapping's key: the mapping
        if isinstance(value, dict):
            stack.extend(reversed([(child, join(path, str(key))) for key, child in value.items()]))
        elif isinstance(value, list):
            stack.extend(reversed([(child, join(path, index)) for index, child in enumerate(value)]))
    return ""


def values_check(documents: list[Any], *, json_only: bool = False) -> None:
    """Refuse documents nested deeper than MAX_DEPTH, holding more than MAX_VALUES values or a
    NUL character in a string; with ``json_only``, also what JSON (and PostgreSQL's jsonb, where
    every declaration is kept) cannot hold or Kubernetes cannot read: a NaN or infinite number
    (YAML's ``.nan``, JSON's ``1e999``), an integer outside int64, YAML's binary data, sets and
    dates. Each names its path. Iterative, so a deep document cannot exhaust the stack. The
    API's JSON parser applies it too, without ``json_only`` (its serializers name such fields)."""
    budget, stack = MAX_VALUES, [(document, 1) for document in documents]
    while stack:
        value, depth = stack.pop()
        budget -= 1
        if budget < 0:
            raise too_many_values()
        if depth > MAX_DEPTH:
            raise too_deep()
        if isinstance(value, _TooLong) or (
            json_only and isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX
        ):
            raise DeclarationError(
                _path_of(value, documents),
                f"{_number_shown(value)} is out of range: a number here is a 64-bit integer at most",
            )
        if json_only and not isinstance(value, _JSON_TYPES):  # YAML's !!binary, !!set, !!timestamp
            raise DeclarationError(
                _path_of(value, documents),
                f"is {kind_of(value)}: a manifest holds strings, numbers, booleans, null, lists and objects",
            )
        if isinstance(value, str) and "\x00" in value:
            raise DeclarationError(_path_of(value, documents), "a string holds a NUL (\\u0000) character")
        if json_only and isinstance(value, float) and not math.isfinite(value):  # .nan, .inf, 1e999
            raise DeclarationError(
                _path_of(value, documents),
                f"{shown(value)} is not a number (JSON and the database hold none)",
            )
        if isinstance(value, dict):
            stack.extend((child, depth + 1) for child in value.values())
            stack.extend((key, depth + 1) for key in value)
        elif isinstance(value, list):
            stack.extend((child, depth + 1) for child in value)


def documents_expand(documents: list[Any]) -> list[Manifest]:
    """The objects to load, in order, with ``List`` documents replaced by their items."""
    manifests = []
    for index, document in enumerate(documents):
        path = "" if len(documents) == 1 else f"documents[{index}]"
        _object_check(document, path, index)
        if document["kind"] == "List":
            items = document.get("items")
            if not isinstance(items, list):
                raise DeclarationError(join(path, "items"), "a List needs an items list")
            for position, item in enumerate(items):
                item_path = join(path, "items", position)
                _object_check(item, item_path, index)
                if item["kind"] == "List":
                    raise DeclarationError(join(item_path, "kind"), "a List inside a List is not supported")
                manifests.append(Manifest(item_path, item))
        else:
            manifests.append(Manifest(path, document))
    return manifests


def _object_check(document: Any, path: str, index: int) -> None:
    where = path or f"documents[{index}]"
    if not isinstance(document, dict):
        raise DeclarationError(where, f"must be a mapping (an object), not {kind_of(document)}")
    for key in ("apiVersion", "kind"):
        if not isinstance(document.get(key), str) or not document[key]:
            raise DeclarationError(join(where, key), "is required (a non-empty string)")

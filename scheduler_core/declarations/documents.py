"""Manifest text -> documents -> the objects to load, as ``kubectl apply -f`` reads them.

- ``documents_parse(text)``: a multi-document YAML stream, or JSON (one object or a stream of
  objects), refused over ``GANGSCHED_MAX_MANIFEST_BYTES``. YAML timestamps stay strings (they
  are labels and annotations, not dates), JSON's ``NaN``/``Infinity`` extensions are refused,
  and an alias bomb or a self-referencing alias is refused by counting the values it expands to.
- ``documents_expand(documents)``: every document must be a mapping with apiVersion and kind;
  ``kind: List`` is replaced by its items. Each object keeps its path (``items[2]``, or
  ``documents[1].items[2]`` when there are several documents) for error messages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import yaml

from .validate import MAX_MANIFEST_BYTES, DeclarationError, join, limit

#: Values (mappings, lists, scalars) one apply may expand to: far above what 1 MiB of honest
#: YAML holds, far below what a YAML alias bomb expands to.
MAX_VALUES = 1_000_000


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
        """``scheduling.x-k8s.io`` of ``scheduling.x-k8s.io/v1alpha1``; ``""`` for the core group."""
        return self.api_version.rpartition("/")[0]


class _Loader(yaml.SafeLoader):
    """SafeLoader without the YAML 1.1 timestamp type: ``2026-01-02`` stays a string."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def size_check(size: int) -> None:
    maximum = limit("GANGSCHED_MAX_MANIFEST_BYTES", MAX_MANIFEST_BYTES)
    if size > maximum:
        raise DeclarationError("", f"the manifest is {size} bytes, over the limit of {maximum} bytes")


def documents_parse(text: str | bytes) -> list[Any]:
    """The documents of a YAML or JSON manifest; empty documents (``---`` alone) are skipped."""
    size_check(len(text) if isinstance(text, bytes) else len(text.encode("utf-8", "surrogatepass")))
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise DeclarationError("", f"the manifest is not UTF-8 text: {error}") from None
    try:
        if text.lstrip().startswith("{"):
            documents = _json_stream(text)
        else:
            documents = [doc for doc in yaml.load_all(text, Loader=_Loader) if doc is not None]
    except yaml.YAMLError as error:
        raise DeclarationError("", f"not valid YAML: {error}") from None
    except RecursionError:
        raise DeclarationError("", "the manifest is nested too deeply") from None
    except ValueError as error:  # JSON syntax, NaN, integers of more than 4300 digits
        raise DeclarationError("", f"not valid JSON: {error}") from None
    _count_values(documents)
    return documents


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _json_stream(text: str) -> list[Any]:
    decoder = json.JSONDecoder(parse_constant=_refuse_constant)
    documents, position = [], 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            return documents
        document, position = decoder.raw_decode(text, position)
        documents.append(document)


def _count_values(documents: list[Any]) -> None:
    """Refuse documents that expand to more than MAX_VALUES values (aliases are shared, not
    copied, by the YAML loader: a few lines can stand for billions of values, or a cycle)."""
    budget, stack = MAX_VALUES, list(documents)
    while stack:
        value = stack.pop()
        budget -= 1
        if budget < 0:
            raise DeclarationError(
                "", f"the manifest expands to more than {MAX_VALUES} values (YAML aliases?)"
            )
        if isinstance(value, dict):
            stack.extend(value.values())
            stack.extend(value.keys())
        elif isinstance(value, list):
            stack.extend(value)


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
        raise DeclarationError(where, f"must be a mapping (an object), not {type(document).__name__}")
    for key in ("apiVersion", "kind"):
        if not isinstance(document.get(key), str) or not document[key]:
            raise DeclarationError(join(where, key), "is required (a non-empty string)")

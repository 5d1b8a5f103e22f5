"""Manifest text -> documents -> the objects to load, as ``kubectl apply -f`` reads them.

- ``documents_parse(text)``: a multi-document YAML stream, or JSON (one object or a stream of
  objects), refused over ``GANGSCHED_MAX_MANIFEST_BYTES``. YAML timestamps stay strings (they
  are labels and annotations, not dates), JSON's ``NaN``/``Infinity`` extensions are refused.
  Anything nested deeper than MAX_DEPTH or expanding to more than MAX_VALUES values is refused
  from the YAML's parse events, before any Python object is built: an alias counts as the size
  of what it names (a "billion laughs" bomb stops at its first few lines), an alias inside its
  own anchor is a cycle, and depth never reaches a recursion limit. JSON gets the same two
  limits after decoding (its decoder builds no shared values).
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
#: Nesting of mappings and lists: a Deployment's deepest field (a node affinity's values, inside
#: a List) is about 15 levels.
MAX_DEPTH = 64


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


def group_of(api_version: str) -> str:
    """``scheduling.x-k8s.io`` of ``scheduling.x-k8s.io/v1alpha1``; ``""`` for the core group."""
    return api_version.rpartition("/")[0]


def _too_many_values() -> DeclarationError:
    return DeclarationError("", f"expands to more than {MAX_VALUES} values (YAML aliases?)")


def _too_deep() -> DeclarationError:
    return DeclarationError("", f"nested more than {MAX_DEPTH} levels deep")


#: libyaml's parser and composer (six times faster than PyYAML's pure-Python ones on a 1 MiB
#: manifest); the pure-Python classes where PyYAML was built without libyaml.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeLoader):
    """SafeLoader without the YAML 1.1 timestamp type: ``2026-01-02`` stays a string."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _yaml_limits_check(text: str) -> None:
    """Walk the YAML's events (no objects are built) and refuse it past MAX_DEPTH or MAX_VALUES.

    An alias counts as the size of the value its anchor names, so a "billion laughs" bomb is
    refused after its first few lines instead of after it has been expanded; an alias inside
    its own anchor is a cycle. Structural errors are left to the loader, which reports them.
    """
    values, sizes = 0, {}  # sizes: anchors of this document whose value is complete
    open_values: list[tuple[str | None, int]] = []  # (anchor, values before it) per open collection
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.DocumentStartEvent):
            sizes = {}
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor not in sizes:
                if any(anchor == event.anchor for anchor, _ in open_values):
                    raise DeclarationError(
                        "", f"the alias *{event.anchor} is inside its own anchor (a cycle)"
                    )
                continue  # undefined: the loader says so
            values += sizes[event.anchor]
        elif isinstance(event, yaml.NodeEvent):  # a scalar, or the start of a mapping or list
            values += 1
            if isinstance(event, yaml.CollectionStartEvent):
                open_values.append((event.anchor, values - 1))
                if len(open_values) > MAX_DEPTH:
                    raise _too_deep()
            elif event.anchor is not None:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, before = open_values.pop()
            if anchor is not None:
                sizes[anchor] = values - before
        if values > MAX_VALUES:
            raise _too_many_values()


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
            _yaml_limits_check(text)
            documents = [doc for doc in yaml.load_all(text, Loader=_Loader) if doc is not None]
    except DeclarationError:
        raise  # the YAML limits
    except yaml.YAMLError as error:
        raise DeclarationError("", f"not valid YAML: {error}") from None
    except RecursionError:  # JSON nested deeper than Python recurses
        raise _too_deep() from None
    except ValueError as error:  # JSON syntax, NaN, integers of more than 4300 digits
        raise DeclarationError("", f"not valid JSON: {error}") from None
    values_check(documents)
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


def values_check(documents: list[Any]) -> None:
    """Refuse documents nested deeper than MAX_DEPTH, holding more than MAX_VALUES values, or
    with a NUL character in a string (PostgreSQL stores none, in text or in jsonb). Iterative,
    so a deep document cannot exhaust the stack here. The API's JSON parser applies it too."""
    budget, stack = MAX_VALUES, [(document, 1) for document in documents]
    while stack:
        value, depth = stack.pop()
        budget -= 1
        if budget < 0:
            raise _too_many_values()
        if depth > MAX_DEPTH:
            raise _too_deep()
        if isinstance(value, str) and "\x00" in value:
            raise DeclarationError("", "a string holds a NUL (\\u0000) character")
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
        raise DeclarationError(where, f"must be a mapping (an object), not {type(document).__name__}")
    for key in ("apiVersion", "kind"):
        if not isinstance(document.get(key), str) or not document[key]:
            raise DeclarationError(join(where, key), "is required (a non-empty string)")

"""YAML text -> documents, refusing what PyYAML would silently accept or choke on.

One walk over the parse events (no Python object is built yet) checks the whole stream:

- size: anything nested deeper than MAX_DEPTH or expanding to more than MAX_VALUES values. An
  alias counts as the size of the value its anchor names, so a "billion laughs" bomb is refused
  after its first few lines instead of after it has been expanded; an alias inside its own
  anchor is a cycle; depth never reaches a recursion limit;
- repeated keys: ``minMember`` twice in one mapping is an error naming the key's path and both
  lines. PyYAML keeps the last value without a word, and so would we; Kubernetes' own decoder
  refuses such a manifest for the same reason (a silently lost value). Keys are compared as the
  loader would build them (``1`` and ``"1"`` differ; ``true`` and ``yes`` do not); a merge key's
  (``<<``) values may be overridden, as YAML means.

Syntax errors are left to the loader, which reports them with their line. Timestamps stay
strings (they are labels and annotations, not dates).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from .validate import DeclarationError, join

#: Values (mappings, lists, scalars) one apply may expand to: far above what 1 MiB of honest
#: YAML holds, far below what a YAML alias bomb expands to.
MAX_VALUES = 1_000_000
#: Nesting of mappings and lists: a Deployment's deepest field (a node affinity's values, inside
#: a List) is about 15 levels.
MAX_DEPTH = 64

_STR, _NULL, _MERGE = "tag:yaml.org,2002:str", "tag:yaml.org,2002:null", "tag:yaml.org,2002:merge"
_UNKNOWN = object()  # a key whose value the walk cannot tell (a constructor refused it)

#: libyaml's parser and composer (six times faster than PyYAML's pure-Python ones on a 1 MiB
#: manifest); the pure-Python classes where PyYAML was built without libyaml.
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Loader(_SafeLoader):
    """SafeLoader without the YAML 1.1 timestamp type: ``2026-01-02`` stays a string; a value
    its tag cannot read (``!!int x``, an integer of 5,000 digits) is a YAML error with its line,
    not Python's words (``invalid literal for int() with base 10``)."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, OverflowError):
            kind = (
                "!!" + node.tag.rpartition(":")[2] if node.tag.startswith("tag:yaml.org,2002:") else node.tag
            )
            shown = node.value if isinstance(node.value, str) else kind
            shown = shown if len(shown) <= 40 else f"{shown[:40]}... ({len(shown)} characters)"
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read {shown!r} as {kind}", node.start_mark
            ) from None


Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def too_many_values() -> DeclarationError:
    return DeclarationError("", f"expands to more than {MAX_VALUES} values (YAML aliases?)")


def too_deep() -> DeclarationError:
    return DeclarationError("", f"nested more than {MAX_DEPTH} levels deep")


def yaml_load(text: str) -> list[Any]:
    """The documents of a YAML stream, empty ones (``---`` alone, ``null``) left out."""
    _stream_check(text)
    return [document for document in yaml.load_all(text, Loader=Loader) if document is not None]


@dataclass
class _Collection:
    """An open mapping or list while walking the events."""

    path: str
    anchor: str | None
    values_before: int
    is_mapping: bool
    keys: dict[Any, tuple[str, int]] = field(default_factory=dict)  # key -> (its text, line)
    key: Any = None  # the key whose value comes next; None while a key is expected
    expecting_key: bool = True
    index: int = 0  # the next item's index (lists)

    def child_path(self) -> str:
        if not self.is_mapping:
            return join(self.path, self.index)
        return self.path if self.expecting_key else join(self.path, str(self.key))

    def child_done(self, key: Any = None) -> None:
        if not self.is_mapping:
            self.index += 1
        elif self.expecting_key:
            self.key, self.expecting_key = key, False
        else:
            self.expecting_key = True


@dataclass
class _Repeated:
    document: int  # among all documents of the stream, empty ones included
    path: str
    key: str
    line: int
    first: str  # the key's text where it first appears (``true`` for a later ``yes``)
    first_line: int


class _Walk:
    """The state of one walk over a stream's events (see the module's docstring)."""

    def __init__(self, loader: Loader) -> None:
        self.loader = loader
        self.values = 0
        self.sizes: dict[str, int] = {}  # anchors of this document whose value is complete
        self.open: list[_Collection] = []
        self.document = -1
        self.empty_documents: set[int] = set()
        self.repeated: _Repeated | None = None

    def event(self, event: yaml.Event) -> None:
        if isinstance(event, yaml.DocumentStartEvent):
            self.document += 1
            self.sizes = {}
        elif isinstance(event, yaml.AliasEvent):
            self._alias(event)
        elif isinstance(event, yaml.ScalarEvent):
            self._count(1)
            if event.anchor is not None:
                self.sizes[event.anchor] = 1
            self._scalar(event)
        elif isinstance(event, yaml.CollectionStartEvent):
            self._count(1)
            parent = self.open[-1] if self.open else None
            path = parent.child_path() if parent else ""
            is_mapping = isinstance(event, yaml.MappingStartEvent)
            self.open.append(_Collection(path, event.anchor, self.values - 1, is_mapping))
            if len(self.open) > MAX_DEPTH:
                raise too_deep()
        elif isinstance(event, yaml.CollectionEndEvent):
            closed = self.open.pop()
            if closed.anchor is not None:
                self.sizes[closed.anchor] = self.values - closed.values_before
            if self.open:
                self.open[-1].child_done()

    def _count(self, values: int) -> None:
        self.values += values
        if self.values > MAX_VALUES:
            raise too_many_values()

    def _alias(self, event: yaml.AliasEvent) -> None:
        if event.anchor in self.sizes:
            self._count(self.sizes[event.anchor])
        elif any(collection.anchor == event.anchor for collection in self.open):
            raise DeclarationError("", f"the alias *{event.anchor} is inside its own anchor (a cycle)")
        # else undefined: the loader says so
        if self.open:
            self.open[-1].child_done()

    def _scalar(self, event: yaml.ScalarEvent) -> None:
        tag = event.tag if event.tag not in (None, "!") else self._resolve(event)
        if not self.open:
            if tag == _NULL:
                self.empty_documents.add(self.document)
            return
        parent = self.open[-1]
        if not (parent.is_mapping and parent.expecting_key):
            parent.child_done()
            return
        key = self._key(tag, event.value)
        line = event.start_mark.line + 1
        if key is not _UNKNOWN and tag != _MERGE:
            if key not in parent.keys:
                parent.keys[key] = (event.value, line)
            elif self.repeated is None:
                first, first_line = parent.keys[key]
                path = join(parent.path, event.value)
                self.repeated = _Repeated(self.document, path, event.value, line, first, first_line)
        parent.child_done(event.value)

    def _resolve(self, event: yaml.ScalarEvent) -> str:
        return self.loader.resolve(yaml.ScalarNode, event.value, event.implicit)

    def _key(self, tag: str, value: str) -> Any:
        """The key as the loader builds it, so that keys a dict would merge (``true`` and
        ``yes``, ``null`` and ``~``) compare equal; _UNKNOWN where that cannot be told."""
        if tag == _STR:
            return value
        construct = self.loader.yaml_constructors.get(tag)
        try:
            key = construct(self.loader, yaml.ScalarNode(tag, value)) if construct else _UNKNOWN
            hash(key)
        except (yaml.YAMLError, ValueError, TypeError):
            return _UNKNOWN
        return key

    def repeated_error(self) -> DeclarationError | None:
        """The first repeated key, its path prefixed as ``documents_expand`` names documents."""
        if self.repeated is None:
            return None
        kept = [d for d in range(self.document + 1) if d not in self.empty_documents]
        prefix = "" if len(kept) == 1 else f"documents[{kept.index(self.repeated.document)}]"
        repeated = self.repeated
        lines = f"lines {repeated.first_line} and {repeated.line}"
        if repeated.line == repeated.first_line:
            lines = f"line {repeated.line}"
        same = "" if repeated.first == repeated.key else f"; {repeated.first!r} is the same key in YAML"
        return DeclarationError(
            join(prefix, repeated.path),
            f"the key {repeated.key!r} appears twice in one mapping ({lines}{same}): remove one",
        )


def _stream_check(text: str) -> None:
    loader = Loader(text)
    walk = _Walk(loader)
    try:
        while loader.check_event():
            walk.event(loader.get_event())
    finally:
        loader.dispose()
    error = walk.repeated_error()
    if error is not None:
        raise error

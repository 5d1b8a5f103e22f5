"""``metadata.generateName``: the name the API server makes for an object created without one.

``kubectl create`` sends such objects and the API server names each ``<generateName><5 random
characters>`` (apimachinery's ``names.SimpleNameGenerator``: the prefix cut to 58 characters, the
suffix from ``util/rand``'s alphabet, which has no vowels and no look-alike characters). ``apply``
cannot use it (applying again must find the same object), so only ``manage.py create`` names
objects this way; Kueue's samples (``kubectl create -f sample-job.yaml``) rely on it.
"""

from __future__ import annotations

import secrets
from typing import Any

from .validate import DeclarationError, join

ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
SUFFIX_LENGTH = 5
MAX_PREFIX = 63 - SUFFIX_LENGTH


def generated_name(prefix: str) -> str:
    return prefix[:MAX_PREFIX] + "".join(secrets.choice(ALPHABET) for _ in range(SUFFIX_LENGTH))


def names_generate(documents: list[Any]) -> list[Any]:
    """``documents`` (as ``documents_parse`` returns them) with every object that has a
    ``generateName`` and no ``name`` named, ``List`` items included. Anything malformed is left
    for the loaders to refuse, except a ``generateName`` that is not a string."""
    named = []
    for index, document in enumerate(documents):
        path = "" if len(documents) == 1 else f"documents[{index}]"
        items = (
            document.get("items") if isinstance(document, dict) and document.get("kind") == "List" else None
        )
        if isinstance(items, list):
            named.append(
                {**document, "items": [_named(item, join(path, "items", i)) for i, item in enumerate(items)]}
            )
        else:
            named.append(_named(document, path))
    return named


def _named(obj: Any, path: str) -> Any:
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
        return obj
    metadata = obj["metadata"]
    prefix = metadata.get("generateName")
    if prefix is None or metadata.get("name") is not None:
        return obj
    if not isinstance(prefix, str) or not prefix:
        raise DeclarationError(join(path, "metadata", "generateName"), "must be a non-empty string")
    return {**obj, "metadata": {**metadata, "name": generated_name(prefix)}}

"""The refusal of something declared, as every format and every write reports it: the path of
the offending value and the reason, so an error found while writing (a queue's parent missing, a
group naming a foreign gang) still names what the submitter wrote."""

from __future__ import annotations


class DeclarationError(ValueError):
    """A manifest gangsched refuses: ``field`` is the path of the offending value, ``reason`` why."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}" if field else reason)


def join(path: str, *keys: str | int) -> str:
    """``join("items[2]", "metadata", "name")`` -> ``items[2].metadata.name``; ints index."""
    for key in keys:
        path = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else key
    return path

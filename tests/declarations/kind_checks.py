"""Checks every workload kind shares: ``delete -f`` of its manifest removes what ``apply -f`` made,
and through the API another submitter's object of the same name reads as not found.

Each kind's test module calls these with its own upstream example, so that the rule is written
once and each kind still has a test named for it that fails when its loader breaks the rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management.base import CommandError

from scheduler_core.models import Gang, Member

from .test_volcano import run

URL, YAML = "/api/v1/manifests/", "application/yaml"


def delete_f_removes_everything(tmp_path: Path, text: str, *, pods: int, deleted: str, not_found: str) -> str:
    """Apply ``text`` from a file (``pods`` pods made), delete it with ``delete -f``: the output
    has the ``deleted`` line, no gang nor pod is left, and a second delete says ``not_found``.
    Returns the first delete's output for the caller's own checks."""
    path = tmp_path / "manifest.yaml"
    path.write_text(text)
    run("apply", "-f", str(path))
    assert Member.objects.count() == pods

    out = run("delete", "-f", str(path))

    assert deleted in out, out
    assert not Gang.objects.exists() and not Member.objects.exists()
    with pytest.raises(CommandError, match=not_found):
        run("delete", "-f", str(path))
    return out


def others_object_is_not_found(
    as_alice, as_bob, text: str, *, changed: str, renamed: str, bobs_gang: str
) -> None:
    """alice creates ``text`` through the API; bob's ``changed`` version of it (same name) is a
    404 that changes nothing, as for an object that does not exist; his ``renamed`` copy is his,
    with the gang ``bobs_gang`` (``namespace/name``)."""
    assert as_alice.post(URL, text, content_type=YAML).status_code == 201
    before = list(Gang.objects.values()), list(Member.objects.values())

    assert as_bob.post(URL, changed, content_type=YAML).status_code == 404

    assert (list(Gang.objects.values()), list(Member.objects.values())) == before
    assert {gang.submitter for gang in Gang.objects.all()} == {"alice"}
    assert as_bob.post(URL, renamed, content_type=YAML).status_code == 201
    namespace, name = bobs_gang.split("/")
    assert Gang.objects.get(namespace=namespace, name=name).submitter == "bob"

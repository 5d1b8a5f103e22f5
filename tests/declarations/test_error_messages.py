"""Every refusal of a manifest names a field and speaks JSON, not Python: each value of every
example manifest of every kind is replaced, one at a time, by values of the wrong type or out of
range, and whatever is refused must say where (never an empty field, which the API shows as null)
and must not show Python's words (``NoneType``, ``{'a': 1}``, ``invalid literal for int()``)."""

import pytest

from scheduler_core.declarations import DeclarationError
from scheduler_core.declarations.cluster import priority_classes
from scheduler_core.declarations.documents import documents_expand
from scheduler_core.declarations.registry import OBJECTS, manifest_load

from .mutations import BAD, PYTHON, paths, replaced, samples

pytestmark = pytest.mark.django_db


def test_the_samples_cover_every_kind_gangsched_reads():
    assert {(doc["apiVersion"], doc["kind"]) for _, doc in samples() if doc["kind"] != "List"} | {
        (item["apiVersion"], item["kind"])
        for _, doc in samples()
        if doc["kind"] == "List"
        for item in doc["items"]
    } >= set(OBJECTS)


def refusal(document: dict) -> DeclarationError | None:
    """What reading ``document`` refuses: every check of its format (nothing is written)."""
    try:
        manifests = documents_expand([document])
        with priority_classes(manifests):
            for manifest in manifests:
                manifest_load(manifest)
    except DeclarationError as error:
        return error
    return None


@pytest.mark.parametrize(
    ("source", "document"), samples(), ids=lambda x: x if isinstance(x, str) else x["kind"]
)
def test_no_refusal_has_an_empty_field_or_python_words(source, document):
    refusals = [
        (path, value, refusal(replaced(document, path, value))) for path in paths(document) for value in BAD
    ]
    refused = [(path, value, error.field, error.reason) for path, value, error in refusals if error]
    unclear = [
        (path, value, field, reason)
        for path, value, field, reason in refused
        if not field or PYTHON.search(reason)
    ]
    assert refused and not unclear, unclear[:10]

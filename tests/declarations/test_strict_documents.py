"""Text that holds no object, and a key given twice in one mapping, are errors, worded the same by
``manage.py apply`` and ``POST /api/v1/manifests/`` (both parse with ``documents_parse``)."""

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from scheduler_core.declarations import DeclarationError, documents_parse
from scheduler_core.models import Gang, Member
from tests.api.conftest import errors

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
URL = "/api/v1/manifests/"

PODGROUP = (
    "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
    "metadata:\n  name: pg\n  namespace: ns\nspec:\n  minMember: 2\n  minMember: 3\n"
)

# (text, what the API and the CLI say)
EMPTY = [
    ("", "the manifest is empty"),
    ("\n  \n", "the manifest is empty"),
    ("# nothing here\n", "the manifest holds no objects"),
    ("---\n---\n", "the manifest holds no objects"),
    ("# a\n---\n# b\n...\n", "the manifest holds no objects"),
    ("null\n", "the manifest holds no objects"),
]

# (text, field, reason): the first repeated key, by path, with its lines.
REPEATED = [
    (PODGROUP, "spec.minMember", "the key 'minMember' appears twice in one mapping (lines 7 and 8)"),
    (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, name: q}\n",
        "metadata.name",
        "the key 'name' appears twice in one mapping (line 3)",
    ),
    (
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n"
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n"
        "  metadata: {name: b, labels: {x: '1', 'x': '2'}}\n",
        "documents[1].items[0].metadata.labels.x",
        "appears twice in one mapping (line 10)",
    ),
    (
        "# first\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  labels: {yes: a, true: b}\n",
        "metadata.labels.true",
        "(line 6; 'yes' is the same key in YAML)",
    ),
    (
        '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "name": "q"}}',
        "metadata.name",
        "the key 'name' appears twice in one object",
    ),
    (
        '{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}\n'
        '{"apiVersion": "v1", "kind": "List", "items": [{}, {"kind": "Pod", "kind": "Node"}]}',
        "documents[1].items[1].kind",
        "the key 'kind' appears twice in one object",
    ),
]


def cli_error(tmp_path, text: str) -> str:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(text)
    with pytest.raises(CommandError) as error:
        call_command("apply", "-f", str(manifest), stdout=io.StringIO())
    return str(error.value)


@pytest.mark.parametrize(("text", "reason"), EMPTY)
def test_a_manifest_without_objects_is_an_error_in_the_cli_and_the_api(tmp_path, as_alice, text, reason):
    assert cli_error(tmp_path, text) == f"{tmp_path / 'm.yaml'}: {reason}"

    response = as_alice.post(URL, text, content_type="application/yaml")
    assert response.status_code == 400
    assert errors(response) == [("body", reason)]


def test_apply_of_an_empty_file_exits_non_zero_with_one_line_naming_it(tmp_path):
    empty = tmp_path / "empty.yaml"
    empty.write_text("# only a comment\n---\n")
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    done = subprocess.run(
        [sys.executable, "manage.py", "apply", "-f", str(empty)],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
    )

    assert done.returncode != 0
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [f"CommandError: {empty}: the manifest holds no objects"]


def test_an_empty_file_among_good_ones_stops_the_apply_there(tmp_path):
    (tmp_path / "a.yaml").write_text(PODGROUP.replace("  minMember: 2\n", ""))
    (tmp_path / "b.yaml").write_text("---\n")
    with pytest.raises(CommandError, match=r"b\.yaml: the manifest holds no objects"):
        call_command("apply", "-f", str(tmp_path), stdout=io.StringIO())
    assert Gang.objects.filter(name="pg", min_member=3).exists()  # a.yaml, applied before


@pytest.mark.parametrize(("text", "field", "reason"), REPEATED)
def test_a_repeated_key_is_refused_naming_it(text, field, reason):
    with pytest.raises(DeclarationError) as error:
        documents_parse(text)
    assert error.value.field == field
    assert reason in error.value.reason and error.value.reason.endswith(": remove one")


@pytest.mark.parametrize(("text", "field", "reason"), REPEATED[:1] + REPEATED[4:5])
def test_a_repeated_key_reads_the_same_in_the_cli_and_the_api(tmp_path, as_alice, text, field, reason):
    content_type = "application/json" if text.startswith("{") else "application/yaml"
    response = as_alice.post(URL, text, content_type=content_type)
    assert response.status_code == 400
    [(api_field, api_reason)] = errors(response)

    assert cli_error(tmp_path, text) == f"{tmp_path / 'm.yaml'}: {api_field}: {api_reason}"
    assert api_field == field and reason in api_reason
    assert not Gang.objects.exists() and not Member.objects.exists()


@pytest.mark.parametrize(
    "text",
    [
        # A merge key's values may be overridden: that is what << is for.
        "base: &base {minMember: 2, scheduleTimeoutSeconds: 60}\nspec:\n  <<: *base\n  minMember: 3\n",
        # The same key in two mappings, and keys YAML tells apart (1 and "1").
        "a: {x: 1}\nb: {x: 1}\nc: [{x: 1}, {x: 2}]\nd: {1: a, '1': b}\n",
        '{"a": {"x": 1}, "b": {"x": 1}, "c": [{"x": 1}, {"x": 2}]}',
    ],
)
def test_keys_that_do_not_repeat_in_one_mapping_are_fine(text):
    assert documents_parse(text)


# (text, field, words): values a manifest cannot hold, refused at parse in JSON's words.
UNREADABLE = [
    ("a: !!int x\n", "", "not valid YAML: cannot read 'x' as !!int\n  at line 1, column 4"),
    ("a: !!float y\n", "", "cannot read 'y' as !!float"),
    ("a: 1" + "0" * 5000 + "\n", "", "(5001 characters)' as !!int"),
    ("a: [0x" + "f" * 5000 + "]\n", "a[0]", "an integer of 20000 bits is out of range"),
    ('{"a": {"b": 1' + "0" * 5000 + "}}", "a.b", "(5001 digits) is out of range"),
    ('{"a": 9223372036854775808}', "a", "9223372036854775808 is out of range: a number here is a 64-bit"),
    ("a: {b: -9223372036854775809}\n", "a.b", "out of range"),
    ("a: {b: .nan}\n", "a.b", "NaN is not a number"),
    ('{"a": [1e999]}', "a[0]", "Infinity is not a number"),
    ("a: !!binary aGk=\n", "a", "is binary data (!!binary)"),
    ("a: [!!set {x}]\n", "a[0]", "is a set (!!set)"),
    ("a: !!timestamp 2026-01-02\n", "a", "is a date (!!timestamp)"),
    (b"a: \xff\n", "", "the manifest is not UTF-8 text: byte 0xff at offset 3 cannot start a character"),
]


@pytest.mark.parametrize(("text", "field", "words"), UNREADABLE)
def test_a_value_no_manifest_can_hold_is_refused_in_plain_words(text, field, words):
    with pytest.raises(DeclarationError) as error:
        documents_parse(text)
    assert (error.value.field, words in error.value.reason) == (field, True), error.value.reason
    assert not re.search(r"invalid literal|int\(\)|codec|sys\.|<unicode string>", error.value.reason)


def test_the_int64_bounds_themselves_are_fine():
    assert documents_parse('{"a": [-9223372036854775808, 9223372036854775807]}') == [
        {"a": [-(2**63), 2**63 - 1]}
    ]

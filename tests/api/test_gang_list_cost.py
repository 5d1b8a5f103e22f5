"""What one GET /api/v1/gangs/ costs, and that the shortcuts it takes answer what the general
path answers: a bounded number of queries whatever the page holds, the hand-built rows equal to
DRF's, the one-query operator check equal to ``has_perm``, the unfiltered list equal to the
filtered path with no filter."""

import zoneinfo
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import AnonymousUser, Group, Permission, User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.fields import DateTimeField

from dashboard.api import serializers
from dashboard.api.permissions import VIEW_ALL_GANGS, sees_all_gangs
from dashboard.api.redacted import context_viewer
from dashboard.api.serializers import GANG_OUTPUT_COLUMNS, GangOutput, GangRowOutput
from scheduler_core.models import Gang
from scheduler_core.services.groups import gang_group_join

from .conftest import client_for, make_gang

URL = "/api/v1/gangs/"
# The page (with each gang's group joined in; keyset pages count nothing). The token, its user
# and the operator check were answered by the first request and are cached
# (tests/api/test_token_cache.py).
LIST_QUERIES = 1
#: A submitter's page whose rows name gang keys (a group's key, an explanation) looks up whose
#: they are, once for the page (scheduler_core/reads/redaction.py): an operator's never does.
OWNERS_QUERIES = {"alice": 1, "olga": 0}


def gangs(count: int, submitter: str = "alice") -> None:
    for index in range(count):
        gang = make_gang("ml", f"{submitter}-{index}", submitter=submitter, pods=1)
        if index % 3 == 0:  # some in a group: its key comes with the page, not a query per gang
            gang_group_join(gang=gang, members=[f"ml/{submitter}-partner-{index}"])


def list_queries(client, **params) -> tuple[int, dict]:
    client.get(URL, params)  # anything done once per process (content types) is done
    with CaptureQueriesContext(connection) as queries:
        response = client.get(URL, params)
    assert response.status_code == 200, response.content
    return len(queries.captured_queries), response.json()


@pytest.mark.parametrize("who", ["alice", "olga"])
def test_the_list_costs_the_same_queries_for_one_gang_and_a_full_page(who, request):
    client = client_for(request.getfixturevalue(who))
    gangs(1)
    few, body = list_queries(client, pageSize=20)
    assert len(body["results"]) == 1 and few == LIST_QUERIES + OWNERS_QUERIES[who]
    gangs(30, submitter="alice-too")
    Gang.objects.filter(submitter="alice-too").update(submitter="alice")
    many, body = list_queries(client, pageSize=20)
    assert len(body["results"]) == 20 and body["next"]
    assert many == few
    assert any(gang["group"] for gang in body["results"])


def test_a_filtered_list_costs_no_more_queries(as_olga):
    gangs(12)
    count, body = list_queries(as_olga, pageSize=5, phase="Pending", search="alice")
    assert len(body["results"]) == 5 and body["next"]
    assert count == LIST_QUERIES


def test_unknown_parameters_take_the_filter_sets_path_and_still_list_everything(as_olga):
    gangs(3)
    plain = as_olga.get(URL).json()
    assert as_olga.get(URL, {"colour": "blue", "page": 1}).json() == plain
    assert as_olga.get(URL, {"phase": "Sleeping"}).status_code == 400


def test_the_rows_are_what_drfs_own_serializer_makes_of_them(alice, olga):
    plain = make_gang("ml", "plain", submitter="alice")
    grouped = make_gang("ml", "grouped", submitter="", wait_seconds=90, priority=-5, total_number=3)
    gang_group_join(gang=grouped, members=["ml/other"])
    Gang.objects.filter(pk=grouped.pk).update(
        phase="Running", satisfied=True, running=2, reason="", message="m\u00e9ssage", provisional=True
    )
    Gang.objects.filter(pk=plain.pk).update(
        reason="InsufficientResources", message="short", created=timezone.now().replace(microsecond=0)
    )
    rows = list(Gang.objects.select_related("group", "forecast").only(*GANG_OUTPUT_COLUMNS).order_by("name"))
    # An operator's request (its rights asked before): nothing of the explanations is redacted.
    context = {"request": SimpleNamespace(user=olga)}
    assert context_viewer(context).sees_all
    with CaptureQueriesContext(connection) as queries:
        fast = GangRowOutput(rows, many=True, context=context).data
    assert queries.captured_queries == []  # every field it reads was loaded
    everything = list(Gang.objects.select_related("group").order_by("name"))
    full = GangOutput(everything, many=True, context=context).data
    assert fast == full
    assert [row["group"] for row in fast] == ["ml/grouped,ml/other", None]
    assert [row["state"] for row in fast] == ["Provisional", "Pending"]


def test_the_operator_check_answers_as_has_perm_does(settings, db):
    view = Permission.objects.get(content_type__app_label="scheduler_core", codename="view_gang")
    viewers = Group.objects.create(name="viewers")
    viewers.permissions.add(view)
    users = {
        "plain": User.objects.create_user("plain"),
        "direct": User.objects.create_user("direct"),
        "in-group": User.objects.create_user("in-group"),
        "superuser": User.objects.create_superuser("root"),
        "inactive superuser": User.objects.create_superuser("old-root", is_active=False),
        "inactive viewer": User.objects.create_user("old-viewer", is_active=False),
    }
    users["direct"].user_permissions.add(view)
    users["in-group"].groups.add(viewers)
    users["inactive viewer"].groups.add(viewers)
    expected = {"direct": True, "in-group": True, "superuser": True}
    for name, user in users.items():
        fresh = User.objects.get(pk=user.pk)
        with CaptureQueriesContext(connection) as queries:
            seen = sees_all_gangs(fresh)
        assert seen == expected.get(name, False), name
        assert seen == User.objects.get(pk=user.pk).has_perm(VIEW_ALL_GANGS), name
        assert len(queries.captured_queries) <= 1, name
    assert sees_all_gangs(AnonymousUser()) is False
    # With another backend the answer is that backend's too: has_perm decides.
    settings.AUTHENTICATION_BACKENDS = ["tests.api.test_gang_list_cost.EveryoneViews"]
    assert sees_all_gangs(User.objects.get(pk=users["plain"].pk)) is True


class EveryoneViews:
    def authenticate(self, request, **credentials):
        return None

    def has_perm(self, user, perm, obj=None):
        return perm == VIEW_ALL_GANGS


def test_row_datetimes_are_drfs_in_utc_and_under_another_active_time_zone(alice):
    """GangRowOutput writes a UTC datetime itself (DRF looks the time zone up per value); under
    another active zone, or for a value in another zone, it is DRF's text again."""
    make_gang("ml", "a", submitter="alice")
    Gang.objects.filter(name="a").update(updated=timezone.now().replace(microsecond=0))
    field = DateTimeField()
    for zone in ("UTC", "Europe/Paris"):
        with timezone.override(zone):
            rows = list(Gang.objects.select_related("group", "forecast").only(*GANG_OUTPUT_COLUMNS))
            (fast,) = GangRowOutput(rows, many=True).data
            assert (fast["created"], fast["updated"]) == (
                field.to_representation(rows[0].created),
                field.to_representation(rows[0].updated),
            )
    assert fast["created"].endswith("+01:00") or fast["created"].endswith("+02:00")
    paris = rows[0].created.astimezone(zoneinfo.ZoneInfo("Europe/Paris"))
    assert serializers._utc_datetime(paris) == field.to_representation(paris)
    utc = rows[0].updated
    assert serializers._utc_datetime(utc) == utc.isoformat().replace("+00:00", "Z")

"""What applying a YuniKorn application writes: its gangs, its gang group and its placeholders,
whichever of its pods carries the definition and in whatever order they come."""

import pytest

from scheduler_core.declarations.apply import manifests_apply
from scheduler_core.declarations.validate import DeclarationError
from scheduler_core.models import Gang, GangGroup, Member
from tests.cast import yunikorn_pod

pytestmark = pytest.mark.django_db

GROUPS = [{"name": "driver", "minMember": 1}, {"name": "exec", "minMember": 2, "minResource": {"cpu": "2"}}]


def pod(name: str, *, definition: bool = False, group: str | None = None) -> dict:
    return yunikorn_pod(name, app="app", groups=GROUPS if definition else None, group=group)


def members(gang: str) -> list[str]:
    return sorted(Member.objects.filter(gang__name=gang).values_list("name", flat=True))


def test_the_driver_then_an_originator_keep_one_gang_group_of_the_application():
    manifests_apply([pod("driver", definition=True, group="driver")])
    assert GangGroup.objects.get(key="ns/app").members == ["ns/app-driver", "ns/app-exec"]
    assert members("app-exec") == ["tg-app-exec-0", "tg-app-exec-1"]
    assert Member.objects.get(name="tg-app-exec-0").requests == {"cpu": 2000}

    result = manifests_apply([pod("launcher", definition=True)])
    assert "gang ns/app created" in result.lines
    assert GangGroup.objects.get(key="ns/app").members == ["ns/app", "ns/app-driver", "ns/app-exec"]
    assert {g.name: g.group.key for g in Gang.objects.all()} == {
        "app": "ns/app",
        "app-driver": "ns/app",
        "app-exec": "ns/app",
    }
    assert members("app-exec") == ["tg-app-exec-0", "tg-app-exec-1"]  # not reserved twice

    again = manifests_apply([pod("driver", definition=True, group="driver")])
    assert not again.changed  # the driver alone agrees with the group the launcher widened


def test_only_the_first_definition_creates_placeholders():
    manifests_apply([pod("launcher", definition=True)])
    Member.objects.filter(name__startswith="tg-app-exec-").delete()  # replaced by real members
    again = manifests_apply([pod("launcher", definition=True)])
    assert not again.changed and members("app-exec") == []


def test_real_members_applied_with_the_definition_need_no_placeholder():
    manifests_apply([pod("launcher", definition=True), pod("exec-0", group="exec")])
    assert members("app-exec") == ["exec-0", "tg-app-exec-0"]
    assert members("app-driver") == ["tg-app-driver-0"]


def test_a_pod_named_as_a_placeholder_is_refused():
    with pytest.raises(DeclarationError, match="has the name of a placeholder of task group 'exec'") as error:
        manifests_apply([pod("launcher", definition=True), pod("tg-app-exec-1")])
    assert error.value.field == "documents[1].metadata.name"
    assert not Gang.objects.exists()


def test_on_a_real_cluster_the_placeholders_are_declared_too(settings):
    """Their pods are created when they are placed (tests/kube/test_yunikorn_placeholders.py)."""
    settings.CLUSTER_BACKEND = "kubernetes"
    manifests_apply([pod("launcher", definition=True)])
    assert sorted(Gang.objects.values_list("name", flat=True)) == ["app", "app-driver", "app-exec"]
    assert sorted(Member.objects.values_list("name", flat=True)) == [
        "launcher",
        "tg-app-driver-0",
        "tg-app-exec-0",
        "tg-app-exec-1",
    ]

"""Leader election with a coordination.k8s.io Lease: two gangsched deployments never lead at once."""

from __future__ import annotations

import time

import pytest

from scheduler_core.cluster.kube import readiness
from scheduler_core.cluster.kube.leader import LEASE_NAME, LeaderElector
from tests.kube.cluster import PODGROUPS, Harness, node, wait_until


def elector(kube_api, identity, **kwargs):
    return LeaderElector(kube_api.api_client(), namespace="gangsched", identity=identity, **kwargs)


def lease(kube_api):
    return kube_api.get("coordination.k8s.io/v1/leases", LEASE_NAME, "gangsched")["spec"]


def test_one_of_two_candidates_holds_the_lease(kube_api):
    a, b = elector(kube_api, "a"), elector(kube_api, "b")
    assert a.try_lead() is True
    assert b.try_lead() is False
    assert a.try_lead() is True  # renews
    assert (a.leading, b.leading) == (True, False)
    assert lease(kube_api)["holderIdentity"] == "a"


def test_a_released_lease_is_taken_at_once(kube_api):
    a, b = elector(kube_api, "a"), elector(kube_api, "b")
    a.try_lead()
    a.release()
    assert a.leading is False
    assert b.try_lead() is True
    assert a.try_lead() is False
    spec = lease(kube_api)
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1


def test_an_expired_lease_is_taken_over(kube_api):
    a, b = elector(kube_api, "a", duration_s=1), elector(kube_api, "b", duration_s=1)
    a.try_lead()
    assert b.try_lead() is False
    time.sleep(1.5)  # a stops renewing (its process hangs)
    assert b.try_lead() is True
    assert a.try_lead() is False and a.leading is False


def test_of_two_racing_for_an_expired_lease_exactly_one_wins(kube_api):
    a, b = elector(kube_api, "a"), elector(kube_api, "b")
    a.try_lead()
    a.release()
    view_a, view_b = a._read(), b._read()  # both saw it free
    a._update(view_a)
    from kubernetes.client.rest import ApiException

    with pytest.raises(ApiException) as refused:
        b._update(view_b)  # stale resourceVersion
    assert refused.value.status == 409
    assert lease(kube_api)["holderIdentity"] == "a"


def test_a_leader_that_cannot_renew_stops_leading_before_anyone_may_take_over():
    now = [0.0]
    a = LeaderElector.__new__(LeaderElector)
    a.duration_s, a.renew_s, a._clock, a._renewed_at = 15.0, 2.0, lambda: now[0], 0.0
    assert a.leading
    now[0] = 12.9
    assert a.leading
    now[0] = 13.0  # duration - renew: 2 s before the Lease may be taken over
    assert not a.leading


@pytest.mark.django_db(transaction=True)
def test_of_two_watchers_only_the_leader_lets_cycles_run(kube_api):
    kube_api.add_crd(*PODGROUPS, kind="PodGroup")
    kube_api.create(node("node-a"))
    first, second = Harness(kube_api, identity="blue"), Harness(kube_api, identity="green")
    try:
        first.start()
        assert second.watcher.step() is False
        assert second.watcher.reflectors == []  # a follower does not even watch
        assert readiness.holder() == "blue"
        first.stop()  # blue shuts down cleanly and gives the Lease up
        wait_until(second.watcher.step, what="green to take over")
        assert readiness.holder() == "green"
        assert first.watcher.step() is False
    finally:
        first.stop()
        second.stop()
        readiness.ready_clear()

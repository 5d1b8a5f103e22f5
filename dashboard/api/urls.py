"""``/api/v1/``: gangs (namespace/name in the path), events, nodes, the cluster, manifests, queues,
topologies, tokens."""

from django.urls import path

from . import auth, cluster, events, gangs, manifests, queues, simulations, topologies

app_name = "api"

urlpatterns = [
    path("auth/token/", auth.TokenObtainApi.as_view(), name="token"),
    path("gangs/", gangs.GangListSubmitApi.as_view(), name="gangs"),
    path("gangs/<str:namespace>/<str:name>/", gangs.GangDetailApi.as_view(), name="gang"),
    path("gangs/<str:namespace>/<str:name>/events/", gangs.GangEventsApi.as_view(), name="gang-events"),
    path("gangs/<str:namespace>/<str:name>/retry/", gangs.GangRetryApi.as_view(), name="gang-retry"),
    path("gangs/<str:namespace>/<str:name>/kill/", gangs.GangKillApi.as_view(), name="gang-kill"),
    path("manifests/", manifests.ManifestApplyApi.as_view(), name="manifests"),
    path("events/", events.EventListApi.as_view(), name="events"),
    path("nodes/", cluster.NodeListApi.as_view(), name="nodes"),
    path("cluster/", cluster.ClusterApi.as_view(), name="cluster"),
    path("queues/", queues.QueueListApi.as_view(), name="queues"),
    path("queues/<str:name>/", queues.QueueDetailApi.as_view(), name="queue"),
    path("queues/<str:name>/close/", queues.QueueCloseApi.as_view(), name="queue-close"),
    path("queues/<str:name>/open/", queues.QueueOpenApi.as_view(), name="queue-open"),
    path("topologies/", topologies.TopologyListApi.as_view(), name="topologies"),
    path("topologies/<str:name>/", topologies.TopologyDetailApi.as_view(), name="topology"),
    path("simulations/", simulations.SimulationListStartApi.as_view(), name="simulations"),
    path("simulations/<int:pk>/", simulations.SimulationDetailApi.as_view(), name="simulation"),
]

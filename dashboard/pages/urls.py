from django.urls import path

from . import gangs, history, nodes, overview, queues, simulations, timed_out

app_name = "dashboard"

urlpatterns = [
    path("", overview.overview, name="overview"),
    path("gangs/", gangs.gang_list, name="gangs"),
    path("gangs/act/", timed_out.gang_action, name="gang-action"),
    path("gangs/<str:namespace>/<str:name>/", gangs.gang_detail, name="gang"),
    path("history/", history.history_list, name="history"),
    path("nodes/", nodes.node_list, name="nodes"),
    path("queues/", queues.queue_list, name="queues"),
    path("queues/live/", queues.queue_live, name="queues-live"),
    path("queues/<str:name>/act/", queues.queue_action, name="queue-action"),
    path("timed-out/", timed_out.timed_out_list, name="timed-out"),
    path("simulations/", simulations.simulation_list, name="simulations"),
    path("simulations/<int:pk>/", simulations.simulation_detail, name="simulation"),
    path("simulations/<int:pk>/plots/<str:name>", simulations.simulation_plot, name="simulation-plot"),
]

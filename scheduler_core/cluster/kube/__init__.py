"""The Kubernetes backend: ``backend.KubernetesCluster`` acts, ``watcher.Watcher`` mirrors.

Modules, in the order a request flows: ``client`` (where the cluster is, rate limit), ``leader``
(the Lease), ``watch`` (list + watch), ``mirror`` (events -> rows), ``convert`` (objects ->
gangsched's terms), ``backend`` (binds, deletes, placeholders), ``status`` (write-back),
``readiness`` (may this deployment schedule now), ``watcher`` (the process tying them together).
"""

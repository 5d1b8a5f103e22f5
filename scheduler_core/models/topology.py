"""The cluster's network topology: which nodes share a block, a rack, an NVLink domain.

``Topology`` maps one to one onto ``engine.model.Topology``: an ordered list of node-label keys,
widest level first, as Kueue's and KAI-Scheduler's ``Topology`` objects declare it. Volcano
declares topology as a tree of ``HyperNode`` objects instead; each is kept as a ``HyperNode`` row
and ``scheduler_core/reads/topology_domains.py`` turns the tree into one synthetic label per tier on
each node, so that the engine and the pages see one kind of topology. Rows are written only by
``services/topology.py``, which checks the whole set (unknown level, a cycle of HyperNodes)
before anything is saved.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class Topology(models.Model):
    """An ordered list of node-label levels, widest first: block > rack > host."""

    name = models.CharField(max_length=253, unique=True)
    # ["example.com/block", "example.com/rack", "kubernetes.io/hostname"]
    levels = models.JSONField(default=list, help_text="Node-label keys, widest level first.")
    source_format = models.CharField(max_length=32, blank=True, help_text="kueue, kai, volcano, gangsched")
    declaration = models.JSONField(default=dict, blank=True, help_text="The manifest it was applied as.")
    created = models.DateTimeField(default=timezone.now)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "topologies"

    def __str__(self) -> str:
        return self.name


class HyperNode(models.Model):
    """A Volcano ``topology.volcano.sh HyperNode``: a tier-numbered group of nodes (tier 1) or
    of HyperNodes of a lower tier, selected by exact name, regular expression or labels."""

    name = models.CharField(max_length=253, unique=True)
    tier = models.PositiveIntegerField(help_text="1: holds nodes; higher tiers hold HyperNodes.")
    # The spec's members as applied: [{"type": "Node", "selector": {"exactMatch": {"name": ...}}}]
    members = models.JSONField(default=list, blank=True)
    declaration = models.JSONField(default=dict, blank=True, help_text="The manifest it was applied as.")
    created = models.DateTimeField(default=timezone.now)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["tier", "name"]

    def __str__(self) -> str:
        return f"{self.name} (tier {self.tier})"

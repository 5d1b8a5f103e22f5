"""Which nodes a pod may run on, as numpy boolean masks over the cycle's nodes.

A cycle checks thousands of pods against thousands of nodes, but the members of a gang share their
node selector, tolerations and affinity, and a cluster has few distinct taint sets. So the work is
done once per distinct constraint and never per node after construction: labels are indexed as
integer columns, taints are grouped into distinct sets, and every partial result is cached.

The semantics are kube-scheduler's filter plugins (NodeUnschedulable, TaintToleration, NodeAffinity)
and component-helpers' node affinity matching, including their quirks: a NotIn or DoesNotExist
requirement is met by a node without the label; a term without requirements matches no node; a
term that kube-scheduler cannot parse (an unknown operator, In without values, Gt with a value that
is not an integer or not a valid label value, such as ``-1``) matches no node, while the pod's other
terms still can; and a toleration with an empty key and the Equal operator tolerates every taint
with an empty value, as ``ToleratesTaint`` has it. A node that is not ready is excluded outright.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

from scheduler_core.engine.model import (
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    Taint,
    Toleration,
)

__all__ = ["EXCLUSION_REASONS", "NodeFilter", "constraint_key", "tolerates"]

#: The keys of ``NodeFilter.excluded_by``, in the order nodes are attributed to them.
EXCLUSION_REASONS = ("not_ready", "unschedulable", "taints", "node_selector", "affinity")

_UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", value="", effect="NoSchedule")
_FILTERING_EFFECTS = frozenset({"NoSchedule", "NoExecute"})  # PreferNoSchedule only affects scoring

_GO_INT = re.compile(r"[+-]?[0-9]+")
_LABEL_NAME = re.compile(r"[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*")

ConstraintKey = tuple[tuple[tuple[str, str], ...], frozenset[Toleration], tuple[NodeSelectorTerm, ...]]


def constraint_key(pod: Pod) -> ConstraintKey:
    """What a pod's node mask depends on; order of selector entries and tolerations is irrelevant."""
    return (tuple(sorted(pod.node_selector.items())), frozenset(pod.tolerations), tuple(pod.affinity))


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    """Kubernetes' ``Toleration.ToleratesTaint``, with an empty operator meaning Equal."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return toleration.operator == "Exists"


def _tolerated(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    return any(tolerates(toleration, taint) for toleration in tolerations)


def _go_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``; Python's int() would also take spaces, ``_`` and ``٣``."""
    if not _GO_INT.fullmatch(text) or len(text.lstrip("+-").lstrip("0")) > 19:
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def _valid_label_value(value: str) -> bool:
    return value == "" or (len(value) <= 63 and _LABEL_NAME.fullmatch(value) is not None)


def _valid_label_key(key: str) -> bool:
    """IsQualifiedName: an optional DNS-subdomain prefix and a slash, then a name of up to 63."""
    parts = key.split("/")
    if len(parts) > 2:
        return False
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix or len(prefix) > 253 or _DNS_SUBDOMAIN.fullmatch(prefix) is None:
            return False
    name = parts[-1]
    return bool(name) and len(name) <= 63 and _LABEL_NAME.fullmatch(name) is not None


def _requirement_valid(requirement: NodeSelectorRequirement) -> bool:
    """Whether ``labels.NewRequirement`` accepts it; kube-scheduler drops the whole term if not."""
    operator, values = requirement.operator, requirement.values
    if operator in ("In", "NotIn"):
        shape_ok = len(values) > 0
    elif operator in ("Exists", "DoesNotExist"):
        shape_ok = len(values) == 0
    elif operator in ("Gt", "Lt"):
        shape_ok = len(values) == 1 and _go_int(values[0]) is not None
    else:
        return False
    return shape_ok and _valid_label_key(requirement.key) and all(_valid_label_value(v) for v in values)


def _readonly(mask: np.ndarray) -> np.ndarray:
    mask.flags.writeable = False
    return mask


class _LabelColumn:
    """One label key across all nodes: a value code per node (-1 where the label is absent).

    Codes rather than one boolean mask per value, because a key like ``kubernetes.io/hostname``
    has a distinct value on every node and per-value masks would be quadratic in the node count.
    """

    __slots__ = ("codes", "present", "values", "_ints")

    def __init__(self, codes: np.ndarray, values: dict[str, int]) -> None:
        self.codes = codes
        self.values = values
        self.present = _readonly(codes >= 0)
        self._ints: tuple[np.ndarray, np.ndarray] | None = None

    def equal_any(self, wanted: Iterable[str]) -> np.ndarray:
        codes = [self.values[v] for v in wanted if v in self.values]
        if not codes:
            return np.zeros(len(self.codes), dtype=bool)
        if len(codes) == 1:
            return self.codes == codes[0]
        return np.isin(self.codes, codes)

    def integers(self) -> tuple[np.ndarray, np.ndarray]:
        """Each node's label as an int64 and whether it parsed; built on the first Gt or Lt."""
        if self._ints is None:
            parsed = [_go_int(value) for value in self.values]  # dict order is code order
            by_code = np.array([0 if p is None else p for p in parsed] + [0], dtype=np.int64)
            ok_by_code = np.array([p is not None for p in parsed] + [False], dtype=bool)
            # Code -1 (absent) indexes the sentinel appended at the end.
            self._ints = (by_code[self.codes], ok_by_code[self.codes])
        return self._ints


class NodeFilter:
    """Built once per cycle from the snapshot's nodes (a tuple[Node, ...], index order = array order)."""

    def __init__(self, nodes: Sequence[Node]) -> None:
        self.nodes = tuple(nodes)
        n = len(self.nodes)
        self._size = n
        self._ready = _readonly(np.array([node.ready for node in self.nodes], dtype=bool))
        self._cordoned = _readonly(np.array([node.unschedulable for node in self.nodes], dtype=bool))
        # For explanations (``diagnosis.py``): per shape, the nodes that could take one copy
        # empty. Kept here because it depends on the nodes alone, as the masks do.
        self.empty_fits: dict[tuple, int] = {}

        codes: dict[str, np.ndarray] = {}
        values: dict[str, dict[str, int]] = {}
        taint_set_ids: dict[frozenset[Taint], int] = {}
        taint_set_of_node = np.empty(n, dtype=np.int32)
        for i, node in enumerate(self.nodes):
            for key, value in node.labels.items():
                column = codes.get(key)
                if column is None:
                    column = codes[key] = np.full(n, -1, dtype=np.int32)
                    values[key] = {}
                known = values[key]
                code = known.get(value)
                if code is None:
                    code = known[value] = len(known)
                column[i] = code
            taints = frozenset(t for t in node.taints if t.effect in _FILTERING_EFFECTS)
            taint_set_of_node[i] = taint_set_ids.setdefault(taints, len(taint_set_ids))
        self._columns = {key: _LabelColumn(codes[key], values[key]) for key in codes}
        self._taint_sets = tuple(taint_set_ids)  # dict order is id order
        self._taint_set_of_node = taint_set_of_node

        self._all = _readonly(np.ones(n, dtype=bool))
        self._none = _readonly(np.zeros(n, dtype=bool))
        self._masks: dict[ConstraintKey, np.ndarray] = {}
        self._rejections: dict[ConstraintKey, tuple[list[dict], np.ndarray]] = {}
        self._selector_masks: dict[tuple[tuple[str, str], ...], np.ndarray] = {}
        self._toleration_masks: dict[frozenset[Toleration], tuple[np.ndarray, np.ndarray]] = {}
        self._affinity_masks: dict[tuple[NodeSelectorTerm, ...], np.ndarray] = {}
        self._requirement_masks: dict[NodeSelectorRequirement, np.ndarray] = {}

    def __len__(self) -> int:
        return self._size

    def mask(self, pod: Pod) -> np.ndarray:
        """bool[len(nodes)], read-only, True where every filter admits the pod."""
        key = constraint_key(pod)
        cached = self._masks.get(key)
        if cached is None:
            selector, tolerations, affinity = key
            cordon_ok, taints_ok = self._tolerations_mask(tolerations)
            cached = self._ready & cordon_ok & taints_ok
            cached &= self._selector_mask(selector)
            cached &= self._affinity_mask(affinity)
            self._masks[key] = cached = _readonly(cached)
        return cached

    def excluded_by(self, pod: Pod) -> dict[str, int]:
        """How many nodes each filter rules out, for explanations; only non-zero counts appear.

        Like kube-scheduler's "0/N nodes are available" message, each excluded node is counted
        once, under the first filter that rejects it in ``EXCLUSION_REASONS`` order, so the counts
        add up to the number of excluded nodes.
        """
        selector, tolerations, affinity = constraint_key(pod)
        cordon_ok, taints_ok = self._tolerations_mask(tolerations)
        stages = (
            ("not_ready", self._ready),
            ("unschedulable", cordon_ok),
            ("taints", taints_ok),
            ("node_selector", self._selector_mask(selector)),
            ("affinity", self._affinity_mask(affinity)),
        )
        remaining = np.ones(self._size, dtype=bool)
        counts: dict[str, int] = {}
        for reason, admitted in stages:
            rejected = int(np.count_nonzero(remaining & ~admitted))
            if rejected:
                counts[reason] = rejected
                remaining &= admitted
        return counts

    def rejections(self, pod: Pod) -> tuple[list[dict], np.ndarray]:
        """What each filter rules out, in kube-scheduler's filter order, and the nodes left.

        Each rejection is ``{"reason", "count", "detail"}``; each node is counted once, under the
        first filter that rejects it (``EXCLUSION_REASONS`` order). A tainted node is counted
        under its first untolerated taint (taints sorted by key, value, effect), named in
        ``detail`` as ``key=value:effect``, so nodes with different taints are told apart.
        """
        key = constraint_key(pod)
        cached = self._rejections.get(key)
        if cached is None:
            cached = self._rejections[key] = self._reject(key)
        rows, remaining = cached
        return [dict(row) for row in rows], remaining.copy()

    def _reject(self, key: ConstraintKey) -> tuple[list[dict], np.ndarray]:
        selector, tolerations, affinity = key
        cordon_ok, taints_ok = self._tolerations_mask(tolerations)
        remaining = np.ones(self._size, dtype=bool)
        rows: list[dict] = []

        def rule_out(reason: str, admitted: np.ndarray, detail: str = "") -> None:
            rejected = remaining & ~admitted
            count = int(np.count_nonzero(rejected))
            if count:
                rows.append({"reason": reason, "count": count, "detail": detail})
                remaining[rejected] = False

        rule_out("NotReady", self._ready)
        rule_out("Unschedulable", cordon_ok, _UNSCHEDULABLE_TAINT.key)
        if not taints_ok.all():
            first: dict[Taint, list[int]] = {}
            for set_id, taints in enumerate(self._taint_sets):
                untolerated = sorted(
                    (t for t in taints if not _tolerated(tolerations, t)),
                    key=lambda t: (t.key, t.value, t.effect),
                )
                if untolerated:
                    first.setdefault(untolerated[0], []).append(set_id)
            for taint, set_ids in first.items():
                admitted = ~np.isin(self._taint_set_of_node, set_ids)
                rule_out("UntoleratedTaint", admitted, f"{taint.key}={taint.value}:{taint.effect}")
        rule_out("NodeSelector", self._selector_mask(selector), ",".join(f"{k}={v}" for k, v in selector))
        rule_out("NodeAffinity", self._affinity_mask(affinity))
        return rows, remaining

    def _tolerations_mask(self, tolerations: frozenset[Toleration]) -> tuple[np.ndarray, np.ndarray]:
        """(not cordoned or cordon tolerated, every NoSchedule/NoExecute taint tolerated)."""
        cached = self._toleration_masks.get(tolerations)
        if cached is None:
            cordon_tolerated = _tolerated(tolerations, _UNSCHEDULABLE_TAINT)
            cordon_ok = self._all if cordon_tolerated else _readonly(~self._cordoned)
            per_set = np.array(
                [all(_tolerated(tolerations, taint) for taint in taints) for taints in self._taint_sets],
                dtype=bool,
            )
            taints_ok = self._all if per_set.all() else _readonly(per_set[self._taint_set_of_node])
            self._toleration_masks[tolerations] = cached = (cordon_ok, taints_ok)
        return cached

    def _selector_mask(self, selector: tuple[tuple[str, str], ...]) -> np.ndarray:
        cached = self._selector_masks.get(selector)
        if cached is None:
            result = np.ones(self._size, dtype=bool)
            for key, value in selector:
                column = self._columns.get(key)
                if column is None:
                    result[:] = False
                    break
                result &= column.equal_any((value,))
            self._selector_masks[selector] = cached = _readonly(result)
        return cached

    def _affinity_mask(self, terms: tuple[NodeSelectorTerm, ...]) -> np.ndarray:
        if not terms:
            return self._all
        cached = self._affinity_masks.get(terms)
        if cached is None:
            result = np.zeros(self._size, dtype=bool)
            for term in terms:
                if not term.match_expressions or not all(map(_requirement_valid, term.match_expressions)):
                    continue  # an empty or unparsable term selects nothing
                term_mask = np.ones(self._size, dtype=bool)
                for requirement in term.match_expressions:
                    term_mask &= self._requirement_mask(requirement)
                result |= term_mask
            self._affinity_masks[terms] = cached = _readonly(result)
        return cached

    def _requirement_mask(self, requirement: NodeSelectorRequirement) -> np.ndarray:
        """One valid requirement; labels.Requirement.Matches vectorised over the nodes."""
        cached = self._requirement_masks.get(requirement)
        if cached is not None:
            return cached
        column = self._columns.get(requirement.key)
        operator = requirement.operator
        if column is None:  # no node has the label
            result = self._all if operator in ("NotIn", "DoesNotExist") else self._none
        elif operator == "In":
            result = column.equal_any(requirement.values)
        elif operator == "NotIn":
            result = ~column.equal_any(requirement.values)
        elif operator == "Exists":
            result = column.present
        elif operator == "DoesNotExist":
            result = ~column.present
        else:
            bound = _go_int(requirement.values[0])
            ints, parsed = column.integers()
            result = parsed & (ints > bound if operator == "Gt" else ints < bound)
        self._requirement_masks[requirement] = result = _readonly(result)
        return result

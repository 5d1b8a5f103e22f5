"""Where a pod may run, checked as the Kubernetes API server checks it: tolerations, the required
node affinity, and a Node's taints. Each refusal names the element and key at fault
(``spec.tolerations[1].tolerationSeconds``, ``...nodeSelectorTerms[0].matchExpressions[2].values``).

Kubernetes' rules (``ValidateNodeSelectorRequirement``, ``validateTolerations``):

- a match expression: a non-empty key; In and NotIn need values, Exists and DoesNotExist take
  none, Gt and Lt exactly one, an integer within int64 that is also a label value (digits, no
  sign), which the scheduler parses with ``strconv.ParseInt(value, 10, 64)``. A term kube-scheduler
  could not parse would match no node: refusing it here says why, instead of a pod that never runs;
- ``matchFields`` (a node's name) is refused: gangsched matches node labels only, and dropping the
  term would let the pod run anywhere;
- a toleration: operator Equal (or empty) or Exists, no value with Exists, an effect among the
  taint effects or empty, ``tolerationSeconds`` an int64 and only with the NoExecute effect.

The lists are returned as given (the stored JSON keeps Kubernetes' spelling; ``snapshot/build.py`` reads it).
"""

from __future__ import annotations

from typing import Any

from scheduler_core.validators import (
    INT64_MAX,
    INT64_MIN,
    SELECTOR_OPERATORS,
    TAINT_EFFECTS,
    is_label_integer,
)

from . import validate as v


def tolerations(value: Any, field: str) -> list[dict[str, Any]]:
    items = v.sequence(value, field)
    for index, toleration in enumerate(items):
        where = v.join(field, index)
        toleration = v.mapping(toleration, where, optional=False)
        for key in ("key", "value"):
            if toleration.get(key) is not None and not isinstance(toleration[key], str):
                raise v.DeclarationError(
                    v.join(where, key), f"must be a string, not {v.kind_of(toleration[key])}"
                )
        operator = toleration.get("operator") or "Equal"
        v.choice(operator, v.join(where, "operator"), ["Equal", "Exists"])
        if operator == "Exists" and toleration.get("value"):
            raise v.DeclarationError(v.join(where, "value"), "must be empty when the operator is Exists")
        effect = toleration.get("effect")
        if effect not in (None, ""):  # empty: every effect
            v.choice(effect, v.join(where, "effect"), list(TAINT_EFFECTS))
        seconds = toleration.get("tolerationSeconds")
        if seconds is not None:
            seconds_field = v.join(where, "tolerationSeconds")
            v.integer(seconds, seconds_field, minimum=INT64_MIN, maximum=INT64_MAX)
            if effect != "NoExecute":
                raise v.DeclarationError(seconds_field, "is allowed only with the effect NoExecute")
    return items


def node_affinity_terms(affinity: Any, field: str) -> list[dict[str, Any]]:
    """The required node affinity terms of a pod's ``affinity`` (the only part gangsched
    enforces; preferred terms and pod (anti-)affinity are ignored)."""
    affinity = v.mapping(affinity, field)
    node = v.mapping(affinity.get("nodeAffinity"), v.join(field, "nodeAffinity"))
    where = v.join(field, "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    required = v.mapping(node.get("requiredDuringSchedulingIgnoredDuringExecution"), where)
    terms_field = v.join(where, "nodeSelectorTerms")
    terms = v.sequence(required.get("nodeSelectorTerms"), terms_field)
    for index, term in enumerate(terms):
        term_field = v.join(terms_field, index)
        term = v.mapping(term, term_field, optional=False)
        if v.sequence(term.get("matchFields"), v.join(term_field, "matchFields")):
            raise v.DeclarationError(
                v.join(term_field, "matchFields"),
                "is not supported: gangsched matches node labels (use matchExpressions on "
                "kubernetes.io/hostname to pick a node by name)",
            )
        expressions_field = v.join(term_field, "matchExpressions")
        for position, requirement in enumerate(v.sequence(term.get("matchExpressions"), expressions_field)):
            _requirement(requirement, v.join(expressions_field, position))
    return terms


def _requirement(requirement: Any, field: str) -> None:
    requirement = v.mapping(requirement, field, optional=False)
    v.text(requirement.get("key"), v.join(field, "key"), max_length=317)  # prefix/name: 253 + 1 + 63
    operator = v.choice(requirement.get("operator"), v.join(field, "operator"), list(SELECTOR_OPERATORS))
    values_field = v.join(field, "values")
    values = v.sequence(requirement.get("values"), values_field)
    for index, value in enumerate(values):
        if not isinstance(value, str):
            raise v.DeclarationError(
                v.join(values_field, index), f"must be a string (quote it in YAML), not {v.kind_of(value)}"
            )
    if operator in ("In", "NotIn") and not values:
        raise v.DeclarationError(
            values_field, f"must hold at least one value when the operator is {operator}"
        )
    if operator in ("Exists", "DoesNotExist") and values:
        raise v.DeclarationError(values_field, f"must be empty when the operator is {operator}")
    if operator in ("Gt", "Lt"):
        if len(values) != 1:
            raise v.DeclarationError(
                values_field,
                f"must hold exactly one value when the operator is {operator}, not {len(values)}",
            )
        _label_integer(values[0], v.join(values_field, 0))


def _label_integer(value: str, field: str) -> None:
    if not is_label_integer(value):
        raise v.DeclarationError(
            field,
            f"{value!r} is not an integer from 0 to {INT64_MAX} written in digits (Gt and Lt compare a "
            "node label's value with it as an int64, and a label value has no sign)",
        )


def taints(value: Any, field: str) -> list[dict[str, str]]:
    """A Node's taints as stored: key, value and effect (NoSchedule when absent); timeAdded and
    the like are the node controller's, not the node's spec."""
    result = []
    for index, taint in enumerate(v.sequence(value, field)):
        where = v.join(field, index)
        taint = v.mapping(taint, where, optional=False)
        key = v.text(taint.get("key"), v.join(where, "key"), max_length=317)
        stored = {"key": key}
        if taint.get("value") is not None:
            if not isinstance(taint["value"], str):
                raise v.DeclarationError(
                    v.join(where, "value"), f"must be a string, not {v.kind_of(taint['value'])}"
                )
            stored["value"] = taint["value"]
        effect = taint.get("effect")
        if effect is not None:
            stored["effect"] = v.choice(effect, v.join(where, "effect"), list(TAINT_EFFECTS))
        result.append(stored)
    return result

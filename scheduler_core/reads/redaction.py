"""What a viewer may read of the engine's explanations and of gang history: no name, count or
detail of work the viewer may not see.

The engine explains a waiting gang in words that name other work: the head of the queue it is
blocked behind (``blocked behind ml/other ...``, with how much later that gang was created), the
victims a preemption or a reclaim evicts (their gang, priority, member count and pod names), the
gang group member it waits for, the exclusive gangs holding topology domains (``r0 by ml/a``);
its ``details`` carry the same as fields (``head``, ``victims``, ``taken``, ``member``,
``held_by``). History rows repeat them (``explained``, ``reserved``: ``nominated: evicting ...``)
and name a preemptor (``preempted by ml/x (priority 10)``).

``shown(key)`` says whether a viewer may see the gang or pod ``key``: True, False (it is
someone else's), None (no such gang or pod: one deleted since, or a member not submitted yet).
The one rule, for every surface (pages, API, websocket, forecasts):

- a text that names a key not shown (False, or None unless it is a count such as ``0/16`` or a
  quantity such as ``1500m/2``) is replaced whole by its reason's generic sentence, which names
  and counts nothing: a sentence half redacted would still count the others' pods;
- in ``details``, every string naming such a key goes, with the list item or the field holding
  it and the figures about it (``head_created_later_s`` goes with ``head``); what remains is
  about the gang itself, its queue and the nodes.

Operators and viewers (``view_gang``) see every gang: nothing is redacted for them and nothing
is looked up. A submitter sees their own gangs and pods (``Viewer``: one query for all the
keys a page names, however many rows; none when it names none).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from django.db.models import Case, CharField, F, Q, Value, When

from scheduler_core.engine.decisions import Reason
from scheduler_core.models import Gang, GangEventKind, Member, Queue

#: ``namespace/name`` as Kubernetes spells a gang's or a pod's key: a namespace is an RFC 1123
#: label (no dot), so ``nvidia.com/gpu`` and ``topology.kubernetes.io/zone`` never match, nor
#: does a piece of a longer word (``64Gi/128Gi``) or path (a queue's ``ml/nlp/bert``).
KEY = re.compile(
    r"(?<![-A-Za-z0-9_./])[a-z0-9](?:[-a-z0-9]*[a-z0-9])?/[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?(?![A-Za-z0-9_/])"
)
#: What the engine writes as a fraction: ``0/16 nodes are available``, ``cpu 1500m/2``. Read as
#: a count unless a gang or a pod has that key.
FRACTION = re.compile(r"[0-9]+(?:[a-z]+)?/[0-9]+(?:[a-z]+)?")

#: The sentence a submitter reads instead of an explanation naming another submitter's work.
GENERIC = {
    Reason.BLOCKED_BEHIND.value: "blocked behind another submitter's gang, which is first in the queue "
    "and has capacity reserved",
    Reason.PREEMPTING.value: "evicting lower-priority work to make room; binds once it is gone",
    Reason.WAITING_FOR_RECLAIM.value: "waiting for reclaim: work of queues over their share is evicted "
    "to make room",
    Reason.WAITING_FOR_GROUP.value: "waiting for another gang of its gang group",
    Reason.NO_DOMAIN_FITS.value: "no domain of its topology level can hold it now; other exclusive gangs "
    "hold some",
}
OTHERWISE = "waiting for other submitters' work (operators see which)"
#: The same, for history rows of other kinds.
EVENT_GENERIC = {
    GangEventKind.PREEMPTED.value: "preempted to make room for other work (operators see which)",
    GangEventKind.RESERVED.value: "members reserved while other work makes room (operators see which)",
    GangEventKind.RELEASED.value: "reservations released for other work (operators see which)",
}
EVENT_OTHERWISE = "other submitters' work involved (operators see which)"
#: A gang group's key lists its gangs: one naming others' reads as this.
GROUP_GENERIC = "a gang group with other submitters' gangs"
#: Fields of ``details`` about the work another field names: they go with it.
ABOUT = {"head": ("head_created_later_s",), "member": ("member_reason",), "held_by": ("held",)}

Shown = Callable[[str], "bool | None"]


def named_keys(text: str) -> list[str]:
    """The ``namespace/name`` keys a text names, in order."""
    return KEY.findall(text) if isinstance(text, str) else []


def hidden(key: str, shown: Shown) -> bool:
    seen = shown(key)
    return seen is False or (seen is None and not FRACTION.fullmatch(key))


def names_hidden(text: str, shown: Shown) -> bool:
    return any(hidden(key, shown) for key in named_keys(text))


def redact_message(reason: str, message: str, shown: Shown) -> str:
    """``message`` (an explanation of ``reason``) as a viewer may read it: as it is, or the
    reason's generic sentence."""
    return GENERIC.get(reason, OTHERWISE) if names_hidden(message, shown) else message


def redact_event(kind: str, text: str, shown: Shown) -> str:
    """A history row's text: an ``explained`` row is ``Reason: message``, redacted as the
    explanation; any other row naming hidden work, its kind's generic sentence."""
    if not names_hidden(text, shown):
        return text
    reason, colon, message = text.partition(": ")
    if kind == GangEventKind.EXPLAINED.value and colon:
        return f"{reason}: {redact_message(reason, message, shown)}"
    return EVENT_GENERIC.get(kind, EVENT_OTHERWISE)


_GONE = object()


def redact_details(details: Any, shown: Shown) -> Any:
    """``details`` without what names hidden work (see the module): a string naming it, the
    list item or field holding it, and the fields ``ABOUT`` it."""
    kept = _kept(details, shown)
    return {} if kept is _GONE else kept


def _kept(value: Any, shown: Shown) -> Any:
    if isinstance(value, str):
        return _GONE if names_hidden(value, shown) else value
    if isinstance(value, list):
        items = [_kept(item, shown) for item in value]
        # A record (a victim, a held domain) naming hidden work goes whole, its figures with it.
        return [item for item, was in zip(items, value, strict=True) if _whole(item, was)]
    if isinstance(value, Mapping):
        out: dict = {}
        dropped: set[str] = set()
        for name, item in value.items():
            kept = _kept(item, shown)
            if kept is _GONE:
                dropped.add(name)
            else:
                out[name] = kept
            if isinstance(item, list) and kept is not _GONE and len(kept) != len(item):
                dropped.add(name)  # some of it went: the figures counting it go too
        for name in dropped:
            for about in ABOUT.get(name, ()):
                out.pop(about, None)
        return out
    return value


def _whole(kept: Any, was: Any) -> bool:
    """A list keeps an item that named nothing hidden: a string kept, a record kept unchanged."""
    if kept is _GONE:
        return False
    if isinstance(was, Mapping):
        return kept == dict(was)
    return True


def keys_in(value: Any) -> Iterable[str]:
    """Every key a text, or a JSON value's strings, name."""
    if isinstance(value, str):
        yield from named_keys(value)
    elif isinstance(value, list):
        for item in value:
            yield from keys_in(item)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from keys_in(item)


def owners_of(keys: Iterable[str]) -> dict[str, str | None]:
    """Gang and pod key -> its submitter (a gang's pod: its gang's), for the keys that exist; a
    queue's path (``ml/nlp``, which queue explanations name) -> None: no one's work. One query;
    a key none of them has is left out; a gang's key wins over a pod's, a pod's over a queue's."""
    wanted = {key for key in keys if "/" in key}
    if not wanted:
        return {}
    pairs = [key.split("/", 1) for key in wanted]
    first, second = {ns for ns, _ in pairs}, {name for _, name in pairs}
    where = Q(namespace__in=first, name__in=second)
    columns = ("namespace", "name", "holder", "kind")
    gangs = Gang.objects.filter(where).annotate(holder=F("submitter"), kind=Value(0))
    holder = Case(When(gang__isnull=False, then=F("gang__submitter")), default=F("submitter"))
    pods = Member.objects.filter(where).annotate(holder=holder, kind=Value(1))
    queues = Queue.objects.filter(parent__name__in=first, name__in=second).annotate(
        namespace=F("parent__name"), holder=Value(None, output_field=CharField()), kind=Value(2)
    )
    rows = gangs.values_list(*columns).union(
        pods.values_list(*columns), queues.values_list(*columns), all=True
    )
    owners: dict[str, str | None] = {}
    for namespace, name, submitter, _kind in sorted(rows, key=lambda row: row[3]):
        key = f"{namespace}/{name}"
        if key in wanted:
            owners.setdefault(key, submitter)
    return owners


def shown_by(owners: Mapping[str, str | None], username: str) -> Shown:
    """``shown`` for a viewer who sees only ``username``'s work (none when empty), ``owners``
    holding every key that exists of those asked about (None: a queue's path, no one's work)."""

    def shown(key: str) -> bool | None:
        if key not in owners:
            return None
        return owners[key] is None or (bool(username) and owners[key] == username)

    return shown


def everything(key: str) -> bool:
    return True


class Viewer:
    """One viewer's redaction. ``learn`` the texts and details a page will show first (one
    lookup for them all); a key not learned is looked up alone when asked."""

    def __init__(self, username: str, *, sees_all: bool):
        self.username, self.sees_all = username, sees_all
        self.owners: dict[str, str | None] = {}
        self.asked: set[str] = set()

    def learn(self, *values: Any) -> Viewer:
        if not self.sees_all:
            keys = {key for value in values for key in keys_in(value)} - self.asked
            self.asked |= keys
            self.owners.update(owners_of(keys))
        return self

    def shown(self, key: str) -> bool | None:
        if self.sees_all:
            return True
        if key not in self.asked:
            self.learn(key)
        return shown_by(self.owners, self.username)(key)

    def message(self, reason: str, message: str) -> str:
        return message if self.sees_all else redact_message(reason, message or "", self.learn(message).shown)

    def details(self, details: Any) -> Any:
        return details if self.sees_all else redact_details(details, self.learn(details).shown)

    def event_text(self, kind: str, text: str) -> str:
        return text if self.sees_all else redact_event(kind, text or "", self.learn(text).shown)

    def group_key(self, key: str | None) -> str | None:
        if self.sees_all or key is None:
            return key
        return GROUP_GENERIC if names_hidden(key, self.learn(key).shown) else key

    def gangs(self, gangs: Iterable, *, with_details: bool = False) -> list:
        """Each gang's ``message`` (and ``details``) replaced by what the viewer may read, in
        place, for display only: never save an instance this was called on."""
        gangs = list(gangs)
        if self.sees_all:
            return gangs
        self.learn(*(g.message for g in gangs), *(g.details for g in gangs if with_details))
        for gang in gangs:
            gang.message = self.message(gang.reason, gang.message)
            if with_details:
                gang.details = self.details(gang.details)
        return gangs

    def events(self, events: Iterable, *, with_details: bool = True) -> list:
        """Each event's ``reason`` (and ``details``) as the viewer may read it, in place, for
        display only."""
        events = list(events)
        if self.sees_all:
            return events
        self.learn(*(e.reason for e in events), *(e.details for e in events if with_details))
        for event in events:
            event.reason = self.event_text(event.kind, event.reason)
            if with_details:
                event.details = self.details(event.details)
        return events

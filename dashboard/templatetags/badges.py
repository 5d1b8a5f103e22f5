"""A gang's state as a badge: one mapping from a state to its text and CSS class, used by the
templates and, rendered into the page as JSON, by ``static/js/live.js`` when a state changes live,
so a badge's colour always follows its text.

    {% load badges %}
    {% gang_badge gang %}        <span class="gang-state state-Running" data-gang="ml/a"
                                       data-state="Running">Running</span>
    {% state_badge "Pending" %}  the same without a gang (the overview's counts)
    {% state_badges_json %}      <script id="gang-state-badges" type="application/json">{...}</script>
"""

from __future__ import annotations

from django import template
from django.utils.html import format_html, json_script

from scheduler_core.engine.model import GangPhase
from scheduler_core.reads.selectors import gang_state

register = template.Library()

#: The phases, ``Provisional`` (pods came, their declaration not yet) and ``NotSubmitted`` (a
#: group's gang listed, not created yet): dashboard.css colours each ``state-<State>`` class.
STATES = [phase.value for phase in GangPhase] + ["Provisional", "NotSubmitted"]
BADGES = {state: {"text": state, "class": f"gang-state state-{state}"} for state in STATES}
UNKNOWN = "gang-state"


def badge(state: str) -> dict[str, str]:
    return BADGES.get(state, {"text": state, "class": UNKNOWN})


@register.simple_tag
def state_badge(state: str, key: str = ""):
    shown = badge(state)
    if key:
        html = '<span class="{}" data-gang="{}" data-state="{}">{}</span>'
        return format_html(html, shown["class"], key, state, shown["text"])
    return format_html('<span class="{}" data-state="{}">{}</span>', shown["class"], state, shown["text"])


@register.simple_tag
def gang_badge(gang):
    return state_badge(gang_state(gang), gang.key)


@register.simple_tag
def state_badges_json():
    return json_script(BADGES, "gang-state-badges")

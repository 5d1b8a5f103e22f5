"""YuniKorn's marks that outlive parsing: the source name of its gangs and the annotation of the
placeholder pods gangsched makes for task groups. The declarations write them; the services and
the Kubernetes backend recognise placeholders by them."""

from __future__ import annotations

PREFIX = "yunikorn.apache.org/"
#: The ``source`` of gangs declared by YuniKorn task groups.
SOURCE = "yunikorn"
#: YuniKorn's own annotation on its placeholder pods; gangsched marks its placeholders the same way.
PLACEHOLDER = PREFIX + "placeholder"


def is_placeholder(annotations: dict[str, str]) -> bool:
    return annotations.get(PLACEHOLDER) == "true"

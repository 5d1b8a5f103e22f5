"""The secret key a benchmark's processes sign with, on the machine it runs on.

With DEBUG off, gangsched refuses to start without a real SECRET_KEY (gangsched/settings/
secret_key.py). A benchmark is a local install: it uses the key ``make run`` keeps in
``.run/secret_key``, writing one (random, owner-only) if this checkout has none yet, so the
servers a benchmark starts and a ``make run`` beside it agree on sessions.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

KEY_FILE = Path(__file__).resolve().parent.parent / ".run" / "secret_key"


def ensure_local_key() -> None:
    if os.environ.get("SECRET_KEY") or os.environ.get("GANGSCHED_SECRET_KEY_FILE") or KEY_FILE.exists():
        return
    KEY_FILE.parent.mkdir(exist_ok=True)
    temporary = KEY_FILE.with_suffix(".tmp")
    temporary.write_text(secrets.token_urlsafe(50) + "\n")
    temporary.chmod(0o600)
    temporary.replace(KEY_FILE)

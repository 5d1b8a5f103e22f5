"""``LOG_FORMAT=json``: one JSON object per log line, for log shippers (Loki, Elasticsearch).

Each line has ``time`` (ISO 8601, UTC), ``level``, ``logger``, ``message`` (arguments already
merged) and every ``extra`` field the call passed, such as ``gang`` ("namespace/name") and
``by``, so a search for one gang's lines does not depend on parsing messages. Exceptions come as
``exc_info`` text. The default format stays the human-readable one.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

#: What every LogRecord has; anything else on a record came from ``extra``.
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                line[key] = value
        if record.exc_info:
            line["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)

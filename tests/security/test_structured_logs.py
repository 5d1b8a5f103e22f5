"""``LOG_FORMAT=json``: one JSON object a line with the gang's name as a field; the operator's
and the submission's log lines carry ``gang`` (and ``by``) in ``extra``."""

import json
import logging
import sys

import pytest

from gangsched.logformat import JsonFormatter
from scheduler_core.models import Gang, Node, SchedulingCycle
from scheduler_core.services.cycle import cycle_run
from scheduler_core.services.operator import gang_kill, gang_retry
from tests.cast import make_gang

from .processes import manage


@pytest.mark.django_db
def test_submission_retry_and_kill_log_the_gang_and_who(caplog):
    caplog.set_level(logging.INFO, logger="scheduler_core")
    gang = make_gang("ml", "train", submitter="alice")
    Gang.objects.filter(pk=gang.pk).update(phase="TimedOut")
    gang_retry(gang=gang, by="olga")
    gang_kill(gang=gang, by="olga")

    lines = [json.loads(JsonFormatter().format(r)) for r in caplog.records if getattr(r, "gang", None)]

    assert [(line["gang"], line.get("by"), line["message"]) for line in lines] == [
        ("ml/train", None, "gang ml/train submitted: 2 pods, min_member 2"),
        ("ml/train", "olga", "gang ml/train retried by olga"),
        ("ml/train", "olga", "gang ml/train killed by olga"),
    ]
    assert {"time", "level", "logger"} <= set(lines[0]) and lines[0]["level"] == "INFO"


def test_an_exception_is_one_line_with_its_traceback():
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed %s", ("ml/a",), sys.exc_info())
    text = JsonFormatter().format(record)
    assert "\n" not in text
    line = json.loads(text)
    assert line["message"] == "failed ml/a" and "RuntimeError: boom" in line["exc_info"]


LOG_ONE = (
    "import logging; "
    "logging.getLogger('scheduler_core.x').warning('gang %s late', 'ml/a', extra={'gang': 'ml/a'})"
)


def run_with(log_format: str | None) -> str:  # the log line of LOG_ONE
    env = {"LOG_FORMAT": log_format} if log_format is not None else {}
    result = manage("shell", "-c", LOG_ONE, drop=("LOG_FORMAT",), **env)
    assert result.returncode == 0, result.stderr
    return [line for line in result.stderr.splitlines() if "late" in line][0]


def test_log_format_json_switches_the_console_to_json_and_the_default_stays_readable():
    line = json.loads(run_with("json"))
    assert (line["gang"], line["level"], line["message"]) == ("ml/a", "WARNING", "gang ml/a late")
    assert run_with(None).endswith("WARNING scheduler_core.x: gang ml/a late")


@pytest.mark.django_db
def test_a_cycle_logs_each_gang_state_change_with_the_gang_and_the_cycle(caplog):
    Node.objects.create(name="n0", allocatable={"cpu": 8000, "memory": 8 * 2**30})
    make_gang("ml", "fits", submitter="alice")
    caplog.set_level(logging.INFO, logger="scheduler_core")
    cycle_run(holder="test")

    lines = [json.loads(JsonFormatter().format(r)) for r in caplog.records if getattr(r, "event", None)]

    assert [(line["gang"], line["event"]) for line in lines] == [("ml/fits", "satisfied")]
    assert lines[0]["cycle"] == SchedulingCycle.objects.get().pk
    assert lines[0]["message"].startswith("gang ml/fits satisfied: 2 members bound together")

"""Job traces: the gangsched CSV and the shared traces in their own formats, read into ``Job``s.

Every reader checks every row and reports *all* the bad ones with their line number (the header
is line 1) in one ``TraceError``: a replay on a trace with a silently dropped or guessed row would
compare policies on a workload nobody asked for.

The gangsched CSV (``bench/make_trace.py`` writes it; any spreadsheet can)::

    job_id,submit_s,workers,min_workers,duration_s,cpu,memory,gpu,priority,queue
    train-1,0,8,8,3600,8,64Gi,1,0,default

``cpu``, ``memory`` and ``gpu`` are per worker, in Kubernetes quantities (``500m``, ``64Gi``);
``duration_s`` is the job's run time once its gang has started; ``priority`` and ``queue`` may be
empty (0 and ``default``). An optional last column ``user`` names the submitter (empty: none
named), whose finished jobs a replay without an oracle learns runtimes from (``runtime_view.py``).
A Tiresias trace may carry a ``user`` column too; without one, its ``model_name`` stands in.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from scheduler_core.engine.quantity import QuantityError, canonical_amount

GPU = "nvidia.com/gpu"
GANGSCHED_COLUMNS = (
    "job_id",
    "submit_s",
    "workers",
    "min_workers",
    "duration_s",
    "cpu",
    "memory",
    "gpu",
    "priority",
    "queue",
)
#: The optional last column of the gangsched CSV (and an optional one of a Tiresias trace).
USER_COLUMN = "user"
TIRESIAS_COLUMNS = ("job_id", "num_gpu", "submit_time", "duration")
TIRESIAS_MODEL = "model_name"
#: A submitter's name: no spaces or control characters, at most this long (a Kubernetes
#: user name, an e-mail address or an id all fit).
USER_MAX = 253
#: A Tiresias worker is one GPU; it gets that GPU's share of an n32g4 node (40 CPUs, 256 GB, 4 GPUs),
#: so CPU and memory never bind before GPUs do, as on the cluster the trace was measured on.
TIRESIAS_WORKER = {"cpu": 10_000, "memory": 64 * 2**30, GPU: 1}
MAX_SHOWN_ERRORS = 20


@dataclass(frozen=True, slots=True)
class Job:
    """One job of a trace: a gang of ``workers`` identical pods, ``min_workers`` of them required."""

    id: str
    submit: float
    workers: int
    min_workers: int
    duration: float
    requests: Mapping[str, int]  # per worker, canonical integers (engine/quantity.py)
    priority: int = 0
    queue: str = "default"
    user: str | None = None  # the submitter the trace names; None: none named
    kind: str | None = None  # what the job runs, where the trace says (Tiresias' model_name)


@dataclass(frozen=True, slots=True)
class Trace:
    name: str
    format: str
    jobs: tuple[Job, ...]


class TraceError(ValueError):
    """A trace that cannot be replayed; ``errors`` lists ``(line, reason)`` for every bad row."""

    def __init__(self, name: str, errors: list[tuple[int, str]]) -> None:
        self.name = name
        self.errors = errors
        shown = "; ".join(f"line {line}: {reason}" for line, reason in errors[:MAX_SHOWN_ERRORS])
        more = f"; and {len(errors) - MAX_SHOWN_ERRORS} more" if len(errors) > MAX_SHOWN_ERRORS else ""
        super().__init__(f"{name}: {len(errors)} bad row(s): {shown}{more}")


class _RowError(ValueError):
    pass


def load_trace(path: str | Path) -> Trace:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise TraceError(path.name, [(0, f"cannot read the file: {error}")]) from error
    return parse_trace(text, path.name)


def parse_trace(text: str, name: str = "trace") -> Trace:
    """Read a trace in any known format, recognised by its header."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or not any(cell.strip() for cell in rows[0]):
        raise TraceError(name, [(1, "empty file: expected a header row")])
    header = [cell.strip() for cell in rows[0]]
    if tuple(header) in (GANGSCHED_COLUMNS, (*GANGSCHED_COLUMNS, USER_COLUMN)):
        reader, fmt = _gangsched_job, "gangsched"
    elif all(column in header for column in TIRESIAS_COLUMNS):
        reader, fmt = _tiresias_job, "tiresias"
    else:
        raise TraceError(
            name,
            [
                (
                    1,
                    f"unknown header {','.join(header)!r}: expected {','.join(GANGSCHED_COLUMNS)} "
                    f"(gangsched) or a Tiresias trace with {', '.join(TIRESIAS_COLUMNS)}",
                )
            ],
        )
    return Trace(name, fmt, _read_rows(name, header, rows[1:], reader))


def _read_rows(
    name: str, header: list[str], rows: list[list[str]], reader: Callable[[dict[str, str]], Job]
) -> tuple[Job, ...]:
    jobs: list[Job] = []
    errors: list[tuple[int, str]] = []
    seen: set[str] = set()
    for number, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue  # a blank line (a trailing newline, a spacer): nothing to guess
        if len(row) != len(header):
            errors.append((number, f"expected {len(header)} fields, found {len(row)}"))
            continue
        try:
            job = reader({key: cell.strip() for key, cell in zip(header, row, strict=True)})
        except _RowError as error:
            errors.append((number, str(error)))
            continue
        if job.id in seen:
            errors.append((number, f"job_id {job.id!r} appears twice"))
            continue
        seen.add(job.id)
        jobs.append(job)
    if errors:
        raise TraceError(name, errors)
    if not jobs:
        raise TraceError(name, [(2, "no jobs: the trace has a header and nothing else")])
    return tuple(jobs)


def _gangsched_job(row: dict[str, str]) -> Job:
    workers = _integer(row, "workers", minimum=1)
    min_workers = _integer(row, "min_workers", minimum=1)
    if min_workers > workers:
        raise _RowError(f"min_workers ({min_workers}) is larger than workers ({workers})")
    requests = {}
    for column, resource in (("cpu", "cpu"), ("memory", "memory"), ("gpu", GPU)):
        try:
            amount = canonical_amount(resource, row[column] or "0")
        except QuantityError as error:
            raise _RowError(f"{column}: {error}") from error
        if amount:
            requests[resource] = amount
    if not requests:
        raise _RowError("a worker must request some cpu, memory or gpu")
    return Job(
        id=_job_id(row),
        submit=_number(row, "submit_s", minimum=0.0),
        workers=workers,
        min_workers=min_workers,
        duration=_number(row, "duration_s", minimum=0.0, strict=True),
        requests=requests,
        priority=_integer(row, "priority", default=0),
        queue=row["queue"] or "default",
        user=_user(row),
    )


def _tiresias_job(row: dict[str, str]) -> Job:
    gpus = _integer(row, "num_gpu", minimum=1)
    return Job(
        id=_job_id(row),
        submit=_number(row, "submit_time", minimum=0.0),
        workers=gpus,
        min_workers=gpus,
        duration=_number(row, "duration", minimum=0.0, strict=True),
        requests=TIRESIAS_WORKER,
        user=_user(row) or row.get(TIRESIAS_MODEL) or None,
        kind=row.get(TIRESIAS_MODEL) or None,
    )


def _user(row: dict[str, str]) -> str | None:
    """The ``user`` cell: empty or absent is no submitter named."""
    text = row.get(USER_COLUMN, "")
    if not text:
        return None
    if len(text) > USER_MAX:
        raise _RowError(f"user is {len(text)} characters long, at most {USER_MAX}")
    if any(char.isspace() or not char.isprintable() for char in text):
        raise _RowError(f"user {text!r} has a space or a control character")
    return text


def _job_id(row: dict[str, str]) -> str:
    job_id = row["job_id"]
    if not job_id:
        raise _RowError("job_id is empty")
    return job_id


def _integer(row: dict[str, str], column: str, minimum: int | None = None, default: int | None = None) -> int:
    text = row[column]
    if not text and default is not None:
        return default
    try:
        value = int(text)
    except ValueError:
        raise _RowError(f"{column} must be a whole number, got {text!r}") from None
    if minimum is not None and value < minimum:
        raise _RowError(f"{column} must be at least {minimum}, got {value}")
    return value


def _number(row: dict[str, str], column: str, minimum: float, strict: bool = False) -> float:
    text = row[column]
    try:
        value = float(text)
    except ValueError:
        raise _RowError(f"{column} must be a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value < minimum or (strict and value == minimum):
        bound = "greater than" if strict else "at least"
        raise _RowError(f"{column} must be {bound} {minimum:g}, got {text!r}")
    return value


def write_gangsched_csv(jobs: list[Job], out: io.TextIOBase) -> None:
    """The gangsched CSV of ``jobs`` (cpu in milli-CPU, memory in bytes, as exact quantities); the
    ``user`` column only when some job names a submitter."""
    writer = csv.writer(out, lineterminator="\n")
    users = any(job.user is not None for job in jobs)
    writer.writerow((*GANGSCHED_COLUMNS, USER_COLUMN) if users else GANGSCHED_COLUMNS)
    for job in jobs:
        row = [
            job.id,
            _seconds(job.submit),
            job.workers,
            job.min_workers,
            _seconds(job.duration),
            f"{job.requests.get('cpu', 0)}m",
            job.requests.get("memory", 0),
            job.requests.get(GPU, 0),
            job.priority,
            job.queue,
        ]
        writer.writerow([*row, job.user or ""] if users else row)


def _seconds(value: float) -> str:
    """Seconds to the millisecond, without trailing zeros (``:g`` would round 123456.7 to 123457)."""
    return f"{value:.3f}".rstrip("0").rstrip(".")

"""Where trace files are: the one place that knows, for the dashboard, the benchmarks and the tests.

A clone of the repository alone must replay and test, so the small traces ship in the repository's
``traces/`` (their sources and how the samples were derived: ``traces/SOURCES.md``). Larger traces
(a full node list, a month of jobs) stay outside it: ``GANGSCHED_TRACES_DIR`` names their
directory, or several separated by ``os.pathsep`` (``:``), searched before ``traces/``, so a file
there is offered beside the shipped ones and, under the same name, replaces one. Nothing else is
looked in: a path beside the clone would make the tests differ from one machine to the next.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

#: The small traces shipped with the repository.
REPOSITORY_TRACES = Path(__file__).resolve().parents[2] / "traces"
ENVIRONMENT_VARIABLE = "GANGSCHED_TRACES_DIR"


def trace_dirs(environ: Mapping[str, str] = os.environ) -> list[Path]:
    """The directories searched for a trace by name, first match wins."""
    configured = environ.get(ENVIRONMENT_VARIABLE, "")
    return [Path(part).expanduser() for part in configured.split(os.pathsep) if part] + [REPOSITORY_TRACES]


def trace_files(pattern: str = "*.csv", environ: Mapping[str, str] = os.environ) -> list[Path]:
    """Every file matching ``pattern`` in the trace directories, one per name (the first found),
    sorted by name."""
    found: dict[str, Path] = {}
    for directory in trace_dirs(environ):
        for path in sorted(directory.glob(pattern)):
            found.setdefault(path.name, path)
    return [found[name] for name in sorted(found)]


def find_trace(name: str, environ: Mapping[str, str] = os.environ) -> Path:
    """The file called ``name`` (a bare file name) in the first trace directory that has it.

    FileNotFoundError names the directories searched, so a missing GANGSCHED_TRACES_DIR reads as
    one."""
    if not name or Path(name).name != name or name in (".", ".."):
        raise ValueError(f"a trace is named by its file name alone, got {name!r}")
    directories = trace_dirs(environ)
    for directory in directories:
        if (directory / name).is_file():
            return directory / name
    searched = ", ".join(str(directory) for directory in directories)
    raise FileNotFoundError(
        f"no trace {name!r} in {searched} (set {ENVIRONMENT_VARIABLE} to add a directory)"
    )

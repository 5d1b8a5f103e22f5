"""The repository speaks of the product only: no file git tracks refers to how the work on it was
organised. No numbered work item ("issue 19", "issue-21", "(#31)"), no numbered session or stage
of the work, no branch it was made on ("branch pages2", "this branch"), and nobody who did it ("the
helper's", "by an agent", "other agents' load tests", "subagent"). A comment says instead what the
reference stood for: the feature, a peer's behaviour, the measured fact, the failure it guards
against.

Ordinary words stay ordinary: a helper function, a database or browser session, a pipeline stage,
issuing a token, a branch of a tree, the ``User-Agent`` header, and other projects' issues named
with their project ("kueue #7015, #3948", "django/channels_redis#422").

Text is scanned whole (a phrase may wrap onto the next line); binary files are skipped. This file
is skipped too: it holds the examples the patterns are tested on.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()

_WHO = r"(?:helper|agent)"
_DETERMINER = r"(?:the|a|an|another|other|each|every|one|some|that|this)"
_THING = r"function|class|method|module|script|process|thread|fixture"
_DID = r"(?:did|does|wrote|added|found|fixed|ran|measured|made|changed|left|reported|saw|noted|tried)"

#: Work-log references: (what it is, pattern). Case-insensitive; ``\s+`` spans line breaks.
PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("work item number", re.compile(r"\bissues?[\s-]?#?\d+", re.I)),
    ("work item number", re.compile(r"\biss\d+\b", re.I)),
    ("work session number", re.compile(r"\bsessions?[\s-]\d+\b", re.I)),
    ("work stage number", re.compile(r"\bstages?[\s-]\d+\b", re.I)),
    ("branch name", re.compile(r"\bbranch(?:es)?\s+(?=[\w./]*[\d/-])[\w./-]*\w", re.I)),
    ("branch name", re.compile(r"\b(?:on|onto|into)\s+branch\b", re.I)),
    (
        "branch of the work",
        re.compile(r"\b(?:this|that|another|other|my|our|your|feature|work|git)\s+branch(?:'s|es)?\b", re.I),
    ),
    ("who did the work", re.compile(r"\bsub-?agents?\b", re.I)),
    ("who did the work", re.compile(rf"(?<![\w-]){_WHO}s'", re.I)),
    ("who did the work", re.compile(rf"\b{_DETERMINER}\s+{_WHO}'s\b", re.I)),
    ("who did the work", re.compile(rf"\b(?:by|from)\s+{_DETERMINER}\s+{_WHO}s?\b(?!\s+(?:{_THING}))", re.I)),
    ("who did the work", re.compile(rf"\b(?:another|other)\s+{_WHO}s?\b(?!\s+(?:{_THING}))", re.I)),
    ("who did the work", re.compile(rf"(?<![\w-]){_WHO}s?\s+{_DID}\b", re.I)),
]

#: ``#N`` names a work item unless a project names the tracker: ``kueue #7015, #3948``,
#: ``KAI-Scheduler #1934``, ``django/channels_redis#422``. Colours (``color: #333``) and HTML
#: character references (``&#39;``) are not numbers of anything.
_EXTERNAL = re.compile(r"\b(?P<project>[A-Za-z][\w.-]*(?:/[\w.-]+)?)\s?#\d+(?:\s*(?:,|/|and)\s*#\d+)*")
_BARE_NUMBER = re.compile(r"(?<![\w&#])#\d+\b(?![\w-])")
_COLOUR = re.compile(r":\s*$")
#: Words before ``#N`` that make it a work item, not a project's: "see #31", "fixed in #31".
_NOT_A_PROJECT = {
    "issue", "issues", "pr", "prs", "see", "in", "by", "from", "after", "since", "of", "per",
    "ticket", "tickets", "fix", "fixes", "fixed", "close", "closes", "closed", "resolves", "bug",
    "item", "and", "or", "also", "as", "to", "for",
}  # fmt: skip


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _bare_numbers(text: str) -> list[int]:
    """Offsets of ``#N`` work-item references: not a project's issue, a colour or an entity."""
    kept = []
    for match in _EXTERNAL.finditer(text):
        if match["project"].lower() not in _NOT_A_PROJECT:
            kept.append(match.span())
    found = []
    for match in _BARE_NUMBER.finditer(text):
        if any(start <= match.start() < end for start, end in kept):
            continue
        if _COLOUR.search(text[max(0, match.start() - 40) : match.start()].rsplit("\n", 1)[-1]):
            continue
        found.append(match.start())
    return found


def work_log_words(text: str) -> list[tuple[int, str, str]]:
    """(line, kind, matched text) for each work-log reference in ``text``, in line order."""
    hits = []
    for kind, pattern in PATTERNS:
        for match in pattern.finditer(text):
            hits.append((_line(text, match.start()), kind, " ".join(match.group().split())))
    for offset in _bare_numbers(text):
        hits.append((_line(text, offset), "work item number", _BARE_NUMBER.match(text, offset).group()))
    first = {}
    for line, kind, matched in sorted(hits):
        first.setdefault((line, kind), matched)  # one report per line and kind
    return [(line, kind, matched) for (line, kind), matched in first.items()]


def _tracked_texts() -> list[tuple[str, str]]:
    """(path, text) of every text file git tracks, this one left out."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
        ).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.skip(f"not a git checkout: {error}")
    texts = []
    for name in sorted(filter(None, listed.decode().split("\0"))):
        path = ROOT / name
        if name == SELF or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            texts.append((name, data.decode("utf-8")))
        except UnicodeDecodeError:
            continue
    return texts


def test_no_tracked_file_speaks_of_the_work_instead_of_the_product():
    found = [
        f"{name}:{line}: {kind}: {matched!r}"
        for name, text in _tracked_texts()
        for line, kind, matched in work_log_words(text)
    ]
    assert not found, "work-log words (say what they refer to instead):\n" + "\n".join(found)


@pytest.mark.parametrize(
    "text",
    [
        "Queues (issue 19): the tree.",
        "before Issue 21's changes",
        "see [Trace replay](trace-replay.md#topology-issue-20)",
        "issues 19 and 20",
        "iss19 follow-up",
        "measured in session 12",
        "*Session 13*: the load client",
        "stage 3 of the plan",
        "built on branch pages2",
        "merged from branch w-words",
        "main + this branch",
        "another branch): those tests run once it is merged",
        "the helper's run",
        "helper subagent",
        "a helper did it",
        "written by a helper",
        "the helpers' figures",
        "beside another agent's service",
        "from other agents' work",
        "other agents'\nload tests",
        "an agent measured it",
        "the agent ran it",
        "fixed in #31",
        "(#31)",
        "see #31, #32",
    ],
)
def test_the_scanner_finds_work_log_words(text):
    assert work_log_words(text), text


@pytest.mark.parametrize(
    "text",
    [
        "a helper function",
        "Helpers for the queue tests",
        "from .helpers import trace_text",
        "the helper retries a 410 itself",
        "Every helper runs on the emulator's loop",
        "component-helpers' node affinity matching",
        "another helper function",
        "computed by the helper function below",
        "a User-Agent added by the client",
        "User-Agent: gangsched-load",
        "the node agent's heartbeat",
        "issue a token",
        "issues a warning",
        "no issues",
        "a database session",
        "sessions are signed with the key",
        "scheduler_core/engine/session.py:25",
        "a pipeline stage",
        "each stage of the cycle",
        "a branch of the queue tree",
        "kueue #7015, #3948",
        "kueue #7015 / #3948",
        "KAI-Scheduler #1934",
        "(django/channels_redis#422)",
        "kombu #582's shape",
        ":root { --fg: #1d2330; --muted: #667085; }",
        "color:#333",
        "it&#39;s",
        "a gang of 8 pods, 2 per node",
    ],
)
def test_the_scanner_passes_ordinary_words(text):
    assert work_log_words(text) == [], text

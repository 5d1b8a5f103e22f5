"""The documentation cannot drift from the code: every relative link of README.md and docs/*.md
leads to a file (and heading) that exists, every ``make <target>`` and ``manage.py <command>`` it
names exists, docs/configuration.md lists every environment variable the code reads exactly
once, and the README's tour does what it says on the cluster ``make run`` seeds."""

from __future__ import annotations

import re
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command, get_commands
from django.utils import timezone

from scheduler_core.engine.model import GangPhase
from scheduler_core.models import Gang
from scheduler_core.services.cycle import cycle_run, timeouts_sweep
from scheduler_core.services.kubelet import kubelet_tick

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def prose(text: str) -> str:
    """The text without fenced code blocks (a link in code is not a link)."""
    return FENCE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", prose(path.read_text()), re.M):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def links() -> list[tuple[Path, str]]:
    return [(page, target) for page in PAGES for target in LINK.findall(prose(page.read_text()))]


def test_the_slug_is_githubs():
    assert slug("How a gang is scheduled (the engine)") == "how-a-gang-is-scheduled-the-engine"
    assert slug("Driving it as KWOK is driven") == "driving-it-as-kwok-is-driven"
    assert slug("`make run`: the two commands") == "make-run-the-two-commands"


def test_the_readme_is_short_and_links_into_docs():
    readme = ROOT / "README.md"
    assert readme.stat().st_size < 10 * 1024, "README.md must stay under 10 KB: move detail to docs/"
    targets = {target.split("#")[0] for page, target in links() if page == readme}
    for page in PAGES[1:]:
        assert f"docs/{page.name}" in targets, f"README.md does not link to docs/{page.name}"


@pytest.mark.parametrize("page,target", links(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_every_relative_link_resolves(page, target):
    if re.match(r"[a-z]+:", target):  # http:, https:, mailto: are not ours to check
        return
    path, _, anchor = target.partition("#")
    destination = (page.parent / path).resolve() if path else page
    assert destination.exists(), f"{page.relative_to(ROOT)} links to {target}: no such file"
    if anchor and destination.suffix == ".md":
        assert anchor in anchors(destination), f"{page.relative_to(ROOT)} links to {target}: no such heading"


CODE = re.compile(r"^(```|~~~).*?^\1|`[^`\n]+`", re.M | re.S)


def named(pattern: str) -> set[tuple[str, str]]:
    """What ``pattern`` captures in the code of every page (code blocks and `code spans`: in
    prose, "make a busy cluster" is English)."""
    return {
        (page.relative_to(ROOT).as_posix(), name)
        for page in PAGES
        for code in CODE.finditer(page.read_text())
        for name in re.findall(pattern, code.group(0))
    }


def test_every_make_target_named_exists():
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([\w-]+):", makefile, re.M))
    used = named(r"(?<![\w/.-])make ([a-z][\w-]*)")
    assert used, "the docs name no make target: the pattern is wrong"
    missing = sorted((page, target) for page, target in used if target not in targets)
    assert not missing, f"make targets named in the docs but not in the Makefile: {missing}"


def test_every_manage_py_command_named_exists():
    commands = set(get_commands())
    used = named(r"manage\.py ([a-z][\w-]*)")
    assert {"apply", "get", "describe", "simulate"} <= {name for _, name in used}
    missing = sorted((page, name) for page, name in used if name not in commands)
    assert not missing, f"manage.py commands named in the docs that do not exist: {missing}"


def variables_read() -> set[str]:
    """Every environment variable the service, its tests and its benchmarks read by name."""
    pattern = re.compile(r"""(?:environ\.get|environ\[|getenv)\(?\s*["']([A-Z][A-Z0-9_]+)["']""")
    found = set()
    for folder in ("gangsched", "scheduler_core", "dashboard", "scripts", "bench", "tests"):
        for path in (ROOT / folder).rglob("*.py"):
            found |= set(pattern.findall(path.read_text()))
    # Not settings: set by the tests for their own processes, or the system's own.
    return found - {"DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE", "PATH", "CI", "HOME"}


def test_every_environment_variable_is_documented_once():
    text = (ROOT / "docs" / "configuration.md").read_text()
    rows = [line.split("|")[1] for line in text.splitlines() if line.startswith("| `")]
    documented = [name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row)]
    twice = sorted({name for name in documented if documented.count(name) > 1})
    assert not twice, f"variables documented twice in docs/configuration.md: {twice}"
    missing = sorted(variables_read() - set(documented))
    assert not missing, f"variables the code reads that docs/configuration.md lacks: {missing}"
    elsewhere = [p.name for p in PAGES if p.name != "configuration.md" and "| Variable |" in p.read_text()]
    assert not elsewhere, f"variable tables outside docs/configuration.md: {elsewhere}"


@pytest.mark.django_db
def test_the_readme_tour_on_the_cluster_make_run_seeds():
    """The README's 5-minute tour, cycle by cycle: the trainer binds whole, the too-big gang waits
    saying why, times out, is retried and killed."""
    for command in ("seed_cluster", "submit_demo"):
        call_command(command, stdout=StringIO())
    out = StringIO()
    call_command("apply", "-f", str(ROOT / "docs" / "tour" / "trainer.yaml"), stdout=out)
    call_command("apply", "-f", str(ROOT / "docs" / "tour" / "too-big.yaml"), stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "gangjob.gangsched.io/trainer created" and "gang tour/too-big created" in lines

    cycle_run(holder="tour")
    kubelet_tick(now=timezone.now())  # the simulated kubelet starts the bound pods
    trainer, too_big = (Gang.objects.get(namespace="tour", name=name) for name in ("trainer", "too-big"))
    assert trainer.phase == GangPhase.RUNNING.value
    assert trainer.members.count() == 4 and not trainer.members.filter(node=None).exists()
    assert too_big.phase == GangPhase.SCHEDULING.value, too_big.message
    assert too_big.reason == "InsufficientResources", too_big.message
    describe = StringIO()
    call_command("describe", "gang", "tour/too-big", stdout=describe)
    assert "InsufficientResources" in describe.getvalue()

    Gang.objects.filter(pk=too_big.pk).update(wait_started=timezone.now() - timedelta(seconds=31))
    timeouts_sweep(holder="tour")
    too_big.refresh_from_db()
    assert too_big.phase == GangPhase.TIMED_OUT.value
    for command, said in (("retry", "retried: Pending"), ("kill", "killed: Killed")):
        out = StringIO()
        call_command(command, "tour/too-big", stdout=out)
        assert out.getvalue() == f"gang tour/too-big {said}\n"

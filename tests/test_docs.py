"""The documentation cannot drift from the code: every relative link of README.md, docs/*.md and
bench/README.md leads to a file (and heading) that exists, every ``make <target>`` and
``manage.py <command>`` it names exists, docs/configuration.md lists every environment variable
the code reads exactly once, and the README's tour does what it says on the cluster ``make run``
seeds. And the pages stay readable: a page over 300 lines opens with a Contents list of its
headings, and the pages of one topic (security, bad input, operations, faults) stay short and
start with a heading."""

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
#: Every page a reader reads: the README, docs/ and how the benchmarks measure.
READ = [*PAGES, ROOT / "bench" / "README.md"]
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def prose(text: str) -> str:
    """The text without fenced code blocks (a link in code is not a link)."""
    return FENCE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes. A code
    span keeps its underscores (`api_cost.py`); outside code, `*` and `_` around words are
    emphasis and go."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    parts = re.split(r"(`[^`]*`)", text)
    text = "".join(
        part[1:-1] if part.startswith("`") else re.sub(r"\*|(?<!\w)_+|_+(?!\w)", "", part) for part in parts
    )
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return anchors_of(path.read_text())


def anchors_of(text: str) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", prose(text), re.M):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    # An explicit anchor (<a id="...">) before a paragraph that is not a heading.
    return result | set(re.findall(r'<a id="([^"]+)"></a>', text))


def links() -> list[tuple[Path, str]]:
    return [(page, target) for page in READ for target in LINK.findall(prose(page.read_text()))]


def test_the_slug_is_githubs():
    assert slug("How a gang is scheduled (the engine)") == "how-a-gang-is-scheduled-the-engine"
    assert slug("Driving it as KWOK is driven") == "driving-it-as-kwok-is-driven"
    assert slug("`make run`: the two commands") == "make-run-the-two-commands"
    assert slug("`api_cost.py`: what one request costs") == "api_costpy-what-one-request-costs"
    assert slug("The *fast* _path_") == "the-fast-path"


def test_the_readme_is_short_and_links_into_docs():
    readme = ROOT / "README.md"
    assert readme.stat().st_size < 10 * 1024, "README.md must stay under 10 KB: move detail to docs/"
    targets = {target.split("#")[0] for page, target in links() if page == readme}
    for page in PAGES[1:]:
        assert f"docs/{page.name}" in targets, f"README.md does not link to docs/{page.name}"


def page_id(value):
    return value.relative_to(ROOT).as_posix() if isinstance(value, Path) else value


@pytest.mark.parametrize("page,target", links(), ids=page_id)
def test_every_relative_link_resolves(page, target):
    if re.match(r"[a-z]+:", target):  # http:, https:, mailto: are not ours to check
        return
    path, _, anchor = target.partition("#")
    destination = (page.parent / path).resolve() if path else page
    assert destination.exists(), f"{page.relative_to(ROOT)} links to {target}: no such file"
    if anchor and destination.suffix == ".md":
        assert anchor in anchors(destination), f"{page.relative_to(ROOT)} links to {target}: no such heading"


#: A page longer than this opens with a Contents list; a page of one of the topics below stays
#: within TOPIC_MAX_LINES and has a heading within its first HEADING_WITHIN lines.
MAX_LINES = 300
TOPIC_PAGES = ("security.md", "bad-input.md", "operations.md", "faults.md")
TOPIC_MAX_LINES = 250
HEADING_WITHIN = 5
CONTENTS = re.compile(r"^(?:#{1,6} +)?(?:\*\*)?Contents(?:\*\*)?:?$")
ITEM = re.compile(r"^ *[-*] +\[[^\]]*\]\(#([^)\s]+)\)")


def contents_problems(text: str) -> list[str]:
    """Why a page fails the length rule: over MAX_LINES lines, it must have a Contents list (a
    line "Contents:", "**Contents**" or a "Contents" heading, then a bulleted list of links to
    its own headings) before its first section, listing every section (every `##` heading)."""
    if len(text.splitlines()) <= MAX_LINES:
        return []
    # Code blocks blanked, line for line: a "## " in a shell block is no section.
    lines = FENCE.sub(lambda block: "\n" * block.group(0).count("\n"), text).splitlines()
    sections = [i for i, line in enumerate(lines) if line.startswith("## ") and not CONTENTS.match(line)]
    starts = [i for i, line in enumerate(lines) if CONTENTS.match(line)]
    if not starts or (sections and starts[0] > sections[0]):
        return [f"{len(text.splitlines())} lines and no Contents list before its first section"]
    listed = []
    for line in lines[starts[0] + 1 :]:
        if not line.strip() and not listed:
            continue
        item = ITEM.match(line)
        if not item:
            break
        listed.append(item.group(1))
    if not listed:
        return ["its Contents list links to no heading"]
    unknown = [anchor for anchor in listed if anchor not in anchors_of(text)]
    problems = [f"Contents links to #{anchor}: no such heading" for anchor in unknown]
    for i in sections:
        anchor = slug(re.sub(r" *#*$", "", lines[i][3:]))
        if anchor not in listed:
            problems.append(f"Contents leaves out the section {lines[i]!r}")
    return problems


def topic_page_problems(text: str) -> list[str]:
    """Why a page of one topic fails: over TOPIC_MAX_LINES lines, or no heading in its first
    HEADING_WITHIN lines."""
    lines = text.splitlines()
    problems = []
    if len(lines) > TOPIC_MAX_LINES:
        problems.append(f"{len(lines)} lines, more than {TOPIC_MAX_LINES}")
    if not any(re.match(r"#{1,6} +\S", line) for line in lines[:HEADING_WITHIN]):
        problems.append(f"no heading in its first {HEADING_WITHIN} lines")
    return problems


def long_page(contents: str = "", sections: int = 3) -> str:
    """A synthetic page of MAX_LINES + 1 lines or more: a title, a paragraph, ``contents``, then
    ``sections`` sections of filler."""
    body = [f"## Part {n}\n\n" + "text\n" * 120 for n in range(1, sections + 1)]
    return "# A long page\n\nWhat it is.\n\n" + contents + "\n".join(body)


def test_the_length_rule_on_synthetic_pages():
    listed = "Contents:\n\n" + "".join(f"- [Part {n}](#part-{n})\n" for n in (1, 2, 3)) + "\n"
    assert len(long_page().splitlines()) > MAX_LINES
    assert contents_problems(long_page(listed)) == []
    assert contents_problems(long_page(listed.replace("Contents:", "## Contents"))) == []

    def missing(page: str) -> list[str]:
        return [f"{len(page.splitlines())} lines and no Contents list before its first section"]

    assert contents_problems(long_page()) == missing(long_page())
    assert contents_problems(long_page(listed.replace("#part-3", "#part-9"))) == [
        "Contents links to #part-9: no such heading",
        "Contents leaves out the section '## Part 3'",
    ]
    assert contents_problems(long_page(listed, sections=4)) == ["Contents leaves out the section '## Part 4'"]
    late = long_page() + "\nContents:\n\n- [Part 1](#part-1)\n"
    assert contents_problems(late) == missing(late)
    assert contents_problems(long_page("Contents:\n\nNone yet.\n\n")) == [
        "its Contents list links to no heading"
    ]
    fenced = long_page(listed) + "\n```sh\n## not a section\n```\n"
    assert contents_problems(fenced) == []
    assert contents_problems("# Short\n\n" + "text\n" * (MAX_LINES - 2)) == []


@pytest.mark.parametrize("page", READ, ids=page_id)
def test_a_long_page_opens_with_its_contents(page):
    problems = contents_problems(page.read_text())
    assert not problems, f"{page.relative_to(ROOT)}: {problems}: split it by topic or add a Contents list"


def test_the_topic_rule_on_synthetic_pages():
    assert topic_page_problems("# Title\n\n" + "text\n" * (TOPIC_MAX_LINES - 2)) == []
    assert topic_page_problems("# Title\n\n" + "text\n" * (TOPIC_MAX_LINES - 1)) == [
        f"{TOPIC_MAX_LINES + 1} lines, more than {TOPIC_MAX_LINES}"
    ]
    late = "Some words.\n" * HEADING_WITHIN + "# Title\n"
    assert topic_page_problems(late) == [f"no heading in its first {HEADING_WITHIN} lines"]
    assert topic_page_problems("\n" * (HEADING_WITHIN - 1) + "# Title\n") == []


@pytest.mark.parametrize("name", TOPIC_PAGES)
def test_each_topic_page_is_short_and_starts_with_a_heading(name):
    page = ROOT / "docs" / name
    assert page.exists(), f"docs/{name} is gone: its topic needs a page"
    problems = topic_page_problems(page.read_text())
    assert not problems, f"docs/{name}: {problems}: split it further"


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


def readme_quote(command: str) -> str:
    """What the README's tour quotes as ``command``'s output: the comment after it on its line,
    or the comment lines right under it (``# `` and the indentation dropped, joined by spaces)."""
    tour = (ROOT / "README.md").read_text().split("## A 5-minute tour", 1)[1].split("\n## ", 1)[0]
    lines = [
        line for block in re.findall(r"^```sh\n(.*?)^```", tour, re.M | re.S) for line in block.splitlines()
    ]
    for index, line in enumerate(lines):
        code, _, comment = line.partition("#")
        if code.strip() != command:
            continue
        if comment.strip():
            return comment.strip()
        below = []
        for after in lines[index + 1 :]:
            if not after.startswith("#"):
                break
            below.append(after.lstrip("#").strip())
        return " ".join(below)
    raise AssertionError(f"the README's tour has no line {command!r}")


def test_the_quote_reader_reads_both_forms():
    assert readme_quote("manage.py retry tour/too-big").startswith("gang tour/too-big")
    assert readme_quote("manage.py describe gang tour/too-big").startswith("Explanation:")


@pytest.mark.django_db
def test_the_readme_tour_on_the_cluster_make_run_seeds():
    """The README's 5-minute tour, cycle by cycle: the trainer binds whole, the too-big gang waits
    saying why, times out, is retried and killed; each output the README quotes is what the
    command prints (``...`` in a quote stands for lines left out)."""
    for command in ("seed_cluster", "submit_demo"):
        call_command(command, stdout=StringIO())
    out = StringIO()
    call_command("apply", "-f", str(ROOT / "docs" / "tour" / "trainer.yaml"), stdout=out)
    first, _, last = readme_quote("manage.py apply -f docs/tour/trainer.yaml").partition(" ... ")
    assert out.getvalue().splitlines()[0] == first and out.getvalue().splitlines()[-1] == last
    out = StringIO()
    call_command("apply", "-f", str(ROOT / "docs" / "tour" / "too-big.yaml"), stdout=out)
    lines = out.getvalue().splitlines()
    assert "gang tour/too-big created" in lines

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
    printed = " ".join(describe.getvalue().split())
    assert " ".join(readme_quote("manage.py describe gang tour/too-big").split()) in printed, printed

    Gang.objects.filter(pk=too_big.pk).update(wait_started=timezone.now() - timedelta(seconds=31))
    timeouts_sweep(holder="tour")
    too_big.refresh_from_db()
    assert too_big.phase == GangPhase.TIMED_OUT.value
    for command, said in (("retry", "retried: Pending"), ("kill", "killed: Killed")):
        out = StringIO()
        call_command(command, "tour/too-big", stdout=out)
        assert out.getvalue() == f"gang tour/too-big {said}\n"
        assert readme_quote(f"manage.py {command} tour/too-big") == out.getvalue().strip()

"""Where traces are: the repository's traces/, and the directories GANGSCHED_TRACES_DIR adds before it."""

import os
import shutil
from pathlib import Path

import pytest

from scheduler_core.simulation.trace_files import REPOSITORY_TRACES, find_trace, trace_dirs, trace_files
from tests.pages.conftest import login

from .helpers import JOB_A_JOB_B

#: The developers' copy of the sources the shipped traces come from (not in a user's clone).
SOURCES = Path(__file__).resolve().parents[3] / "shared" / "traces"


def test_without_the_setting_only_the_repository_s_traces_are_searched():
    assert trace_dirs({}) == [REPOSITORY_TRACES]
    names = [path.name for path in trace_files("*.csv", {})]
    assert names == ["alibaba-openb-gpu-nodes-sample.csv", "tiresias-60-jobs.csv"]
    assert find_trace("tiresias-60-jobs.csv", {}) == REPOSITORY_TRACES / "tiresias-60-jobs.csv"


def test_the_setting_s_directories_come_first_and_replace_a_trace_of_the_same_name(tmp_path):
    big, more = tmp_path / "big", tmp_path / "more"
    big.mkdir(), more.mkdir()
    (big / "tiresias-60-jobs.csv").write_text(JOB_A_JOB_B)
    (more / "month.csv").write_text(JOB_A_JOB_B)
    (more / "tiresias-60-jobs.csv").write_text("")  # behind big's
    environ = {"GANGSCHED_TRACES_DIR": f"{big}{os.pathsep}{more}{os.pathsep}"}
    assert trace_dirs(environ) == [big, more, REPOSITORY_TRACES]
    assert trace_files("*.csv", environ) == [
        REPOSITORY_TRACES / "alibaba-openb-gpu-nodes-sample.csv",
        more / "month.csv",
        big / "tiresias-60-jobs.csv",
    ]
    assert find_trace("tiresias-60-jobs.csv", environ) == big / "tiresias-60-jobs.csv"


def test_a_missing_trace_names_the_directories_searched_and_a_path_is_refused(tmp_path):
    environ = {"GANGSCHED_TRACES_DIR": str(tmp_path / "nowhere")}
    with pytest.raises(FileNotFoundError) as caught:
        find_trace("month.csv", environ)
    assert str(caught.value) == (
        f"no trace 'month.csv' in {tmp_path / 'nowhere'}, {REPOSITORY_TRACES} "
        "(set GANGSCHED_TRACES_DIR to add a directory)"
    )
    for name in ("../README.md", "/etc/passwd", "", ".."):
        with pytest.raises(ValueError, match="a trace is named by its file name alone"):
            find_trace(name, {})


@pytest.mark.django_db
def test_the_simulations_page_offers_the_setting_s_traces_and_clusters_by_name(olga, tmp_path, monkeypatch):
    (tmp_path / "month.csv").write_text(JOB_A_JOB_B)
    shutil.copy(REPOSITORY_TRACES / "alibaba-openb-gpu-nodes-sample.csv", tmp_path / "fleet.csv")
    monkeypatch.setenv("GANGSCHED_TRACES_DIR", str(tmp_path))
    html = login(olga).get("/simulations/").content.decode()
    assert '<option value="month.csv">' in html and '<option value="tiresias-60-jobs.csv">' in html
    page = login(olga).post(
        "/simulations/", {"trace": "month.csv", "cluster": "fleet.csv", "policies": ["pod"]}
    )
    assert page.status_code == 302
    missing = login(olga).post(
        "/simulations/", {"trace": "month.csv", "cluster": "gone.csv", "policies": ["pod"]}
    )
    assert missing.status_code == 400
    assert "no node list &#x27;gone.csv&#x27; among the traces (" in missing.content.decode()


@pytest.mark.skipif(not SOURCES.is_dir(), reason="no ../shared/traces beside this clone")
def test_the_shipped_traces_are_their_sources_as_traces_sources_md_says():
    tiresias = (SOURCES / "tiresias-60-jobs.csv").read_text()
    assert (REPOSITORY_TRACES / "tiresias-60-jobs.csv").read_text() == tiresias
    lines = (SOURCES / "alibaba-openb-gpu-nodes.csv").read_text().splitlines(keepends=True)
    every_tenth = [lines[0], *lines[1::10]]  # awk 'NR==1 || (NR-2)%10==0'
    assert (REPOSITORY_TRACES / "alibaba-openb-gpu-nodes-sample.csv").read_text() == "".join(every_tenth)

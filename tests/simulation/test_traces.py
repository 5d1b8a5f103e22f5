"""Trace readers: both formats, and every bad row reported with its line number."""

import pytest

from scheduler_core.simulation import TraceError, load_trace, parse_trace
from scheduler_core.simulation.trace_files import REPOSITORY_TRACES
from scheduler_core.simulation.traces import GPU, TIRESIAS_WORKER

from .helpers import trace_text

TIRESIAS = REPOSITORY_TRACES / "tiresias-60-jobs.csv"


def test_it_reads_the_gangsched_csv_in_canonical_units():
    trace = parse_trace(trace_text("a,1.5,8,6,3600,500m,64Gi,1,3,prod", "b,2,1,1,10,2,1G,0,,"))
    first, second = trace.jobs
    assert trace.format == "gangsched"
    assert (first.id, first.submit, first.workers, first.min_workers, first.duration) == (
        "a",
        1.5,
        8,
        6,
        3600,
    )
    assert first.requests == {"cpu": 500, "memory": 64 * 2**30, GPU: 1}
    assert (first.priority, first.queue) == (3, "prod")
    assert second.requests == {"cpu": 2000, "memory": 10**9}
    assert (second.priority, second.queue) == (0, "default")


def test_it_reads_the_tiresias_trace_as_gangs_of_one_gpu_workers():
    trace = load_trace(TIRESIAS)
    assert trace.format == "tiresias" and len(trace.jobs) == 60
    eight = next(job for job in trace.jobs if job.id == "1")
    assert (eight.workers, eight.min_workers, eight.submit, eight.duration) == (8, 8, 30.0, 147.0)
    assert eight.requests == TIRESIAS_WORKER
    assert sorted({job.workers for job in trace.jobs}) == [1, 2, 4, 8]


def test_every_bad_row_is_reported_with_its_line_number():
    text = trace_text(
        "ok,0,1,1,10,1,1Gi,0,0,",
        "x,zero,1,1,10,1,1Gi,0,0,",  # line 3
        "y,0,2,3,10,1,1Gi,0,0,",  # line 4
        "z,0,1,1,0,1,1Gi,0,0,",  # line 5
        "w,0,1,1,10,1,lots,0,0,",  # line 6
        "ok,0,1,1,10,1,1Gi,0,0,",  # line 7: a repeated id
        "short,0,1",  # line 8
        "v,0,1,1,10,0,0,0,0,",  # line 9: asks for nothing
    )
    with pytest.raises(TraceError) as caught:
        parse_trace(text, "bad.csv")
    lines = [line for line, _reason in caught.value.errors]
    assert lines == [3, 4, 5, 6, 7, 8, 9]
    message = str(caught.value)
    assert message.startswith("bad.csv: 7 bad row(s)")
    assert "line 3: submit_s must be a number of seconds, got 'zero'" in message
    assert "line 4: min_workers (3) is larger than workers (2)" in message
    assert "line 5: duration_s must be greater than 0" in message
    assert "line 6: memory:" in message
    assert "line 7: job_id 'ok' appears twice" in message
    assert "line 8: expected 10 fields, found 3" in message
    assert "line 9: a worker must request some cpu, memory or gpu" in message


def test_an_unknown_header_or_an_empty_file_is_an_error_on_line_1():
    with pytest.raises(TraceError, match="line 1: unknown header 'id,when'"):
        parse_trace("id,when\n1,2\n")
    with pytest.raises(TraceError, match="line 1: empty file"):
        parse_trace("")
    with pytest.raises(TraceError, match="no jobs"):
        parse_trace(trace_text())


def test_a_bad_tiresias_row_is_reported_too():
    text = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n0,0,0,1,vgg,10,1\n"
    with pytest.raises(TraceError, match="line 2: num_gpu must be at least 1, got 0"):
        parse_trace(text)

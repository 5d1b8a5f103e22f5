"""Preemption cases of Volcano and KAI-Scheduler, re-expressed on gangsched's engine.

Each test names the upstream case it reproduces (repository, file, test function, case name), as
read at volcano-sh/volcano ed72c7c and NVIDIA/KAI-Scheduler 72de64f. Their jobs are our gangs,
minAvailable (KAI: the root sub-group's minimum) our min_member, tasks our members; GPUs stand for
KAI's GPU counts and whole CPUs and GiB for Volcano's "1", "1G".
"""

from scheduler_core.engine import TransitionKind, run_cycle

from .test_preempt_elastic import evicted, started
from .world import NOW, gang, members, node, snapshot

TRAIN, INFERENCE = 50, 125  # KAI's train and inference priorities; only their order matters


def gpu_job(key: str, tasks: int, gpus: int = 1, *, running: bool = True, first: float = NOW - 100):
    pods = members(key, tasks, cpu=0.1, gpu=gpus, node="node0" if running else None)
    return started(pods, first) if running else pods


def kai_world(*jobs, node_gpus: int, pending_gpus: int):
    """``jobs``: (key, tasks, min_member) of running train jobs; one pending inference job."""
    pods, gangs = [], []
    for index, (key, tasks, minimum) in enumerate(jobs):
        pods.extend(gpu_job(key, tasks, first=NOW - 100 + 10 * index))
        gangs.append(gang(key, minimum, satisfied=True, priority=TRAIN))
    pods.extend(gpu_job("q/pending_job0", 1, pending_gpus, running=False))
    gangs.append(gang("q/pending_job0", 1, priority=INFERENCE))
    return snapshot([node("node0", cpu=16, memory=64, gpu=node_gpus)], pods, gangs)


def test_volcano_preempts_one_task_of_an_elastic_job_for_the_preemptors_minimum():
    """volcano-sh/volcano pkg/scheduler/actions/preempt/preempt_test.go, TestPreempt,
    "preempt one task of different job to fit both jobs on one node": pg1 (minAvailable 1) runs
    a preemptable and a non-preemptable pod on a 2-CPU node; pg2 (minAvailable 1, 2 pods, higher
    priority) evicts exactly the preemptable one, and its second pod does not preempt."""
    low = (
        *started(members("c1/pg1", 1, cpu=1, node="n1", priority=0)),
        *members("c1/pg1", 1, start=1, cpu=1, node="n1", started=NOW - 200, priority=0, preemptible=False),
    )
    high = members("c1/pg2", 2, cpu=1, priority=10)
    gangs = [gang("c1/pg1", 1, satisfied=True, priority=0), gang("c1/pg2", 1, priority=10)]
    result = run_cycle(snapshot([node("n1", cpu=2, memory=2)], (*low, *high), gangs), NOW)
    assert evicted(result) == ["c1/pg1-0"]
    assert [r.pod for r in result.reservations] == ["c1/pg2-0"]


def test_volcano_preempts_enough_tasks_to_fit_a_large_task():
    """volcano-sh/volcano pkg/scheduler/actions/preempt/preempt_test.go, TestPreempt,
    "preempt enough tasks to fit large task of different job": 3 running 1-CPU tasks of pg1
    (minAvailable 1, the third non-preemptable) on a 6-CPU node; a 5-CPU task evicts the two
    preemptable ones, and pg1 keeps running on its minimum."""
    low = (
        *started(members("c1/pg1", 2, cpu=1, node="n1", priority=0)),
        *members("c1/pg1", 1, start=2, cpu=1, node="n1", started=NOW - 200, priority=0, preemptible=False),
    )
    high = members("c1/pg2", 1, cpu=5, memory=5, priority=10)
    gangs = [gang("c1/pg1", 1, satisfied=True, priority=0), gang("c1/pg2", 1, priority=10)]
    result = run_cycle(snapshot([node("n1", cpu=6, memory=6)], (*low, *high), gangs), NOW)
    assert sorted(evicted(result)) == ["c1/pg1-0", "c1/pg1-1"]
    assert result.transitions_of("c1/pg1") == []


def test_kai_preempts_several_tasks_from_an_elastic_train_job():
    """NVIDIA/KAI-Scheduler pkg/scheduler/actions/preempt/preempt_elastic_test.go,
    TestHandlePreemptElastic, "Inference job preempts several tasks from elastic train job": a
    train job (minimum 1) runs 4 one-GPU tasks on a 4-GPU node; a 2-GPU inference job takes
    tasks 2 and 3 and tasks 0 and 1 keep running."""
    result = run_cycle(kai_world(("q/running_job0", 4, 1), node_gpus=4, pending_gpus=2), NOW)
    assert evicted(result) == ["q/running_job0-3", "q/running_job0-2"]
    assert result.transitions_of("q/running_job0") == []


def test_kai_preempts_all_tasks_of_an_elastic_job_when_its_extras_are_not_enough():
    """NVIDIA/KAI-Scheduler pkg/scheduler/actions/preempt/preempt_elastic_test.go,
    TestHandlePreemptElastic, "Inference job preempts all tasks from elastic train job": 2
    one-GPU tasks (minimum 1) fill a 2-GPU node; a 2-GPU inference job takes both, so the job
    is preempted whole."""
    result = run_cycle(kai_world(("q/running_job0", 2, 1), node_gpus=2, pending_gpus=2), NOW)
    assert sorted(evicted(result)) == ["q/running_job0-0", "q/running_job0-1"]
    assert result.transitions_of("q/running_job0") == [TransitionKind.PREEMPTED]


def test_kai_preempts_a_running_job_and_a_single_task_from_an_elastic_job():
    """NVIDIA/KAI-Scheduler pkg/scheduler/actions/preempt/preempt_elastic_test.go,
    TestHandlePreemptElastic, "Inference job preempts running job and a single task from elastic
    train job": on 3 GPUs, an elastic job (minimum 1, 2 tasks) and a one-task job (the younger
    here, which is what decides between the two in gangsched); a 2-GPU inference job takes the
    elastic job's extra task and the other job whole."""
    world = kai_world(("q/running_job0", 2, 1), ("q/running_job1", 1, 1), node_gpus=3, pending_gpus=2)
    result = run_cycle(world, NOW)
    assert evicted(result) == ["q/running_job0-1", "q/running_job1-0"]
    assert result.transitions_of("q/running_job0") == []
    assert result.transitions_of("q/running_job1") == [TransitionKind.PREEMPTED]


def test_kai_preempts_a_single_task_from_each_of_several_elastic_jobs():
    """NVIDIA/KAI-Scheduler pkg/scheduler/actions/preempt/preempt_elastic_test.go,
    TestHandlePreemptElastic, "Inference job preempts single task from several elastic train
    jobs": two elastic jobs (minimum 1, 2 tasks each) on 4 GPUs; a 2-GPU inference job takes one
    task of each, and both jobs keep running."""
    world = kai_world(("q/running_job0", 2, 1), ("q/running_job1", 2, 1), node_gpus=4, pending_gpus=2)
    result = run_cycle(world, NOW)
    assert sorted(evicted(result)) == ["q/running_job0-1", "q/running_job1-1"]
    assert result.transitions_of("q/running_job0") == result.transitions_of("q/running_job1") == []

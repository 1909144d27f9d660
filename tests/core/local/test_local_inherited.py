"""What a local replica inherits: nothing that says where a process sits in a job.

A shell inside a job, or a replica that starts a job of its own, carries the
variables that placed it; a replica of the new job must be placed by its plan
alone, whichever of them the parent had.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.cluster import ClusterInfo
from vtrain.local import PLATFORMS, Plan, replica_env
from vtrain.local.environment import inherited

PY = [sys.executable, "-c", "pass"]
CLEAN_PARENT = {"PATH": "/usr/bin", "HOME": "/home/me"}
# Every vtrain variable that places a process in a job, with values a parent may hold.
PLACING = {
    "VTRAIN_LOCAL_LAUNCH": ["1"],  # vtrain_pytorch.launch, on each per-GPU process
    "VTRAIN_LEADER": ["chief:0", "worker:0", "worker:1", "ps:0"],  # the framework plugins
    "VTRAIN_OUTPUT_DIR": ["/elsewhere"],  # `vtrain local run`, on each replica
    "VTRAIN_CLUSTER_SOURCE": ["single", "torchrun", "tf_config"],  # a source forced for one job
    "VTRAIN_SERVES_FILE": ["/tmp/vtrain-job-0/ps-0.serves"],  # `vtrain local run`, per replica
    "VTRAIN_LOCAL_RECORD": ["/out/disks/chief-0/run-0.record"],  # the rehearsal's probe
    "VTRAIN_LOCAL_WATCH": ["/out/model/"],  # the rehearsal's probe: the model folder
    "VTRAIN_RESUME_FROM": ["gs://b/old-job/checkpoints/"],  # the job a parent job continued
    "VTRAIN_READER": ["1/2"],  # the framework plugins (MXNet's workers)
    "VTRAIN_FRAMEWORK_VARIABLES": ["DMLC_ROLE,DMLC_NUM_WORKER"],  # the framework plugins
    "VTRAIN_PROGRESS_FILE": ["/tmp/vtrain-job-0/chief-0.progress"],  # `vtrain local run`
    "VTRAIN_TIMELINE_FILE": ["/out/timeline/chief-0.2.jsonl"],  # `vtrain local run`, per run
    # A TrainJob's node: vtrain's layout (the TrainJob's env) and its JobSet (vtrain's runtime).
    "VTRAIN_TRAINJOB_LAYOUT": ['{"chief":1,"worker":3,"port":2222}'],
    "VTRAIN_JOBSET": ["other-job"],
}
# What a user sets to configure vtrain, whatever the job: every replica must see it.
USER_SETTINGS = {
    "VTRAIN_DISABLE_PLUGINS": "mxnet",
    "VTRAIN_GCS_MOUNT": "/mnt/gcs",
    "VTRAIN_BIGQUERY_ENDPOINT": "127.0.0.1:9060",
    # The watchdog's bound and the straggler check (a rehearsal's defaults yield to them).
    "VTRAIN_WATCHDOG": "on",
    "VTRAIN_STUCK_FLOOR": "45",
    "VTRAIN_STUCK_MULTIPLE": "8",
    "VTRAIN_FIRST_STEP_SECONDS": "300",
    "VTRAIN_STRAGGLER_FRACTION": "0.4",
    "VTRAIN_STRAGGLER_SECONDS": "20",
    "VTRAIN_TRACK": "tensorboard",  # the tracking backends
    "VTRAIN_TRACK_RUN": "study-x-trial-3",  # `vtrain tune`'s name of a trial's run
    "VTRAIN_VERTEX_ENDPOINT": "127.0.0.1:8080",  # the Vertex Metadata API's endpoint
    "VTRAIN_TIMELINE": "off",  # no timeline
}
ROOT = Path(__file__).parents[3]


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    platform = draw(st.sampled_from(PLATFORMS))
    # torchrun has trainers only; only Vertex and AI Platform have trial ids.
    others = platform != "torchrun"
    return Plan.from_options(
        PY,
        platform=platform,
        workers=draw(st.integers(0, 2)),
        ps=draw(st.integers(0, 1)) if others else 0,
        evaluators=draw(st.integers(0, 1)) if others else 0,
        trial_id=draw(st.sampled_from([None, "4"]))
        if platform in ("vertex", "aiplatform")
        else None,
        output_dir="/out",
        job_id="job",
    )


placing_values = st.fixed_dictionaries(
    {}, optional={name: st.sampled_from(values) for name, values in PLACING.items()}
)


# No deadline: the first example imports the writers, and CI machines are shared.
@examples(200)
@given(plan=plans(), placing=placing_values)
def test_a_replica_is_placed_by_its_plan_whatever_the_parent_carried(
    plan: Plan, placing: dict[str, str]
) -> None:
    replicas = plan.replicas([3001 + i for i in range(plan.size)])
    parent = {**CLEAN_PARENT, **USER_SETTINGS, **placing}
    for me in replicas:
        env = replica_env(plan, replicas, me, environ=parent)
        assert env == replica_env(plan, replicas, me, environ={**CLEAN_PARENT, **USER_SETTINGS})
        info = ClusterInfo.from_env(env)
        assert (info.role, info.index) == (me.role, me.index)
        assert info.trial_id == plan.trial_id
        assert {k: env[k] for k in USER_SETTINGS} == USER_SETTINGS


def test_every_vtrain_variable_is_either_stripped_or_a_user_setting() -> None:
    # A new variable vtrain writes must join vtrain.context.PLACEMENT_VARIABLES (or be
    # listed here as a user setting): this finds every name the code mentions.
    sources = [
        *ROOT.joinpath("core", "vtrain").rglob("*.py"),
        *ROOT.joinpath("plugins").rglob("*.py"),
    ]
    names = {
        name
        for path in sources
        for name in re.findall(r"\bVTRAIN_[A-Z][A-Z0-9_]*\b", path.read_text(encoding="utf-8"))
    }
    unknown = names - set(PLACING) - set(USER_SETTINGS)
    assert not unknown, f"classify these in PLACING or USER_SETTINGS: {sorted(unknown)}"
    assert inherited(dict.fromkeys(PLACING, "x")) == {}
    assert inherited(USER_SETTINGS) == USER_SETTINGS

"""A single-process trial's environment is the one `vtrain local run --trial N` writes."""

from __future__ import annotations

import json
import os
import sys

from tune_helpers import OBJECTIVE, Tune, study

from vtrain.local import Plan, replica_env


def test_a_single_process_trial_gets_what_a_one_replica_local_job_gets(tune: Tune) -> None:
    run = tune(study(max_trial_count=2, parallel_trial_count=2))
    assert run.status == 0, run.err
    records = run.records()
    assert sorted(r["trial"] for r in records) == ["1", "2"]
    for r in records:
        env = r["environ"]
        # The two values `vtrain local run` makes up for each job: its id and a free port.
        job_id = env["CLOUD_ML_JOB_ID"]
        (address,) = json.loads(env["CLUSTER_SPEC"])["cluster"]["workerpool0"]
        plan = Plan.from_options(
            [sys.executable, OBJECTIVE, *r["argv"]],
            output_dir=str(run.output_dir),
            trial_id=r["trial"],
            job_id=job_id,
        )
        (me,) = plan.replicas([int(address.rsplit(":", 1)[1])])
        parent = {**os.environ, "CLOUD_ML_HP_METRIC_TAG": "score"}
        assert env == replica_env(plan, (me,), me, environ=parent)
        assert env["CLOUD_ML_REGION"] and env["CLOUD_ML_PROJECT_ID"].isdigit()

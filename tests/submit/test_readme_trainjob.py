"""The TrainJob blocks of the docs (`readme-test: submit`) run as written: vtrain's runtime, and a
TensorFlow TrainJob whose roles are its layout, each read back by the Trainer's own models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from readme_blocks import Block, blocks_for, run_block

from vtrain.cluster.trainjob_reader import layout_counts


@pytest.mark.parametrize("block", blocks_for("submit"), ids=str)
def test_submit_blocks_run_as_written(block: Block, tmp_path: Path) -> None:
    from kubeflow_trainer_api import models

    done = run_block(block, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    if "--runtime" in block.text:
        runtime = yaml.safe_load((tmp_path / "runtime.yaml").read_text())
        parsed = models.TrainerV1alpha1ClusterTrainingRuntime.from_dict(runtime)
        assert parsed.metadata.name == "vtrain-tensorflow"
        [node] = runtime["spec"]["template"]["spec"]["replicatedJobs"]
        [container] = node["template"]["spec"]["template"]["spec"]["containers"]
        assert container["env"][0]["name"] == "VTRAIN_JOBSET"
    if "--trainjob" in block.text:
        job = yaml.safe_load(done.stdout)
        trainer = models.TrainerV1alpha1TrainJob.from_dict(job).spec.trainer
        env = {e.name: e.value for e in trainer.env}
        counts = layout_counts(env["VTRAIN_TRAINJOB_LAYOUT"])[0]
        assert counts == {"chief": 1, "worker": 2, "ps": 1, "evaluator": 1}
        assert trainer.num_nodes == 5 and "TF_CONFIG" not in json.dumps(job)

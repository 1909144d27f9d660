"""Resuming boosting with another number of trainers: the booster goes on from the committed
round, and the whole split is dealt anew among the trainers there are, each record once.

Boosting has no position inside the data (every round reads the whole share), so a commit
holds the booster and the number of trainers that made it, and nothing else.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import xgboost as xgb
from cluster_run import local_run

import vtrain
from vtrain import CheckpointError
from vtrain_xgboost.state import WORLD_FILE, read_world

SCRIPT = str(Path(__file__).parent / "scripts" / "resume_job.py")


def write_split(folder: Path, files: int, records: int) -> list[int]:
    """`files` JSON Lines files of `records` records, with ids 0, 1, …; the ids."""
    folder.mkdir(parents=True)
    for f in range(files):
        lines = [
            json.dumps({"id": i, "x": (i * 7) % 13}) for i in range(f * records, (f + 1) * records)
        ]
        (folder / f"training-{f}.jsonl").write_text("\n".join(lines) + "\n")
    return list(range(files * records))


def alone(tmp_path: Path) -> Any:
    return vtrain.plugins.get("xgboost").configure(
        environ={"AIP_CHECKPOINT_DIR": str(tmp_path / "ckpt")}
    )


def boost(rounds: int, callbacks: list[Any]) -> Any:
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    train = xgb.DMatrix(x, label=x[:, 0])
    return xgb.train({"nthread": 1}, train, rounds, callbacks=callbacks, verbose_eval=False)


def test_a_commit_says_how_many_trainers_made_it_and_holds_no_data_position(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    handle = alone(tmp_path)
    boost(3, handle.callbacks(checkpoint_every=2))
    found = handle.resume()
    assert (found.done, dict(found.extra), found.data) == (3, {"world_size": 1}, None)
    assert found.state.num_boosted_rounds() == 3
    step = Path(found.uri)
    assert json.loads(next(step.glob(f"**/{WORLD_FILE}")).read_text()) == {"world_size": 1}
    assert f"vtrain: resumed from {found.uri} (3 done)" in caplog.messages


def test_a_commit_from_before_resumes_the_booster_and_does_not_say_who_made_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    handle = alone(tmp_path)
    raw = boost(2, []).save_raw(raw_format="ubj")
    handle.checkpoints.save(2, {"model.ubj": bytes(raw)})  # as the callback wrote it before
    found = handle.resume()
    assert (found.done, dict(found.extra)) == (2, {})
    assert f"vtrain: resumed from {found.uri} (2 done)" in caplog.messages


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b"{torn", "is not JSON"),
        (b"[3]", "holds no trainer count"),
        (b'{"world_size": 0}', "holds no trainer count"),
        (b'{"world_size": true}', "holds no trainer count"),
    ],
)
def test_a_damaged_trainer_count_is_refused(raw: bytes, problem: str) -> None:
    with pytest.raises(CheckpointError, match=rf"^step-4: {WORLD_FILE} {problem}"):
        read_world(memoryview(raw), "step-4")


def test_killed_on_3_trainers_resumed_on_2_deals_the_whole_split_once(tmp_path: Path) -> None:
    every = write_split(tmp_path / "data", 5, 40)
    results = tmp_path / "r"
    results.mkdir()
    env = {"RESULTS": str(results), "AIP_TRAINING_DATA_URI": str(tmp_path / "data" / "*.jsonl")}
    out = tmp_path / "out"
    first = local_run(
        out, ["--workers", "2", "--max-restarts", "0"], [SCRIPT], RUN="1", KILL_AT="7", **env
    )
    assert first.returncode != 0, first.output  # worker 0 died after round 7
    second = local_run(out, ["--workers", "1"], [SCRIPT], RUN="2", **env)
    assert second.returncode == 0, second.output

    def read(run: str, rank: int) -> dict[str, Any]:
        found: dict[str, Any] = json.loads((results / f"{run}-rank-{rank}.json").read_text())
        return found

    before = [read("1", r) for r in range(3)]
    assert sorted(i for r in before for i in r["ids"]) == every
    after = [read("2", r) for r in range(2)]
    assert not (results / "2-rank-2.json").exists()
    done = after[0]["resumed"]
    # The last commit before the kill: every 2 rounds, and round 6 had all 3 alive after it.
    assert done in (4, 6), second.output
    for r in after:
        assert (r["resumed"], r["was"], r["data"]) == (done, 3, None)
        assert r["world_size"] == 2 and r["rounds"] == 12  # went on to the end, not restarted
    assert sorted(i for r in after for i in r["ids"]) == every  # each record once, on 2
    assert f"({done} done)" in second.logs["chief-0"]  # the leader's resume line
    assert "vtrain: resumed from " in second.logs["chief-0"]

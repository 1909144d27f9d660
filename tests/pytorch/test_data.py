"""`handle.dataset()` and `ShareDataset`: loader workers split a share; each record once."""

from __future__ import annotations

import json
import pickle
from collections import Counter
from pathlib import Path

import pytest
from cluster_run import local_run
from platform_examples import tf_config
from torch.utils.data import DataLoader, get_worker_info

from vtrain import ClusterInfo, UsageError
from vtrain.data import Share, files
from vtrain_pytorch import TorchHandle, World
from vtrain_pytorch.data import ShareDataset

SCRIPT = [str(Path(__file__).parent / "scripts" / "share_loader.py")]
CLUSTER = {"chief": ["c:1"], "worker": ["w:1"], "ps": ["p:1"], "evaluator": ["e:1"]}


def write_split(folder: Path, prefix: str, count: int, per_file: int) -> list[list[str]]:
    """`count` JSON Lines files of `per_file` records; each file's record names ("file:row")."""
    folder.mkdir(parents=True, exist_ok=True)
    for f in range(count):
        rows = [{"file": f"{prefix}{f}", "row": r} for r in range(per_file)]
        (folder / f"{prefix}-{f:05d}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return [[f"{prefix}{f}:{r}" for r in range(per_file)] for f in range(count)]


def flat(names: list[list[str]]) -> list[str]:
    return [name for file in names for name in file]


def tag(record: dict[str, object]) -> tuple[str, int]:
    """The record's name and the loader worker that read it (a transform runs in the worker)."""
    worker = get_worker_info()
    return f"{record['file']}:{record['row']}", -1 if worker is None else worker.id


def env_of(role: str) -> dict[str, str]:
    return {"TF_CONFIG": tf_config(CLUSTER, role, 0)}


def handle_of(info: ClusterInfo, world: World | None, environ: dict[str, str]) -> TorchHandle:
    return TorchHandle(
        info=info, is_leader=False, world=world, backend=None, device=None, environ=environ
    )


# Fork starts fresh workers each epoch; spawn (slow: each worker imports torch) keeps its
# workers, so the second epoch iterates the same copies again.
@pytest.mark.filterwarnings("ignore:This DataLoader will create 3 worker processes")
@pytest.mark.parametrize(
    ("count", "per_file", "by_record", "context"),
    [(7, 3, False, "fork"), (1, 10, True, "fork"), (7, 3, False, "spawn")],
    ids=["by-file-fork", "by-record-fork", "by-file-spawn"],
)
def test_three_loader_workers_read_the_share_once(
    tmp_path: Path, count: int, per_file: int, by_record: bool, context: str
) -> None:
    every = write_split(tmp_path, "training", count, per_file)
    share = files(rank=1, world_size=2, by_record=by_record, uri=str(tmp_path / "*"), environ={})
    # Rank 1 of 2: every other record of the one file, or every other file.
    mine = flat(every)[1::2] if by_record else flat(every[1::2])
    loader = DataLoader(
        ShareDataset(share, transform=tag),
        batch_size=None,
        num_workers=3,
        multiprocessing_context=context,
        persistent_workers=context == "spawn",
    )
    for _ in range(2):  # every epoch, again
        seen = list(loader)
        assert sorted(name for name, _ in seen) == sorted(mine)
        by_worker = Counter(worker for _, worker in seen)
        assert sorted(by_worker) == [0, 1, 2], "each worker reads a part"


def test_alone_the_dataset_reads_the_whole_share_through_the_transform(tmp_path: Path) -> None:
    every = write_split(tmp_path, "training", 3, 2)
    dataset = ShareDataset(
        files(rank=0, world_size=1, uri=str(tmp_path / "*"), environ={}), transform=tag
    )
    assert list(dataset) == [(name, -1) for name in flat(every)]
    again = pickle.loads(pickle.dumps(dataset))
    assert list(again) == list(dataset) and again.share == dataset.share


def test_a_real_single_process_handle_reads_everything(tmp_path: Path) -> None:
    import vtrain

    every = write_split(tmp_path, "training", 2, 3)
    env = {"AIP_TRAINING_DATA_URI": str(tmp_path / "*.jsonl")}
    handle = vtrain.plugins.get("pytorch").configure(environ=env)
    dataset = handle.dataset()
    assert (dataset.share.rank, dataset.share.world_size) == (handle.rank, handle.world_size)
    rows = list(DataLoader(dataset, batch_size=None, num_workers=2))
    assert sorted(f"{r['file']}:{r['row']}" for r in rows) == sorted(flat(every))


def test_the_share_follows_torch_ranks_with_several_processes_per_machine(tmp_path: Path) -> None:
    # Worker 0 is trainer 1 of 2; with 2 processes per machine its process 1 is rank 3 of 4,
    # where vtrain.data.files() alone (which counts machines) would say 1 of 2.
    write_split(tmp_path, "training", 8, 1)
    info = ClusterInfo.from_env(env_of("worker"))
    world = World.from_cluster(info, nproc_per_node=2, local_rank=1)
    share = handle_of(info, world, {}).dataset(uri=str(tmp_path / "*")).share
    assert (share.rank, share.world_size) == (3, 4)
    assert [Path(f).name for f in share.files] == ["training-00003.jsonl", "training-00007.jsonl"]


@pytest.mark.parametrize(
    ("role", "split", "reads"),
    [("ps", "training", 0), ("evaluator", "training", 0), ("evaluator", "validation", 3)],
)
def test_off_the_world_vtrain_data_decides(
    tmp_path: Path, role: str, split: str, reads: int
) -> None:
    write_split(tmp_path, split, 3, 1)
    env = {
        **env_of(role),
        "AIP_TRAINING_DATA_URI": str(tmp_path / "*"),
        "AIP_VALIDATION_DATA_URI": str(tmp_path / "*"),
    }
    dataset = handle_of(ClusterInfo.from_env(env), None, env).dataset(split)
    assert len(list(DataLoader(dataset, batch_size=None, num_workers=2))) == reads


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"split": "train"}, "split"),
        ({"format": "xml"}, "format"),
        ({"transform": "upper"}, "transform"),
        ({"check_crc": "yes"}, "check_crc"),
        ({"by_record": 1}, "by_record"),
        ({"uri": ""}, "uri"),
    ],
)
def test_bad_arguments_are_named(tmp_path: Path, options: dict[str, object], named: str) -> None:
    write_split(tmp_path, "training", 1, 1)
    info = ClusterInfo.from_env({})
    handle = handle_of(info, World.from_cluster(info), {})
    options = {"uri": str(tmp_path / "*"), **options}
    with pytest.raises(UsageError, match=rf"^{named}: "):
        handle.dataset(**options)  # type: ignore[arg-type]


def test_a_dataset_needs_a_share() -> None:
    with pytest.raises(UsageError, match=r"^share: not a Share"):
        ShareDataset(["a.jsonl"])  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"^transform: not callable"):
        ShareDataset(Share.empty("training"), transform=3)  # type: ignore[arg-type]


def test_two_ranks_by_two_loader_workers_read_every_record_once_per_epoch(tmp_path: Path) -> None:
    training = flat(write_split(tmp_path / "t", "training", 5, 3))
    validation = flat(write_split(tmp_path / "v", "validation", 1, 10))
    (tmp_path / "r").mkdir()
    run = local_run(
        tmp_path / "out",
        ["--workers", "1"],
        SCRIPT,
        RESULTS=str(tmp_path / "r"),
        AIP_TRAINING_DATA_URI=str(tmp_path / "t" / "*.jsonl"),
        AIP_VALIDATION_DATA_URI=str(tmp_path / "v" / "*.jsonl"),
    )
    assert run.returncode == 0, run.output
    ranks = [json.loads((tmp_path / "r" / f"rank-{r}.json").read_text()) for r in (0, 1)]
    for r, result in enumerate(ranks):
        assert (result["rank"], result["world_size"], result["backend"]) == (r, 2, "gloo")
        assert result["share"] == [r, 2]
    for split, every in (("training", training), ("validation", validation)):
        for epoch in (0, 1):
            seen = [tagged for result in ranks for tagged in result[split][epoch]]
            assert sorted(t.split("@")[0] for t in seen) == sorted(every), (split, epoch)
            # Both loader workers of both ranks read a part: the split reached the workers.
            workers = {
                (r, t.split("@")[1]) for r, res in enumerate(ranks) for t in res[split][epoch]
            }
            assert workers == {(0, "0"), (0, "1"), (1, "0"), (1, "1")}, (split, epoch)

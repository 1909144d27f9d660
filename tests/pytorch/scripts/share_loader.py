"""Each replica joins the world, then reads its share of two splits through DataLoaders, twice.

training: shared by file, loader workers started by spawn and kept across epochs.
validation: one file shared by record, loader workers forked afresh each epoch.
Each rank writes what every epoch saw to RESULTS/rank-N.json.
"""

import json
import os

from torch.utils.data import DataLoader, get_worker_info

import vtrain


def tag(record: dict) -> str:
    """The record's name, and which loader worker read it (the transform runs in the worker)."""
    return f"{record['file']}:{record['row']}@{get_worker_info().id}"


def epochs(dataset, context: str, persistent: bool) -> list[list[str]]:
    loader = DataLoader(
        dataset,
        batch_size=None,
        num_workers=2,
        multiprocessing_context=context,
        persistent_workers=persistent,
    )
    return [list(loader) for _ in range(2)]


def main() -> None:
    handle = vtrain.plugins.get("pytorch").configure()
    training = handle.dataset(transform=tag)
    validation = handle.dataset("validation", by_record=True, transform=tag)
    result = {
        "rank": handle.rank,
        "world_size": handle.world_size,
        "backend": handle.backend,
        "share": [training.share.rank, training.share.world_size],
        "training": epochs(training, "spawn", persistent=True),
        "validation": epochs(validation, "fork", persistent=False),
    }
    with open(os.path.join(os.environ["RESULTS"], f"rank-{handle.rank}.json"), "w") as f:
        json.dump(result, f)
    # Nobody leaves before everyone has written: the chief's exit ends the job.
    handle.barrier()
    handle.close()


if __name__ == "__main__":  # spawned loader workers import this file again
    main()

"""The jobs the submit tests render: one command line per target, shared by the golden and
round-trip tests so that what is rehearsed is what is checked."""

from __future__ import annotations

from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"
STUDY = str(GOLDEN / "study.yaml")
COMMAND = ["--", "python", "-m", "trainer.task", "--epochs", "3"]
IMAGES = ["--image", "gcr.io/proj/train:1", "--evaluator-image", "gcr.io/proj/eval:1"]
TOPOLOGY = ["--workers", "2", "--ps", "1", "--evaluators", "1"]
MACHINES = [
    "--machine-type",
    "n1-standard-8",
    "--accelerator",
    "NVIDIA_TESLA_T4:1",
    "--ps-accelerator",
    "none",
    "--ps-machine-type",
    "n1-highmem-4",
]
JOB = ["--output-dir", "gs://my-bucket/run1", "--timeout", "2h", "--label", "team=ml"]

# target -> (platform, arguments before the command). Every target has a golden file.
TARGETS: dict[str, tuple[str, list[str]]] = {
    "vertex": (
        "vertex",
        [
            "--name",
            "golden",
            *TOPOLOGY,
            *IMAGES,
            *MACHINES,
            *JOB,
            "--env",
            "MODE=train",
            "--restart-job-on-worker-restart",
        ],
    ),
    "vertex_study": (
        "vertex",
        ["--name", "golden", *TOPOLOGY, *IMAGES, *MACHINES, *JOB, "--study", STUDY],
    ),
    "vertex_reduction": (
        "vertex",
        [
            "--name",
            "golden",
            "--workers",
            "2",
            "--reduction-servers",
            "2",
            "--image",
            "gcr.io/proj/train:1",
            "--accelerator",
            "NVIDIA_TESLA_T4:2",
        ],
    ),
    "aiplatform": ("aiplatform", ["--name", "golden", *TOPOLOGY, *IMAGES, *MACHINES, *JOB]),
    "aiplatform_study": (
        "aiplatform",
        ["--name", "golden", *TOPOLOGY, *IMAGES, *MACHINES, *JOB, "--study", STUDY],
    ),
    "tfjob": (
        "kubeflow",
        [
            "--name",
            "golden",
            "--framework",
            "tensorflow",
            *TOPOLOGY,
            *IMAGES,
            *MACHINES,
            *JOB,
            "--env",
            "MODE=train",
        ],
    ),
    "pytorchjob": (
        "kubeflow",
        ["--name", "golden", "--framework", "pytorch", "--workers", "2", *IMAGES[:2], *JOB],
    ),
    "xgboostjob": (
        "kubeflow",
        ["--name", "golden", "--framework", "xgboost", "--workers", "2", *IMAGES[:2], *JOB],
    ),
    # Trainer v2: 1 + 2 nodes on the torch runtime; one image, machine and accelerator for all.
    "trainjob": (
        "kubeflow",
        [
            "--name",
            "golden",
            "--trainjob",
            "torch-distributed",
            "--workers",
            "2",
            "--image",
            "gcr.io/proj/train:1",
            "--machine-type",
            "n1-standard-8",
            "--accelerator",
            "NVIDIA_TESLA_T4:2",
            "--service-account",
            "trainer",
            *JOB,
            "--env",
            "MODE=train",
        ],
    ),
}


def render_args(target: str, fmt: str = "json", *extra: str) -> list[str]:
    """`vtrain render ...` arguments of `target`, with `extra` flags before the command."""
    platform, args = TARGETS[target]
    return ["render", platform, *args, "--format", fmt, *extra, *COMMAND]


def rehearsed_vertex(*flags: str, args: tuple[str, ...] = ()) -> list[str]:
    """`vtrain render` arguments of the rehearsal-record tests' document: a chief and one worker
    running `python -m trainer.task ARGS` into gs://my-bucket/r, rendered as JSON."""
    job = ["vertex", "--name", "t", "--workers", "1", "--image", "gcr.io/p/i:1", *flags]
    return [
        *job,
        "--output-dir",
        "gs://my-bucket/r",
        "--format",
        "json",
        "--",
        "python",
        "-m",
        "trainer.task",
        *args,
    ]

"""`vtrain submit --dry-run` of a 4-pool job with a study, against importing the Vertex SDK.

Run by hand, in an environment with the submit extra:

    python bench/submit.py [--runs 7]

Each run is a fresh interpreter, as a user's command is. The target: the dry
run under 1.5 s, and below `python -c "import google.cloud.aiplatform"`, the
import every user of the SDK pays before doing anything.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from compare import report

STUDY = """\
metrics: [{metric_id: loss, goal: MINIMIZE}]
parameters:
  - {parameter_id: learning_rate, double_value_spec: {min_value: 0.0001, max_value: 0.1},
     scale_type: UNIT_LOG_SCALE}
  - {parameter_id: layers, integer_value_spec: {min_value: 1, max_value: 4}}
algorithm: RANDOM_SEARCH
max_trial_count: 20
parallel_trial_count: 4
"""


def timed(argv: list[str]) -> float:
    """Seconds one command takes, start to exit."""
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    """Time both commands alternately and report the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder:
        study = os.path.join(folder, "study.yaml")
        with open(study, "w") as f:
            f.write(STUDY)
        ours = [
            sys.executable,
            "-m",
            "vtrain",
            "submit",
            "vertex",
            "--dry-run",
            "--name",
            "bench",
            "--workers",
            "2",
            "--ps",
            "1",
            "--evaluators",
            "1",
            "--image",
            "gcr.io/p/t:1",
            "--accelerator",
            "NVIDIA_TESLA_T4:1",
            "--output-dir",
            "gs://my-bucket/bench",
            "--study",
            study,
            "--",
            "python",
            "-m",
            "trainer.task",
        ]
        theirs = [sys.executable, "-c", "import google.cloud.aiplatform"]
        results: dict[str, list[float]] = {"vtrain submit --dry-run": [], "import aiplatform": []}
        timed(ours), timed(theirs)  # warm the file cache for both
        for _ in range(runs):
            results["vtrain submit --dry-run"].append(timed(ours))
            results["import aiplatform"].append(timed(theirs))
    report(
        "4-pool Vertex job with a study, --dry-run",
        results,
        unit="s",
        ours="vtrain submit --dry-run",
        theirs="import aiplatform",
        target="< 1.5 s and < 1x",
    )


if __name__ == "__main__":
    main()

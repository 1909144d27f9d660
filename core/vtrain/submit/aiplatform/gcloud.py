"""AI Platform's job as a `gcloud ai-platform jobs submit training` command, and how it is shown.

The service was retired on 2025-01-31: vtrain prints config.yaml and the
equivalent command, and sends nothing.
"""

from __future__ import annotations

import shlex

from vtrain.cluster.roles import CHIEF, PS, WORKER
from vtrain.redact import redact
from vtrain.submit.delivery import Delivery, print_document, warn_hidden
from vtrain.submit.document import JobDocument
from vtrain.submit.options import JobOptions

RETIRED = (
    "AI Platform Training was retired on 2025-01-31: vtrain renders this job and sends nothing"
)
# The gcloud flags' spelling of trainingInput's role prefixes.
GCLOUD_PREFIXES = {CHIEF: "master", WORKER: "worker", PS: "parameter-server"}


def show(job: JobDocument, options: JobOptions | None, delivery: Delivery) -> int:
    """Print config.yaml and the gcloud command (only the command with --flags-only)."""
    if not delivery.flags_only:
        print_document(delivery, job.document)
    if options is None:
        words = [
            "gcloud",
            "ai-platform",
            "jobs",
            "submit",
            "training",
            delivery.job_name or "JOB_ID",
            f"--region={job.document['trainingInput'].get('region')}",
            f"--config={job.source}",
        ]
    else:
        words = gcloud_words(
            options, delivery.output or "config.yaml", flags_only=delivery.flags_only
        )
    shown = redact(words)
    command = shlex.join(shown)
    if delivery.flags_only:
        delivery.terminal.say(command)
        if shown != words:
            warn_hidden(delivery.terminal)
    else:
        delivery.terminal.complain(f"vtrain: equivalent: {command}")
    if not delivery.dry_run:
        delivery.terminal.complain(f"vtrain submit: note: {RETIRED}")
    return 0


def gcloud_words(
    options: JobOptions, config_path: str = "config.yaml", *, flags_only: bool = False
) -> list[str]:
    """The equivalent `gcloud ai-platform jobs submit training` command, word by word."""
    words = ["gcloud", "ai-platform", "jobs", "submit", "training", options.name]
    words.append(f"--region={options.region}")
    if options.project:
        words.append(f"--project={options.project}")
    if not flags_only:
        # Evaluators, hyperparameters and scheduling exist only in the file: it carries all.
        words.append(f"--config={config_path}")
        return words
    words.append("--scale-tier=custom")
    for role, prefix in GCLOUD_PREFIXES.items():
        pool = options.pool(role)
        if not pool.count:
            continue
        if role != CHIEF:
            words.append(f"--{prefix}-count={pool.count}")
        words.append(f"--{prefix}-machine-type={pool.machine_type}")
        words.append(f"--{prefix}-image-uri={pool.image}")
        if pool.accelerator is not None:
            a = pool.accelerator
            words.append(f"--{prefix}-accelerator=count={a.count},type={a.type.lower()}")
    if options.use_chief:
        words.append("--use-chief-in-tf-config=true")
    if options.output_dir:
        words.append(f"--job-dir={options.output_dir}")
    if options.service_account:
        words.append(f"--service-account={options.service_account}")
    if options.labels:
        words.append("--labels=" + ",".join(f"{k}={v}" for k, v in options.labels))
    if options.args:
        words.extend(["--", *options.args])
    return words

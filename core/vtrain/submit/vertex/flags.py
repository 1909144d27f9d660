"""Vertex's own flags: Reduction Server, whole-job restarts, scheduling, pre-built containers,
and following a sent job."""

from __future__ import annotations

import argparse

from vtrain.submit.engine import Flag

FLAGS = (
    Flag(
        "--reduction-servers",
        {
            "type": "integer",
            "default": 0,
            "metavar": "R",
            "help": "Reduction Server replicas in pool 2 (Google's published image)",
        },
        option="reduction_servers",
        builds=True,
    ),
    Flag(
        "--reduction-server-machine-type",
        {"metavar": "TYPE", "help": "default n1-highcpu-16"},
        option="reduction_server_machine_type",
        builds=True,
    ),
    Flag(
        "--restart-job-on-worker-restart",
        {"action": "store_true"},
        option="restart_job",
        builds=True,
    ),
    Flag(
        "--flex-start",
        {
            "action": "store_true",
            "help": "strategy FLEX_START, the job queues until its machines are free",
        },
        option="flex_start",
        builds=True,
    ),
    Flag(
        "--max-wait",
        {
            "metavar": "DURATION",
            "help": "with --flex-start: how long to queue (maxWaitDuration; Vertex's default 24h)",
        },
        option="max_wait",
        builds=True,
    ),
    Flag(
        "--python-package",
        {
            "metavar": "DIR|gs://...",
            "help": "pre-built containers: the package source, or a staged URI",
        },
        option="python_package",
        builds=True,
    ),
    Flag(
        "--python-module",
        {"metavar": "MODULE", "help": "e.g. trainer.task"},
        option="python_module",
        builds=True,
    ),
    Flag(
        "--executor-image",
        {"metavar": "URI", "help": "a pre-built training container"},
        option="executor_image",
        builds=True,
    ),
    Flag(
        "--staging",
        {"metavar": "gs://BUCKET/PATH", "help": "where the package is uploaded"},
        option="staging",
        builds=True,
    ),
    Flag(
        "--experiment",
        {
            "metavar": "NAME",
            "help": "Vertex AI Experiments: the job's experiment (the CustomJob's experiment)",
        },
        option="experiment",
        builds=True,
    ),
    Flag(
        "--experiment-run",
        {
            "metavar": "RUN",
            "help": "with --experiment: the job's run in it (default: the job's name)",
        },
        option="experiment_run",
        builds=True,
    ),
    Flag(
        "--tensorboard",
        {
            "metavar": "RESOURCE",
            "help": "a Vertex AI TensorBoard (projects/P/locations/L/tensorboards/ID, or ID) "
            "that Vertex streams AIP_TENSORBOARD_LOG_DIR to",
        },
        option="tensorboard",
        builds=True,
    ),
    Flag(
        "--wait", {"action": "store_true", "help": "follow the job until it ends"}, delivery="wait"
    ),
    Flag(
        "--poll",
        {"type": "seconds", "default": 30.0, "metavar": "SECONDS", "help": argparse.SUPPRESS},
        delivery="poll",
    ),
    Flag(
        "--api-endpoint",
        {
            "metavar": "HOST:PORT",
            "help": "Vertex API endpoint (default REGION-aiplatform.googleapis.com)",
        },
        delivery="api_endpoint",
    ),
)

"""AI Platform's own flags: the chief's name in TF_CONFIG, and the job as gcloud flags only."""

from __future__ import annotations

from vtrain.submit.engine import Flag

FLAGS = (
    Flag(
        "--use-chief",
        {
            "dest": "use_chief",
            "action": "store_true",
            "default": True,
            "help": "useChiefInTfConfig (the default: TensorFlow 2 rejects 'master')",
        },
        option="use_chief",
    ),
    Flag("--no-use-chief", {"dest": "use_chief", "action": "store_false"}),
    Flag(
        "--flags-only",
        {
            "action": "store_true",
            "help": "print the job as gcloud flags, without config.yaml (no evaluators, no study)",
        },
        option="flags_only",
        delivery="flags_only",
    ),
)

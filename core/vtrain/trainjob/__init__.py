"""Kubeflow Trainer v2's TrainJob, from inside a trainer node: its status (KEP-2779)."""

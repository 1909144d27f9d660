"""Hyperparameter tuning from training code: report the metric as the platform reads it.

`report` is the one function training code calls. The study runner behind
`vtrain tune` is `vtrain.tune`, imported only by that command.
"""

from vtrain.hypertune.report import report

__all__ = ["report"]

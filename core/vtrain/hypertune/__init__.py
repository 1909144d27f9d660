"""Hyperparameter tuning: report the metric as the platform reads it, and run studies locally.

`report` is the one function training code calls; the study runner behind
`vtrain tune` lives in the other modules and is imported only by that command.
"""

from vtrain.hypertune.report import report

__all__ = ["report"]

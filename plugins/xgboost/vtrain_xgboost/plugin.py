"""The "xgboost" plugin: the chief hosts XGBoost's tracker; every trainer enters the collective."""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from datetime import timedelta

from vtrain import ClusterInfo, UsageError
from vtrain.plugins.base import KubeflowJob, Plugin
from vtrain.plugins.wait import DEFAULT_WAIT
from vtrain_xgboost.communicator import Link
from vtrain_xgboost.handle import XGBoostHandle
from vtrain_xgboost.rendezvous import DMLC_VARIABLES, Rendezvous

# A collective operation waits this long for the slowest trainer (a long evaluation,
# a checkpoint to gs://) before it fails; XGBoost's own default is shorter.
DEFAULT_TIMEOUT = timedelta(minutes=60)

_open: list[Link] = []  # the collective this process is in: XGBoost allows one at a time


class XGBoostPlugin(Plugin):
    """XGBoost's collective (the Rabit tracker) from the platform's description."""

    name = "xgboost"
    extra = "xgboost"
    requires = ("xgboost",)
    kubeflow = KubeflowJob(kind="XGBoostJob", runtime="xgboost-distributed")

    def environment(
        self, info: ClusterInfo, environ: Mapping[str, str], **options: object
    ) -> dict[str, str | None]:
        """DMLC_TRACKER_URI, DMLC_TRACKER_PORT, DMLC_TASK_ID, DMLC_NUM_WORKER on a trainer."""
        if not info.is_trainer:
            return dict.fromkeys(DMLC_VARIABLES)
        return Rendezvous.from_cluster(info).environment()

    def configure(
        self,
        info: ClusterInfo | None = None,
        *,
        wait: timedelta = DEFAULT_WAIT,
        timeout: timedelta = DEFAULT_TIMEOUT,
        environ: MutableMapping[str, str] | None = None,
    ) -> XGBoostHandle:
        """Start the tracker on the chief, enter the collective on every trainer; return the handle.

        A worker waits up to `wait` for the chief's tracker, and the tracker as
        long for every trainer; a collective operation waits up to `timeout`. A
        single process gets no tracker and no collective. ps, evaluator and
        Reduction Server replicas get a handle whose `rank` is None.
        """
        for value, argument in ((wait, "wait"), (timeout, "timeout")):
            if not isinstance(value, timedelta) or value.total_seconds() < 1:
                raise UsageError(
                    "not a duration of a second or more",
                    source=f"xgboost.configure({argument}=)",
                    value=value,
                    expected="a datetime.timedelta >= 1 s",
                )
        env = os.environ if environ is None else environ
        info = self.prepare(info, env)
        if not info.is_trainer:
            return XGBoostHandle(
                info=info, is_leader=False, rendezvous=None, link=None, environ=env
            )
        self.require("xgboost")
        rv = Rendezvous.from_cluster(info)
        link = None
        if rv.distributed:
            _open[:] = [k for k in _open if k.joined or k.tracker is not None]
            if _open:
                raise UsageError(
                    "this process is already in an XGBoost collective",
                    source="xgboost.configure",
                    value=_open[0].rv.tracker_address,
                    expected="one configure() per process",
                    hint="close the first handle (leave its `with` block) before configuring again",
                )
            link = Link(rv, wait=wait, timeout=timeout)
            link.open()
            _open.append(link)
        return XGBoostHandle(
            info=info, is_leader=self.leads(info, env), rendezvous=rv, link=link, environ=env
        )

"""The "mxnet" plugin: MXNet's scheduler, servers and workers from the platform's cluster."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, MutableMapping
from datetime import timedelta
from typing import Any

from vtrain import ClusterInfo, LaunchError, UsageError
from vtrain.cluster import CHIEF, PS
from vtrain.cluster.leader import Replica, encode
from vtrain.plugins.base import KubeflowJob, Plugin
from vtrain.plugins.wait import DEFAULT_WAIT, STEADY, Probe, tcp_probe, wait_for
from vtrain.variables import LEADER
from vtrain_mxnet.children import Children
from vtrain_mxnet.handle import MXNetHandle, _Resources
from vtrain_mxnet.import_order import check_not_too_late, mark_started
from vtrain_mxnet.layout import SERVER, SERVICE_ROLES, Layout
from vtrain_mxnet.service import run_role

KVSTORES = ("dist_sync", "dist_async", "dist_device_sync")
_SCHEDULER_SOURCE = "DMLC_PS_ROOT_URI:DMLC_PS_ROOT_PORT"
_PAUSE = 0.05


class MXNetPlugin(Plugin):
    """MXNet's parameter-server roles from the platform's description, with Gluon helpers."""

    name = "mxnet"
    extra = "mxnet"
    requires = ("mxnet",)
    # A TFJob: its chief/worker/ps roles are the ones this plugin maps onto MXNet's.
    kubeflow = KubeflowJob(kind="TFJob", container="tensorflow")
    serving_roles = frozenset({CHIEF, PS})  # the scheduler, the servers

    # -- pure ---------------------------------------------------------------------------

    def environment(
        self,
        info: ClusterInfo,
        environ: Mapping[str, str],
        *,
        chief_trains: bool = False,
        servers_beside_workers: bool = False,
        **_: Any,
    ) -> dict[str, str | None]:
        """DMLC_ROLE, DMLC_PS_ROOT_URI/PORT, DMLC_NUM_SERVER/WORKER, DMLC_NODE_HOST."""
        layout = Layout.from_cluster(
            info, chief_trains=chief_trains, servers_beside_workers=servers_beside_workers
        )
        return layout.variables(environ)

    def serves(
        self,
        info: ClusterInfo,
        *,
        chief_trains: bool = False,
        servers_beside_workers: bool = False,
        **_: Any,
    ) -> bool:
        """The scheduler (the chief, unless it trains) and the parameter servers serve."""
        return Layout.from_cluster(
            info, chief_trains=chief_trains, servers_beside_workers=servers_beside_workers
        ).serves

    def leader(
        self,
        info: ClusterInfo,
        *,
        chief_trains: bool = False,
        servers_beside_workers: bool = False,
        **_: Any,
    ) -> Replica | None:
        """Worker 0 (MXNet's rank 0 once the kvstore says); the chief when it trains."""
        return Layout.from_cluster(
            info, chief_trains=chief_trains, servers_beside_workers=servers_beside_workers
        ).leader

    # -- with the framework ---------------------------------------------------------------

    def serve(
        self,
        info: ClusterInfo,
        stopped: threading.Event,
        *,
        wait: timedelta = DEFAULT_WAIT,
        **_: Any,
    ) -> None:
        """Run MXNet's scheduler or server here; return when it ends or `stopped` is set."""
        role = os.environ.get("DMLC_ROLE")
        if role not in SERVICE_ROLES:
            raise LaunchError(
                "this replica serves, but its MXNet role is not set",
                source="DMLC_ROLE",
                value=role,
                expected="scheduler or server (configure() sets it)",
            )
        # In this process, not a child: a second interpreter would lengthen every job's
        # start. On a thread: ps-lite's loop blocks the thread that imports mxnet, and
        # this one must still see SIGTERM (`stopped`) and bound a server's wait for the
        # scheduler, which ps-lite would not.
        ended: list[int] = []
        loop = threading.Thread(
            target=lambda: ended.append(run_role(role)), name=f"mxnet-{role}", daemon=True
        )
        loop.start()
        if role == SERVER:
            # ps-lite would wait for its scheduler forever: bound it, while still seeing
            # `stopped` and a loop that ended (nothing is left to wait for then).
            host, port = os.environ["DMLC_PS_ROOT_URI"], int(os.environ["DMLC_PS_ROOT_PORT"])
            scheduler = tcp_probe(host, port)
            _wait_for_scheduler(
                lambda: None if stopped.is_set() or not loop.is_alive() else scheduler(),
                f"{host}:{port}",
                wait,
            )
        while not stopped.wait(_PAUSE):
            if loop.is_alive():
                continue
            if ended == [0]:
                return
            # No status: the import raised, and the thread printed its traceback.
            how = f"exited with status {ended[0]}" if ended else "failed to start"
            raise LaunchError(
                f"MXNet's {role} {how}",
                source="DMLC_ROLE",
                value=role,
                hint="its log lines are above, in this replica's output",
            )

    def configure(
        self,
        info: ClusterInfo | None = None,
        *,
        kvstore: str = "dist_sync",
        chief_trains: bool = False,
        servers_beside_workers: bool = False,
        wait: timedelta = DEFAULT_WAIT,
        environ: MutableMapping[str, str] | None = None,
    ) -> MXNetHandle:
        """Set MXNet's DMLC variables for this replica, then serve or join the kvstore.

        Call it before `import mxnet`. The scheduler and server replicas never
        return: they run MXNet's loop and exit 0 when training ends. A worker
        waits up to `wait` for the scheduler, starts the children its placement
        asks for (`chief_trains`: the scheduler beside the chief, which trains
        as a worker; `servers_beside_workers`: a server beside every training
        replica of a job without parameter servers), and creates the kvstore.
        """
        if kvstore not in KVSTORES:
            raise UsageError(
                "not a distributed kvstore MXNet's parameter servers run",
                source="kvstore",
                value=kvstore,
                expected=" or ".join(KVSTORES),
            )
        if not isinstance(wait, timedelta):
            raise UsageError("not a duration", source="wait", value=wait,
                             expected="a datetime.timedelta")  # fmt: skip
        env = os.environ if environ is None else environ
        info = info or ClusterInfo.from_env(env)
        placement = {"chief_trains": chief_trains, "servers_beside_workers": servers_beside_workers}
        layout = Layout.from_cluster(info, **placement)
        variables = layout.variables(env)
        check_not_too_late(variables, env)
        info = self.prepare(info, env, wait=wait, **placement)

        if not layout.distributed or layout.role is None:
            # Alone: one trainer, no kvstore. Off the kvstore (evaluators): no rank.
            trains = info.is_trainer and not layout.distributed
            return MXNetHandle(
                info=info,
                is_leader=self.leads(info, env),
                layout=layout,
                kvstore_type=None,
                _rank=0 if trains else None,
                _world_size=1 if trains else 0,
                environ=env,
            )

        resources = _Resources(children=Children())
        try:
            # Children first and MXNet's import before the wait: each takes seconds, and
            # they overlap the scheduler's own start. A worker's import reads no DMLC
            # variable yet (ps-lite reads them when the kvstore starts).
            for role in layout.children:
                resources.children.start(role, env)  # type: ignore[union-attr]
            mx = self.require("mxnet")
            assert layout.scheduler is not None
            host, port = layout.scheduler
            _wait_for_scheduler(tcp_probe(host, port), f"{host}:{port}", wait)
            if env is not os.environ:
                # ps-lite reads the process environment when the kvstore starts.
                os.environ.update({k: v for k, v in variables.items() if v is not None})
            mark_started(variables)
            resources.kvstore = mx.kv.create(kvstore)
            resources.children.check()  # type: ignore[union-attr]
        except BaseException:
            resources.children.stop(0.0)  # type: ignore[union-attr]
            raise
        if layout.leader_by_rank:
            from vtrain_mxnet.rank_zero import rank_zero_replica

            env[LEADER] = encode(rank_zero_replica(resources.kvstore, info))
        handle = MXNetHandle(
            info=info,
            is_leader=self.leads(info, env),
            layout=layout,
            kvstore_type=kvstore,
            _rank=resources.kvstore.rank,
            _world_size=resources.kvstore.num_workers,
            _resources=resources,
            environ=env,
        )
        # Registered after mxnet's own exit hook, so it runs first: leave the job before
        # MXNet shuts its engine down, and before the children are stopped.
        import atexit

        atexit.register(handle.close)
        return handle


def _wait_for_scheduler(probe: Probe, address: str, deadline: timedelta) -> None:
    """Block until `probe` finds the scheduler at `address` up, or raise once `deadline` is past.

    Tried every 50 ms (STEADY): every worker waits here, and each second lost after
    the scheduler is up is a second of every job's start.
    """
    wait_for(
        probe,
        what="the MXNet scheduler",
        address=address,
        source=_SCHEDULER_SOURCE,
        deadline=deadline,
        backoff=STEADY,
        failed="did not accept connections",
        hint="the chief, where it runs, may still be starting: raise `wait=` in configure(), "
        "or check that it runs and listens there",
    )

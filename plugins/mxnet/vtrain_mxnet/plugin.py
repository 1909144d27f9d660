"""The "mxnet" plugin: MXNet's scheduler, servers and workers from the platform's cluster."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping, MutableMapping
from datetime import timedelta
from typing import Any

from vtrain import ClusterInfo, LaunchError, UsageError
from vtrain.cluster import CHIEF, PS
from vtrain.cluster.leader import Replica, encode
from vtrain.plugins.base import KubeflowJob, Plugin
from vtrain.plugins.wait import (
    DEFAULT_WAIT,
    STEADY,
    WATCHDOG_GRACE,
    Probe,
    reply_probe,
    wait_for,
    watchdog,
)
from vtrain.variables import LEADER
from vtrain_mxnet.children import Children
from vtrain_mxnet.handle import MXNetHandle, _Resources
from vtrain_mxnet.import_order import check_not_too_late, mark_started
from vtrain_mxnet.layout import DMLC_WORKER, INTERFACE, SERVER, SERVICE_ROLES, Layout
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
    kubeflow = KubeflowJob(kind="TFJob", runtime="vtrain-mxnet")
    serving_roles = frozenset({CHIEF, PS})  # the scheduler, the servers
    # tests/mxnet/test_mxnet_job_restarts.py: a lone restarted worker waits forever.
    job_restarts = "MXNet workers cannot rejoin a running ps-lite job"
    environment_prefixes = ("DMLC_",)
    user_variables = frozenset({INTERFACE})  # this machine's network interface

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
        """DMLC_ROLE, DMLC_PS_ROOT_URI/PORT, DMLC_NUM_SERVER/WORKER, DMLC_NODE_HOST.

        As `Layout.from_cluster` lays out `info` with `chief_trains` and
        `servers_beside_workers`, and `Layout.variables` keeps what `environ` chose.
        """
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
        """The scheduler (the chief, unless it trains) and the parameter servers serve.

        With `chief_trains` the chief trains; `servers_beside_workers` adds a server
        child process beside each trainer, which does not make the replica serve.
        """
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
        """Worker 0 (MXNet's rank 0 once the kvstore says); the chief when it trains.

        The chief trains with `chief_trains`; `servers_beside_workers` changes no leader.
        """
        return Layout.from_cluster(
            info, chief_trains=chief_trains, servers_beside_workers=servers_beside_workers
        ).leader

    def reader(
        self,
        info: ClusterInfo,
        *,
        chief_trains: bool = False,
        servers_beside_workers: bool = False,
        **_: Any,
    ) -> tuple[int, int] | None:
        """Worker i reads the workers' share i when the chief only schedules; else as it trains.

        The chief trains with `chief_trains`, and the placement `servers_beside_workers`
        asks for changes no reader.
        """
        layout = Layout.from_cluster(
            info, chief_trains=chief_trains, servers_beside_workers=servers_beside_workers
        )
        if chief_trains or layout.role != DMLC_WORKER:
            return None
        return info.index, layout.num_workers

    # -- with the framework ---------------------------------------------------------------

    def serve(
        self,
        info: ClusterInfo,
        stopped: threading.Event,
        *,
        wait: timedelta = DEFAULT_WAIT,
        **_: Any,
    ) -> None:
        """Run MXNet's scheduler or server here; return when it ends or `stopped` is set.

        A server waits up to `wait` for the scheduler. A role that is not set, or a
        loop that fails, raises `LaunchError`.
        """
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
            scheduler = scheduler_probe(host, port)
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
            raise UsageError(
                "not a duration", source="wait", value=wait, expected="a datetime.timedelta"
            )
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
            deadline = time.monotonic() + wait.total_seconds()
            _wait_for_scheduler(scheduler_probe(host, port), f"{host}:{port}", wait)
            if env is not os.environ:
                # ps-lite reads the process environment when the kvstore starts.
                os.environ.update({k: v for k, v in variables.items() if v is not None})
            mark_started(variables)
            # ps-lite registers with the scheduler and waits for every node, in C, with no
            # timeout: `wait` bounds the whole entry, as for the scheduler's answer above.
            left = max(1.0, deadline - time.monotonic()) + WATCHDOG_GRACE
            started = deadline - wait.total_seconds()
            with watchdog(left, _not_formed(f"{host}:{port}", layout, wait, started)):
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


ZMTP_SIGNATURE = 10
"""Bytes of ZeroMQ's greeting signature: 0xFF, eight bytes, 0x7F. ps-lite speaks ZeroMQ, and
a ZeroMQ peer sends these at once on every connection it accepts."""


def _zmq_greeting(first: bytes) -> str | None:
    if len(first) == ZMTP_SIGNATURE and first[0] == 0xFF and first[-1] == 0x7F:
        return None
    if not first:
        return "something listens there but closed the connection without a word"
    return f"something else answers there ({first[:16]!r}), not a ZeroMQ peer"


def scheduler_probe(host: str, port: int) -> Probe:
    """A try that succeeds when the scheduler's port answers as ps-lite does (ZeroMQ's greeting).

    A bare TCP connect would take any program on the port for the scheduler, and
    ps-lite would then wait on it forever.
    """
    return reply_probe(host, port, _zmq_greeting, size=ZMTP_SIGNATURE, timeout=1.0)


def _not_formed(
    address: str, layout: Layout, wait: timedelta, started: float
) -> Callable[[float], LaunchError]:
    """The error that ends a worker still inside ps-lite's registration at the deadline."""

    def error(_: float) -> LaunchError:
        waited = time.monotonic() - started
        return LaunchError(
            f"MXNet's kvstore did not form within {wait.total_seconds():g} s (this worker reached "
            f"the scheduler at {address}; not every other node came in {waited:.0f} s)",
            source="DMLC_NUM_WORKER, DMLC_NUM_SERVER",
            value=f"{layout.num_workers} workers, {layout.num_servers} servers",
            hint="a replica that crashed or started too late? raise `wait=` in configure() "
            "for slow starts",
        )

    return error


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
        failed="did not answer",
        hint="the chief, where it runs, may still be starting: raise `wait=` in configure(), "
        "or check that it runs and listens there",
    )

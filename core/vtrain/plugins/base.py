"""The contract every framework plugin fulfils, and the base of the handle `configure()` returns.

Without importing its framework, a plugin says, from a `ClusterInfo` alone:
which variables the framework reads on this replica (`environment`), whether
this replica serves rather than trains (`serves`: TensorFlow's parameter
servers, MXNet's scheduler and servers), and which replica leads (`leader`).
With the framework, it serves (`serve`) or sets up training (`configure`,
which begins with `prepare`). Options are the typed keyword-only parameters of
the plugin's own `configure`; a misspelt one is refused with the names of the
real ones, read from that signature.
"""

from __future__ import annotations

import functools
import importlib
import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from vtrain.cluster import ClusterInfo
from vtrain.cluster.leader import Replica, default_leader, encode, leads
from vtrain.errors import MissingExtraError, UsageError
from vtrain.plugins.extras import real_extra
from vtrain.plugins.handle import Handle
from vtrain.variables import FRAMEWORK_VARIABLES, LEADER, READER

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["Handle", "KubeflowJob", "Plugin"]


@dataclass(frozen=True)
class KubeflowJob:
    """How Kubeflow's training operator runs a framework's job: its kind (which names the
    training container, its roles and its variables)."""

    kind: str
    """The operator's job kind: TFJob, PyTorchJob or XGBoostJob (the v1 API, retiring)."""
    runtime: str = "torch-distributed"
    """The Kubeflow Trainer v2 ClusterTrainingRuntime a TrainJob of it runs on: the Trainer's
    own (torch-distributed, xgboost-distributed) or vtrain's (vtrain-tensorflow, vtrain-mxnet,
    which `vtrain render kubeflow --runtime NAME` prints)."""


class Plugin(ABC):
    """Turns a `ClusterInfo` into one framework's own distributed setup."""

    name: ClassVar[str]
    """The key users pass to `vtrain.plugins.get`, e.g. "pytorch"."""
    extra: ClassVar[str | None] = None
    """The vtrain extra that installs the framework (``pip install "vtrain[<extra>]"``)."""
    install: ClassVar[str] = ""
    """For a plugin shipped elsewhere: what to run to install its framework."""
    requires: ClassVar[tuple[str, ...]] = ()
    """Top-level modules the framework needs; checked without importing them."""
    installs: ClassVar[Mapping[str, str]] = {}
    """Other top-level modules a vtrain extra of this plugin installs -> that extra."""
    kubeflow: ClassVar[KubeflowJob | None] = None
    """The Kubeflow job that runs this framework; None: `vtrain render kubeflow` refuses it."""
    serving_roles: ClassVar[frozenset[str]] = frozenset()
    """The roles whose replicas may serve rather than train (`serves` says when)."""
    job_restarts: ClassVar[str | None] = None
    """Why one replica's restart must restart the whole job, or None when a lone one rejoins.

    Said when a replica restarted alone cannot rejoin the running job (MXNet's
    ps-lite): `vtrain render` and `submit` then set Vertex's
    restartJobOnWorkerRestart, and `vtrain local run` stops, with this reason, a
    job that would restart one replica alone, rather than let it hang.
    """
    environment_prefixes: ClassVar[tuple[str, ...]] = ()
    """Prefixes of the framework's own variables (``DMLC_``), `user_variables` aside.

    `prepare` lists those this process then holds in VTRAIN_FRAMEWORK_VARIABLES, and
    `vtrain local run` keeps them out of the replicas of a job this process starts.
    """
    user_variables: ClassVar[frozenset[str]] = frozenset()
    """Variables with those prefixes that the user chooses, not the job (a network interface)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "configure" in cls.__dict__:
            cls.configure = _checked_options(cls.__dict__["configure"])

    # -- pure: a function of the cluster, no framework imported ---------------------------

    def environment(
        self, info: ClusterInfo, environ: Mapping[str, str], **options: Any
    ) -> dict[str, str | None]:
        """The framework's variables for this replica of `info`; None removes a variable.

        `environ` is the environment they will be set in (read, never written, here);
        `options` are those `configure` took that shape the layout.
        """
        return {}

    def serves(self, info: ClusterInfo, **options: Any) -> bool:
        """True when this replica of `info` runs a service until the job ends instead of
        training (given the layout `options`)."""
        return False

    def leader(self, info: ClusterInfo, **options: Any) -> Replica | None:
        """The replica of `info` that writes shared artifacts: the chief (worker 0 without one),
        unless the layout `options` say otherwise; None in a cluster that trains nowhere."""
        return default_leader(info)

    def reader(self, info: ClusterInfo, **options: Any) -> tuple[int, int] | None:
        """(rank, readers) of this replica in the training and test data; None: as it trains.

        Read from `info` and the layout `options`. None leaves it to `vtrain.data`: the
        trainers, in rank order. A plugin whose replicas read otherwise (MXNet's workers,
        when the chief only schedules) says so; `prepare` exports it in VTRAIN_READER.
        """
        return None

    # -- with the framework ---------------------------------------------------------------

    def serve(self, info: ClusterInfo, stopped: threading.Event, **options: Any) -> None:
        """Run the service of this replica of `info` (given the layout `options`); return when
        the framework ends it or `stopped` is set."""
        raise NotImplementedError(
            f"the {self.name} plugin says {info.role} serves, but has no serve"
        )

    def prepare(
        self, info: ClusterInfo | None, environ: MutableMapping[str, str] | None, **options: Any
    ) -> ClusterInfo:
        """The start of every `configure`: read the cluster, set its variables, export its places.

        `info` is read from `environ` (default `os.environ`) when None, and the
        variables are set in `environ`; the cluster is returned. `options` (the ones
        `configure` took that shape the layout) reach `environment`, `serves`, `leader`,
        `reader` and `serve`. On a replica that serves, this runs the service and exits 0
        when it ends: it never returns there.
        """
        env = os.environ if environ is None else environ
        info = info or ClusterInfo.from_env(env)
        for name, value in self.environment(info, env, **options).items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        leader = self.leader(info, **options)
        place = self.reader(info, **options)
        prefixes, mine = self.environment_prefixes, self.user_variables
        ours = sorted(k for k in env if k.startswith(prefixes) and k not in mine)
        exported = {
            LEADER: None if leader is None else encode(leader),
            READER: None if place is None else f"{place[0]}/{place[1]}",
            FRAMEWORK_VARIABLES: ",".join(ours) or None,
        }
        for name, text in exported.items():
            if text is None:
                env.pop(name, None)
            else:
                env[name] = text
        if self.serves(info, **options):
            from vtrain.plugins.serve import run_service

            run_service(self, info, options)
        if info.rank is not None:
            from vtrain.context import runs_alone
            from vtrain.progress.watchdog import watch
            from vtrain.timeline.recorder import start_recording

            launched = not runs_alone(env)
            replica = f"{info.role}-{info.index}"
            start_recording(env, replica, env.get("AIP_CHECKPOINT_DIR", ""), launched=launched)
            # From here, before the framework meets its peers: a rendezvous that hangs is a
            # hang too, under the first-step allowance.
            watch(env, launched=launched)
        return info

    def leads(self, info: ClusterInfo, environ: Mapping[str, str] | None = None) -> bool:
        """True when this replica of `info` leads, as `prepare` exported it in `environ`
        (default `os.environ`)."""
        return leads(info, os.environ if environ is None else environ)

    if TYPE_CHECKING:
        # Each plugin's configure takes its own typed keyword options (checked against its
        # signature at run time); to the type checker, any signature that returns a Handle.
        configure: Callable[..., Handle]
    else:

        @abstractmethod
        def configure(
            self,
            info: ClusterInfo | None = None,
            *,
            environ: MutableMapping[str, str] | None = None,
            **options: Any,
        ) -> Handle:
            """Set up the framework for this replica; return its handle (or serve, never return).

            `info` is read from `environ` (default `os.environ`) when None, and the
            framework's variables are set there. `options` are the plugin's own typed
            keywords; one it does not take raises `UsageError` naming those it does.
            """

    # -- installation ---------------------------------------------------------------------

    def is_available(self) -> bool:
        """True when every required module is installed (nothing is imported to find out)."""
        import importlib.util

        return all(importlib.util.find_spec(m) is not None for m in self.requires)

    def require(self, module: str) -> ModuleType:
        """Import a framework module, or say what installs it."""
        try:
            return importlib.import_module(module)
        except ImportError as e:
            raise MissingExtraError(
                f"the {self.name} plugin",
                real_extra(self.extra),
                module=e.name or module,
                install=self.install,
            ) from e

    def __repr__(self) -> str:
        return f"<vtrain plugin {self.name!r}>"


def _checked_options(configure: F) -> F:
    """`configure`, refusing keywords not in its signature with an error naming those that are."""
    known: list[str] = []

    @functools.wraps(configure)
    def checked(self: Plugin, *args: Any, **options: Any) -> Any:
        if not known:
            import inspect  # here: ~10 ms, paid only by a process that configures a framework

            parameters = list(inspect.signature(configure).parameters.values())[1:]
            if any(p.kind is p.VAR_KEYWORD for p in parameters):
                known.append("*")
            known.extend(p.name for p in parameters if p.kind is not p.VAR_POSITIONAL)
        unknown = sorted(set(options) - set(known)) if "*" not in known else []
        if unknown:
            raise UsageError(
                "unknown option",
                source=f"{self.name}.configure",
                value=unknown,
                expected="one of " + ", ".join(known),
            )
        return configure(self, *args, **options)

    return checked  # type: ignore[return-value]

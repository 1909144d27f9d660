"""The MXNet mapping for every platform layout, from the pure module alone (no mxnet needed).

AI Platform master / Vertex workerpool0 -> scheduler, worker / workerpool1 ->
workers, ps / workerpool2 -> servers, evaluators outside; TF_CONFIG and
Kubeflow layouts the same way; and the two placements the options ask for.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from platform_examples import AIP_CLUSTER, VERTEX_CLUSTER, cluster_spec, tf_config

from vtrain import ClusterInfo, ConfigError
from vtrain_mxnet.layout import WRITTEN, Layout

VERTEX_CHIEF_HOST = "cmle-training-workerpool0-ab-0"
# Kubeflow's TFJob puts every role, the evaluator too, in TF_CONFIG's cluster.
KUBEFLOW = {
    "chief": ["job-chief-0.ns.svc:2222"],
    "worker": ["job-worker-0.ns.svc:2222", "job-worker-1.ns.svc:2222"],
    "ps": ["job-ps-0.ns.svc:2222"],
    "evaluator": ["job-evaluator-0.ns.svc:2222"],
}


def info(variable: str, document: str) -> ClusterInfo:
    return ClusterInfo.from_env({variable: document})


# (name, environment, DMLC_ROLE, children, (host, port) of the scheduler, servers, workers, node)
LAYOUTS = [
    (
        "vertex workerpool0",
        info("CLUSTER_SPEC", cluster_spec(VERTEX_CLUSTER, "workerpool0", 0)),
        "scheduler",
        (),
        (VERTEX_CHIEF_HOST, 2222),
        2,
        2,
        VERTEX_CHIEF_HOST,
    ),
    (
        "vertex workerpool1 1",
        info("CLUSTER_SPEC", cluster_spec(VERTEX_CLUSTER, "workerpool1", 1)),
        "worker",
        (),
        (VERTEX_CHIEF_HOST, 2222),
        2,
        2,
        "cmle-training-workerpool1-ab-1",
    ),
    (
        "vertex workerpool2 0",
        info("CLUSTER_SPEC", cluster_spec(VERTEX_CLUSTER, "workerpool2", 0)),
        "server",
        (),
        (VERTEX_CHIEF_HOST, 2222),
        2,
        2,
        "cmle-training-workerpool2-ab-0",
    ),
    (
        "vertex workerpool3 2",
        info("CLUSTER_SPEC", cluster_spec(VERTEX_CLUSTER, "workerpool3", 2)),
        None,
        (),
        (VERTEX_CHIEF_HOST, 2222),
        2,
        2,
        "cmle-training-workerpool3-ab-2",
    ),
    (
        "ai platform master",
        info("CLUSTER_SPEC", cluster_spec(AIP_CLUSTER, "master", 0)),
        "scheduler",
        (),
        ("master-0", 2222),
        1,
        2,
        "master-0",
    ),
    (
        "ai platform worker 0",
        info("CLUSTER_SPEC", cluster_spec(AIP_CLUSTER, "worker", 0)),
        "worker",
        (),
        ("master-0", 2222),
        1,
        2,
        "worker-0",
    ),
    (
        "ai platform ps",
        info("CLUSTER_SPEC", cluster_spec(AIP_CLUSTER, "ps", 0)),
        "server",
        (),
        ("master-0", 2222),
        1,
        2,
        "ps-0",
    ),
    (
        "ai platform evaluator",
        info("CLUSTER_SPEC", cluster_spec(AIP_CLUSTER, "evaluator", 0)),
        None,
        (),
        ("master-0", 2222),
        1,
        2,
        "evaluator-0",
    ),
    (
        "tf_config master",
        info(
            "TF_CONFIG",
            tf_config({k: v for k, v in AIP_CLUSTER.items() if k != "evaluator"}, "master", 0),
        ),
        "scheduler",
        (),
        ("master-0", 2222),
        1,
        2,
        "master-0",
    ),
    (
        "tf_config worker 1",
        info(
            "TF_CONFIG",
            tf_config({k: v for k, v in AIP_CLUSTER.items() if k != "evaluator"}, "worker", 1),
        ),
        "worker",
        (),
        ("master-0", 2222),
        1,
        2,
        "worker-1",
    ),
    (
        "kubeflow chief",
        info("TF_CONFIG", tf_config(KUBEFLOW, "chief", 0)),
        "scheduler",
        (),
        ("job-chief-0.ns.svc", 2222),
        1,
        2,
        "job-chief-0.ns.svc",
    ),
    (
        "kubeflow ps",
        info("TF_CONFIG", tf_config(KUBEFLOW, "ps", 0)),
        "server",
        (),
        ("job-chief-0.ns.svc", 2222),
        1,
        2,
        "job-ps-0.ns.svc",
    ),
    (
        "kubeflow evaluator",
        info("TF_CONFIG", tf_config(KUBEFLOW, "evaluator", 0)),
        None,
        (),
        ("job-chief-0.ns.svc", 2222),
        1,
        2,
        "job-evaluator-0.ns.svc",
    ),
]


@pytest.mark.parametrize(
    ("name", "cluster", "role", "children", "scheduler", "servers", "workers", "node"),
    LAYOUTS,
    ids=[row[0] for row in LAYOUTS],
)
def test_the_documented_mapping(
    name: str,
    cluster: ClusterInfo,
    role: str | None,
    children: tuple[str, ...],
    scheduler: tuple[str, int],
    servers: int,
    workers: int,
    node: str,
) -> None:
    layout = Layout.from_cluster(cluster)
    assert (layout.role, layout.children, layout.scheduler) == (role, children, scheduler)
    assert (layout.num_servers, layout.num_workers, layout.node_host) == (servers, workers, node)
    # The chief only schedules: worker 0, as MXNet will rank it, leads.
    assert layout.leader == ("worker", 0) and layout.leader_by_rank
    assert layout.serves == (role in ("scheduler", "server"))
    variables = layout.variables({})
    if role is None:
        assert set(variables.values()) == {None}  # evaluators: no stale DMLC variable stays
    else:
        assert variables["DMLC_ROLE"] == role
        assert variables["DMLC_PS_ROOT_URI"] == scheduler[0]
        assert variables["DMLC_PS_ROOT_PORT"] == str(scheduler[1])
        assert variables["DMLC_NUM_SERVER"] == str(servers)
        assert variables["DMLC_NUM_WORKER"] == str(workers)
        assert variables["DMLC_NODE_HOST"] == node


def test_the_chief_trains_beside_its_scheduler_child() -> None:
    chief = info("CLUSTER_SPEC", cluster_spec(VERTEX_CLUSTER, "workerpool0", 0))
    layout = Layout.from_cluster(chief, chief_trains=True)
    assert (layout.role, layout.children) == ("worker", ("scheduler",))
    assert (layout.num_workers, layout.num_servers) == (3, 2)
    assert layout.leader == ("chief", 0) and not layout.leader_by_rank and not layout.serves
    worker = info("CLUSTER_SPEC", cluster_spec(VERTEX_CLUSTER, "workerpool1", 0))
    assert Layout.from_cluster(worker, chief_trains=True).variables({})["DMLC_NUM_WORKER"] == "3"


@pytest.mark.parametrize("chief_trains", [False, True])
def test_servers_beside_the_workers_of_a_job_without_ps(chief_trains: bool) -> None:
    cluster = {
        "workerpool0": VERTEX_CLUSTER["workerpool0"],
        "workerpool1": VERTEX_CLUSTER["workerpool1"],
    }
    chief = Layout.from_cluster(
        info("CLUSTER_SPEC", cluster_spec(cluster, "workerpool0", 0)),
        chief_trains=chief_trains,
        servers_beside_workers=True,
    )
    worker = Layout.from_cluster(
        info("CLUSTER_SPEC", cluster_spec(cluster, "workerpool1", 1)),
        chief_trains=chief_trains,
        servers_beside_workers=True,
    )
    trainers = 3 if chief_trains else 2
    assert worker.role == "worker" and worker.children == ("server",)
    assert chief.children == (("scheduler", "server") if chief_trains else ())
    assert chief.role == ("worker" if chief_trains else "scheduler")
    assert (worker.num_servers, worker.num_workers) == (trainers, trainers)


def test_a_chief_alone_trains_without_a_kvstore() -> None:
    for cluster in (
        ClusterInfo.from_env({}),
        info("CLUSTER_SPEC", cluster_spec({"workerpool0": ["a:1"]}, "workerpool0", 0)),
        info("CLUSTER_SPEC", cluster_spec({"master": ["a:1"], "evaluator": ["b:1"]}, "master", 0)),
    ):
        layout = Layout.from_cluster(cluster)
        assert not layout.distributed and layout.role is None
        assert layout.leader == ("chief", 0)
        assert set(layout.variables({"DMLC_ROLE": "server"}).values()) == {None}


def test_dmlc_interface_and_ps_verbose_pass_through() -> None:
    worker = Layout.from_cluster(info("CLUSTER_SPEC", cluster_spec(AIP_CLUSTER, "worker", 0)))
    variables = worker.variables({"DMLC_INTERFACE": "eth1", "PS_VERBOSE": "1"})
    # ps-lite would take DMLC_NODE_HOST over the interface the user chose.
    assert variables["DMLC_NODE_HOST"] is None
    assert "DMLC_INTERFACE" not in variables and "PS_VERBOSE" not in variables
    # A worker runs the engine MXNet (or the user) picks: vtrain writes only DMLC variables.
    assert set(variables) == set(WRITTEN)


NO_PS = {"workerpool0": ["c:1"], "workerpool1": ["w:1"]}


@pytest.mark.parametrize(
    ("cluster", "options", "message"),
    [
        (
            {"worker": ["w0:1", "w1:1"], "ps": ["p:1"]},
            {},
            r"TF_CONFIG: MXNet's scheduler runs on the chief, and the cluster has none \(got "
            r"\['ps', 'worker'\]\); expected a chief .*Hint: add a primary replica",
        ),
        (
            {"chief": ["c:1"], "ps": ["p:1"]},
            {},
            r"TF_CONFIG: nobody trains: the chief only schedules and the job has no workers .*"
            r"chief_trains=True",
        ),
        (
            {"chief": ["c:1"], "worker": ["w:1"]},
            {},
            r"TF_CONFIG: MXNet's dist kvstore needs servers, and the job has no parameter servers"
            r".*servers_beside_workers=True",
        ),
        (
            {"chief": ["c:1"], "worker": ["w:1"], "ps": ["p:1"]},
            {"servers_beside_workers": True},
            r"servers_beside_workers: servers beside the workers are for jobs without parameter "
            r"servers, and this one has 1 \(got True\)",
        ),
    ],
)
def test_layouts_mxnet_cannot_run_are_refused(
    cluster: dict[str, list[str]], options: dict[str, bool], message: str
) -> None:
    task = "chief" if "chief" in cluster else "worker"
    with pytest.raises(ConfigError, match=message):
        Layout.from_cluster(info("TF_CONFIG", tf_config(cluster, task, 0)), **options)


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        (
            {"PS_VERBOSE": "yes"},
            r"PS_VERBOSE: not a ps-lite log level \(got 'yes'\); "
            r"expected 0, 1 or 2",
        ),
        (
            {"DMLC_INTERFACE": " "},
            r"DMLC_INTERFACE: empty network interface \(got ' '\); "
            r"expected an interface name",
        ),
    ],
)
def test_bad_pass_through_values_are_refused(environ: dict[str, str], message: str) -> None:
    worker = Layout.from_cluster(info("CLUSTER_SPEC", cluster_spec(AIP_CLUSTER, "worker", 0)))
    with pytest.raises(ConfigError, match=message):
        worker.variables(environ)


def test_importing_the_plugin_imports_no_mxnet() -> None:
    code = (
        "import sys, vtrain_mxnet, vtrain; p = vtrain.plugins.get('mxnet'); "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('mxnet', 'numpy'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", "import json; " + code], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) == []

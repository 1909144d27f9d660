"""configure() in one process: bad options, a scheduler that never comes, MXNet imported too early,
and children that die with a replica killed outright."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cluster_run import clean_env
from platform_examples import cluster_spec

from vtrain import UsageError, plugins


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cluster(**pools: int) -> dict[str, list[str]]:
    """A Vertex cluster on loopback ports nobody listens on."""
    return {pool: [f"127.0.0.1:{free_port()}" for _ in range(n)] for pool, n in pools.items()}


def run_python(
    code: str, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        env=clean_env(**env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_an_unknown_kvstore_or_option_is_refused() -> None:
    mxnet = plugins.get("mxnet", {})
    with pytest.raises(
        UsageError,
        match=r"kvstore: not a distributed kvstore .*\(got 'local'\); "
        r"expected dist_sync or dist_async or dist_device_sync",
    ):
        mxnet.configure(kvstore="local", environ={})
    with pytest.raises(
        UsageError,
        match=r"mxnet.configure: unknown option \(got \['chief_train'\]\)"
        r"; expected one of .*chief_trains",
    ):
        mxnet.configure(chief_train=True, environ={})  # type: ignore[call-arg]
    with pytest.raises(UsageError, match=r"wait: not a duration \(got 30\)"):
        mxnet.configure(wait=30, environ={})  # type: ignore[arg-type]


def test_a_worker_whose_scheduler_never_comes_fails_with_the_address() -> None:
    spec = cluster(workerpool0=1, workerpool1=1, workerpool2=1)
    env = {"CLUSTER_SPEC": cluster_spec(spec, "workerpool1", 0)}
    code = (
        "from datetime import timedelta; import vtrain\n"
        "vtrain.plugins.get('mxnet').configure(wait=timedelta(seconds=2))"
    )
    done = run_python(code, env)
    assert done.returncode == 1
    chief = spec["workerpool0"][0]
    assert (
        f"LaunchError: DMLC_PS_ROOT_URI:DMLC_PS_ROOT_PORT: the MXNet scheduler did not "
        f"answer within 2 s: no answer (Connection refused) (got '{chief}')" in done.stderr
    ), done.stderr


def test_a_server_whose_scheduler_never_comes_fails_too() -> None:
    spec = cluster(workerpool0=1, workerpool1=1, workerpool2=1)
    env = {"CLUSTER_SPEC": cluster_spec(spec, "workerpool2", 0)}
    code = (
        "from datetime import timedelta; import vtrain\n"
        "vtrain.plugins.get('mxnet').configure(wait=timedelta(seconds=2))"
    )
    done = run_python(code, env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the MXNet scheduler did not answer within 2 s" in done.stderr


@pytest.mark.parametrize(
    ("pool", "status"), [("workerpool0", 143), ("workerpool2", 0)], ids=["scheduler", "server"]
)
def test_a_serving_replica_ends_at_sigterm_as_the_platform_reads_it(pool: str, status: int) -> None:
    # A server's SIGTERM is the platform ending the job after the chief's success: 0. The
    # chief (the scheduler here) is the job: its SIGTERM is a preemption or a cancel, not 0.
    # MXNet's loop runs in the replica's own process and blocks the thread that imported
    # mxnet; the scheduler waits for workers and the server for a scheduler that never come.
    spec = cluster(workerpool0=1, workerpool1=1, workerpool2=1)
    env = clean_env(CLUSTER_SPEC=cluster_spec(spec, pool, 0))
    code = "import vtrain; vtrain.plugins.get('mxnet').configure()"
    replica = subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert replica.stderr is not None  # vtrain's log lines
        assert "serves mxnet until the job ends" in replica.stderr.readline()
        time.sleep(3)  # time enough to import mxnet and enter ps-lite's loop
        assert replica.poll() is None, replica.communicate()
        replica.send_signal(signal.SIGTERM)
        _, err = replica.communicate(timeout=10)
        assert replica.returncode == status, err
    finally:
        if replica.poll() is None:
            replica.kill()
            replica.wait()


def test_mxnet_imported_with_other_settings_is_refused() -> None:
    spec = cluster(workerpool0=1, workerpool1=1, workerpool2=1)
    env = {"CLUSTER_SPEC": cluster_spec(spec, "workerpool1", 0), "DMLC_NUM_WORKER": "4"}
    done = run_python("import mxnet, vtrain; vtrain.plugins.get('mxnet').configure()", env)
    assert done.returncode == 1
    assert (
        "ConfigError: DMLC_NUM_WORKER: MXNet was imported before configure(), with other "
        "settings (got '4'); expected '1', as vtrain sets it for this replica. Hint: move "
        "`import mxnet`" in done.stderr
    ), done.stderr


def test_alone_there_is_no_kvstore_and_this_process_leads(tmp_path: Path) -> None:
    code = (
        "import vtrain\nh = vtrain.plugins.get('mxnet').configure()\n"
        "print(h.rank, h.world_size, h.kvstore, h.is_leader, "
        "h.shard(list(range(5))))"
    )
    done = run_python(code, {"VTRAIN_OUTPUT_DIR": str(tmp_path), "DMLC_ROLE": "server"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "1", "None", "True", "[0,", "1,", "2,", "3,", "4]"]


def _children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_children_die_with_a_replica_killed_outright() -> None:
    # The chief trains and hosts the scheduler and a server; the worker never comes, so
    # it waits in MXNet with both children running. SIGKILL to it alone (not its group).
    spec = cluster(workerpool0=1, workerpool1=1)
    env = clean_env(CLUSTER_SPEC=cluster_spec(spec, "workerpool0", 0))
    code = (
        "import vtrain\nvtrain.plugins.get('mxnet').configure(chief_trains=True, "
        "servers_beside_workers=True)"
    )
    replica = subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        children: list[int] = []
        for _ in range(600):
            children = _children_of(replica.pid)
            if len(children) == 2:
                break
            time.sleep(0.1)
        assert len(children) == 2, "the scheduler and the server never started"
        os.kill(replica.pid, signal.SIGKILL)
        replica.wait()
        for _ in range(200):
            if not any(_alive(c) for c in children):
                break
            time.sleep(0.1)
        assert not any(_alive(c) for c in children), "a child outlived its replica"
    finally:
        if replica.poll() is None:
            os.killpg(replica.pid, signal.SIGKILL)
        replica.wait()

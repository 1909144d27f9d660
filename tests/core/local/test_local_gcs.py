"""A gs:// output rehearsed as gs://: a real emulator, the /gcs/ view, a plain open refused."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vtrain.errors import ErrorList, MissingExtraError, UsageError
from vtrain.local.bucket import Bucket
from vtrain.local.checks.storage import storage
from vtrain.local.evidence import Evidence, Run
from vtrain.local.gcs_view import ELSEWHERE, MAKE, MARKER, TAKE_OVER, choose, place
from vtrain.local.plan import Plan
from vtrain.storage import storage_client

Vtrain = Callable[..., subprocess.CompletedProcess[str]]
PROBE = Path(__file__).parents[3] / "core" / "vtrain" / "local" / "probe"


def bucket_name() -> str:
    return f"vtrain-h2-{secrets.token_hex(4)}"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Bucket]:
    """A rehearsal's bucket, its view in a folder of the test's (not /gcs)."""
    bucket = Bucket.start(
        f"gs://{bucket_name()}/run1", None, str(tmp_path / "job"), str(tmp_path / "gcs")
    )
    try:
        yield bucket
    finally:
        bucket.stop()


# -- where the /gcs/ view goes ------------------------------------------------------------


@pytest.mark.parametrize(
    ("exists", "mount", "leftover", "expected"),
    [
        (False, False, False, MAKE),
        (True, True, False, ELSEWHERE),  # a real Cloud Storage FUSE mount: never touched
        (True, True, True, ELSEWHERE),
        (True, False, False, ELSEWHERE),  # someone's folder, or a running rehearsal's
        (True, False, True, TAKE_OVER),  # a killed rehearsal's: its links only
    ],
)
def test_the_view_goes_to_gcs_only_where_nothing_of_anyone_else_is(
    exists: bool, mount: bool, leftover: bool, expected: str
) -> None:
    assert choose(exists, mount, leftover) == expected


def test_a_view_made_at_its_root_is_removed_with_every_link(tmp_path: Path) -> None:
    objects = tmp_path / "kept" / "b-1"
    objects.mkdir(parents=True)
    (objects / "a.txt").write_text("a")
    view = place("b-1", str(objects), str(tmp_path / "kept"), str(tmp_path / "gcs"))
    assert view.why_elsewhere is None and view.root == str(tmp_path / "gcs")
    assert (tmp_path / "gcs" / "b-1" / "a.txt").read_text() == "a"
    assert view.variables == {"VTRAIN_GCS_MOUNT": str(tmp_path / "gcs")}
    view.close()
    assert not (tmp_path / "gcs").exists()
    assert (objects / "a.txt").read_text() == "a", "the objects stay in the job's folder"


def test_someone_elses_root_is_left_as_it_was(tmp_path: Path) -> None:
    theirs = tmp_path / "gcs"
    (theirs / "their-bucket").mkdir(parents=True)
    view = place("b-1", str(tmp_path), str(tmp_path / "kept"), str(theirs))
    assert view.root == str(tmp_path / "kept") and "is there already" in str(view.why_elsewhere)
    view.close()
    assert sorted(os.listdir(theirs)) == ["their-bucket"]


def test_a_root_that_cannot_be_made_puts_the_view_in_the_jobs_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    view = place("b-1", str(tmp_path), str(tmp_path / "kept"), str(tmp_path / "file" / "gcs"))
    assert view.root == str(tmp_path / "kept") and "cannot be made" in str(view.why_elsewhere)


def test_a_killed_rehearsals_root_is_taken_over_and_then_removed(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    root = tmp_path / "gcs"
    root.mkdir()
    (root / MARKER).write_text(dead.stdout.strip())
    (root / "old-bucket").symlink_to(tmp_path / "gone")
    view = place("b-1", str(tmp_path), str(tmp_path / "kept"), str(root))
    assert view.why_elsewhere is None and sorted(os.listdir(root)) == [MARKER, "b-1"]
    view.close()
    assert not root.exists()


# -- the emulator and its folder: one bucket, two ways in ---------------------------------


def test_the_emulator_and_the_view_hold_the_same_objects(served: Bucket) -> None:
    client = storage_client({"STORAGE_EMULATOR_HOST": served.host})
    bucket = client.bucket(served.bucket)
    view = Path(served.view.root) / served.bucket
    bucket.blob("run1/model/api.txt").upload_from_string(b"api")
    assert (view / "run1" / "model" / "api.txt").read_bytes() == b"api"
    (view / "run1" / "model" / "fuse.txt").write_bytes(b"fuse")
    assert sorted(b.name for b in client.list_blobs(served.bucket, prefix="run1/")) == [
        "run1/model/api.txt",
        "run1/model/fuse.txt",
    ]
    # The client checks the checksums the emulator sends: they are the file's.
    assert bucket.blob("run1/model/fuse.txt").download_as_bytes() == b"fuse"
    (view / "run1" / "model" / "fuse.txt").write_bytes(b"rewritten, longer")
    assert bucket.blob("run1/model/fuse.txt").download_as_bytes() == b"rewritten, longer"
    os.replace(view / "run1" / "model" / "fuse.txt", view / "run1" / "moved.txt")
    names = sorted(b.name for b in client.list_blobs(served.bucket))
    assert names == ["run1/model/api.txt", "run1/moved.txt"]
    bucket.blob("run1/model/api.txt").delete()
    assert not (view / "run1" / "model" / "api.txt").exists()
    bucket.blob("run1/folder/").upload_from_string(b"")  # tf.io.gfile.makedirs makes these
    assert (view / "run1" / "folder").is_dir()


def test_the_output_folders_are_there_from_the_start_and_are_no_objects(served: Bucket) -> None:
    view = Path(served.view.root) / served.bucket / "run1"
    assert sorted(p.name for p in view.iterdir()) == ["checkpoints", "logs", "model"]
    client = storage_client({"STORAGE_EMULATOR_HOST": served.host})
    assert list(client.list_blobs(served.bucket)) == []


_NAMES = st.sampled_from(["a.txt", "d/b.txt", "d/e/c.bin", "f.txt"])
_STEPS = st.lists(
    st.tuples(
        st.sampled_from(["api-put", "view-put", "api-delete", "view-delete"]),
        _NAMES,
        st.binary(max_size=64),
    ),
    max_size=12,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=_STEPS)
def test_any_mix_of_api_and_view_writes_reads_back_the_same_both_ways(
    served: Bucket, steps: list[tuple[str, str, bytes]]
) -> None:
    client = storage_client({"STORAGE_EMULATOR_HOST": served.host})
    bucket = client.bucket(served.bucket)
    view = Path(served.view.root) / served.bucket / "p"
    for blob in client.list_blobs(served.bucket, prefix="p/"):
        blob.delete()
    expected: dict[str, bytes] = {}
    for how, name, data in steps:
        path = view / name
        if how == "api-put":
            bucket.blob(f"p/{name}").upload_from_string(data)
            expected[name] = data
        elif how == "view-put":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            expected[name] = data
        elif how == "api-delete" and name in expected:
            bucket.blob(f"p/{name}").delete()
            del expected[name]
        elif how == "view-delete" and name in expected:
            path.unlink()
            del expected[name]
    listed = {
        b.name[2:]: b.download_as_bytes() for b in client.list_blobs(served.bucket, prefix="p/")
    }
    on_disk = (
        {str(p.relative_to(view)): p.read_bytes() for p in view.rglob("*") if p.is_file()}
        if view.exists()
        else {}
    )
    assert listed == expected == on_disk


def test_a_stopped_emulator_answers_no_more(tmp_path: Path) -> None:
    bucket = Bucket.start(
        f"gs://{bucket_name()}/r", "3", str(tmp_path / "job"), str(tmp_path / "gcs")
    )
    host = bucket.host
    assert (Path(bucket.view.root) / bucket.bucket / "r" / "3" / "model").is_dir(), "the trial's"
    bucket.stop()
    assert not (tmp_path / "gcs").exists()
    import urllib.request

    with pytest.raises(OSError):
        urllib.request.build_opener(urllib.request.ProxyHandler({})).open(host, timeout=5)


def test_without_the_emulator_the_rehearsal_names_the_extra(tmp_path: Path) -> None:
    # The emulator made unimportable, as in an environment without the extra.
    code = textwrap.dedent(
        f"""
        import sys
        sys.modules["gcp_storage_emulator"] = None
        from vtrain.local.bucket import Bucket
        Bucket.start("gs://my-bucket/r", None, {str(tmp_path)!r})
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode != 0
    assert '"gcp-storage-emulator>=2024.8.3" (as vtrain[local-gcs]' in done.stderr
    assert MissingExtraError.__name__ in done.stderr


# -- the plan --------------------------------------------------------------------------------


def test_a_gs_output_dir_is_the_plans_uri_and_its_folder_is_local(tmp_path: Path) -> None:
    plan = Plan.from_options(["python", "t.py"], output_dir="gs://my-bucket/run1", job_id="j1")
    assert plan.output_uri == "gs://my-bucket/run1"
    assert plan.output_dir == os.path.abspath("vtrain-output/local/j1")
    spec = {
        "workerPoolSpecs": [{}],
        "baseOutputDirectory": {"outputUriPrefix": "gs://doc-bucket/r"},
    }
    rehearsed = Plan.from_options(["python"], output_dir=str(tmp_path), job=spec, job_id="j2")
    assert (rehearsed.output_uri, rehearsed.output_dir) == ("gs://doc-bucket/r", str(tmp_path))
    assert Plan.from_options(["python"], output_dir=str(tmp_path)).output_uri is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"output_dir": "gs://b/r"}, "--output-dir: the bucket name is 1 character long"),
        ({"output_dir": "gs://My_Bucket/r"}, "--output-dir: the bucket name holds a character"),
        (
            {"output_dir": "gs://my-bucket/r", "platform": "kubeflow"},
            "--output-dir: only Vertex gives a job a gs:// output folder",
        ),
    ],
)
def test_a_gs_output_that_cannot_be_rehearsed_is_refused(
    options: dict[str, str], message: str
) -> None:
    with pytest.raises((UsageError, ErrorList), match=message):
        Plan.from_options(["python", "t.py"], **options)


def test_a_rehearsal_without_gs_loads_nothing_of_it() -> None:
    code = textwrap.dedent(
        """
        import sys
        from vtrain.local.environment import replica_env
        from vtrain.local.plan import Plan
        plan = Plan.from_options(["python", "t.py"], workers=1)
        replica_env(plan, plan.replicas(), plan.replicas()[0], environ={})
        loaded = [m for m in sys.modules if "bucket" in m or "gcs" in m or "emulator" in m]
        print(loaded)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# -- the probe and the `storage` check -------------------------------------------------------


def _probed(tmp_path: Path, code: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    record = tmp_path / "run-0.record"
    env = {**os.environ, "PYTHONPATH": str(PROBE), "VTRAIN_LOCAL_RECORD": str(record)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    return done, record


@pytest.mark.parametrize(
    "code",
    [
        "open('gs://b-1/run1/model/model.txt', 'w')",
        "import os; os.makedirs('gs://b-1/run1/model/'); open('gs://b-1/run1/model/m.txt', 'w')",
        "import pathlib; pathlib.Path('gs://b-1/run1/model/model.txt').write_text('w')",
        "import os; os.open('gs://b-1/run1/model/model.txt', os.O_WRONLY | os.O_CREAT)",
        "open('gs://b-1/run1/model/model.txt')",
    ],
)
def test_an_open_of_a_gs_uri_fails_as_on_vertex_and_is_a_finding(tmp_path: Path, code: str) -> None:
    done, record = _probed(tmp_path, code)
    assert done.returncode == 1
    assert "FileNotFoundError: [Errno 2] No such file or directory: '" in done.stderr
    assert not list(tmp_path.glob("gs:/**/model.txt")), "nothing written into a folder gs:"
    ev = Evidence({"chief-0": "127.0.0.1"}, {"chief-0": 1}, False, "m", "c", {}, None)
    ev.runs.append(Run("chief-0", 0, None, str(record), None))
    (finding,) = storage(ev)
    assert (finding.check, finding.replica) == ("storage", "chief-0")
    assert "gs:/" in finding.detail and "/gcs/b-1/run1/model/" in finding.fix
    assert "handle.save_model(model)" in finding.fix


def test_a_correct_script_gives_the_storage_check_nothing(tmp_path: Path) -> None:
    done, record = _probed(tmp_path, "open('model.txt', 'w').write('w')")
    assert done.returncode == 0, done.stderr
    ev = Evidence({"chief-0": "127.0.0.1"}, {"chief-0": 1}, False, "m", "c", {}, None)
    ev.runs.append(Run("chief-0", 0, None, str(record), None))
    assert storage(ev) == []


# -- a whole rehearsal ----------------------------------------------------------------------

# Each replica says what it got; the chief writes with the client, worker 0 through the view and
# with vtrain's storage (the finding's own advice, pasted); the chief reads the worker's object.
SCRIPT = """
import json, os, sys, time
from google.cloud import storage
me = json.loads(os.environ["CLUSTER_SPEC"])["task"]["type"]
keys = ("AIP_MODEL_DIR", "AIP_CHECKPOINT_DIR", "AIP_TENSORBOARD_LOG_DIR", "VTRAIN_GCS_MOUNT")
print("got", json.dumps({k: os.environ.get(k) for k in keys}))
model = os.environ["AIP_MODEL_DIR"]
bucket, _, prefix = model[len("gs://"):].partition("/")
client = storage.Client()
if me == "workerpool1":
    view = os.path.join(os.environ["VTRAIN_GCS_MOUNT"], bucket, prefix)
    with open(os.path.join(view, "from-view.txt"), "w") as f:
        f.write("view")
    import vtrain.storage
    data = b"weights"
    vtrain.storage.open_location(os.environ['AIP_MODEL_DIR']).write_bytes('model.txt', data)
else:
    client.bucket(bucket).blob(prefix + "from-client.txt").upload_from_string("client")
    for _ in range(600):
        if client.bucket(bucket).blob(prefix + "from-view.txt").exists():
            break
        time.sleep(0.05)
    print("read", client.bucket(bucket).blob(prefix + "from-view.txt").download_as_text())
"""


def test_a_gs_rehearsal_gives_vertex_uris_and_both_ways_write_one_bucket(
    vtrain: Vtrain, tmp_path: Path
) -> None:
    (tmp_path / "t.py").write_text(SCRIPT)
    name = bucket_name()
    done = vtrain(
        "--workers",
        "1",
        "--output-dir",
        f"gs://{name}/run1",
        "--job-id",
        "j",
        "--verdict-json",
        "v.json",
        "--",
        sys.executable,
        "t.py",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    got = [
        json.loads(line.split("got ", 1)[1]) for line in done.stdout.splitlines() if " got " in line
    ]
    assert len(got) == 2
    for seen in got:
        assert seen["AIP_MODEL_DIR"] == f"gs://{name}/run1/model/"
        assert seen["AIP_CHECKPOINT_DIR"] == f"gs://{name}/run1/checkpoints/"
        assert seen["AIP_TENSORBOARD_LOG_DIR"] == f"gs://{name}/run1/logs/"
    assert "read view" in done.stdout
    kept = tmp_path / "vtrain-output" / "local" / "j" / "gcs" / name / "run1" / "model"
    assert sorted(p.name for p in kept.iterdir()) == [
        "from-client.txt",
        "from-view.txt",
        "model.txt",
    ]
    assert f"model             vtrain-output/local/j/gcs/{name}/run1/model/" in done.stdout
    assert not os.path.lexists(f"/gcs/{name}"), "nothing of this job's left at /gcs"
    verdict = json.loads((tmp_path / "v.json").read_text())
    view_at_gcs = got[0]["VTRAIN_GCS_MOUNT"] == "/gcs"
    assert view_at_gcs or got[0]["VTRAIN_GCS_MOUNT"].endswith("/j/gcs")
    not_checked = " ".join(verdict.get("not_checked", []))
    assert ("paths under /gcs/" in not_checked) == (not view_at_gcs)


PLAIN = """
import os
from vtrain import ClusterInfo
if ClusterInfo.from_env().is_chief:
    with open(os.path.join(os.environ["AIP_MODEL_DIR"], "model.txt"), "w") as f:
        f.write("weights")
"""
FIXED = """
import os
from vtrain import ClusterInfo
if ClusterInfo.from_env().is_chief:
    model = os.environ["AIP_MODEL_DIR"].replace("gs://", "/gcs/", 1)
    with open(os.path.join(model, "model.txt"), "w") as f:
        f.write("weights")
"""


def test_the_readmes_fix_fails_on_gs_as_on_vertex_and_the_gcs_path_is_ready(
    vtrain: Vtrain, tmp_path: Path
) -> None:
    name = bucket_name()
    (tmp_path / "plain.py").write_text(PLAIN)
    (tmp_path / "fixed.py").write_text(FIXED)
    args = ("--workers", "1", "--max-restarts", "0", "--output-dir", f"gs://{name}/run1")
    plain = vtrain(*args, "--verdict-json", "plain.json", "--", sys.executable, "plain.py")
    assert plain.returncode != 0
    assert f"No such file or directory: 'gs://{name}/run1/model/model.txt'" in plain.stdout
    assert not list(tmp_path.rglob("gs:")), "no folder gs: anywhere"
    found = {f["check"] for f in json.loads((tmp_path / "plain.json").read_text())["findings"]}
    assert "storage" in found, found
    if os.path.lexists("/gcs"):
        pytest.skip("/gcs is someone else's here: the fix names /gcs/ itself")
    fixed = vtrain(*args, "--verdict-json", "fixed.json", "--", sys.executable, "fixed.py")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "verdict: ready to submit" in fixed.stdout

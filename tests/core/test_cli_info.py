"""`vtrain info`, run as a real command for every platform example."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from unittest import mock

import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st
from platform_examples import EXAMPLES, VERTEX_CLUSTER, Example, cluster_spec

from vtrain.cli import main

# Only what a replica would see: no variable of the developer's own shell leaks in.
BASE_ENV = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}


def vtrain(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vtrain", *args],
        env={**BASE_ENV, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.name)
def test_info_json_gives_the_platforms_role_and_rank(example: Example, tmp_path: object) -> None:
    done = vtrain("info", "--json", env={**example.env, "VTRAIN_OUTPUT_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert (shown["source"], shown["platform"]) == (example.source, example.platform)
    assert (shown["role"], shown["index"], shown["rank"]) == (
        example.role,
        example.index,
        example.rank,
    )
    assert shown["num_trainers"] == example.num_trainers
    assert "world_size" not in shown  # it counted machines; PyTorch's counts processes
    assert shown["is_chief"] is example.is_chief
    assert shown["is_leader"] is example.is_chief  # no plugin has exported another leader
    assert shown["chief_address"] == example.chief_address
    assert shown["trial_id"] == example.trial_id
    assert set(shown["dirs"]) == {"model", "checkpoint", "tensorboard"}
    assert isinstance(shown["plugins"], dict)
    assert all(isinstance(a, list) for a in shown["cluster"].values())


def test_info_for_a_person_names_platform_role_rank_and_dirs() -> None:
    env = {"CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool1", 1, trial="4")}
    done = vtrain("info", env=env)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "platform     vertex\nsource       cluster_spec\n" in out
    assert "role         worker (as the platform calls it: workerpool1), index 1" in out
    assert "rank         2 of 3 trainers" in out
    assert "cmle-training-workerpool3-ab-2:2222" in out
    assert os.path.join("4", "checkpoints") in out
    # Each installed plugin, and whether its framework imports (none in the core session).
    assert "\n  pytorch          " in out.split("plugins\n")[1]


def test_info_follows_an_exported_leader() -> None:
    env = {
        "CLUSTER_SPEC": cluster_spec(VERTEX_CLUSTER, "workerpool1", 0),
        "VTRAIN_LEADER": "worker:0",
    }
    done = vtrain("info", env=env)
    assert done.returncode == 0, done.stderr
    assert "rank         1 of 3 trainers  [leader]\n" in done.stdout


def test_bad_input_exits_non_zero_with_the_message_and_no_traceback() -> None:
    done = vtrain("info", "--json", env={"TF_CONFIG": '{"cluster": {"worker": ["w"]}}'})
    assert done.returncode == 2
    assert done.stdout == ""
    assert "TF_CONFIG: cluster.worker[0]: address has no port (got 'w')" in done.stderr
    assert "Traceback" not in done.stderr


def test_credentials_in_the_job_spec_are_never_printed() -> None:
    job = {
        "workerPoolSpecs": [
            {
                "containerSpec": {
                    "imageUri": "gcr.io/p/trainer",
                    "env": [
                        {"name": "WANDB_API_KEY", "value": "k-123456"},
                        {"name": "DB_PASSWORD", "value": "hunter2"},
                        {"name": "LEARNING_RATE", "value": "0.1"},
                    ],
                    "args": ["--auth_token=tok-987", "--epochs=3", "--db-password", "pw-555"],
                },
                "serviceAccountToken": "ya29.secret",
            }
        ]
    }
    env = {"CLUSTER_SPEC": cluster_spec({"workerpool0": ["c:1"]}, "workerpool0", 0, job=job)}
    for args in (["info", "--json"], ["info"]):
        done = vtrain(*args, env={**env, "HF_TOKEN": "hf_abcdef"})
        assert done.returncode == 0, done.stderr
        for secret in ("k-123456", "hunter2", "tok-987", "ya29.secret", "hf_abcdef", "pw-555"):
            assert secret not in done.stdout
    shown = json.loads(vtrain("info", "--json", env=env).stdout)
    container = shown["job"]["workerPoolSpecs"][0]["containerSpec"]
    assert {"name": "LEARNING_RATE", "value": "0.1"} in container["env"]
    assert "--epochs=3" in container["args"] and "--auth_token=***" in container["args"]


def test_info_alone_explains_the_unknown_chief_and_addresses(tmp_path: object) -> None:
    done = vtrain("info", env={"VTRAIN_OUTPUT_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert "chief        - (not given: no cluster address)\n" in done.stdout
    assert "  chief            ?\n  (? = an address this environment does not give" in done.stdout


def test_info_help_describes_the_command() -> None:
    done = vtrain("info", "--help", env={})
    assert done.returncode == 0, done.stderr
    assert "Show what vtrain reads from this environment" in done.stdout
    assert "'?' in the cluster" in done.stdout


def test_version_comes_from_the_package_metadata() -> None:
    from importlib.metadata import version

    done = vtrain("--version", env={})
    assert (done.returncode, done.stdout) == (0, f"vtrain {version('vtrain')}\n")


def test_top_level_help_describes_the_tool() -> None:
    done = vtrain("--help", env={})
    assert done.returncode == 0, done.stderr
    assert "Run one training script unchanged on Vertex AI" in done.stdout
    assert "one sub-command per module" not in done.stdout


# What an environment can hold that a terminal must not get raw: escapes and other control
# characters, and the lone surrogates Python makes of bytes that are not UTF-8.
_RAW = st.text(
    st.characters(categories=["Cc", "Cf", "Zl", "Zp"], exclude_characters="\x00")
    | st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF)
    | st.sampled_from("a/:1"),
    max_size=8,
)
_SHOWN = (
    "AIP_MODEL_DIR",
    "AIP_CHECKPOINT_DIR",
    "CLOUD_ML_JOB_ID",
    "CLOUD_ML_REGION",
    "CLOUD_ML_HP_METRIC_FILE",
    "VTRAIN_OUTPUT_DIR",
)


@examples(100)
@given(
    values=st.dictionaries(st.sampled_from(_SHOWN), _RAW),
    args=st.lists(_RAW, max_size=3),
    host=st.none() | _RAW,
)
def test_info_for_a_person_escapes_what_the_terminal_must_not_get(
    values: dict[str, str], args: list[str], host: str | None
) -> None:
    cluster = dict(VERTEX_CLUSTER)
    if host is not None:
        cluster["workerpool0"] = [f"{host}:2222"]
    job = {"workerPoolSpecs": [{"containerSpec": {"args": args}}]}
    env = {**values, "CLUSTER_SPEC": cluster_spec(cluster, "workerpool0", 0, job=job)}
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")  # as a terminal
    err = io.StringIO()
    with (
        mock.patch.dict(os.environ, env, clear=True),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        status = main(["info"])
    out.flush()
    assert status in (0, 2)
    printed = out.buffer.getvalue().decode()  # type: ignore[attr-defined]
    for line in [*printed.split("\n"), *err.getvalue().split("\n")]:  # not splitlines: \x85
        assert line.isprintable(), line


def test_info_ends_each_form_with_one_newline() -> None:
    # `vtrain info --json >> log.jsonl` must not glue the next record to this one.
    for args in (["info", "--json"], ["info"]):
        done = vtrain(*args, env={})
        assert done.returncode == 0, done.stderr
        assert done.stdout.endswith("\n") and not done.stdout.endswith("\n\n")
    assert vtrain("info", "--json", env={}).stdout.count("\n") == 1


@pytest.mark.parametrize(
    ("blocked", "says"),
    [
        ("", "google-crc32c (C)"),
        ("import sys; sys.modules['google_crc32c'] = None\n", "pure Python"),
    ],
    ids=["google-crc32c installed", "without it"],
)
def test_info_says_which_crc32c_checks_the_checksums(
    blocked: str, says: str, tmp_path: object
) -> None:
    # The one chooser (vtrain.storage.crc32c) decides for checkpoints and TFRecord alike.
    code = blocked + "import sys; from vtrain.cli import main; sys.exit(main(['info', '--json']))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**BASE_ENV, "VTRAIN_OUTPUT_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["crc32c"] == says

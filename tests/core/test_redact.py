"""No secret reaches any output: generated credentials in every shape, through every printing path.

Each secret is a random token behind a fixed head ("Zq"), so that finding its
text in an output can only mean it leaked. The paths: `vtrain info` (text and
JSON), every error message (a malformed CLUSTER_SPEC or TF_CONFIG quotes its
text), vtrain's own lines of `vtrain local run` (terminal and replica logs),
and what `vtrain tune` prints (progress lines and the study table).
"""

from __future__ import annotations

import io
import json
import os
import string
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from typing import Any
from unittest import mock

import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.cli import main
from vtrain.cluster import ClusterInfo
from vtrain.errors import VtrainError
from vtrain.local.output import Output
from vtrain.redact import HIDDEN, looks_secret, redact, redact_text

# Characters of real tokens, passwords and keys; no blank, quote or backslash (a value
# is cut at those, see vtrain.redact) and, for URLs, none of the delimiters "/?#".
_URL_SAFE = string.ascii_letters + string.digits + "-_.~+=!$%*:;&,"
_ANY = _URL_SAFE + "/?#@{}[]"
secrets = st.text(_ANY, min_size=4, max_size=24).map(lambda s: "Zq" + s)
url_secrets = st.text(_URL_SAFE + "@", min_size=4, max_size=24).map(lambda s: "Zq" + s)
_AFFIX = st.text(string.ascii_letters + string.digits, max_size=6)
# Words found anywhere in a name, and words that count only on their own ("monkey").
_WORDS = ["token", "secret", "password", "passwd", "credentials", "auth", "apikey", "api_key"]
_WORDS += ["API-KEY", "private_key", "access_key", "passphrase", "Token", "SECRET"]
_WHOLE = ["key", "KEY", "Key", "pwd", "dsn"]


@st.composite
def secret_names(draw: st.DrawFn) -> str:
    """WANDB_API_KEY, my_token, db_password, secretKey, wandbKey, ..."""
    head, tail = draw(_AFFIX), draw(_AFFIX)
    if draw(st.booleans()):
        word = draw(st.sampled_from(_WORDS))
        name = head + word + tail
    else:
        word = draw(st.sampled_from(_WHOLE))
        head = head + "_" if head else ""
        tail = "_" + tail if tail else ""
        if word == "Key" and head:  # camelCase: wandbKey
            head = head.rstrip("_").lower()
        name = head + word + tail
    return name if name[0].isalpha() or name[0] == "_" else "x" + name


@st.composite
def args_with_secret(draw: st.DrawFn) -> tuple[list[str], str]:
    """A command line holding one secret, in one of the shapes a job's args take."""
    name, secret, url_secret = draw(secret_names()), draw(secrets), draw(url_secrets)
    user = draw(st.text(string.ascii_letters, min_size=1, max_size=8))
    dashes = draw(st.sampled_from(["--", "-", ""]))
    scheme = draw(st.sampled_from(["https", "http", "postgres", "redis", "mysql+pymysql"]))
    shapes = {
        "flag=value": ([f"{dashes}{name}={secret}"], secret),
        "flag value": [f"--{name}", secret],
        "in a shell string": ["sh", "-c", f"python t.py --{name}={secret} --epochs 3"],
        "flag value in a shell string": ["bash", "-c", f"python t.py --{name} {secret} -v"],
        "quoted in a shell string": ["sh", "-c", f"python t.py --{name}='{secret} x' -v"],
        "assignment in a shell string": ["sh", "-c", f"{name}={secret} python t.py"],
        "URL userinfo": [f"--data={scheme}://{user}:{url_secret}@host:5432/db?x=1"],
        "URL user only": ["--repo", f"{scheme}://{url_secret}@github.com/o/r"],
        "URL in a shell string": ["sh", "-c", f"curl {scheme}://{user}:{url_secret}@h/x | sh"],
    }
    shape = draw(st.sampled_from(sorted(shapes)))
    args = shapes[shape]
    if isinstance(args, tuple):
        return args
    hidden = url_secret if "URL" in shape else secret
    return ["--epochs=3", *args, "--lr", "0.1"], hidden


@st.composite
def jobs_with_secret(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, str], str]:
    """A Vertex job spec and replica environment, with one secret somewhere in them."""
    args, secret = draw(args_with_secret())
    env = [{"name": "LEARNING_RATE", "value": "0.1"}]
    aip: dict[str, str] = {}
    where = draw(st.sampled_from(["args", "env", "env url", "aip dir"]))
    if where == "env":
        secret = draw(secrets)
        env.append({"name": draw(secret_names()), "value": secret})
        args = ["--epochs=3"]
    elif where == "env url":
        secret = draw(url_secrets)
        env.append({"name": "DATABASE_URL", "value": f"postgres://u:{secret}@db:5432/x"})
        args = ["--epochs=3"]
    elif where == "aip dir":
        secret = draw(url_secrets)
        aip["AIP_MODEL_DIR"] = f"https://me:{secret}@storage.example.com/bucket/model"
        args = ["--epochs=3"]
    container = {"args": args, "env": env, "imageUri": "gcr.io/p/t"}
    job = {"workerPoolSpecs": [{"containerSpec": container, "replicaCount": 1}]}
    return job, aip, secret


def cluster_spec(job: dict[str, Any], *, job_first: bool = False) -> str:
    spec: dict[str, Any] = {"job": job} if job_first else {}
    spec["cluster"] = {"workerpool0": ["cmle-training-workerpool0-ab-0:2222"]}
    spec["environment"] = "cloud"
    spec["task"] = {"type": "workerpool0", "index": 0}
    spec["job"] = job
    return json.dumps(spec)


def run_cli(argv: list[str], environ: dict[str, str]) -> tuple[int, str]:
    """`vtrain ARGV` in this process with exactly `environ`; (status, stdout + stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with (
        mock.patch.dict(os.environ, environ, clear=True),
        redirect_stdout(out),
        redirect_stderr(err),
    ):
        status = main(argv)
    return status, out.getvalue() + err.getvalue()


_BASE = {"PATH": os.environ.get("PATH", "")}


@examples(100)
@given(jobs_with_secret(), st.booleans())
def test_vtrain_info_never_prints_a_secret(
    found: tuple[dict[str, Any], dict[str, str], str], as_json: bool
) -> None:
    job, aip, secret = found
    environ = {**_BASE, "CLUSTER_SPEC": cluster_spec(job), **aip}
    with tempfile.TemporaryDirectory() as output:
        environ.setdefault("VTRAIN_OUTPUT_DIR", output)
        status, shown = run_cli(["info", "--json"] if as_json else ["info"], environ)
    assert status == 0, shown
    assert secret not in shown
    assert HIDDEN in shown or not as_json  # the text form does not show the job


@examples(200)
@given(jobs_with_secret(), st.integers(0, 2000), st.sampled_from(["CLUSTER_SPEC", "TF_CONFIG"]))
def test_a_malformed_document_is_quoted_without_its_secrets(
    found: tuple[dict[str, Any], dict[str, str], str], cut: int, variable: str
) -> None:
    job, _, secret = found
    # The job first: a platform need not order the keys, and an excerpt shows only the head.
    text = cluster_spec(job, job_first=True)
    # Cut anywhere after the secret's start: the excerpt holds its head, and the name
    # that says it is secret may be all the reader sees before it.
    text = text[: max(cut, text.find(secret) + 1)] + "{{"
    with pytest.raises(VtrainError) as caught:
        ClusterInfo.from_env({variable: text})
    assert secret not in str(caught.value)
    status, shown = run_cli(["info"], {**_BASE, variable: text})
    assert status == 2 and "error" in shown
    assert secret not in shown


@examples(200)
@given(jobs_with_secret())
def test_a_value_of_the_wrong_type_is_quoted_without_its_secrets(
    found: tuple[dict[str, Any], dict[str, str], str],
) -> None:
    job, _, secret = found
    # A job whose workerPoolSpecs is not a list: the error quotes the value it got.
    spec = json.loads(cluster_spec(job))
    spec["job"] = {"workerPoolSpecs": job["workerPoolSpecs"][0]}
    with pytest.raises(VtrainError) as caught:
        ClusterInfo.from_env({"CLUSTER_SPEC": json.dumps(spec)})
    assert secret not in str(caught.value)
    for value in (job, json.dumps(job), json.dumps(job).encode(), job["workerPoolSpecs"]):
        assert secret not in str(VtrainError("bad", source="X", value=value))


@examples(200)
@given(args_with_secret())
def test_redact_hides_the_secret_and_keeps_the_rest(found: tuple[list[str], str]) -> None:
    args, secret = found
    # A list, and the same words as one string (a shell command, a log line).
    for shown in (redact(args), redact_text(" ".join(args)), redact_text(repr(args))):
        assert secret not in json.dumps(shown)
        assert "--epochs=3" in json.dumps(shown) or args[0] != "--epochs=3"


@examples(200)
@given(secret_names(), secrets)
def test_any_name_holding_a_secret_word_is_secret(name: str, secret: str) -> None:
    assert looks_secret(name)
    shapes = (
        {name: secret},
        {"name": name, "value": secret},
        {"value": secret, "name": name},
        [f"--{name}", secret],
        [f"--{name}={secret}"],
        f"export {name}={secret}",
    )
    for value in shapes:
        assert secret not in json.dumps(redact(value))
        assert secret not in redact_text(json.dumps(value))
        assert secret not in redact_text(repr(value))
        assert secret not in redact_text(json.dumps(json.dumps(value)))  # JSON inside JSON


@pytest.mark.parametrize(
    "name", ["LEARNING_RATE", "epochs", "monkey", "keyboard", "sort_order", "output_dir"]
)
def test_ordinary_names_are_shown(name: str) -> None:
    assert not looks_secret(name)
    assert redact_text(f"--{name}=5 --{name} 6") == f"--{name}=5 --{name} 6"


def test_addresses_and_plain_uris_are_shown() -> None:
    text = "auth-db:5432 gs://bucket/x@v2 /gcs/b/key_dir https://host/path?q=1"
    assert redact_text(text) == text


@examples(200)
@given(args_with_secret())
def test_vtrain_local_run_notes_and_logs_never_hold_a_secret(
    found: tuple[list[str], str],
) -> None:
    args, secret = found
    stream = io.StringIO()
    with tempfile.TemporaryDirectory() as output:
        out = Output(["chief-0"], output, stream, colour=False)
        out.note(f"job j (vertex) in {output}: chief-0 127.0.0.1:1, running {' '.join(args)}")
        out.note(f"--kill chief-0@1: {args}", "chief-0")
        out.close()
        with open(os.path.join(output, "replica-logs", "chief-0.log")) as f:
            logged = f.read()
    assert secret not in stream.getvalue() + logged
    assert HIDDEN in logged


@examples(100)
@given(secret_names(), secrets, url_secrets)
def test_vtrain_tune_tables_never_hold_a_secret(name: str, secret: str, url_secret: str) -> None:
    from vtrain.cli.tune import _shown, _shown_trial
    from vtrain.tune.results import SUCCEEDED, StudyResult, Trial
    from vtrain.tune.study_file import parse_study
    from vtrain.tune.table import summary

    values = [secret, f"https://u:{url_secret}@host/x"]
    document = {
        "metrics": [{"metric_id": "score", "goal": "MAXIMIZE"}],
        "max_trial_count": 2,
        "parameters": [
            {"parameter_id": name, "categorical_value_spec": {"values": [secret, "b"]}},
            {"parameter_id": "data", "categorical_value_spec": {"values": values}},
        ],
    }
    study = parse_study(json.dumps(document), yaml=False)
    trial = Trial("1", {name: secret, "data": values[1]}, SUCCEEDED, final_metric=0.5)
    failed = Trial("2", {name: "b", "data": values[1]}, "FAILED", reason=f"--{name}={secret}")
    result = StudyResult(SUCCEEDED, (trial, failed), trial, "/tmp/study.json")
    printed = summary(study, _shown(result)) + repr(_shown_trial(failed))
    assert secret not in printed and url_secret not in printed


# Credentials told by their shape, under names that say nothing: each with a random body.
_ALNUM = string.ascii_letters + string.digits
_UPPER = string.ascii_uppercase + string.digits
_B64URL = _ALNUM + "-_"


_VENDOR_SHAPES = [
    ("sk-proj-", _B64URL, 40),
    ("sk-svcacct-", _B64URL, 40),
    ("sk-ant-api03-", _B64URL, 40),
    ("sk-", _ALNUM, 48),
    ("xoxb-", _ALNUM + "-", 40),
    ("xoxp-", _ALNUM + "-", 40),
    ("xapp-", _ALNUM + "-", 40),
    ("sk_live_", _ALNUM, 24),
    ("rk_test_", _ALNUM, 24),
    ("glpat-", _B64URL, 20),
    ("hf_", _ALNUM, 34),
    ("npm_", _ALNUM, 36),
    ("ya29.", _B64URL, 40),
    ("pypi-AgEIcHlwaS5vcmc", _B64URL, 40),
]


@st.composite
def shaped_secrets(draw: st.DrawFn) -> tuple[str, str]:
    """(the whole value, the part of it that must never be shown)."""

    def body(chars: str, size: int) -> str:
        return "Zq" + draw(st.text(chars, min_size=size - 2, max_size=size - 2))

    kind = draw(
        st.sampled_from(
            [
                "github",
                "github_pat",
                "google",
                "aws",
                "jwt",
                "pem",
                "sig",
                "goog",
                "vendor",
                "bearer",
            ]
        )
    )
    if kind == "vendor":
        # The issuers' own prefixes (OpenAI, Anthropic, Slack, Stripe, GitLab, Hugging Face,
        # npm, Google OAuth), each before a body of its own alphabet.
        prefix, chars, size = draw(st.sampled_from(_VENDOR_SHAPES))
        secret = body(chars, size)
        return prefix + secret, secret
    if kind == "bearer":
        secret = body(_B64URL + ".~+/", 30)
        return f"Bearer {secret}", secret
    if kind == "github":
        secret = body(_ALNUM, 36)
        return draw(st.sampled_from("pousr")).join(["gh", "_"]) + secret, secret
    if kind == "github_pat":
        secret = body(_ALNUM + "_", 82)
        return "github_pat_" + secret, secret
    if kind == "google":
        secret = body(_B64URL, 35)
        return "AIza" + secret, secret
    if kind == "aws":
        secret = body(_UPPER, 16).upper()
        return draw(st.sampled_from(["AKIA", "ASIA"])) + secret, secret
    if kind == "jwt":
        secret = body(_B64URL, 43)
        return f"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.{secret}", secret
    if kind == "pem":
        secret = body(_ALNUM + "+/=", 64)
        key = draw(st.sampled_from(["", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "]))
        pem = f"-----BEGIN {key}PRIVATE KEY-----\n{secret}\n-----END {key}PRIVATE KEY-----"
        return pem, secret
    secret = body(_ALNUM + "%", 24)
    if kind == "sig":
        return f"sv=2022-11-02&ss=b&sig={secret}&se=2030", secret
    return f"https://storage.googleapis.com/b/o?X-Goog-Date=1&X-Goog-Signature={secret}", secret


_PLAIN_NAMES = st.sampled_from(
    ["GITHUB_PAT", "MAPS", "DATA", "SESSION", "cert", "blob", "url", "OPENAI", "SIGNED", "H"]
)


@examples(300)
@given(shaped_secrets(), _PLAIN_NAMES)
def test_a_credential_is_hidden_by_its_shape_under_any_name(
    found: tuple[str, str], name: str
) -> None:
    value, secret = found
    shapes = (
        {name: value},
        {"name": name, "value": value},
        [f"--{name}", value],
        [f"--{name}={value}"],
        ["sh", "-c", f"curl -H 'x: {value}' https://h/x"],
        f"export {name}={value}",
        value,
    )
    for shown in shapes:
        assert secret not in json.dumps(redact(shown))
        assert secret not in redact_text(json.dumps(shown))
        assert secret not in redact_text(repr(shown))
        assert secret not in str(VtrainError("bad", source="--env", value=shown))
    # Only what is shown changes: the value itself is left as it was.
    job = {"env": [{"name": name, "value": value}]}
    redact(job)
    assert job["env"][0]["value"] == value


def test_text_that_only_resembles_a_credential_is_shown() -> None:
    text = (
        "ghost_town ghp_ eyJ-not-a-token AIza AKIAshort --design=big signal=3 "
        "https://host/p?signature_version=4&q=1 BEGIN PRIVATE KEY"
    )
    assert redact_text(text) == text


def test_a_toleration_s_key_is_a_label_and_shown() -> None:
    toleration = {"key": "cloud.google.com/gke-spot", "operator": "Equal", "value": "true"}
    assert redact({"tolerations": [toleration]}) == {"tolerations": [toleration]}
    # Without an operator, "key" is a name like any other: its value may be a credential.
    assert redact({"key": "Zq-secret"}) == {"key": HIDDEN}


@pytest.mark.parametrize(
    "value",
    [
        "sk-proj-XYZ",
        "https://storage.googleapis.com/b/o?X-Goog-Signature=abcdef",
        "…?X-Goog-Signature=abcdef",
        "xoxb-1-2-abc",
        "Bearer abcdef123",
    ],
)
def test_the_misses_of_issue_32_are_hidden(value: str) -> None:
    secret = "XYZ" if value.startswith("sk-") else value.rpartition("=")[2].rpartition(" ")[2]
    secret = secret.rpartition("-")[2]
    for shown in (redact_text(f"OPENAI={value}"), redact({"name": "SIGNED", "value": value})):
        assert secret not in json.dumps(shown), shown


# What is not a credential: the names of replicas, addresses, and paths, whatever words
# their folders hold (an output folder named "secret-run" is no secret).
_FOLDER_WORDS = st.sampled_from(
    [
        "secret",
        "token",
        "auth",
        "key",
        "run",
        "my-secret-dir",
        "pwd",
        "api_key",
        "credentials",
        "2026",
        "out",
        "password=x",
    ]
)
_PATHS = st.lists(_FOLDER_WORDS, min_size=1, max_size=4).map(lambda p: "/" + "/".join(p))
_REPLICAS = st.lists(
    st.tuples(st.sampled_from(["chief", "worker", "ps", "evaluator"]), st.integers(0, 12)),
    min_size=1,
    max_size=5,
    unique=True,
)


@examples(300)
@given(path=_PATHS, replicas=_REPLICAS, port=st.integers(1024, 65535))
def test_a_banner_keeps_its_replicas_whatever_its_folder_is_called(
    path: str, replicas: list[tuple[str, int]], port: int
) -> None:
    shown = ", ".join(f"{role}-{i} 127.0.0.{i + 1}:{port}" for role, i in replicas)
    banner = f"job local-1 (vertex) in {path}: {shown}"
    redacted = redact_text(banner)
    if "=" not in path:  # a folder named password=x reads as an assignment: its value goes
        assert redacted == banner
    for role, i in replicas:
        assert f"{role}-{i} 127.0.0.{i + 1}:{port}" in redacted
    out = io.StringIO()
    with tempfile.TemporaryDirectory() as output:
        Output(["chief-0"], output, out, colour=False).note(banner)
    assert shown in out.getvalue()


@examples(300)
@given(
    # Not a folder named password=x: that reads as an assignment, and is hidden (over-hiding).
    path=_PATHS.filter(lambda p: "=" not in p),
    name=st.sampled_from(["OUTPUT_DIR", "DATA", "MODE", "epochs", "workers"]),
)
def test_a_value_under_an_ordinary_name_is_shown_whatever_it_says(path: str, name: str) -> None:
    value = f"gs://bucket{path}"
    document = {"env": [{"name": name, "value": value}], "args": [f"--{name}", value]}
    assert redact(document) == document
    assert redact_text(f"--{name}={value} {name}={value}") == f"--{name}={value} {name}={value}"


@examples(200)
@given(secret_names(), secrets, st.sampled_from(["note", "arguments", "message", "OUTPUT_DIR"]))
def test_a_secret_pair_inside_an_ordinary_value_is_hidden(
    name: str, secret: str, outer: str
) -> None:
    # "note: DB_PASSWORD=abc": the ordinary pair's value is a secret pair of its own.
    for text in (
        f"{outer}: {name}={secret}",
        f"{outer}: --{name}={secret}",
        f"{outer}={name}={secret}",
    ):
        assert secret not in redact_text(text), text

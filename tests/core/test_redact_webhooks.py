"""A web address whose path carries a credential is hidden; an ordinary address is shown whole.

Webhooks are generated in every shape their services hand out, under any name, inside
the texts vtrain prints (an env list rendered by `vtrain render`, a command line, a
JSON document); their credential part must never be found in what is shown.
"""

from __future__ import annotations

import json
import string

import pytest
from fuzzing import examples
from hypothesis import given
from hypothesis import strategies as st

from vtrain.redact import HIDDEN, redact, redact_text

_UPPER = string.ascii_uppercase + string.digits
_ALNUM = string.ascii_letters + string.digits
_B64URL = _ALNUM + "-_"
_HEX = "0123456789abcdef"


def _text(alphabet: str, size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=size, max_size=size)


def _guid() -> st.SearchStrategy[str]:
    parts = [_text(_HEX, n) for n in (8, 4, 4, 4, 12)]
    return st.tuples(*parts).map("-".join)


@st.composite
def webhooks(draw: st.DrawFn) -> tuple[str, str]:
    """(a webhook URL, its credential part)."""
    kind = draw(st.sampled_from(["slack", "discord", "teams", "office", "generic", "telegram"]))
    if kind == "slack":
        team, bot = draw(_text(_UPPER, 8)), draw(_text(_UPPER, 10))
        secret = draw(_text(_ALNUM, 24))
        return f"https://hooks.slack.com/services/T{team}/B{bot}/{secret}", secret
    if kind == "discord":
        host = draw(st.sampled_from(["discord.com", "discordapp.com", "ptb.discord.com"]))
        hook_id = str(draw(st.integers(10**16, 10**19)))
        secret = draw(_text(_B64URL, 68))
        return f"https://{host}/api/webhooks/{hook_id}/{secret}", secret
    if kind == "teams":
        tenant = draw(st.text(string.ascii_lowercase, min_size=3, max_size=12))
        group, who, secret, owner = (
            draw(_guid()),
            draw(_guid()),
            draw(_text(_HEX, 32)),
            draw(_guid()),
        )
        url = f"https://{tenant}.webhook.office.com/webhookb2/{group}@{who}/IncomingWebhook/"
        return f"{url}{secret}/{owner}/V2{draw(_text(_B64URL, 20))}", secret
    if kind == "office":
        group, who, secret = draw(_guid()), draw(_guid()), draw(_text(_HEX, 32))
        return f"https://outlook.office.com/webhook/{group}@{who}/IncomingWebhook/{secret}", secret
    if kind == "telegram":
        secret = draw(_text(_B64URL, 35))
        bot = draw(st.integers(10**7, 10**10))
        return f"https://api.telegram.org/bot{bot}:{secret}/sendMessage", secret
    host = draw(st.sampled_from(["chat.example.org", "mattermost.corp", "hooks.zapier.com"]))
    hook = draw(st.sampled_from(["hooks", "webhooks", "webhook", "hooks/catch"]))
    secret = draw(st.text(_B64URL, min_size=20, max_size=40))
    tail = draw(st.sampled_from(["", "/", "?x=1", "/post"]))
    return f"https://{host}/{hook}/{secret}{tail}", secret


# Where such an address is found: an env pair of a rendered job, a command line, JSON,
# a sentence; under a name that says nothing of a secret.
_TEXTS = [
    "SLACK={}",
    "--env SLACK={} --epochs 3",
    'curl -X POST "{}" -d @msg.json',
    "see {}.",
    "notify: {}",
]


@examples(300)
@given(webhooks(), st.sampled_from(_TEXTS), st.sampled_from(["SLACK", "NOTIFY", "HOOK_URL"]))
def test_a_webhook_s_credential_is_never_shown(hook: tuple[str, str], text: str, name: str) -> None:
    url, secret = hook
    shown = redact_text(text.format(url))
    assert secret not in shown and HIDDEN in shown, shown
    document = {"env": [{"name": name, "value": url}], "args": ["--notify", url]}
    assert secret not in json.dumps(redact(document))
    assert secret not in redact_text(json.dumps(document))


@pytest.mark.parametrize(
    ("url", "secret"),
    [
        ("https://api.example.com/v1/token/Zq9sEcReT7x/refresh", "Zq9sEcReT7x"),
        ("https://api.example.com/keys/AbCdEf123456", "AbCdEf123456"),
        ("https://fn.azurewebsites.net/api/run?code=Zq9sEcReT7xyz&name=a", "Zq9sEcReT7xyz"),
        ("https://h.example.com/x?access_token=Zq9sEcReT7xyz", "Zq9sEcReT7xyz"),
        ("https://h.example.com/ghp_Zq9sEcReT7xyzAbCdEf/data", "Zq9sEcReT7xyz"),
    ],
)
def test_a_token_in_the_path_or_the_query_is_hidden(url: str, secret: str) -> None:
    assert secret not in redact_text(f"URL={url}")


@pytest.mark.parametrize(
    "url",
    [
        "gs://bucket/path",
        "gs://bucket/hooks/run-12345/data-00001.jsonl",
        "https://example.com/docs/page",
        "https://storage.googleapis.com/bucket/data-00001-of-00010.tfrecord",
        "https://docs.github.com/en/webhooks/using-webhooks/creating-webhooks",
        "https://api.slack.com/messaging/webhooks",
        "https://example.com/hooks",
        "https://example.com/webhooks/v2/events",
        "https://pypi.org/project/vtrain/1.2.3/",
        "https://github.com/org/repo/blob/main/examples/train_2026.py",
        "https://host/path?q=1&codec=h264",
        "http://127.0.0.1:8080/api/v1/jobs/42",
    ],
)
def test_an_ordinary_address_is_shown_whole(url: str) -> None:
    for text in (url, f"--data={url}", f"see {url} for more"):
        assert redact_text(text) == text
    assert redact({"env": [{"name": "DATA", "value": url}]}) == {
        "env": [{"name": "DATA", "value": url}]
    }

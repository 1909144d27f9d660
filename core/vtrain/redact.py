"""Hide credentials before anything is printed: job specs, commands, URLs, error excerpts.

A name is secret when it contains a secret word anywhere (WANDB_API_KEY,
my_token, db_password, secretKey); its value is hidden wherever it appears:
as a mapping entry, an env-list pair, `--flag value` and `--flag=value` in an
argument list, and the same shapes inside one string (a shell command, a JSON
document, the repr of a list). The userinfo of any URL (`https://user:pw@host`)
is hidden whatever the name around it, and so is a value whose own shape says
it is a credential, under any name (`GITHUB_PAT=ghp_…`, `SAS=sv=…&sig=…`):
GitHub, GitLab, Slack, Stripe, OpenAI, Anthropic, Hugging Face, npm and PyPI
tokens, Google API keys and OAuth tokens, AWS access key ids, JWTs, bearer
tokens, PEM private keys and the signature of a signed URL. A web address whose
path carries a credential is hidden from it on: a webhook (Slack, Discord, Teams,
and any random-looking segment after /hooks/ or /webhooks/), the segment after
one named like a secret (/token/…), a Telegram bot token, and an Azure Functions
key (?code=). A path is no name:
`/runs/secret-run: chief-0` keeps its replica. Over-hiding is the price of never
under-hiding: a value is cut at the first blank or quote, so what follows a
quoted or spaced secret may be hidden with it.

Only what is shown is hidden: the values a job sends are never changed here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HIDDEN = "***"
# Found anywhere in a name: "WANDB_API_KEY", "my_token", "dbPassword".
_SECRET_WORDS = re.compile(
    r"token|secret|passw|passphrase|credential|auth|api_?key|private_?key|access_?key", re.I
)
# Too short to look for inside other words ("monkey", "keyboard"): whole words only, once
# camelCase is split ("wandbKey" is "wandb_key").
_SECRET_WHOLE_WORDS = re.compile(r"(?:^|[^a-z])(?:key|keys|pwd|dsn|pat|sas)(?:$|[^a-z])")

# A quote, possibly escaped (JSON inside JSON writes \").
_Q = r"\\*[\"']"
# A value: quoted (up to its closing quote, or the end of a cut excerpt), or one word
# ("Bearer abc" is two); never a "{" or "[" that opens a nested value, whose own names count.
_VALUE = rf"(?:{_Q}.*?(?:{_Q}|$)|(?:(?:Bearer|Basic|Token)\s+)?[^\s\"'\\{{\[][^\s\"'\\]*)"
_NAME = r"[A-Za-z_][\w.-]*"

# scheme://userinfo@: greedy, so a password with an unescaped "@" is hidden whole.
_URL_USERINFO = re.compile(r"([A-Za-z][\w+.-]*://)([^\s/?#\"'\\]*)@")
# scheme://… running to the end of the text with no "@", "/" or blank, and holding a character
# no host name has: an excerpt cut inside the userinfo ("https://TOKEN{" of a torn document)
# is not a host; hide it too. A trailing authority made of host characters stays shown
# (bq://project.dataset.table, tcp://10.0.0.1): a token cut exactly at its end would read
# the same, and hiding every trailing address would hide what most errors are about.
_URL_CUT = re.compile(
    r"([A-Za-z][\w+.-]*://)(?=[^\s/?#\"'\\@]*[^\w.:%\[\]\s/?#\"'\\@-])[^\s/?#\"'\\@]+\Z"
)
# Credentials told by their own shape, whatever they are called. The prefixes are the
# issuers' own; the lengths are minimums, so that the head of a token cut short by an
# excerpt is hidden too.
_SHAPES = re.compile(
    # PEM private keys (RSA, EC, OPENSSH, ENCRYPTED ...), to their END line or the excerpt's end.
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)"
    # Issuers' prefixes, never inside a longer word ("task-1" holds no "sk-").
    r"|(?<![A-Za-z0-9_-])(?:"
    # GitHub: personal, OAuth, user-to-server, server-to-server and refresh tokens.
    r"gh[pousr]_[A-Za-z0-9]{4,}|github_pat_[A-Za-z0-9_]{4,}"
    # Google API keys, and OAuth access tokens.
    r"|AIza[A-Za-z0-9_-]{4,}|ya29\.[A-Za-z0-9_-]{4,}"
    # OpenAI and Anthropic keys (project, service account, admin), and the older sk- keys.
    r"|sk-(?:proj|svcacct|admin|ant)-[A-Za-z0-9_-]{3,}|sk-[A-Za-z0-9]{20,}"
    # Slack bot, user, app-level and refresh tokens; Stripe secret and restricted keys.
    r"|xox[abposre]-[A-Za-z0-9-]{4,}|xapp-[A-Za-z0-9-]{4,}|[sr]k_(?:live|test)_[A-Za-z0-9]{4,}"
    # GitLab personal, deploy and runner tokens; Hugging Face, npm and PyPI tokens.
    r"|gl(?:pat|dt|rt|ptt|cbt)-[A-Za-z0-9_-]{4,}|hf_[A-Za-z0-9]{20,}|npm_[A-Za-z0-9]{20,}"
    r"|pypi-AgE[A-Za-z0-9_-]{4,}"
    # JWTs: a base64url JSON header ("eyJ" is '{"'), a payload, a signature.
    r"|eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*)?"
    r")"
    # AWS access key ids (long-term, temporary, and the other IAM unique-id prefixes).
    r"|(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA)[A-Z0-9]{16}(?![A-Z0-9])"
    # An HTTP bearer token, whatever header or variable holds it.
    r"|(?<=Bearer )[A-Za-z0-9._~+/-]{6,}=*",
    re.S,
)
# The signature of a signed URL: Azure SAS (sig=), Cloud Storage and S3 (X-*-Signature=).
_URL_SIGNATURE = re.compile(
    r"(?<![A-Za-z0-9_-])((?:sig|signature|x-goog-signature|x-amz-signature)=)[^&\s\"'\\#]+",
    re.I,
)
# A web address: its authority, its path, and its query and fragment.
_WEB_URL = re.compile(r"(https?://)([^\s/?#\"'\\]*)([^\s?#\"'\\]*)([?#][^\s\"'\\]*)?", re.I)
# A path segment, or a host label, after which a webhook's credential follows: Slack's
# hooks.slack.com/services/T…/B…/…, Discord's /api/webhooks/ID/TOKEN, Teams' /webhookb2/….
_HOOK_WORDS = frozenset({"hook", "hooks", "webhook", "webhooks", "webhookb2"})
# A Telegram bot token is the segment /bot<ID>:<TOKEN>.
_BOT_SEGMENT = re.compile(r"bot\d+:.{10,}")
# Query parameters that carry a credential under no secret word: an Azure Functions key,
# an OAuth authorization code.
_QUERY_CREDENTIAL = re.compile(r"(?<=[?&])(code=)[^&#]+", re.I)


def _random_looking(segment: str) -> bool:
    """True for a segment made to be unguessable (an id, a key), not a word (/docs/, /v2/)."""
    return len(segment) >= 20 or (len(segment) >= 6 and any(c.isdigit() for c in segment))


def _hide_url_path(match: re.Match[str]) -> str:
    scheme, authority, path, rest = match.group(1, 2, 3, 4)
    host = authority.rpartition("@")[2].partition(":")[0].lower()
    after_hook = bool(_HOOK_WORDS & set(host.split(".")))
    after_secret = False
    segments = path.split("/")
    for i, segment in enumerate(segments):
        hidden = _BOT_SEGMENT.fullmatch(segment) or (
            (after_hook or after_secret) and _random_looking(segment)
        )
        if hidden:
            # The rest of the address goes too: a webhook's id and token are one credential.
            return scheme + authority + "/".join(segments[:i]) + "/" + HIDDEN
        after_hook = after_hook or segment.lower() in _HOOK_WORDS
        after_secret = looks_secret(segment)
    return scheme + authority + path + _QUERY_CREDENTIAL.sub(r"\1" + HIDDEN, rest or "")


# {"name": "API_TOKEN", "value": "..."} and the reverse order, in any JSON or repr text.
_PAIR = re.compile(
    rf"(?P<h1>{_Q}name{_Q}\s*:\s*{_Q}(?P<n1>{_NAME}){_Q}\s*,\s*{_Q}value{_Q}\s*:\s*)(?P<v1>{_VALUE})"
    rf"|(?P<h2>{_Q}value{_Q}\s*:\s*)(?P<v2>{_VALUE})(?=\s*,\s*{_Q}name{_Q}\s*:\s*{_Q}(?P<n2>{_NAME}))",
    re.S,
)
# NAME=value, --name=value, "name": value, name: value; not host:port ("auth-db:5432").
_ASSIGNMENT = re.compile(
    rf"(?<![\w.-])(?P<head>(?:{_Q})?-{{0,2}}(?P<name>{_NAME})(?:{_Q})?"
    rf"(?:\s*=\s*|(?<=[\"'])\s*:\s*|\s*:\s+))(?P<value>{_VALUE})",
    re.S,
)
# --name value (a shell string), or "--name", "value" (a JSON or repr list).
_FLAG = re.compile(
    rf"(?<![\w.-])(?P<head>-{{1,2}}(?P<name>{_NAME})(?:\s+|{_Q}\s*,\s*{_Q}))(?P<value>{_VALUE})",
    re.S,
)


def looks_secret(name: str) -> bool:
    """True for names like API_TOKEN, db_password, aws_secret_access_key, wandbKey."""
    plain = name.lower().replace("-", "_")
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower().replace("-", "_")
    return bool(_SECRET_WORDS.search(plain) or _SECRET_WHOLE_WORDS.search(words))


def _hidden(value: str) -> str:
    """*** in place of `value`; a quoted value keeps its quotes, so JSON still reads as JSON."""
    opening = re.match(_Q, value)
    closing = re.search(_Q + "$", value)
    if opening and closing and closing.start() >= opening.end():
        return value[: opening.end()] + HIDDEN + value[closing.start() :]
    return HIDDEN


def _hide_value(match: re.Match[str]) -> str:
    if not looks_secret(match.group("name")):
        # Its value may hold a pair of its own ("note: DB_PASSWORD=abc"), which this match
        # consumed before the pattern could see it: look inside.
        value = match.group("value")
        return match.group(0)[: -len(value)] + redact_text(value) if value else match.group(0)
    head = match.group("head")
    before = match.string[match.start() - 1 : match.start()]
    if before in ("/", "\\") and head.rstrip().endswith(":"):
        # A path's last folder before a colon ("in /runs/secret-run: chief-0 ..."): no name.
        return match.group(0)
    return head + _hidden(match.group("value"))


def _hide_pair(match: re.Match[str]) -> str:
    first = match.group("v1") is not None
    if not looks_secret(match.group("n1" if first else "n2")):
        return match.group(0)
    head, value = match.group("h1", "v1") if first else match.group("h2", "v2")
    return head + _hidden(value)


def redact_text(text: str) -> str:
    """`text` with every secret value, in any shape this module knows, replaced by ***."""
    text = _SHAPES.sub(HIDDEN, text)
    text = _URL_SIGNATURE.sub(lambda m: m.group(1) + HIDDEN, text)
    text = _URL_USERINFO.sub(lambda m: m.group(1) + HIDDEN + "@", text)
    text = _URL_CUT.sub(lambda m: m.group(1) + HIDDEN, text)
    text = _WEB_URL.sub(_hide_url_path, text)
    text = _PAIR.sub(_hide_pair, text)
    text = _ASSIGNMENT.sub(_hide_value, text)
    return _FLAG.sub(_hide_value, text)


def redact(value: Any) -> Any:
    """A copy of a JSON-like value with every credential-looking value replaced by ***."""
    if isinstance(value, Mapping):
        # The {"name": "API_TOKEN", "value": "…"} pairs of a container's env list.
        if isinstance(value.get("name"), str) and "value" in value and looks_secret(value["name"]):
            return {**{k: redact(v) for k, v in value.items()}, "value": HIDDEN}
        # A Kubernetes toleration or selector requirement ({key, operator, value}): its "key"
        # names a node label (cloud.google.com/gke-spot), which is no credential.
        label_key = "operator" in value and isinstance(value.get("key"), str)
        return {
            k: HIDDEN
            if isinstance(k, str)
            and looks_secret(k)
            and not isinstance(v, Mapping | list)
            and not (label_key and k == "key")
            else redact(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        shown = [redact(v) for v in value]
        # "--password", "hunter2": the secret is the element after a bare secret flag.
        for i in range(1, len(shown)):
            flag = value[i - 1]
            bare_flag = isinstance(flag, str) and flag.startswith("-") and "=" not in flag
            if bare_flag and looks_secret(flag):
                shown[i] = HIDDEN
        return tuple(shown) if isinstance(value, tuple) else shown  # an error shows (1, 2) as such
    if isinstance(value, str):
        return redact_text(value)
    return value

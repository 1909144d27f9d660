"""Numbers and addresses the readers take: ASCII, bounded, never misread, never a crash.

Each property covers a whole class of input: integers longer than int()'s
4300-digit limit, digits that are not ASCII, hosts that carry a port, a scheme
or a control character, and the spellings of one address.
"""

from __future__ import annotations

import json
import re

import pytest
from fuzzing import examples
from hypothesis import assume, given
from hypothesis import strategies as st

from vtrain import ClusterInfo, ConfigError, VtrainError
from vtrain.cluster import fields
from vtrain.cluster.leader import leads
from vtrain.errors import LaunchError
from vtrain.plugins.wait import split_address

# Text that int() or str.isdigit() would take as a number, but vtrain must not.
non_ascii_digits = st.text(
    st.characters(categories=["Nd", "No"]).filter(lambda c: not "0" <= c <= "9"),
    min_size=1,
    max_size=4,
)
# Longer than int()'s 4300-digit limit, with or without leading zeros.
huge_digits = st.builds(
    lambda zeros, n, d: "0" * zeros + d + "9" * n,
    st.integers(0, 5000),
    st.integers(4300, 6000),
    st.sampled_from("123456789"),
)
number_texts = st.one_of(
    huge_digits,
    non_ascii_digits,
    st.integers(0, 10**30).map(str),
    st.builds(lambda a, b: a + b, st.sampled_from(["", "0", "1", "+", "-", " "]), non_ascii_digits),
    st.text(max_size=6),
)
# A host with a port or a scheme pasted in, or a character no host name has.
bad_hosts = st.one_of(
    st.builds(lambda ip, p: f"{ip}:{p}", st.ip_addresses(v=4).map(str), st.integers(0, 65535)),
    st.builds(
        lambda scheme, ip: f"{scheme}://{ip}",
        st.sampled_from(["tcp", "http", "env", "file"]),
        st.ip_addresses(v=4).map(str),
    ),
    st.builds(
        lambda a, c, b: a + c + b,
        st.sampled_from(["h", "host-0", "10.0.0.1", ""]),
        st.characters(categories=["Cc", "Cf", "Cs", "Zs", "Zl", "Zp"]) | st.sampled_from("/@\\"),
        st.sampled_from(["", "x", "[31m", "evil"]),
    ),
)
host_names = st.from_regex(r"[A-Za-z][A-Za-z0-9-]{0,10}(\.[A-Za-z0-9-]{1,6}){0,2}", fullmatch=True)


def _reads(env: dict[str, str]) -> ClusterInfo | VtrainError:
    try:
        return ClusterInfo.from_env(env)
    except VtrainError as e:
        assert str(e)
        return e


@examples(200)
@given(text=number_texts)
def test_natural_takes_ascii_digits_only(text: str) -> None:
    number = fields.natural(text)
    if re.fullmatch(r"[0-9]+", text) and len(text.lstrip("0")) <= fields.MAX_DIGITS:
        assert number == int(text)
    else:
        assert number is None


@examples(200)
@given(
    variable=st.sampled_from(["RANK", "WORLD_SIZE", "MASTER_PORT", "LOCAL_RANK", "GROUP_RANK"]),
    text=number_texts,
    torchrun=st.booleans(),
)
def test_integer_variables_are_read_or_refused(variable: str, text: str, torchrun: bool) -> None:
    env = {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "29500"}
    if torchrun:
        env["TORCHELASTIC_RUN_ID"] = "run"
    env[variable] = text
    got = _reads(env)
    read = torchrun or variable in ("RANK", "WORLD_SIZE", "MASTER_PORT")  # else not looked at
    if isinstance(got, ClusterInfo) and text.strip() and read:
        # Whatever was accepted was written in ASCII digits.
        assert re.fullmatch(r"[0-9]+", text.strip())


@examples(200)
@given(index=number_texts, port=number_texts, sparse=st.booleans())
def test_indexes_and_ports_in_documents(index: str, port: str, sparse: bool) -> None:
    addresses = {index: f"w:{port}"} if sparse else [f"w:{port}"]
    doc = {"cluster": {"worker": addresses}, "task": {"type": "worker", "index": index}}
    got = _reads({"TF_CONFIG": json.dumps(doc)})
    if isinstance(got, ClusterInfo):
        assert re.fullmatch(r"[0-9]+", port) and re.fullmatch(r"[0-9]+", index)


@examples(200)
@given(index=number_texts)
def test_a_leader_index_is_ascii_and_bounded(index: str) -> None:
    info = ClusterInfo.from_env(
        {
            "TF_CONFIG": json.dumps(
                {"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 0}}
            )
        }
    )
    try:
        leads(info, {"VTRAIN_LEADER": f"worker:{index}"})
    except ConfigError as e:
        assert "VTRAIN_LEADER" in str(e)
    else:
        assert index in ("0", "1") or re.fullmatch(r"0+[01]", index)


@examples(200)
@given(host=bad_hosts, port=st.integers(1, 65535))
def test_master_addr_with_a_port_or_scheme_is_refused(host: str, port: int) -> None:
    env = {"RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": host, "MASTER_PORT": str(port)}
    assume(host == host.strip(fields.BLANKS))  # blanks around a host are trimmed, as for RANK
    got = _reads(env)
    # Never taken as an IPv6 host "[10.0.0.1:29500]" or a host with an escape in it.
    assert isinstance(got, ConfigError), got
    assert "MASTER_ADDR" in str(got)


@examples(200)
@given(v6=st.ip_addresses(v=6).map(str), port=st.integers(1, 65535))
def test_a_bare_ipv6_master_addr_is_still_read(v6: str, port: int) -> None:
    env = {"RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": v6, "MASTER_PORT": str(port)}
    assert ClusterInfo.from_env(env).chief_address == f"[{v6}]:{port}"


@examples(200)
@given(
    host=bad_hosts, port=st.integers(1, 65535), key=st.sampled_from(["CLUSTER_SPEC", "TF_CONFIG"])
)
def test_hosts_with_control_characters_or_ports_are_refused(host: str, port: int, key: str) -> None:
    role = "workerpool0" if key == "CLUSTER_SPEC" else "chief"
    doc = {"cluster": {role: [f"{host}:{port}"]}, "task": {"type": role, "index": 0}}
    got = _reads({key: json.dumps(doc)})
    assert isinstance(got, ConfigError), got
    # The message is one line and carries no control character.
    assert str(got).isprintable()


@examples(200)
@given(host=host_names, port=st.integers(1, 65535), data=st.data())
def test_one_address_spelled_twice_is_a_duplicate(
    host: str, port: int, data: st.DataObject
) -> None:
    # Host names are case-blind and the port is a number: H:1 and h:01 are one address.
    other_host = "".join(data.draw(st.sampled_from([c.lower(), c.upper()])) for c in host)
    other_port = "0" * data.draw(st.integers(0, 3)) + str(port)
    doc = {
        "cluster": {"chief": [f"{host}:{port}"], "worker": [f"{other_host}:{other_port}"]},
        "task": {"type": "chief", "index": 0},
    }
    with pytest.raises(ConfigError, match="address used by two replicas"):
        ClusterInfo.from_env({"TF_CONFIG": json.dumps(doc)})


@examples(200)
@given(host=bad_hosts | host_names, port=number_texts)
def test_split_address_takes_what_the_readers_take(host: str, port: str) -> None:
    try:
        got_host, got_port = split_address(f"{host}:{port}", "TF_CONFIG")
    except LaunchError as e:
        assert str(e).isprintable()
    else:
        assert fields.is_host(host) and re.fullmatch(r"[0-9]+", port)
        assert (got_host, got_port) == (host, int(port))


@examples(200)
@given(job=st.text(min_size=1, max_size=30).filter(lambda t: t.strip()))
def test_the_json_hint_is_a_command_that_runs(job: str) -> None:
    # `echo "$CLUSTER_SPEC: job"` prints the whole variable followed by ": job": no help.
    try:
        json.loads(job)
    except ValueError:
        pass
    else:
        assume(False)
    doc = {
        "cluster": {"workerpool0": ["c:1"]},
        "task": {"type": "workerpool0", "index": 0},
        "job": job,
    }
    with pytest.raises(ConfigError, match=r"^CLUSTER_SPEC: job: not valid JSON") as caught:
        ClusterInfo.from_env({"CLUSTER_SPEC": json.dumps(doc)})
    assert caught.value.hint is not None
    assert re.search(r'`echo "\$CLUSTER_SPEC"`', caught.value.hint)

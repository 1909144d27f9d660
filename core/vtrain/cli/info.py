"""`vtrain info`: what this replica is, as vtrain reads it from the environment."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from vtrain import plugins
from vtrain.cli.output import say
from vtrain.cluster import ClusterInfo
from vtrain.cluster.leader import leads
from vtrain.context import RunContext
from vtrain.printable import printable
from vtrain.redact import redact
from vtrain.storage.crc32c import implementation as crc32c_implementation


def add_parser(sub: Any) -> None:
    """Register `vtrain info`."""
    parser = sub.add_parser(
        "info",
        help="show what this replica is: platform, role, rank, dirs",
        description=(
            "Show what vtrain reads from this environment: the platform, this replica's "
            "role and rank, the cluster, the output directories and the plugins. Run it "
            "inside a job (or under `vtrain local run`) to see what the script will see."
        ),
        epilog=(
            "'-' means the environment does not say (no chief address when running alone); "
            "'?' in the cluster is a replica whose address the platform does not give this "
            "replica (Kubeflow's TF_CONFIG lists only some)."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--data",
        action="store_true",
        help="also show the dataset variables and how many files each split expands to "
        "(lists the files: one request per split on gs://), or which BigQuery table it names",
    )
    parser.set_defaults(run=run)


def data_summary(environ: Any) -> dict[str, Any]:
    """AIP_DATA_FORMAT and, per split, its URI and how many files it expands to (or why not).

    A BigQuery split shows its table's Storage Read API name: listing it would need a
    read session, which costs a request and bills the project.
    """
    from vtrain.data.bq_table import is_table, parse_table
    from vtrain.data.listing import expand
    from vtrain.data.splits import FORMAT_VARIABLE, SPLITS, split_uri
    from vtrain.errors import VtrainError

    splits: dict[str, Any] = {}
    for split, variable in SPLITS.items():
        entry: dict[str, Any] = {"variable": variable, "uri": environ.get(variable) or None}
        try:
            uri, data_format, where = split_uri(split, environ)
            if is_table(uri, data_format):
                entry["table"] = parse_table(uri, where).path
            elif uri is not None:
                entry["files"] = len(expand(uri, where=where, environ=environ))
        except VtrainError as e:
            entry["error"] = str(e)
        splits[split] = entry
    return {"format": environ.get(FORMAT_VARIABLE) or None, "splits": splits}


def describe(environ: Any = None, *, data: bool = False) -> dict[str, Any]:
    """Everything `vtrain info` shows, as one JSON-ready dict; `data` lists the splits' files."""
    env = os.environ if environ is None else environ
    info = ClusterInfo.from_env(env)
    context = RunContext.from_env(env, trial_id=info.trial_id)
    result = info.to_dict()
    result["is_leader"] = leads(info, env)
    result["dirs"] = context.dirs
    result["job"] = dict(info.job) if info.job is not None else None
    result["job_id"] = context.job_id
    result["project_number"] = context.project_number
    result["region"] = context.region
    result["metric_file"] = context.metric_file
    result["plugins"] = plugins.status(env)
    result["crc32c"] = crc32c_implementation()
    if data:
        result["data"] = data_summary(env)
    # All of it: args and env values are not the only places a URL carries user:password@.
    redacted: dict[str, Any] = redact(result)
    return redacted


def run(args: argparse.Namespace) -> int:
    """Print the description, for a person or as JSON."""
    described = describe(data=args.data)
    if args.json:
        say(json.dumps(described, sort_keys=True))
        return 0
    rank = described["rank"]
    lines = [
        f"platform     {described['platform'] or '-'}",
        f"source       {described['source']}",
        f"role         {described['role']} (as the platform calls it: "
        f"{described['source_role']}), index {described['index']}",
        f"rank         {'-' if rank is None else rank} of {described['num_trainers']} trainers"
        + ("  [leader]" if described["is_leader"] else ""),
        f"chief        {described['chief_address'] or '- (not given: no cluster address)'}",
        f"trial        {described['trial_id'] or '-'}",
        "cluster",
        *(
            f"  {role:<17}{', '.join(a or '?' for a in addresses)}"
            for role, addresses in described["cluster"].items()
        ),
        "directories",
        *(f"  {kind:<17}{path}" for kind, path in described["dirs"].items()),
        f"metric file  {described['metric_file']}",
        f"crc32c       {described['crc32c']} (checkpoint and TFRecord checksums)",
        "plugins",
        *(f"  {name:<17}{state}" for name, state in described["plugins"].items()),
    ]
    if any(a is None for addresses in described["cluster"].values() for a in addresses):
        lines.insert(
            lines.index("directories"),
            "  (? = an address this environment does not give; alone there is none)",
        )
    if not described["plugins"]:
        lines.append("  (none installed)")
    if args.data:
        data = described["data"]
        lines.append(f"data         format {data['format'] or '- (from each file suffix)'}")
        for split, entry in data["splits"].items():
            if entry["uri"] is None:
                shown = f"- ({entry['variable']} is not set)"
            elif "error" in entry:
                shown = f"{entry['uri']}  [{entry['error']}]"
            elif "table" in entry:
                shown = f"{entry['uri']}  (BigQuery table {entry['table']})"
            else:
                shown = f"{entry['uri']}  ({entry['files']} files)"
            lines.append(f"  {split:<17}{shown}")
    # Escaped line by line: any of these values may hold a control character or a lone surrogate.
    say("\n".join(printable(line) for line in lines))
    return 0

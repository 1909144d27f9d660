"""The pip command that installs a missing module without breaking the environment it goes into.

`pip install "vtrain[xgboost]"` looks right and is not: from a clone it fetches
another vtrain from PyPI; in MXNet's venv (numpy<1.24) it lets pip upgrade
numpy past what MXNet runs with; a bare `torch` is the CUDA build, gigabytes of
it. So a hint names the one distribution that brings the module, with the
version range vtrain declares for it; keeps the upper bounds that the extras
in use here put on what is installed (pip does not weigh what is installed
when it resolves); and, from a clone, uses the clone's test constraints, which
pin what CI tests (a CPU torch). A module that no extra names directly (a
dependency of a dependency) gets its extra, in the form vtrain was installed:
`-e` of the clone, or this very version.

`install_command` decides from the facts alone; `Installation.here()` gathers
them from vtrain's own metadata.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

# The modules whose distribution is not their name with "_" as "-".
_DISTRIBUTION_OF = {
    "yaml": "pyyaml",
    "google.cloud.storage": "google-cloud-storage",
    "google.cloud.bigquery_storage_v1": "google-cloud-bigquery-storage",
    "google.cloud.bigquery_storage": "google-cloud-bigquery-storage",
    "google.cloud.aiplatform": "google-cloud-aiplatform",
    "google.cloud.aiplatform_v1": "google-cloud-aiplatform",
    "google_crc32c": "google-crc32c",
    "googleapiclient": "google-api-python-client",
    "kubeflow.training": "kubeflow-training",
    "kubeflow.katib": "kubeflow-katib-api",
    "pytorch_lightning": "lightning",
    "sklearn": "scikit-learn",
}
# Without an index, pip takes torch from PyPI, whose Linux wheel is the CUDA build. PyTorch's
# own instructions name this index for the CPU one; a clone's constraints pin a CPU torch.
_CPU_INDEX = {"torch": "https://download.pytorch.org/whl/cpu"}
# vtrain's own test tools: never what a user's script misses, and not bounds to keep.
_DEVELOPMENT = frozenset({"test"})
_REQUIREMENT = re.compile(
    r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*([^;]*?)\s*(?:;(.*))?"
)
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*['"]([^'"]+)['"]""")
_UPPER_BOUND = re.compile(r"<|==|~=")


def normalize(name: str) -> str:
    """A distribution's name as PyPI compares them (PEP 503): `PyYAML` is `pyyaml`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def distribution_of(module: str) -> str:
    """The distribution that installs `module`: `yaml` is pyyaml, `google.cloud.storage` is
    google-cloud-storage; a distribution's own name is itself."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        found = _DISTRIBUTION_OF.get(".".join(parts[:n]))
        if found is not None:
            return found
    return normalize(parts[0])


@dataclass(frozen=True)
class Installation:
    """What a hint needs to know of how vtrain is installed here."""

    version: str = ""
    """vtrain's version; empty when it is not installed (run from a source tree)."""
    extras: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Each extra's requirements (`torch>=2.2`), as vtrain's metadata declares them."""
    clone: str | None = None
    """The folder of the clone vtrain is installed from in editable mode, else None."""
    constraints: str | None = None
    """The clone's constraints file, when it has one."""
    installed: frozenset[str] = frozenset()
    """The normalized names of the distributions vtrain's extras name that are installed."""

    @classmethod
    def here(cls) -> Installation:
        """The facts of this environment, from vtrain's metadata (nothing is imported); read
        once per process."""
        return _here()

    @classmethod
    def read(cls) -> Installation:
        """The facts of this environment, read afresh."""
        import json
        import os
        from importlib import metadata
        from urllib.parse import unquote, urlparse

        try:
            dist = metadata.distribution("vtrain")
        except metadata.PackageNotFoundError:
            return cls()
        extras: dict[str, list[str]] = {}
        for line in dist.requires or ():
            name, spec, marker = _parse(line)
            extra = _EXTRA_MARKER.search(marker)
            if extra is not None and extra.group(1) not in _DEVELOPMENT and name != "vtrain":
                extras.setdefault(extra.group(1), []).append(f"{normalize(name)}{spec}")
        clone = constraints = None
        try:
            direct = json.loads(dist.read_text("direct_url.json") or "{}")
        except ValueError:
            direct = {}
        url = direct.get("url", "") if isinstance(direct, dict) else ""
        if direct.get("dir_info", {}).get("editable") and url.startswith("file://"):
            clone = unquote(urlparse(url).path)
            found = os.path.join(clone, "tests", "constraints.txt")
            constraints = found if os.path.isfile(found) else None
        names = {_parse(r)[0] for rs in extras.values() for r in rs}
        return cls(
            version=dist.version,
            extras={k: tuple(v) for k, v in extras.items()},
            clone=clone,
            constraints=constraints,
            installed=frozenset(n for n in names if _is_installed(n)),
        )


def install_command(extra: str | None, module: str | None, facts: Installation) -> str | None:
    """The pip command that installs `module` (or, without one, `extra`) here; None when
    vtrain declares neither."""
    wanted = normalize(distribution_of(module)) if module else None
    requirement = _requirement(wanted, facts) if wanted else None
    if requirement is not None and wanted is not None:
        command = _pip(
            facts, f'"{requirement}"', *_kept(facts, wanted), index=_CPU_INDEX.get(wanted)
        )
        return f"{command} (as vtrain[{smallest_extra(wanted, facts)}] asks for it)"
    if extra is None or extra not in facts.extras:
        return None
    if facts.clone is not None:
        return _pip(facts, "-e", f'"{facts.clone}[{extra}]"')
    pinned = f"=={facts.version}" if facts.version else ""
    return _pip(facts, f'"vtrain[{extra}]{pinned}"', *_kept(facts, None))


def smallest_extra(module: str, facts: Installation) -> str | None:
    """The extra with the fewest requirements that brings `module`, or None."""
    wanted = normalize(distribution_of(module))
    holding = [e for e, rs in facts.extras.items() if any(_parse(r)[0] == wanted for r in rs)]
    return min(holding, key=lambda e: (len(facts.extras[e]), e), default=None)


def _requirement(wanted: str, facts: Installation) -> str | None:
    """`wanted` with the version range of the smallest extra that names it."""
    extra = smallest_extra(wanted, facts)
    if extra is None:
        return None
    return next(r for r in facts.extras[extra] if _parse(r)[0] == wanted)


def _kept(facts: Installation, wanted: str | None) -> list[str]:
    """The upper bounds that the extras in use here (all of theirs installed) put on what is
    installed: what pip would otherwise be free to upgrade past."""
    kept: list[str] = []
    for requirements in facts.extras.values():
        names = [_parse(r)[0] for r in requirements]
        if not all(n in facts.installed for n in names):
            continue
        for requirement, name in zip(requirements, names, strict=True):
            bounded = _UPPER_BOUND.search(_parse(requirement)[1])
            if bounded and name != wanted and f'"{requirement}"' not in kept:
                kept.append(f'"{requirement}"')
    return sorted(kept)


def _pip(facts: Installation, *arguments: str, index: str | None = None) -> str:
    words = ["pip install"]
    if facts.constraints is not None:
        words += ["-c", facts.constraints]
    elif index is not None:
        words += ["--index-url", index]
    return " ".join([*words, *arguments])


def _parse(requirement: str) -> tuple[str, str, str]:
    """(normalized name, version range, marker) of a requirement line."""
    found = _REQUIREMENT.fullmatch(requirement)
    if found is None:
        return normalize(requirement), "", ""
    name, spec, marker = found.groups()
    # The old form "torch (>=2.2)" names the same range as "torch>=2.2".
    return normalize(name), re.sub(r"[\s()]", "", spec), marker or ""


def _is_installed(name: str) -> bool:
    from importlib import metadata

    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    return True


@functools.lru_cache(maxsize=1)
def _here() -> Installation:
    return Installation.read()

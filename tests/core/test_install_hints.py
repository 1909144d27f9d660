"""Install hints that fit the environment (issue 42): the one package, its range, nothing broken.

`pip install "vtrain[xgboost]"` in MXNet's venv would let pip take numpy past
1.24; from a clone it fetches another vtrain; `pip install "vtrain[submit]"`
for PyYAML alone brings nine packages. The table covers every (extra, module)
pair that vtrain's code raises MissingExtraError for, under three
installations: a clone with its constraints, a wheel, and a wheel in MXNet's
venv. The facts are read from pyproject.toml, so a range changed there is the
range the hints say.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

from vtrain.errors import MissingExtraError

try:
    import tomllib
except ImportError:  # Python 3.10: pytest brings the same parser as tomli
    import tomli as tomllib  # type: ignore[no-redef]
from vtrain.install_hints import Installation, distribution_of, install_command, normalize

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = str(ROOT / "tests" / "constraints.txt")


def _declared() -> dict[str, tuple[str, ...]]:
    """Each extra's requirements as pyproject.toml declares them, its own extras expanded."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]

    def expand(extra: str) -> set[str]:
        found: set[str] = set()
        for requirement in extras[extra]:
            own = re.fullmatch(r"vtrain\[(.+)\]", requirement)
            if own:
                found |= {r for e in own.group(1).split(",") for r in expand(e)}
            else:
                name, rest = re.fullmatch(r"([A-Za-z0-9._-]+)(.*)", requirement).groups()
                found.add(normalize(name) + rest)
        return found

    return {e: tuple(sorted(expand(e))) for e in extras if e != "test"}


EXTRAS = _declared()
WHEEL = Installation(version="0.1.0", extras=EXTRAS)
CLONE = dataclasses.replace(WHEEL, clone=str(ROOT), constraints=CONSTRAINTS)
# MXNet's venv: the mxnet extra is whole, so its numpy<1.24 is kept by every hint.
MXNET_VENV = dataclasses.replace(WHEEL, installed=frozenset({"mxnet", "numpy", "google-crc32c"}))

# Every (extra, module) that vtrain's code names in a MissingExtraError, and the requirement
# the hint must name (None: a dependency of a dependency, so the extra itself).
PAIRS = [
    ("tune", "yaml", "pyyaml>=6"),
    ("tune", "optuna", "optuna>=3.0"),
    ("submit", "pyyaml", "pyyaml>=6"),
    ("submit", "google-cloud-aiplatform", "google-cloud-aiplatform>=1.60"),
    ("submit", "google-api-python-client", "google-api-python-client>=2.100"),
    ("submit", "kubeflow-training", "kubeflow-training>=1.9"),
    ("submit", "kubeflow", "kubeflow>=0.5"),
    ("submit", "kubeflow-katib-api", "kubeflow-katib-api>=0.19"),
    ("submit", "kubernetes", "kubernetes>=29"),
    ("submit", "build", "build>=1.0"),
    ("submit", "protobuf", None),
    ("submit", "google-api-core", None),
    ("submit", "google-auth", None),
    ("submit", "urllib3", None),
    ("gcs", "google.cloud.storage", "google-cloud-storage>=2.10"),
    ("local-gcs", "gcp_storage_emulator", "gcp-storage-emulator>=2024.8.3"),
    ("bigquery", "google.cloud.bigquery_storage_v1", "google-cloud-bigquery-storage>=2.24"),
    ("bigquery", "pyarrow", "pyarrow>=14"),
    ("data", "google_crc32c", "google-crc32c>=1.5"),
    ("pytorch", "torch", "torch>=2.2"),
    ("pytorch", "torch.distributed", "torch>=2.2"),
    ("lightning", "lightning", "lightning>=2.2"),
    ("lightning", "pytorch_lightning", "lightning>=2.2"),
    ("lightning", "tensorboardX", "tensorboardx>=2.6"),
    ("tensorflow", "tensorflow", "tensorflow>=2.16"),
    ("tensorflow", "tf_keras", "tf-keras>=2.16"),
    ("tensorflow", "tensorboard", "tensorboard>=2.16"),
    ("mxnet", "mxnet", "mxnet>=1.9.1"),
    ("xgboost", "xgboost", "xgboost>=2.1"),
]


@pytest.mark.parametrize(("extra", "module", "requirement"), PAIRS)
def test_every_hint_fits_each_installation(
    extra: str, module: str, requirement: str | None
) -> None:
    clone = install_command(extra, module, CLONE)
    wheel = install_command(extra, module, WHEEL)
    mxnet = install_command(extra, module, MXNET_VENV)
    assert clone and wheel and mxnet
    if requirement is None:
        assert clone == f'pip install -c {CONSTRAINTS} -e "{ROOT}[{extra}]"'
        assert wheel == f'pip install "vtrain[{extra}]==0.1.0"'
        assert mxnet == f'pip install "vtrain[{extra}]==0.1.0" "numpy<1.24"'
        return
    # The one distribution, with the range pyproject declares; the extra it comes from named.
    said = re.search(r"\(as vtrain\[([a-z-]+)\] asks for it\)$", wheel)
    assert said is not None and requirement in EXTRAS[said.group(1)], wheel
    assert f'"{requirement}"' in wheel and "vtrain[" not in wheel.split(" (as ")[0]
    assert clone.startswith(f'pip install -c {CONSTRAINTS} "{requirement}"'), clone
    index = (
        " --index-url https://download.pytorch.org/whl/cpu" if module.startswith("torch") else ""
    )
    assert wheel.startswith(f'pip install{index} "{requirement}" (as'), wheel
    # Whatever it installs, MXNet's numpy stays.
    assert mxnet.startswith(f'pip install{index} "{requirement}" "numpy<1.24" (as'), mxnet


@pytest.mark.parametrize(
    ("facts", "extra", "module", "hint"),
    [
        # The report's cases, whole.
        (
            MXNET_VENV,
            "xgboost",
            "xgboost",
            'pip install "xgboost>=2.1" "numpy<1.24" (as vtrain[xgboost] asks for it)',
        ),
        (WHEEL, "submit", "pyyaml", 'pip install "pyyaml>=6" (as vtrain[tune] asks for it)'),
        (
            WHEEL,
            "pytorch",
            "torch",
            'pip install --index-url https://download.pytorch.org/whl/cpu "torch>=2.2" '
            "(as vtrain[pytorch] asks for it)",
        ),
        (
            CLONE,
            "pytorch",
            "torch",
            f'pip install -c {CONSTRAINTS} "torch>=2.2" (as vtrain[pytorch] asks for it)',
        ),
        # Not installed (a source tree on sys.path): nothing vtrain can vouch for.
        (Installation(), "pytorch", "torch", None),
        # An extra this vtrain does not declare, and a module it does not know.
        (WHEEL, "torchh", None, None),
        (WHEEL, None, "no_such_module", None),
    ],
)
def test_the_reported_hints(
    facts: Installation, extra: str | None, module: str | None, hint: str | None
) -> None:
    assert install_command(extra, module, facts) == hint


@pytest.mark.parametrize(
    ("module", "distribution"),
    [
        ("yaml", "pyyaml"),
        ("google.cloud.storage.blob", "google-cloud-storage"),
        ("google.cloud.bigquery_storage_v1", "google-cloud-bigquery-storage"),
        ("tf_keras", "tf-keras"),
        ("gcp_storage_emulator.server", "gcp-storage-emulator"),
        ("torch.nn", "torch"),
        ("google-cloud-aiplatform", "google-cloud-aiplatform"),
        ("PyYAML", "pyyaml"),
    ],
)
def test_distribution_of(module: str, distribution: str) -> None:
    assert normalize(distribution_of(module)) == distribution


def test_the_facts_here_are_the_clones() -> None:
    # The core session installs this clone editable: the hints use its constraints.
    here = Installation.read()
    assert here.clone == str(ROOT) and here.constraints == CONSTRAINTS
    assert here.extras.keys() == EXTRAS.keys()
    for extra, requirements in EXTRAS.items():
        assert sorted(here.extras[extra]) == sorted(requirements), extra


def test_a_missing_extra_says_the_command_for_this_clone() -> None:
    error = MissingExtraError("a YAML job file", "submit", module="pyyaml")
    assert str(error) == (
        "'pyyaml', needed for a YAML job file, is not installed. "
        f'Hint: pip install -c {CONSTRAINTS} "pyyaml>=6" (as vtrain[tune] asks for it)'
    )


def test_a_script_without_torch_is_told_the_cpu_pin(tmp_path: Path) -> None:
    # A real script in a real interpreter of the core session, which has no torch.
    script = tmp_path / "train.py"
    script.write_text("import vtrain\nvtrain.one_line_errors()\nimport torch\n")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert done.stderr == (
        "train.py: error: 'torch', needed for this script, is not installed. "
        f'Hint: pip install -c {CONSTRAINTS} "torch>=2.2" (as vtrain[pytorch] asks for it)\n'
    )

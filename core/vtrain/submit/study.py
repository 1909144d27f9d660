"""The study file `vtrain tune` runs, read for a tuning job; what its trials need of the command.

Vertex and AI Platform both pass a trial's parameters as ``--name=value``
flags appended to the job's arguments; `check_study_args` refuses a study
whose flags the command line cannot receive. Each engine writes the study in
its own words (`vertex.study`, `aiplatform.hyperparameters`).
"""

from __future__ import annotations

import os

from vtrain.errors import VtrainError
from vtrain.submit.problems import Problems
from vtrain.submit.request import JobRequest
from vtrain.tune.study import Study

# vtrain's scale names -> the services' (Vertex and AI Platform spell them alike).
SCALES = {
    "LINEAR": "UNIT_LINEAR_SCALE",
    "LOG": "UNIT_LOG_SCALE",
    "REVERSE_LOG": "UNIT_REVERSE_LOG_SCALE",
}
SHELLS = ("sh", "bash", "dash", "zsh", "ksh")


def read_request_study(request: JobRequest, problems: Problems) -> Study | None:
    """The study that --study names (None without it); every problem found goes to `problems`."""
    if not request.study:
        return None
    from vtrain.tune.study_file import read_study

    try:
        study = read_study(request.study)
    except VtrainError as e:
        problems.add(e)
        return None
    check_study_args(study, request.command, request.args, request.study, problems)
    return study


def check_study_args(
    study: Study, command: tuple[str, ...], args: tuple[str, ...], source: str, problems: Problems
) -> None:
    """What stops a trial's ``--name=value`` flags from reaching the program, one problem each."""
    given = (*command, *args)
    if command and os.path.basename(command[0]) in SHELLS and "-c" in args:
        # `sh -c 'python train.py' --lr=0.1`: the flag becomes $0 of the script, not a flag.
        problems.bad(
            "--study",
            "a shell script does not receive the trials' flags",
            " ".join(given)[:80],
            "the program itself as COMMAND",
            hint=f'append "$@" inside the script, or run the program directly ({source})',
        )
    for p in study.all_parameters():
        flag = f"--{p.parameter_id}"
        fixed = [a for a in given if a == flag or a.startswith(flag + "=")]
        if fixed:
            problems.bad(
                "--study",
                f"parameter {p.parameter_id!r} of the study is also fixed on the command line",
                fixed[0],
                f"{flag} in the study or after --, not both",
                hint="each trial appends its own value; the program would see two",
            )

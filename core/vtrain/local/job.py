"""A local job from its plan to its result: ports, addresses, folders, the console, the verdict.

`run_job` holds the job's folder (`vtrain.local.folder_lock`: one job per
folder), reserves the replicas' ports and addresses, makes the job's folders
and disks, writes its header, has the supervisor (`vtrain.local.supervisor`) run
it to its end, shows the summary table and judges the rehearsal.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from vtrain.cluster.roles import CHIEF
from vtrain.context import given_dirs, output_dirs
from vtrain.local.addresses import separate_hosts, shared_host_note
from vtrain.local.disks import DISKS_FOLDER, Disks
from vtrain.local.environment import metric_file, replica_env
from vtrain.local.evidence import Evidence
from vtrain.local.faults import given
from vtrain.local.folder_lock import FolderLock
from vtrain.local.launch_errors import no_private_folder, unwritable
from vtrain.local.not_rehearsed import not_rehearsed
from vtrain.local.notes import Notes
from vtrain.local.output import Output
from vtrain.local.plan import Plan, Replica
from vtrain.local.ports import reserve_ports
from vtrain.local.result import JobResult
from vtrain.local.serving import ServingFiles
from vtrain.local.supervisor import Supervisor

# `typing` costs milliseconds at start-up; the names are for the type checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

    from vtrain.local.live import Display


def run_job(
    plan: Plan,
    *,
    stream: TextIO | None = None,
    colour: bool | None = None,
    environ: Mapping[str, str] | None = None,
    no_model: bool = False,
    display: Display | None = None,
    track: str | None = None,
) -> JobResult:
    """Run every replica of `plan` to the job's end, as its platform would; leave no process.
    `no_model`: the job writes no model by design (the verdict expects none); `display`: the
    live view, framework noise and progress lines (default: live on a terminal, no noise);
    `track`: the tracking backends the replicas get (VTRAIN_TRACK; `mlflow` serves one)."""
    try:  # before anything in the folder is touched: a second job there would destroy this one
        lock = FolderLock.take(plan.trial_dir, plan.job_id)
    except OSError as e:
        raise unwritable(plan, e) from None
    with lock, reserve_ports(plan.size) as ports:
        hosts = separate_hosts(plan.size)
        replicas = plan.replicas(ports, hosts or ())
        try:
            metric_folder = os.path.dirname(metric_file(plan, replicas[0]))
            for folder in (*output_dirs(plan.output_dir, plan.trial_id).values(), metric_folder):
                os.makedirs(folder, exist_ok=True)
            # Per trial: the parallel trials of a study share one --output-dir. The logs are
            # opened once the replicas are on their way (`Supervisor.run`).
            output = Output(
                [r.name for r in replicas],
                plan.trial_dir,
                stream or sys.stdout,
                colour=colour,
                open_logs=False,
                display=display,
            )
            disks = Disks(
                os.path.join(plan.trial_dir, DISKS_FOLDER), os.getcwd(), reuse=not plan.shared_disk
            )
        except OSError as e:
            raise unwritable(plan, e) from None
        note = Notes(output)
        try:
            serving = _serving_files()
            bucket = server = status = None
            try:
                where = ", ".join(f"{r.name} {r.address}" for r in replicas)
                note.hold()  # written once the replicas have started (see Notes.hold)
                note(f"job {plan.job_id} ({plan.platform}) in {plan.output_dir}: {where}")
                notes: tuple[str, ...] = () if hosts else (shared_host_note(),)
                for text in notes:
                    note(f"note: {text}")
                if plan.shared_disk:
                    notes += ("--shared-disk: one disk for every replica; local-disk not checked",)
                evidence = _evidence(plan, replicas, environ, separate=hosts is not None)
                if plan.output_uri:
                    from vtrain.local.bucket import Bucket  # gs:// only: the emulator, /gcs/

                    bucket = Bucket.start(plan.output_uri, plan.trial_id, plan.trial_dir)
                    environ = bucket.for_job(evidence, environ)
                    note(f"note: {bucket.summary}")
                if track:
                    from vtrain.local.mlflow_server import tracking  # --track only

                    given = os.environ if environ is None else environ
                    environ, server = tracking(track, plan.trial_dir, given)
                if server is not None:
                    note(f"note: tracking to an MLflow server on {server.uri} ({server.folder})")
                if plan.platform == "trainjob":
                    from vtrain.local.trainjob_status import StatusServer  # TLS: cryptography

                    status = StatusServer.start(plan.trial_dir, plan.job_id)
                    environ = {**(os.environ if environ is None else environ), **status.variables()}
                    note(f"note: the TrainJob's status server on {status.url}")
                evidence.no_model = no_model
                supervisor = Supervisor(plan, replicas, output, note, environ, serving)
                result = supervisor.run(evidence, None if plan.shared_disk else disks)
                output.end_progress()  # the summary follows on a clean screen
                note.release()
                output.write(result.table())
                if server is not None:  # where to see the runs, now that the job is over
                    output.write(f"MLflow runs: {server.folder}; browse them: {server.browse}\n")
                if status is not None:
                    output.write(status.summary() + "\n")
                from vtrain.local.checks import judge  # only now: the job's start goes first

                result = result.with_verdict(judge(evidence, notes))
            finally:
                if bucket is not None:
                    bucket.stop()
                if server is not None:
                    server.stop()
                if status is not None:
                    status.stop()
                serving.remove()
                disks.close()
        finally:
            note.release()
            output.close()
    return result


def _evidence(
    plan: Plan, replicas: Sequence[Replica], environ: Mapping[str, str] | None, separate: bool
) -> Evidence:
    # The folders the chief is given, not those --trial names: a Katib trial is named by its
    # manifest's env, and every kind of trial's evidence must be that trial's own folders.
    chief = replica_env(plan, replicas, replicas[0], environ=environ)
    dirs = given_dirs(chief, plan.output_dir, plan.trial_id)
    chief_env = (plan.role_env or {}).get(CHIEF, {})
    metric_id = chief_env.get("CLOUD_ML_HP_METRIC_TAG") or (
        os.environ if environ is None else environ
    ).get("CLOUD_ML_HP_METRIC_TAG")
    evidence = Evidence(
        hosts={r.name: r.host for r in replicas},
        ports={r.name: r.port for r in replicas},
        separate_hosts=separate,
        model_dir=dirs["AIP_MODEL_DIR"],
        checkpoint_dir=dirs["AIP_CHECKPOINT_DIR"],
        metric_files={r.name: metric_file(plan, r) for r in replicas},
        metric_id=metric_id,
    )
    evidence.shared_disk = plan.shared_disk
    evidence.platform = plan.platform
    evidence.kills = [given(kill) for kill in plan.kills]
    evidence.not_rehearsed = not_rehearsed(plan.platform, plan.job, plan.size)
    return evidence


def _serving_files() -> ServingFiles:
    try:
        return ServingFiles.create()
    except OSError as e:
        raise no_private_folder(e) from None

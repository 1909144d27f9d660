"""What `vtrain submit` and `vtrain render` do, in order: build or read, check, print or send.

Nothing is sent before every check has passed. Each step is the engine's own,
through the table in `vtrain.submit.engines`. What the command says about the job
(why restarts restart it whole, whether it was rehearsed) is the CLI's to print.
"""

from __future__ import annotations

from vtrain.errors import UsageError
from vtrain.submit.delivery import Delivery
from vtrain.submit.document import JobDocument
from vtrain.submit.engines import ENGINES
from vtrain.submit.job_file import read_job
from vtrain.submit.options import JobOptions


def check_delivery(platform: str, delivery: Delivery) -> None:
    """Refuse --wait where nothing would be followed."""
    if delivery.wait and not ENGINES[platform].follows:
        raise UsageError(
            "only a Vertex job is followed",
            source="--wait",
            value=platform,
            expected=" or ".join(name for name, engine in ENGINES.items() if engine.follows),
        )
    if delivery.wait and delivery.dry_run:
        raise UsageError(
            "nothing is sent to follow",
            source="--wait",
            value="--dry-run",
            expected="--wait without --dry-run or render",
        )


def render(options: JobOptions) -> JobDocument:
    """The job document of checked options, built and checked by the platform's engine."""
    kind, document = ENGINES[options.platform].render(options)
    return JobDocument(options.platform, kind, document, f"vtrain submit {options.platform}")


def read(platform: str, path: str, *, name: str | None = None) -> JobDocument:
    """The job file `path`, checked, for `platform`; renamed when `name` is given."""
    job = read_job(path)
    if job.platform != platform:
        raise UsageError(
            f"the file is a {job.kind} for {job.platform}",
            source="--job",
            value=path,
            expected=f"a job for {platform}",
        )
    if name:
        document = ENGINES[platform].rename(dict(job.document), name)
        job = JobDocument(job.platform, job.kind, document, job.source)
    return job


def sends(platform: str, delivery: Delivery) -> bool:
    """Whether `submit` sends the job (else it prints it)."""
    return not delivery.dry_run and ENGINES[platform].send is not None


def submit(job: JobDocument, options: JobOptions | None, delivery: Delivery) -> int:
    """Print the job, or send it (a platform that sends nothing prints it); the exit status."""
    engine = ENGINES[job.platform]
    if engine.send is None or not sends(job.platform, delivery):
        return engine.show(job, options, delivery)
    return engine.send(job, options, delivery)

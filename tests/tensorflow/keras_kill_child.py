"""Crash harness for Keras saves: SIGKILL a training process at random moments; check what a
restart would load.

The child trains with `handle.model_checkpoint()` and a plain
`keras.callbacks.ModelCheckpoint` side by side, one batch per epoch, so both
save all the time; it resumes first, as a restarted replica does. Before each
save it reports a CRC of the model's whole state (weights and optimizer). After
each kill the parent loads what resume would load, from each side alone, and
checks that it is exactly a state the child reported, and no older than the
last save the child saw finish.

A child starts by forking a server that has imported TensorFlow and Keras but
run nothing (multiprocessing's forkserver, with those modules preloaded): a
fresh interpreter would spend seconds importing TensorFlow for every kill.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import random
import re
import signal
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

from keras_state import X, Y, state, tiny

READY_TIMEOUT = 180.0
"""Seconds a child may take to build, resume and train its first batch on a busy machine."""


def crc(model: Any) -> int:
    """A CRC-32 of the model's weights and optimizer variables, in order."""
    value = 0
    for array in state(model):
        value = zlib.crc32(array.tobytes(), value)
    return value


def configure(config: dict[str, Any]) -> Any:
    """The handle both sides use, from the job's environment in `config`."""
    import vtrain

    return vtrain.plugins.get("tensorflow").configure(environ=dict(config["environ"]))


def child(config: dict[str, Any], conn: Any) -> None:
    """Resume, then train forever with both checkpoint callbacks, reporting as it goes."""
    handle = configure(config)
    keras = handle.keras
    model = tiny(keras)
    # Eager batches: a child lives for a second or so, and tracing fit would take most of it.
    model.run_eagerly = True
    initial = handle.resume(model, filepath=config["plain"]).done

    def say(text: str) -> None:
        conn.send_bytes(text.encode())  # one write, well under PIPE_BUF: never torn

    report = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: say(f"state {progress[0] + 1} {crc(model)}")
    )
    progress = [initial]

    def epoch_begin(epoch: int, logs: Any) -> None:
        progress[0] = epoch

    checkpoint = handle.model_checkpoint(monitor="loss", keep=3)

    def committed(epoch: int, logs: Any) -> None:
        checkpoint.manager.wait()  # it commits in the background: say so once it has
        say(f"committed {epoch + 1}")

    callbacks = [
        keras.callbacks.LambdaCallback(on_epoch_begin=epoch_begin),
        report,
        checkpoint,
        keras.callbacks.LambdaCallback(on_epoch_end=committed),
        keras.callbacks.ModelCheckpoint(config["plain"]),
        keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: say(f"plain {e + 1}")),
        keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: say("ready")),
    ]
    model.fit(
        X,
        Y,
        batch_size=len(X),
        epochs=10**9,
        initial_epoch=initial,
        shuffle=False,
        callbacks=callbacks,
        verbose=0,
    )


@dataclass
class Report:
    """What a run of kills saw."""

    kills: int = 0
    epochs_committed: int = 0
    torn_plain_files: int = 0
    """Kills after which the newest plain ModelCheckpoint file was torn, and resume skipped it."""
    uncommitted_saves: int = 0
    """Kills that left a vtrain save begun but not committed."""
    seconds: float = 0.0
    states: dict[int, int] = field(default_factory=dict)


def run_kills(config: dict[str, Any], kills: int, *, seed: int, max_delay: float) -> Report:
    """Start, SIGKILL and check the child `kills` times; AssertionError on any bad state."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["tensorflow", "keras", "vtrain_tensorflow", "h5py"])
    rng = random.Random(seed)
    handle = configure(config)  # this process reads as a restarted replica would
    report = Report()
    start = time.monotonic()
    committed = plain = 0
    for _ in range(kills):
        receive, send = context.Pipe(duplex=False)
        process = context.Process(target=child, args=(config, send), daemon=True)
        process.start()
        send.close()
        lines = _until_ready(receive, process)
        time.sleep(rng.uniform(0, max_delay))
        os.kill(process.pid, signal.SIGKILL)  # type: ignore[arg-type]
        process.join()
        assert process.exitcode == -signal.SIGKILL, process.exitcode
        lines += _drain(receive)
        report.kills += 1
        for line in lines:
            kind, *rest = line.split()
            if kind == "state":
                epoch, value = int(rest[0]), int(rest[1])
                # A resumed run retrains an epoch exactly: same data, same state, same result.
                assert report.states.setdefault(epoch, value) == value, f"epoch {epoch} differs"
            elif kind == "committed":
                committed = int(rest[0])
            elif kind == "plain":
                plain = int(rest[0])
        committed = _check_committed(handle, report, committed)
        plain = _check_plain(handle, config, report, plain)
    report.epochs_committed = committed
    report.seconds = time.monotonic() - start
    return report


def _until_ready(receive: Any, process: Any) -> list[str]:
    lines: list[str] = []
    while "ready" not in lines:
        assert receive.poll(READY_TIMEOUT), f"no ready from the child (exit {process.exitcode})"
        try:
            lines.append(receive.recv_bytes().decode())
        except EOFError:
            raise AssertionError(f"the child died early: {process.exitcode}") from None
    return lines


def _drain(receive: Any) -> list[str]:
    lines = []
    while True:
        try:
            lines.append(receive.recv_bytes().decode())
        except (EOFError, OSError):
            receive.close()
            return lines


def _check_committed(handle: Any, report: Report, seen: int) -> int:
    """The newest committed step loads exactly the state reported for it; so does every other."""
    from vtrain_tensorflow.resume import resume_from

    manager = handle.checkpoint_manager()
    latest = manager.latest_step()
    # The kill may land after a commit and before the child said so: one ahead is fine.
    assert latest in (seen, seen + 1), f"latest committed {latest}, the child saw {seen}"
    folder = manager.location
    names = folder.list()
    begun = [n for n in names if n.startswith(".tmp-") or n.startswith("step-")]
    report.uncommitted_saves += any(not folder.join(n).exists("COMMIT.json") for n in begun)
    model = tiny(handle.keras)
    record = resume_from(model, handle.strategy, manager=manager, plain=None)
    assert record is not None and record.initial_epoch == latest
    assert crc(model) == report.states[latest], f"step {latest} is not the state it was saved from"
    for step in manager.steps():  # retention deleted some while the kills came
        with manager.restore(step) as checkpoint:
            assert checkpoint.step == step
    return latest


class _Said(logging.Handler):
    """The warnings vtrain logs while it is attached (resume names each file it skips)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _check_plain(handle: Any, config: dict[str, Any], report: Report, seen: int) -> int:
    """Resume from the plain ModelCheckpoint files alone skips a torn newest file, and says so."""
    from vtrain.storage import open_location
    from vtrain_tensorflow.resume import resume_from

    location = open_location(os.path.dirname(config["plain"]), environ=config["environ"])
    model = tiny(handle.keras)
    caught = _Said()
    said = logging.getLogger("vtrain")
    said.addHandler(caught)
    try:
        record = resume_from(
            model, handle.strategy, manager=None, plain=location, filepath=config["plain"]
        )
    finally:
        said.removeHandler(caught)
    torn = [m for m in caught.messages if "torn or incomplete" in m]
    assert record is not None
    epoch = record.initial_epoch
    assert epoch in (seen, seen + 1), f"resumed at {epoch} from plain files, the child saw {seen}"
    assert crc(model) == report.states[epoch], f"{record.uri} is not the state it was saved from"
    for warning in torn:  # a torn file is always newer than the one resume took
        torn_epoch = int(re.findall(r"ckpt-(\d+)\.keras", warning)[0])
        assert torn_epoch > epoch, warning
    report.torn_plain_files += bool(torn)
    return epoch

"""Framework noise: which replica lines stay off the console (each to its log alone), as a table.

The lines are real: TensorFlow 2.20 and Lightning 2.5 printed them here, on a
machine without GPU (the cuDNN and placer lines on one with a GPU and JAX).
"""

from __future__ import annotations

import pytest

from vtrain.local.noise import ALWAYS_SHOWN, NOISE, REPEATS, Noise, noise, repeat_key, shown

# (line, the NOISE entry that hides it)
HIDDEN = [
    (
        "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
        "absl's note on its own start",
    ),
    (
        "I0000 00:00:1796524224.202455    5038 port.cc:153] oneDNN custom operations are on. You "
        "may see slightly different numerical results due to floating-point round-off errors "
        "from different computation orders. To turn them off, set the environment variable "
        "`TF_ENABLE_ONEDNN_OPTS=0`.",
        "an INFO line of TensorFlow's native libraries",
    ),
    (
        "I0000 00:00:1796524224.251569    5038 cpu_feature_guard.cc:227] This TensorFlow binary "
        "is optimized to use available CPU instructions in performance-critical operations.",
        "an INFO line of TensorFlow's native libraries",
    ),
    (
        "To enable the following instructions: AVX2 AVX512F AVX512_VNNI AVX512_BF16 FMA, in "
        "other operations, rebuild TensorFlow with the appropriate compiler flags.",
        "the end of TensorFlow's CPU-instructions banner",
    ),
    (
        "I0000 00:00:1796524224.203324    5038 cudart_stub.cc:31] Could not find cuda drivers on "
        "your machine, GPU will not be used.",
        "an INFO line of TensorFlow's native libraries",
    ),
    (
        "2024-12-04 10:00:00.000000: I external/local_tsl/tsl/cuda/cudart_stub.cc:32] Could not "
        "find cuda drivers on your machine, GPU will not be used.",
        "an INFO line of TensorFlow's native libraries",
    ),
    (
        "Could not find cuda drivers on your machine, GPU will not be used.",
        "TensorFlow on a machine without GPU",
    ),
    (
        "E0000 00:00:1733313296.118394   12345 cuda_dnn.cc:8310] Unable to register cuDNN "
        "factory: Attempting to register factory for plugin cuDNN when one has already been "
        "registered",
        "a CUDA library registered twice (TensorFlow with JAX or torch)",
    ),
    (
        "2024-03-08 10:11:12.071052: E external/local_xla/xla/stream_executor/cuda/cuda_fft.cc:"
        "479] Unable to register cuFFT factory: Attempting to register factory for plugin cuFFT "
        "when one has already been registered",
        "a CUDA library registered twice (TensorFlow with JAX or torch)",
    ),
    (
        "E0000 00:00:1733313296.125463   12345 cuda_blas.cc:1418] Unable to register cuBLAS "
        "factory: Attempting to register factory for plugin cuBLAS when one has already been "
        "registered",
        "a CUDA library registered twice (TensorFlow with JAX or torch)",
    ),
    (
        "W0000 00:00:1733313296.140123   12345 computation_placer.cc:177] computation placer "
        "already registered. Please check linkage and avoid linking the same target more than "
        "once.",
        "XLA's computation placer registered twice",
    ),
    (
        "\N{ELECTRIC LIGHT BULB} Tip: For seamless cloud uploads and versioning, try installing "
        "[litmodels](https://pypi.org/project/litmodels/) to enable LitModelCheckpoint, which "
        "syncs automatically with the Lightning model registry.",
        "Lightning's tips",
    ),
    (
        "\N{ELECTRIC LIGHT BULB} Tip: For seamless cloud logging and experiment tracking, try "
        "installing [litlogger](https://pypi.org/project/litlogger/) to enable LitLogger, which "
        "logs metrics and artifacts automatically to the Lightning Experiments platform.",
        "Lightning's tips",
    ),
    ("GPU available: False, used: False", "the accelerators Lightning did not use"),
    ("TPU available: False, using: 0 TPU cores", "the accelerators Lightning did not use"),
    ("HPU available: False, using: 0 HPUs", "the accelerators Lightning did not use"),
]

# (line, the ALWAYS_SHOWN entry that keeps it on the console, or None: in no list)
SHOWN = [
    ("Traceback (most recent call last):", "a Python traceback"),
    ("[rank1]: Traceback (most recent call last):", "a Python traceback"),
    ("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB", "a Python exception"),
    ("tensorflow.python.framework.errors_impl.UnavailableError: ...", "a Python exception"),
    ("KeyboardInterrupt", "a Python exception"),
    ("error: unrecognized arguments: --epoch 3", "an error"),
    (
        "E0000 00:00:1796524226.501777    5038 cuda_platform.cc:52] failed call to cuInit: "
        "INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)",
        "an error",
    ),
    ("ERROR:root:the data source is empty", "an error"),
    ("[E ProcessGroupGloo.cpp:144] Gloo connectFullMesh failed with ...", "an error"),
    (
        "F0000 00:00:1733313296.1 12345 gpu_device.cc:2020] Check failed: device_count > 0",
        "a fatal native error",
    ),
    ("Fatal Python error: Segmentation fault", "an error"),
    (
        "[rank0]:[W ProcessGroupNCCL.cpp:1168] Warning: WARNING: process group has NOT been "
        "destroyed before we destruct ProcessGroupNCCL.",
        "NCCL",
    ),
    ("distributed_backend=gloo", "gloo"),
    ("vtrain: worker 1 serves tensorflow until the job ends", "vtrain's own line"),
    (
        "I0000 00:00:1796524236.1 5227 vtrain_probe.cc:1] vtrain's line, from native code",
        "vtrain's own line",
    ),
    ("ResourceExhaustedError: OOM when allocating tensor", "a Python exception"),
    (
        "W0000 00:00:1796524236.1 5227 bfc_allocator.cc:482] Allocator (GPU_0_bfc) ran out of "
        "memory trying to allocate 2.00GiB (rounded to 2147483648)",
        "out of memory",
    ),
    # In no list: shown, whatever their level.
    (
        "/site-packages/tensorflow/python/data/ops/dataset_ops.py:463: UserWarning: To make it "
        "possible to preserve tf.data options across serialization boundaries, their "
        "implementation moved to be part of the TensorFlow graph.",
        None,
    ),
    ("WARNING:tensorflow:Your input ran out of data; interrupting training.", None),
    (
        "W0000 00:00:1796524236.1 5227 grpc_server_lib.cc:100] a warning nobody listed",
        None,
    ),
    ("Epoch 1/5", None),
    ("16/16 - 1s - loss: 1.3839 - 1s/epoch - 67ms/step", None),
    ("`Trainer.fit` stopped: `max_epochs=4` reached.", None),
    ("Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/2", None),
]

RETRACING = (
    "WARNING:tensorflow:{n} out of the last {n} calls to <function MultiDeviceSaver.save.<locals>"
    ".tf_function_save at 0x{address}> triggered tf.function retracing. Tracing is expensive "
    "and the excessive number of tracings could be due to (1) creating @tf.function repeatedly "
    "in a loop, (2) passing tensors with different shapes, (3) passing Python objects instead "
    "of tensors."
)


@pytest.mark.parametrize(("line", "entry"), HIDDEN)
def test_framework_noise_is_hidden(line: str, entry: str) -> None:
    data = line.encode()
    assert noise(data)
    assert entry in [what for what, p in NOISE if p.match(data)]
    assert Noise().hides(data)
    assert not Noise(verbose=True).hides(data)  # --verbose: the console gets it too


@pytest.mark.parametrize(("line", "entry"), SHOWN)
def test_what_matters_is_always_shown(line: str, entry: str | None) -> None:
    data = line.encode()
    assert not noise(data)
    assert not Noise().hides(data)
    assert shown(data) is (entry is not None)
    if entry is not None:
        assert entry in [what for what, p in ALWAYS_SHOWN if p.search(data)]


@pytest.mark.parametrize(
    "line",
    [
        # NOISE's patterns would hide these; ALWAYS_SHOWN wins.
        "I0000 00:00:1796524236.1 5227 nccl_manager.cc:10] NCCL communicator lost a member",
        "E0000 00:00:1733313296.1 12345 cuda_dnn.cc:8310] Unable to register cuDNN factory: "
        "RuntimeError: a real failure",
        "GPU available: True (cuda), used: True, but the driver failed",
    ],
)
def test_always_shown_wins_over_noise(line: str) -> None:
    assert not noise(line.encode())


def test_every_entry_of_both_lists_has_a_row() -> None:
    assert {entry for _, entry in HIDDEN} == {what for what, _ in NOISE}
    assert {entry for _, entry in SHOWN if entry} == {what for what, _ in ALWAYS_SHOWN}


def test_a_retracing_warning_is_shown_once_in_a_job_its_repeats_are_noise() -> None:
    first = RETRACING.format(n=5, address="7f5a443262a0").encode()
    again = RETRACING.format(n=5, address="7f5a443262a0").encode()
    later = RETRACING.format(n=6, address="7f0000000001").encode()
    other = RETRACING.replace("tf_function_save", "train_step").format(n=5, address="1").encode()
    assert [what for what, p in REPEATS if p.search(first)] == ["a tf.function retracing warning"]
    assert repeat_key(first) == repeat_key(later) != repeat_key(other)
    job = Noise()
    assert [job.hides(line) for line in (first, again, later, other)] == [
        False,
        True,
        True,
        False,  # another function's: news
    ]
    verbose = Noise(verbose=True)
    assert not any(verbose.hides(line) for line in (first, again, later))
    assert repeat_key(b"Epoch 1/5") is None


def test_a_stuck_trainer_s_stack_dump_goes_to_its_log_alone() -> None:
    from vtrain.local.noise import Noise

    dump = [
        b"Current thread 0x00007fd9447146c0 (most recent call first):",
        b'  File "/venv/site-packages/vtrain/progress/watchdog.py", line 80 in _fire',
        b'  File "/work/train.py", line 112 in handle_error',
    ]
    assert all(Noise().hides(line) for line in dump)
    assert not any(Noise(verbose=True).hides(line) for line in dump)
    stuck = b"vtrain: stuck: no progress for 21 s after step 40, waiting for the kvstore"
    assert not Noise().hides(stuck)

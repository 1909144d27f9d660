"""Boost 8 rounds on `handle.batches` with `handle.callbacks()`, committing every 4 rounds,
and print the progress the watchdog saw (tests/progressed.py)."""

import xgboost as xgb
from progressed import said

import vtrain

handle = vtrain.plugins.get("xgboost").configure()
batches = handle.batches(handle.stream("training"), batch_size=8, label="y")
train = xgb.QuantileDMatrix(batches, max_bin=16)
xgb.train(
    {"objective": "reg:squarederror", "max_depth": 2, "nthread": 1, "max_bin": 16},
    train,
    num_boost_round=8,
    callbacks=handle.callbacks(checkpoint_every=4),
)
said()
handle.close()

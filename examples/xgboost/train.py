"""Train gradient-boosted trees on synthetic regression data with XGBoost's collective.

The same script runs alone (`python train.py`), on a local cluster
(`vtrain local run --workers 2 -- python train.py`), and unchanged on Vertex AI,
AI Platform or Kubeflow (XGBoostJob). The chief hosts XGBoost's tracker; each
trainer reads the block of rows its rank says (`handle.row_block`; `handle.shard`
deals a list of files round-robin instead); the leader commits the booster
every few rounds, so a restarted job resumes where it stopped, reports the
tuning metric, and writes model.bst where Vertex's XGBoost prediction container
looks for it.
"""

from __future__ import annotations

import argparse
import hashlib
import json

import vtrain

# Before the framework's import: a missing framework or a vtrain error then ends the script
# with one line that says what to do (`pip install "vtrain[xgboost]"`), not a traceback.
vtrain.one_line_errors()

import numpy as np
import xgboost as xgb

FEATURES = 8


def synthetic_data(rows: int, seed: int = 1234) -> tuple[np.ndarray, np.ndarray]:
    """y = x . w + sin(3 x0) + noise, the same on every replica (fixed seed)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, FEATURES)).astype(np.float32)
    w = np.arange(1.0, FEATURES + 1) / FEATURES
    y = x @ w + np.sin(3 * x[:, 0]) + 0.1 * rng.normal(size=rows)
    return x, y.astype(np.float32)


def booster_params(args: argparse.Namespace) -> dict[str, object]:
    """Deterministic boosting: hist, no subsampling, so a resumed job matches an unbroken one."""
    return {
        "objective": "reg:squarederror",
        "tree_method": "hist",
        "max_depth": args.max_depth,
        "eta": args.eta,
        "subsample": args.subsample,
        "seed": 0,
        "nthread": args.nthread,
    }


def fingerprint(booster: xgb.Booster) -> str:
    """A short hash of the model's text dump: equal on replicas that hold the same trees."""
    return hashlib.sha256("".join(booster.get_dump(with_stats=True)).encode()).hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument("--max-depth", "--max_depth", type=int, default=4)
    parser.add_argument("--eta", "--learning_rate", type=float, default=0.1)
    parser.add_argument("--subsample", type=float, default=1.0)
    parser.add_argument("--nthread", type=int, default=0, help="threads per replica (0: all)")
    parser.add_argument("--checkpoint-every", type=int, default=10)
    parser.add_argument("--job-dir", help="AI Platform's jobDir; outputs go to vtrain's folders")
    args = parser.parse_args()

    handle = vtrain.plugins.get("xgboost").configure()
    if handle.rank is None:
        print(f"{handle.role} replica: not part of the XGBoost collective, nothing to do")
        return
    handle.track.autolog().params(vars(args))  # the job's one run, reopened after a restart
    with handle:  # on the chief, leaving waits for every worker, then stops the tracker
        x, y = synthetic_data(args.rows)
        x_val, y_val = synthetic_data(args.rows // 4, seed=99)
        train = xgb.DMatrix(handle.row_block(x), label=handle.row_block(y))
        # Metrics are merged across the collective: each trainer evaluates its own rows.
        valid = xgb.DMatrix(handle.row_block(x_val), label=handle.row_block(y_val))

        resumed = handle.resume()  # the same booster and round count on every rank
        print(
            f"rank {handle.rank}/{handle.world_size}: {resumed.done} rounds done before", flush=True
        )
        booster = xgb.train(
            booster_params(args),
            train,
            num_boost_round=args.rounds - resumed.done,
            evals=[(valid, "validation")],
            xgb_model=resumed.state,
            # Commits to handle.checkpoints; the metric goes to handle.report each round.
            callbacks=handle.callbacks(
                checkpoint_every=args.checkpoint_every, metric="validation-rmse"
            ),
            verbose_eval=False,
        )
        handle.save_model(booster)  # the leader writes <AIP_MODEL_DIR>/model.bst
        rmse = float(np.sqrt(np.mean((booster.predict(xgb.DMatrix(x_val)) - y_val) ** 2)))
        print(
            "final "
            + json.dumps(
                {
                    "rmse": rmse,
                    "model": fingerprint(booster),
                    "rounds": booster.num_boosted_rounds(),
                }
            ),
            flush=True,
        )
    vtrain.print_outputs()  # run alone: where the model, checkpoints, logs and metric are


if __name__ == "__main__":
    main()

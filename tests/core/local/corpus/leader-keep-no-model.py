# expect: ready
# run: --workers 1 --no-model
# A job that writes no model by design (an evaluation, a data preparation), and says so.
print("evaluated", flush=True)

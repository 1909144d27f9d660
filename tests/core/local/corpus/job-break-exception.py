# expect: job
# run: --workers 1 --max-restarts 0
# The chief crashes.
from _corpus import chief

if chief:
    raise SystemExit("boom")

# expect: job
# run: --workers 1 --max-restarts 0
# The image lacks the framework the script imports.
import vtrain_corpus_missing_framework  # noqa: F401

# expect: job
# run: --workers 1 --max-restarts 0
# The chief dies in native code (SIGABRT), as a framework's failed assertion does.
import os

from _corpus import chief

if chief:
    os.abort()

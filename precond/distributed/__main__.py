"""``python -m precond.distributed ...``: the ``precond distributed`` program (run it under
``mpiexec``)."""
import sys

from .cli import main

sys.exit(main())

"""Runs one Python suite against the INSTALLED gclaunch package (tests/install/wheel.sh on the CPU,
scripts/h200.sh's wheel stage on a GPU runner):

    VENV/bin/python tests/python/run_installed.py VENV SUITE.py [ARGS...]

It imports gclaunch first and exits with an error unless the package comes from the venv VENV
(so a build tree on sys.path cannot stand in for the wheel), prints where it came from, then runs
SUITE.py as __main__ with its folder first on sys.path (for gcltest), as `python SUITE.py` does."""
import os
import runpy
import sys

venv, test = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.dirname(os.path.abspath(test)))
import gclaunch  # noqa: E402

where = os.path.realpath(gclaunch.__file__)
print("gclaunch", gclaunch.__version__, "from", where, "python", sys.version.split()[0])
if not where.startswith(os.path.realpath(venv) + os.sep):
    sys.exit(f"gclaunch imported from {where}, not from the venv {venv}")
sys.argv = [test] + sys.argv[3:]
runpy.run_path(test, run_name="__main__")

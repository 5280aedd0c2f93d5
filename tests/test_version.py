"""kernels.version: one version for every package and both console scripts."""
import subprocess
import sys

import pytest

import graphkit
import kernels
import matrices
import precond
from kernels.version import __version__


def test_every_package_has_the_one_version():
    assert __version__.count(".") >= 2
    for package in (kernels, precond, graphkit, matrices):
        assert package.__version__ == __version__, package.__name__


@pytest.mark.parametrize("cli", ["graphkit", "precond"])
def test_console_scripts_print_the_version(cli, capsys):
    main = __import__(f"{cli}.cli", fromlist=["main"]).main
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"{cli} {__version__}"


def test_version_from_the_command_line():
    out = subprocess.run([sys.executable, "-m", "graphkit.cli", "--version"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == f"graphkit {__version__}"

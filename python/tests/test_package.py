"""The package itself: one version for the wheel and the C++ library, stubs shipped."""

import importlib.metadata
import re
from pathlib import Path

import ingot
from conftest import REPO


def test_version_comes_from_the_cmake_project_line():
    text = (REPO / "CMakeLists.txt").read_text()
    cmake_version = re.search(r"project\(ingot LANGUAGES CXX VERSION ([0-9.]+)\)", text).group(1)
    assert ingot.__version__ == cmake_version  # the C++ library's ingot::version()
    assert importlib.metadata.version("ingot") == cmake_version  # the wheel's metadata


def test_type_stubs_and_marker_are_installed():
    pkg = Path(ingot.__file__).parent
    for name in ("__init__.pyi", "exporters.pyi", "py.typed"):
        assert (pkg / name).is_file(), f"{name} missing from the installed package"
    stub = (pkg / "__init__.pyi").read_text()
    for api in ("def export(", "class Dim", "class ExportedProgram", "class Generator", "def from_pretrained("):
        assert api in stub


def test_exceptions_are_python_types():
    assert issubclass(ingot.ExportError, ValueError)

"""The package's shape: exports, stubs and their examples, the import from a fresh process."""

from __future__ import annotations

import ast
import doctest
import inspect
import pathlib
import subprocess
import sys

import depositkit
from depositkit import _native

STUB = pathlib.Path(_native.__file__).with_name("_native.pyi")


def stub_functions() -> dict[str, ast.FunctionDef]:
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def test_all_is_exact_and_importable() -> None:
    assert len(depositkit.__all__) == len(set(depositkit.__all__))
    for name in depositkit.__all__:
        assert hasattr(depositkit, name), name
    public = {n for n in dir(depositkit) if not n.startswith("_")} - {"enum", "annotations", "exceptions"}
    assert public <= set(depositkit.__all__), public - set(depositkit.__all__)


def test_every_native_function_has_a_documented_stub() -> None:
    stubs = stub_functions()
    native = {name for name, obj in vars(_native).items() if inspect.isbuiltin(obj)}
    assert native == set(stubs), native ^ set(stubs)
    for name, node in stubs.items():
        doc = ast.get_docstring(node)
        assert doc, f"{name} has no docstring"
        public = not name.startswith("_")
        if public:
            assert "Returns:" in doc and "Raises:" in doc and ">>>" in doc, name
        params = [a.arg for a in node.args.args]
        assert list(inspect.signature(getattr(_native, name)).parameters) == params, name


def test_every_native_class_is_stubbed_with_its_members_documented() -> None:
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    stubs = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    native = {name: obj for name, obj in vars(_native).items() if isinstance(obj, type) and not name.startswith("_")}
    for name, cls in native.items():
        assert name in stubs, f"{name} has no stub"
        node = stubs[name]
        assert ast.get_docstring(node), f"{name} has no docstring"
        members = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
        public = {attr for attr in dir(cls) if not attr.startswith("_")}
        assert public == {m for m in members if not m.startswith("_")}, (name, public ^ set(members))
        for member in public:
            assert ast.get_docstring(members[member]), f"{name}.{member} has no docstring"


def test_stub_constants_exist() -> None:
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    names = {node.target.id for node in tree.body if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}
    assert names == {"__version__", "_DEBUG_BUILD", "DEFAULT_SUPPORTED_TOKENS", "DEFAULT_MIN_VALUE_USD", "DEFAULT_POLLING_INTERVAL_MS", "MAX_DECIMALS"}
    for name in names:
        assert hasattr(_native, name), name


def test_stub_examples_hold() -> None:
    """The `>>>` examples of the stubs are run against the extension."""
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for name, node in stub_functions().items():
        doc = ast.get_docstring(node) or ""
        test = parser.get_doctest(doc, dict(vars(_native)), name, str(STUB), node.lineno)
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.failed == 0
    assert results.attempted > 20


def test_package_docstring_examples_hold() -> None:
    failures, attempted = doctest.testmod(depositkit, verbose=False, report=True)[:2]
    assert failures == 0 and attempted >= 3


def test_typed_marker_ships() -> None:
    assert pathlib.Path(depositkit.__file__).with_name("py.typed").is_file()
    assert STUB.is_file()


def test_import_in_a_fresh_interpreter() -> None:
    code = "import depositkit; print(depositkit.is_valid_evm_address('0x52908400098527886E0F7030069857D2E4169EE7'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout == "True\n"
    assert out.stderr == ""


def test_exceptions_module_imports_first() -> None:
    code = "import depositkit.exceptions as e; print(e.ConfigurationError.code)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout == "200\n"

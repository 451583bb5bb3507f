"""The dashboard in the package: ``strongtree app`` from any folder, with ``streamlit run``'s
options and the app's own settings; the wheel carries the page scripts, the entry script
and the assets; the ``app`` extra covers what the dashboard imports.

The slow test builds the wheel and installs it into a new virtual environment outside the
checkout, which sees the packages of the environment running the tests (a ``.pth`` file; not
the base interpreter's, which a fresh venv made by the README's command lacks), so that the
dependencies are found offline and the test stays within about a minute: it checks the
package, its data files and its command, not PyPI. Then it serves the app from an empty
folder and opens it in Chromium.
"""

from __future__ import annotations

import ast
import os
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
import zipfile
from pathlib import Path

import pytest
from processes import listening_hosts

from strongtree_core.cli import dashboard as cli_app
from strongtree_studio import launch

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
STUDIO = ROOT / "strongtree_studio"


def _name(requirement: str) -> str:
    for stop in "<>=[ ;":
        requirement = requirement.split(stop)[0]
    return requirement.strip().lower()


def test_the_wheel_takes_the_dashboard_with_its_scripts_and_assets():
    setuptools = PYPROJECT["tool"]["setuptools"]
    assert "strongtree_studio*" in setuptools["packages"]["find"]["include"]
    data = setuptools["package-data"]["strongtree_studio"]
    for pattern in data:
        assert list(STUDIO.glob(pattern)), pattern
    needed = [p for p in STUDIO.rglob("*") if p.is_file() and "__pycache__" not in p.parts
              and not (p.parent / "__init__.py").is_file()]  # outside the packages find lists: data, not modules
    needed += sorted((STUDIO / "entry" / "pages").glob("*.py"))  # the page scripts (a link to pages/ in a checkout)
    assert needed and all(any(p.relative_to(STUDIO).match(pattern) for pattern in data) for p in needed), needed


def test_the_app_extra_covers_what_the_dashboard_imports():
    imported = set()
    for path in STUDIO.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
    third_party = {n for n in imported if n not in sys.stdlib_module_names and not n.startswith("strongtree")}
    declared = {_name(r) for r in PYPROJECT["project"]["dependencies"]}
    extra = {_name(r) for r in PYPROJECT["project"]["optional-dependencies"]["app"]}
    distribution = {"sklearn": "scikit-learn"}
    missing = {n for n in third_party if distribution.get(n, n).lower() not in declared | extra}
    assert not missing, missing
    assert {"openpyxl", "pyarrow"} <= extra  # read by pandas for Excel and Parquet uploads


def test_the_packaged_settings_are_the_checkouts():
    """`strongtree app` passes the packaged file; `streamlit run app.py` reads .streamlit/config.toml."""
    packaged = tomllib.loads(launch.CONFIG.read_text(encoding="utf-8"))
    checkout = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert packaged == checkout
    assert packaged["server"]["maxUploadSize"] == 50 and packaged["runner"]["postScriptGC"] is False
    assert packaged["server"]["address"] == "localhost"  # the app holds uploaded tables: this machine only


def test_the_command_passes_the_settings_and_the_users_options_win():
    command = launch.streamlit_command(["--server.port", "8600", "--theme.base=dark", "--server.maxUploadSize", "5"])
    assert command[:4] == [sys.executable, "-m", "streamlit", "run"]
    script = command.index(str(launch.APP_SCRIPT))
    flags = command[4:script]
    assert "--client.toolbarMode=minimal" in flags and "--runner.postScriptGC=false" in flags
    assert "--theme.primaryColor=#1f6f8b" in flags
    assert not any(f.startswith(("--theme.base=", "--server.maxUploadSize=")) for f in flags)  # given by the user
    assert command[script + 1:] == ["--server.port", "8600", "--theme.base=dark", "--server.maxUploadSize", "5"]
    assert launch.APP_SCRIPT.is_file() and [p.name for p in launch.APP_SCRIPT.parent.glob("*.py")] == ["app.py"]


def test_the_package_folder_goes_first_on_the_path(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["/elsewhere", str(ROOT)]))
    assert launch.environment()["PYTHONPATH"].split(os.pathsep) == [str(ROOT), "/elsewhere"]


def test_help_says_what_the_command_does():
    out = subprocess.run([sys.executable, "-m", "strongtree_core", "app", "--help"], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "usage: strongtree app [streamlit run options]" in out.stdout
    assert "streamlit run" in " ".join(out.stdout.split())


def test_without_the_dashboards_packages_the_command_says_how_to_install_them(monkeypatch, capsys):
    real = cli_app.importlib.util.find_spec
    monkeypatch.setattr(cli_app.importlib.util, "find_spec", lambda name: None if name == "streamlit" else real(name))
    assert cli_app.run_app(["--server.port", "1"]) == 2
    assert capsys.readouterr().err.strip() == cli_app.MSG_NO_APP.format(missing="streamlit")


def test_streamlit_options_reach_the_app_not_argparse():
    assert cli_app.wants_app(["app", "--server.port", "8600"])
    assert not cli_app.wants_app(["app", "--help"]) and not cli_app.wants_app(["fit", "x.csv"])


# -- serving -------------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Served:
    """``command`` started in ``folder`` in its own process group, until the health check says ok."""

    def __init__(self, command: list[str], folder: Path, env: dict[str, str], port: int) -> None:
        self.log = folder / "app.log"
        self._out = open(self.log, "wb")
        self.process = subprocess.Popen(command, cwd=folder, env=env, stdout=self._out, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as response:
                    if response.read().decode().strip() == "ok":
                        return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise AssertionError("the app did not start:\n" + self.log.read_text(errors="replace")[-3000:])
            time.sleep(0.3)

    def close(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        except ProcessLookupError:
            pass
        self._out.close()


def open_in_chromium(url: str) -> str:
    """The Data page's text, from Chromium (skipped without Playwright or Chromium), reached from the Model
    page opened first by its address (the server's first request: Streamlit's old pages-folder router runs
    the page script alone, since pages/ sits beside the main script) through the sidebar's page list."""
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("no Chromium at /usr/bin/chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"])
        page = browser.new_page()
        page.goto(f"{url}/model")
        page.get_by_role("heading", name="Model", exact=True).wait_for(timeout=60_000)
        links = page.locator(".st-key-page_list a")
        links.nth(7).wait_for(timeout=60_000)  # the page list may be drawn after the heading
        titles = [t.strip().splitlines()[-1].strip() for t in links.all_inner_texts()]
        assert titles == ["Data", "Model", "Solve", "Tree", "Fairness & performance", "Trade-offs", "Runs", "Learn"]
        links.filter(has_text="Data").first.click()
        page.get_by_role("heading", name="Data", exact=True).wait_for(timeout=60_000)
        page.get_by_role("tab", name="Upload a file").click()
        page.get_by_text("per file").first.wait_for(timeout=30_000)
        text = page.locator('[data-testid="stMain"]').inner_text()
        browser.close()
    return text


def serve_and_check(strongtree: list[str], folder: Path, env: dict[str, str]) -> None:
    port = free_port()
    served = Served([*strongtree, "app", "--server.headless", "true", "--server.port", str(port),
                     "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"], folder, env, port)
    try:
        hosts = listening_hosts(served.process.pid)
        assert hosts and hosts <= {"127.0.0.1", "::1"}, hosts  # the packaged server.address: this machine only
        text = open_in_chromium(served.url)
        assert "50MB per file" in text, text  # the app's upload size (Streamlit's default is 200 MB)
        assert "This app has encountered an error" not in text
    finally:
        served.close()
    assert not list(folder.glob(".streamlit")) and not (folder / "pages").exists()


@pytest.mark.slow
@pytest.mark.timing
def test_strongtree_app_serves_the_dashboard_from_another_folder(tmp_path):
    """The checkout's command, started in an empty folder (no .streamlit/config.toml there)."""
    env = dict(os.environ, STRONGTREE_RUNS_DB=str(tmp_path / "runs.sqlite3"), PYTHONPATH=str(ROOT))
    serve_and_check([sys.executable, "-m", "strongtree_core"], tmp_path, env)


def new_environment_with_these_packages(venv: Path) -> Path:
    """A new virtual environment that sees this one's installed packages (not the base interpreter's,
    which a fresh ``python3.11 -m venv .venv`` does not have: ``--system-site-packages`` would take
    those): a ``.pth`` file lists this environment's site folders after the new one's own, so that a
    package installed there comes first.  Returns its interpreter."""
    import site
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    ours = [p for p in dict.fromkeys([*site.getsitepackages(), sysconfig.get_paths()["purelib"]]) if Path(p).is_dir()]
    (Path(purelib) / "this-environment.pth").write_text("".join(f"{p}\n" for p in ours), encoding="utf-8")
    return python


@pytest.mark.slow
@pytest.mark.timing
def test_the_wheel_in_a_new_environment_serves_the_dashboard(tmp_path):
    wheels = tmp_path / "wheels"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(wheels), str(ROOT)],
                           capture_output=True, text=True, timeout=300)  # the build backend pyproject asks for
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    wheel = next(wheels.glob("strongtree-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for inside in ("strongtree_studio/page/screens/data.py", "strongtree_studio/entry/app.py", "strongtree_studio/entry/pages/2_model.py",
                   "strongtree_studio/assets/config.toml", "strongtree_studio/assets/icon.png",
                   "strongtree_studio/assets/wordmark.svg", "strongtree_studio/assets/tree_panel.js",
                   "strongtree_core/datasets.py"):
        assert inside in names, inside
    venv = tmp_path / "venv"
    python = new_environment_with_these_packages(venv)
    install = subprocess.run([str(python), "-m", "pip", "install", "--no-index", f"{wheel}[app]"],
                             capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["STRONGTREE_RUNS_DB"] = str(tmp_path / "runs.sqlite3")
    where = subprocess.run([str(python), "-c", "import strongtree_studio, strongtree_core.datasets as d; "
                            "print(strongtree_studio.__file__); print(d.make_hiring(30).shape)"],
                           cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert where.returncode == 0, where.stderr
    assert str(venv) in where.stdout and str(ROOT) not in where.stdout  # the installed copy, not the checkout's
    assert "(30, 8)" in where.stdout
    strongtree = venv / "bin" / "strongtree"
    helped = subprocess.run([str(strongtree), "app", "--help"], cwd=folder, env=env, capture_output=True, text=True,
                            timeout=120)
    assert helped.returncode == 0 and "streamlit run" in helped.stdout, helped.stderr
    serve_and_check([str(strongtree)], folder, env)

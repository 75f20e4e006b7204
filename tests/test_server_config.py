"""Server settings (.streamlit/config.toml) and the deployment files (Dockerfile, deploy/).

The settings are read back through Streamlit itself (`streamlit config show` in a
subprocess), so a misspelt option name fails here instead of being ignored with a warning.
Docker cannot run on the test machines: the Dockerfile is checked by reading it, and the
files it copies are run as the app on their own.
"""

from __future__ import annotations

import ast
import fnmatch
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from streamlit import config as st_config

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / ".streamlit" / "config.toml"
DOCKERFILE = ROOT / "Dockerfile"
EXPECTED = {
    "server.enableXsrfProtection": True,
    "browser.gatherUsageStats": False,
    "client.showErrorDetails": "none",
    "client.toolbarMode": "viewer",
    "server.enableStaticServing": False,
    "client.showErrorLinks": "false",
    "browser.serverAddress": "localhost",
    "theme.base": "light",  # the charts' own look is light (attention_core/figures/look.py)
}


def _settings() -> dict[str, object]:
    """The config file as flat `section.option` keys."""
    with CONFIG.open("rb") as file:
        sections = tomllib.load(file)
    return {f"{section}.{name}": value for section, options in sections.items() for name, value in options.items()}


def _clean_env(home: Path) -> dict[str, str]:
    """The environment without STREAMLIT_* overrides, and a HOME without a global config."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("STREAMLIT_")}
    env["HOME"] = str(home)
    return env


# ---- .streamlit/config.toml --------------------------------------------------------------


def test_settings_for_a_public_classroom_server():
    settings = _settings()
    for key, value in EXPECTED.items():
        assert settings.get(key) == value, key
    # Lowered from Streamlit's 200 MB, with room above the few MB the largest page sends.
    assert 8 <= settings["server.maxMessageSize"] < 200
    assert 1 <= settings["server.maxUploadSize"] <= 5, "the app has no file uploader"


def test_every_setting_is_an_option_of_the_installed_streamlit_with_its_type():
    known = st_config._config_options_template
    for key, value in _settings().items():
        assert key in known, f"{key} is not an option of the installed Streamlit"
        option_type = known[key].type
        assert isinstance(value, option_type), (key, value, option_type)
    error_details = {choice.value for choice in st_config.ShowErrorDetailsConfigOptions}
    assert _settings()["client.showErrorDetails"] in error_details
    # Streamlit does not check this value; its allowed values are listed in the option's description.
    toolbar_modes = set(re.findall(r'- "(\w+)"', known["client.toolbarMode"].description))
    assert _settings()["client.toolbarMode"] in toolbar_modes, toolbar_modes


def _config_show(cwd: Path, home: Path) -> tuple[dict[str, tuple[str, str]], str]:
    """Run `streamlit config show`: {section.option: (value as printed, where it was set)}, stderr."""
    result = subprocess.run(
        [sys.executable, "-m", "streamlit", "config", "show"],
        cwd=cwd, env=_clean_env(home), capture_output=True, text=True, timeout=60, check=True,
    )
    shown: dict[str, tuple[str, str]] = {}
    section, where = "", ""
    for line in result.stdout.splitlines():
        if header := re.fullmatch(r"\[([\w.]+)\]", line.strip()):
            section = header.group(1)
        elif marker := re.fullmatch(r"# The value below was set in (.+)", line.strip()):
            where = marker.group(1)
        elif (option := re.fullmatch(r"(\w+) = (.*)", line)) and where:
            shown[f"{section}.{option.group(1)}"] = (option.group(2), where)
            where = ""
    return shown, result.stderr


def test_streamlit_reads_every_setting_from_the_file(tmp_path):
    shown, stderr = _config_show(ROOT, tmp_path)
    assert "not a valid config option" not in stderr, stderr
    for key, value in _settings().items():
        assert key in shown, f"`streamlit config show` does not list {key} as set"
        printed, where = shown[key]
        assert Path(where) == CONFIG, (key, where)
        assert tomllib.loads(f"v = {printed}")["v"] == value, (key, printed)


def test_a_misspelt_option_would_be_noticed(tmp_path):
    """The check above is not vacuous: Streamlit warns about an unknown name on stderr."""
    project = tmp_path / "project"
    (project / ".streamlit").mkdir(parents=True)
    (project / ".streamlit" / "config.toml").write_text("[server]\nmaxMesageSize = 16\n")
    shown, stderr = _config_show(project, tmp_path)
    assert "not a valid config option" in stderr
    assert "server.maxMessageSize" not in shown


# ---- Dockerfile --------------------------------------------------------------------------


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined, comments dropped."""
    logical, current = [], ""
    for line in DOCKERFILE.read_text().splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        if line.endswith("\\"):
            current += line[:-1].strip() + " "
        else:
            logical.append(current + line.strip())
            current = ""
    return [(text.split(maxsplit=1)[0].upper(), text.split(maxsplit=1)[1]) for text in logical]


def _copy_sources() -> list[tuple[str, str]]:
    pairs = []
    for name, args in _instructions():
        if name == "COPY":
            *sources, destination = [word for word in shlex.split(args) if not word.startswith("--")]
            pairs += [(source, destination) for source in sources]
    return pairs


def test_dockerfile_base_user_port_healthcheck_and_command():
    instructions = _instructions()
    names = [name for name, _ in instructions]
    assert instructions[0] == ("FROM", "python:3.11-slim")
    user = [args for name, args in instructions if name == "USER"]
    assert user and user[-1].split(":")[0] not in {"0", "root"}, "the app does not run as root"
    assert names.index("USER") < names.index("CMD")
    assert ("EXPOSE", "8501") in instructions
    healthcheck = next(args for name, args in instructions if name == "HEALTHCHECK")
    assert "urllib.request" in healthcheck and "http://127.0.0.1:8501/_stcore/health" in healthcheck
    assert "curl" not in healthcheck and "wget" not in healthcheck, "python:3.11-slim has neither"
    command = next(args for name, args in instructions if name == "CMD")
    assert ast.literal_eval(command) == [
        "streamlit", "run", "app.py", "--server.address", "0.0.0.0", "--server.headless", "true",
    ]
    assert any(name == "RUN" and "pip install" in args and "requirements.txt" in args for name, args in instructions)


def test_every_file_the_dockerfile_copies_exists_and_is_not_ignored():
    ignored = [
        line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    for source, _ in _copy_sources():
        path = ROOT / source
        assert path.exists(), f"COPY {source}: no such file"
        relative = source.rstrip("/")
        parents = [relative, *(str(parent) for parent in Path(relative).parents if str(parent) != ".")]
        for pattern in ignored:
            dropped = any(fnmatch.fnmatch(part, pattern) for part in parents)
            assert not dropped, f".dockerignore's {pattern} drops {source}"


def _copy_like_docker(target: Path) -> None:
    """Lay out /app as the Dockerfile's COPY lines do (caches left out)."""
    for source, destination in _copy_sources():
        path, where = ROOT / source, target / destination
        if path.is_dir():  # COPY dir/ dest/ copies the directory's contents into dest/
            shutil.copytree(path, where, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:  # COPY file dir/ keeps the name; COPY file path names the copy
            if destination.endswith("/"):
                where = where / path.name
            where.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, where)


def test_the_app_imports_only_local_packages_that_the_image_gets(tmp_path):
    image = tmp_path / "app"
    _copy_like_docker(image)
    local = {path.stem if path.is_file() else path.name for path in ROOT.iterdir()
             if (path.is_dir() and (path / "__init__.py").exists()) or path.suffix == ".py"}
    for file in image.rglob("*.py"):
        for node in ast.walk(ast.parse(file.read_text(), filename=str(file))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in local:
                    assert (image / top).exists() or (image / f"{top}.py").exists(), (
                        f"{file.relative_to(image)} imports {name}, which the Dockerfile does not copy"
                    )


def test_the_copied_files_run_as_the_app(tmp_path):
    """The image's /app on its own (no tests, no repository on sys.path) runs its first page."""
    image = tmp_path / "app"
    _copy_like_docker(image)
    script = (
        "from streamlit.testing.v1 import AppTest\n"
        "at = AppTest.from_file('app.py', default_timeout=120)\n"
        "at.run()\n"
        "assert not at.exception, [e.value for e in at.exception]\n"
        "assert at.get('plotly_chart'), 'the first page draws its charts'\n"
        "print('ran')\n"
    )
    env = _clean_env(tmp_path)
    env.pop("PYTHONPATH", None)
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=image, env=env, capture_output=True, text=True, timeout=180,
    )
    assert result.returncode == 0 and "ran" in result.stdout, result.stderr[-3000:]


# ---- deploy/ -----------------------------------------------------------------------------


def test_replica_script_is_valid_bash_and_fills_every_placeholder():
    script = ROOT / "deploy" / "run_replicas.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    assert os.access(script, os.X_OK), "deploy/run_replicas.sh is executable"
    template = (ROOT / "deploy" / "nginx.conf.template").read_text()
    placeholders = set(re.findall(r"@(\w+)@", template))
    assert placeholders == {"RUN_DIR", "LISTEN", "UPSTREAM_SERVERS"}
    for name in placeholders:
        assert f'"{name}=' in script.read_text(), f"run_replicas.sh does not fill @{name}@"


@pytest.mark.parametrize(
    "directive",
    [
        "proxy_http_version 1.1;",
        "proxy_set_header Upgrade $http_upgrade;",
        "proxy_set_header Connection $connection_upgrade;",
        "proxy_set_header Host $http_host;",
        "hash $affinity consistent;",
        "proxy_read_timeout 3600s;",
    ],
)
def test_nginx_template_has_websocket_and_stickiness_directives(directive):
    assert directive in (ROOT / "deploy" / "nginx.conf.template").read_text()


@pytest.mark.parametrize("name", ["arrow keys", "whole characters"])
def test_the_nginx_policy_allows_each_page_script_by_its_current_hash(name):
    """Any edit of one of the app's page scripts changes its hash: the policy must follow, or the
    proxied app loses it (Chromium blocks the script; tests/browser/test_server_proxy.py)."""
    from ui.keys import STAGE_KEYS_SCRIPT
    from ui.page_scripts import WHOLE_CHARACTERS_SCRIPT, csp_source

    script = {"arrow keys": STAGE_KEYS_SCRIPT, "whole characters": WHOLE_CHARACTERS_SCRIPT}[name]
    policy = next(
        line for line in (ROOT / "deploy" / "nginx.conf.template").read_text().splitlines()
        if "Content-Security-Policy" in line and not line.strip().startswith("#")
    )
    assert "script-src 'self' 'sha256-" in policy and csp_source(script) in policy

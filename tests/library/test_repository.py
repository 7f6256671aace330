"""Files that run elsewhere (Binder, GitHub Actions) and cannot be exercised here: checked statically."""

import importlib.resources
import json

import pytest
import yaml

from booktools.pins import pins
from tests.support.book import ROOT, pin


def test_lock_is_resolved_from_requirements_in():
    direct, locked = pins(ROOT / "requirements.in"), pins(ROOT / "requirements.txt")
    assert len(direct) >= 10 and len(locked) > len(direct)
    assert {name: locked.get(name) for name in direct} == direct, "run make lock"
    assert [f"{n}=={v}" for n, v in locked.items() if "+" in v] == [], "a local version label"
    assert "attnkit" not in locked  # the book's own package is installed from the checkout
    assert "make lock" in (ROOT / "requirements.txt").read_text()  # pip-compile's header


def test_binder_installs_the_same_pinned_environment_with_cpu_torch():
    lines = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    entries = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert entries == [
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "-r ../requirements.txt",
        "nbgitpuller==1.3.0",  # the student edition's Binder button pulls its notebooks
    ]
    # nbgitpuller's own requirements are pinned by the book's lock
    assert {"jupyter-server", "tornado"} <= set(pins(ROOT / "requirements.txt"))
    assert pin("torch")  # the lock pins PyTorch, whose CPU build the extra index serves
    post_build = (ROOT / "binder" / "postBuild").read_text()
    assert "python -m pip install --no-deps --editable ." in post_build  # attnkit
    assert "jupytext-config set-default-viewer" in post_build
    assert (ROOT / "binder" / "postBuild").stat().st_mode & 0o111, "postBuild must be executable"


def test_publish_workflow_builds_with_the_readme_command_and_deploys_the_html():
    """What the book relies on, not the workflow written out again: it builds with the README's
    command, publishes the notebooks with the command the launch buttons' test runs, deploys the
    html folder, and names no repository (GitHub Actions' variables do)."""
    text = (ROOT / ".github" / "workflows" / "publish.yml").read_text()
    workflow = yaml.safe_load(text)
    assert workflow[True]["push"]["branches"] == ["main"]  # YAML reads the key `on` as True
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    runs = [step["run"] for step in steps if "run" in step]
    assert {"make book", "make student"} <= set(runs)
    # with the environment make book created, where booktools is installed
    publish = ".venv/bin/python -m booktools.publish_notebooks _build/html"
    assert any(run.startswith(publish) for run in runs)
    (artifact,) = [s for s in steps if s.get("uses", "").startswith("actions/upload-pages")]
    assert artifact["with"]["path"] == "_build/html"
    assert "BOOK_REPOSITORY_URL" not in text and "github.com/" not in text


WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_every_workflow_follows_githubs_schema(workflow):
    """GitHub's schema of workflows, as check-jsonschema carries it: no network needed."""
    import check_jsonschema.builtin_schemas
    import jsonschema

    schema = json.loads(
        importlib.resources.files(check_jsonschema.builtin_schemas)
        .joinpath("vendor", "github-workflows.json")
        .read_text(encoding="utf-8")
    )
    # PyYAML reads the key `on` as True (YAML 1.1); GitHub, like the schema, reads a string
    loaded = {
        "on" if key is True else key: v for key, v in yaml.safe_load(workflow.read_text()).items()
    }
    errors = jsonschema.Draft7Validator(schema).iter_errors(loaded)
    assert [f"{list(e.absolute_path)}: {e.message}" for e in errors] == []


def test_the_tests_workflow_runs_what_ci_and_contributors_run():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "tests.yml").read_text())
    on = workflow[True]  # YAML reads the key `on` as True
    assert set(on) == {"push", "pull_request"}
    runs = {
        name: [s.get("run", "") for s in job["steps"]] for name, job in workflow["jobs"].items()
    }
    assert "make test-fast" in runs["library"] and "bash .ci/run" in runs["everything"]
    assert "--privileged" in workflow["jobs"]["everything"]["container"]["options"]

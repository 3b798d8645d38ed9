"""`hookviz export gradescope`: a real zip, unzipped the way Gradescope lays it out, real grading runs.

Gradescope extracts the zip into /autograder/source, copies run_autograder to /autograder,
puts the submission in /autograder/submission and reads /autograder/results/results.json.
HOOKVIZ_AUTOGRADER_ROOT moves /autograder into a temporary folder laid out the same way; a
correct, a wrong, a hostile and a missing submission are graded there, at once, and each
results.json is checked field by field against Gradescope's specification (docs/specs.md of
gradescope/autograder_samples). The autograder also runs from a Python whose packages live under a
home folder (which bubblewrap hides), as a course environment made in ~/course/.venv has them.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from hookviz.cli import main
from hookviz.grading.grade.batch import grade_folder
from hookviz.grading.platforms.gradescope_export import ExportOptions, export_gradescope
from tests import handgraded_course as handgraded
from tests.grading_env import private_jupyter_dirs
from tests.processes import stop_group
from tests.tiny_course import CASES, OPTIONS, TINY, WRONG_DOUBLE, student

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

VISIBILITIES = {"hidden", "after_due_date", "after_published", "visible"}
FORMATS = {"text", "html", "simple_format", "md", "ansi"}
TOP_LEVEL = {
    "score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
    "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard",
}  # fmt: skip
TEST_KEYS = {
    "score", "max_score", "status", "name", "name_format", "number", "output", "output_format",
    "tags", "visibility", "extra_data",
}  # fmt: skip
CHECKS = ["check_double", "check_shout", "check_triple"]
POINTS = [2.0, 1.0, 2.0]
HIDDEN_SOURCE = "assert double(-3) == -6"  # check_double's hidden test, never shown to students


def validate(document: dict) -> None:
    """Gradescope's results.json specification, field by field."""
    assert set(document) <= TOP_LEVEL, set(document) - TOP_LEVEL
    assert isinstance(document["score"], (int, float))
    assert isinstance(document["execution_time"], int) and document["execution_time"] >= 0
    assert document.get("output_format", "simple_format") in FORMATS
    assert isinstance(document.get("output", ""), str)
    assert document.get("visibility", "visible") in VISIBILITIES
    assert document.get("stdout_visibility", "hidden") in VISIBILITIES
    assert isinstance(document.get("extra_data", {}), dict)
    assert isinstance(document["tests"], list)
    for test in document["tests"]:
        assert set(test) <= TEST_KEYS, set(test) - TEST_KEYS
        assert isinstance(test["name"], str) and isinstance(test["number"], str)
        assert isinstance(test["score"], (int, float)) and isinstance(
            test["max_score"], (int, float)
        )
        assert 0 <= test["score"] <= test["max_score"]
        if "status" in test:  # optional: a question waiting for its hand grade has none
            assert test["status"] in ("passed", "failed")
            assert (test["status"] == "passed") == (test["score"] == test["max_score"])
        assert isinstance(test["output"], str) and test["output"]
        assert test["output_format"] in FORMATS
        assert test["visibility"] in VISIBILITIES
        assert isinstance(test["extra_data"], dict)
    assert document["score"] == sum(test["score"] for test in document["tests"])


def everyone_can_run(path: Path) -> bool:
    """True when any user can reach ``path`` (every folder above it searchable by others)."""
    return all(folder.stat().st_mode & stat.S_IXOTH for folder in [*path.parents][:-1])


@pytest.fixture(scope="module")
def open_folder():
    """A folder any user can reach, as /autograder is: the grading user must reach Python in it."""
    folder = Path(tempfile.mkdtemp(prefix="hookviz-gradescope-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def stand_in_python(venv: Path, site_folder: str) -> str:
    """A virtual environment of the system's Python of this version at ``venv``, whose packages
    come through a .pth file from ``site_folder``."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    system = shutil.which(version, path="/usr/bin:/usr/local/bin")
    assert system, (
        f"the grading user cannot reach {sys.executable}, and there is no /usr/bin/{version}"
    )
    subprocess.run([system, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.check_output(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
    ).strip()
    (Path(purelib) / "course-environment.pth").write_text(
        f"import site; site.addsitedir({site_folder!r})\n"
    )
    return str(python)


@pytest.fixture(scope="module")
def autograder_python(open_folder) -> str:
    """A Python the unprivileged grading user can start, with this environment's packages.

    On Gradescope it is setup.sh's virtual environment in /autograder. Here the test's own
    Python may live in a home folder closed to other users (pyenv in /root): then a virtual
    environment of the system's Python of the same version, reading this environment's
    site-packages, stands in for it.
    """
    if all(everyone_can_run(Path(p)) for p in (sys.executable, sys.base_prefix, sys.prefix)):
        return sys.executable
    return stand_in_python(open_folder / "venv", sysconfig.get_paths()["purelib"])


@pytest.fixture(scope="module")
def home_python(open_folder) -> Iterator[str]:
    """A Python whose packages live under a home folder, as a course environment made in
    ~/course/.venv has them: bubblewrap hides home folders, and must show that one again.

    Its site-packages is a folder in /home (open to others, as Ubuntu's homes are) or, where
    /home is not writable, in this user's home; a .pth there reads this environment's packages.
    """
    parent = Path("/home") if os.access("/home", os.W_OK) else Path.home()
    home = Path(tempfile.mkdtemp(prefix="hookviz-home-test-", dir=parent))
    home.chmod(0o755)
    site = home / ".venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    site.chmod(0o755)
    ours = sysconfig.get_paths()["purelib"]
    (site / "course.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    yield stand_in_python(open_folder / "home-venv", str(site))
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> Path:
    """`hookviz export gradescope` on a copy of the tiny assignment (its solution graded first)."""
    folder = tmp_path_factory.mktemp("export")
    shutil.copy(TINY, folder / "tiny.ipynb")
    assert (
        main(
            [
                "export",
                "gradescope",
                str(folder / "tiny.ipynb"),
                "-o",
                str(folder / "autograder.zip"),
            ]
        )
        == 0
    )
    return folder / "autograder.zip"


def lay_out(zip_path: Path, root: Path, notebook=None, name: str = "tiny.ipynb") -> Path:
    """Gradescope's layout: the zip in source/ (modes kept), run_autograder beside, the submission."""
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as archive:
        for info in archive.infolist():
            target = root / "source" / info.filename
            target.write_bytes(archive.read(info))
            target.chmod(info.external_attr >> 16 & 0o777)
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    (root / "results").mkdir()
    if notebook is not None:
        nbformat.write(notebook, root / "submission" / name)
    return root


def run_all(roots: list[Path], python: str) -> list[subprocess.CompletedProcess]:
    """Run every root's run_autograder at once, as Gradescope would (cwd: the root)."""
    running = []
    try:
        for root in roots:
            env = {**os.environ, "HOOKVIZ_AUTOGRADER_ROOT": str(root), "HOOKVIZ_PYTHON": python}
            running.append(
                subprocess.Popen(
                    [str(root / "run_autograder")],
                    cwd=root,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                    start_new_session=True,
                )
            )
        outputs = [process.communicate(timeout=300)[0] for process in running]
    finally:
        for process in running:
            if process.poll() is None:
                stop_group(process.pid)
    return [
        subprocess.CompletedProcess(process.args, process.returncode, output)
        for process, output in zip(running, outputs, strict=True)
    ]


SNOOP = """\
import os

def double(x):
    root = {root!r}
    try:
        with open(os.path.join(root, "source", "tiny.ipynb")) as handle:
            print("source: READ", handle.read()[:4000])
    except OSError:
        print("source: closed")
    try:
        with open(os.path.join(root, "results", "results.json"), "w") as handle:
            handle.write('{{"score": 999, "tests": []}}')
        print("results: WRITTEN")
    except OSError:
        print("results: closed")
    return 2 * x
"""
MONKEYPATCH = (
    "from hookviz.course import checks\n"
    "checks.difference = lambda actual, expected, **kwargs: None\n\n"
    "def triple(x):\n    return 0\n"
)


@pytest.fixture(scope="module")
def graded(autograder_zip, autograder_python, open_folder, tmp_path_factory):
    """A correct, a wrong (under bubblewrap), a hostile and a missing submission, graded at once."""
    bwrap_zip = tmp_path_factory.mktemp("bwrap") / "autograder.zip"
    export_gradescope(TINY, bwrap_zip, ExportOptions(sandbox="bwrap"))
    roots = {name: open_folder / name for name in ("correct", "wrong", "hostile", "missing")}
    lay_out(autograder_zip, roots["correct"], CASES["correct"])
    lay_out(bwrap_zip, roots["wrong"], student({"double": WRONG_DOUBLE}), name="my work.ipynb")
    hostile = student({"double": SNOOP.format(root=str(roots["hostile"])), "triple": MONKEYPATCH})
    lay_out(autograder_zip, roots["hostile"], hostile)
    lay_out(autograder_zip, roots["missing"])
    (roots["missing"] / "submission" / "notes.txt").write_text("forgot the notebook")
    runs = dict(zip(roots, run_all(list(roots.values()), autograder_python), strict=True))
    documents = {}
    for name, root in roots.items():
        assert runs[name].returncode == 0, runs[name].stdout
        documents[name] = json.loads((root / "results" / "results.json").read_text())
    return roots, runs, documents


def test_the_zip_holds_what_gradescope_asks_for_at_its_root(autograder_zip) -> None:
    with zipfile.ZipFile(autograder_zip) as archive:
        modes = {info.filename: info.external_attr >> 16 & 0o777 for info in archive.infolist()}
        setup = archive.read("setup.sh").decode()
        config = json.loads(archive.read("hookviz-autograder.json"))
        constraints = archive.read("torch-cpu.txt").decode()
        wheel = zipfile.ZipFile(io.BytesIO(archive.read("hookviz-0.1.0-py3-none-any.whl")))
        assert archive.read("tiny.ipynb") == TINY.read_bytes()
    assert modes == {
        "setup.sh": 0o755,
        "run_autograder": 0o755,
        "tiny.ipynb": 0o644,
        "torch-cpu.txt": 0o644,
        "hookviz-autograder.json": 0o644,
        "hookviz-0.1.0-py3-none-any.whl": 0o644,
    }
    # torch the way the course pins it: through its constraints file, then hookviz from the wheel.
    repository = Path(__file__).resolve().parents[3]
    assert constraints == (repository / "constraints" / "torch-cpu.txt").read_text()
    assert '-c "$SOURCE/torch-cpu.txt" torch' in setup
    assert '-c "$SOURCE/torch-cpu.txt" "$SOURCE/hookviz-0.1.0-py3-none-any.whl"' in setup
    assert subprocess.run(["bash", "-n"], input=setup, text=True).returncode == 0
    assert config["sandbox"] == "user" and config["hidden_visibility"] == "after_published"
    # The wheel: every file of the package, hashes that match, what grading needs declared.
    names = set(wheel.namelist())
    assert "hookviz/grading/run/plugin/hookviz_grading_plugin.py" in names
    # a course's hints travel in its notebooks (stamped by hookviz build), not in the package
    assert not any(name.endswith(".toml") for name in names)
    assert not any("__pycache__" in name for name in names)
    metadata = wheel.read("hookviz-0.1.0.dist-info/METADATA").decode()
    for requirement in ("torch>=2.1", "nbval>=0.11", "ipykernel>=6", "pytest>=7"):
        assert f"Requires-Dist: {requirement}" in metadata
    for line in wheel.read("hookviz-0.1.0.dist-info/RECORD").decode().splitlines():
        name, digest, size = line.split(",")
        if name.endswith("RECORD"):
            continue
        data = wheel.read(name)
        expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert (digest, int(size)) == (f"sha256={expected}", len(data)), name


def test_the_same_export_gives_the_same_bytes(tmp_path: Path) -> None:
    first = export_gradescope(TINY, tmp_path / "a.zip", ExportOptions()).path.read_bytes()
    second = export_gradescope(TINY, tmp_path / "b.zip", ExportOptions()).path.read_bytes()
    assert first == second


def test_an_assignment_whose_solution_fails_its_checks_is_not_exported(
    tmp_path: Path, capsys
) -> None:
    notebook = nbformat.read(TINY, as_version=4)
    check = next(
        c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "check_shout"
    )
    check.outputs[0]["text"] = check.outputs[0]["text"].replace(
        "✓ shout works", "✓ shout works well"
    )
    nbformat.write(notebook, tmp_path / "tiny.ipynb")
    code = main(
        ["export", "gradescope", str(tmp_path / "tiny.ipynb"), "-o", str(tmp_path / "a.zip")]
    )
    assert code == 2
    assert "check_shout" in capsys.readouterr().err
    assert not (tmp_path / "a.zip").exists()
    assert main(["export", "gradescope", str(tmp_path / "none.ipynb")]) == 2
    assert "none.ipynb does not exist; pass the instructor's notebook" in capsys.readouterr().err


def test_a_correct_submission_scores_full_marks(graded) -> None:
    roots, runs, documents = graded
    document = documents["correct"]
    validate(document)
    assert document["score"] == 5, (json.dumps(document, indent=1), runs["correct"].stdout)
    assert [t["name"] for t in document["tests"]] == CHECKS
    assert [t["number"] for t in document["tests"]] == ["1", "2", "3"]
    assert [(t["score"], t["max_score"]) for t in document["tests"]] == list(
        zip(POINTS, POINTS, strict=True)
    )
    assert [t["status"] for t in document["tests"]] == ["passed"] * 3
    # Only check_double has hidden tests: its details wait for publication; the others are visible.
    assert [t["visibility"] for t in document["tests"]] == ["after_published", "visible", "visible"]
    assert "check_double" in document["output"] and "publishes the grades" in document["output"]
    assert document["stdout_visibility"] == "hidden"  # the log shows expected outputs
    assert document["extra_data"]["status"] == "ok" and document["extra_data"]["flags"] == []
    assert document["extra_data"]["sandbox"] == "user"
    assert "check_double: 2/2 passed" in runs["correct"].stdout


def test_a_wrong_answer_loses_its_check_and_is_told_a_hidden_test_failed(graded) -> None:
    document = graded[2]["wrong"]
    validate(document)
    assert document["score"] == 3
    double = document["tests"][0]
    assert (double["name"], double["score"], double["status"]) == ("check_double", 0, "failed")
    assert double["visibility"] == "after_published" and double["output_format"] == "md"
    assert (
        "hidden test failed" in double["output"] and "double(-3) should be -6" in double["output"]
    )
    assert "Your output:" in double["output"]
    assert [t["status"] for t in document["tests"][1:]] == ["passed", "passed"]
    # The notebook was not named tiny.ipynb: graded all the same, and the student is told.
    assert "graded my work.ipynb, the only notebook (expected tiny.ipynb)" in document["output"]
    assert document["extra_data"]["sandbox"] == "bwrap"


def test_no_output_shows_the_score_expected_outputs_or_hidden_tests(graded) -> None:
    for name, document in graded[2].items():
        texts = [document.get("output", "")] + [t["output"] for t in document["tests"]]
        for text in texts:
            assert "Score:" not in text, (
                name
            )  # a delayed check's points would show through the total
            assert "Expected output" not in text and HIDDEN_SOURCE not in text, name


def test_a_hostile_submission_reads_no_instructor_file_forges_nothing_and_is_flagged(
    graded,
) -> None:
    roots, runs, documents = graded
    document = documents["hostile"]
    validate(document)  # its own results.json was not replaced by the forged one
    double, shout, triple = document["tests"]
    assert "source: closed" in double["output"] and "results: closed" in double["output"]
    assert "source: READ" not in double["output"] and "results: WRITTEN" not in double["output"]
    assert double["score"] == 0  # its snooping printed lines the check does not expect
    assert shout["score"] == 1
    assert (triple["score"], triple["extra_data"]["outcome"]) == (0, "tampered")
    assert document["score"] == 1
    assert "grader (triple)" in document["extra_data"]["flags"]
    assert "flag: grader (triple)" in runs["hostile"].stdout
    for folder in ("source", "results", "submission"):  # closed to the grading user
        assert stat.S_IMODE((roots["hostile"] / folder).stat().st_mode) == 0o700


def test_a_submission_without_the_notebook_scores_zero_and_says_what_to_upload(graded) -> None:
    document = graded[2]["missing"]
    validate(document)
    assert document["score"] == 0 and document["extra_data"]["status"] == "missing"
    assert "no notebook was uploaded: upload tiny.ipynb" in document["output"]
    assert [t["score"] for t in document["tests"]] == [0, 0, 0]


def test_a_broken_setup_writes_no_results_and_fails(
    autograder_zip, autograder_python, open_folder
) -> None:
    root = lay_out(autograder_zip, open_folder / "broken", CASES["correct"])
    (root / "source" / "hookviz-autograder.json").unlink()
    (run,) = run_all([root], autograder_python)
    assert run.returncode == 1
    assert "a fault of the set-up, not of the submission" in run.stdout
    assert not (root / "results" / "results.json").exists()  # Gradescope reports its own failure


def test_a_python_whose_packages_are_under_a_home_folder_grades_in_both_sandboxes(
    autograder_zip, home_python, open_folder, tmp_path_factory
) -> None:
    bwrap_zip = tmp_path_factory.mktemp("home-bwrap") / "autograder.zip"
    export_gradescope(TINY, bwrap_zip, ExportOptions(sandbox="bwrap"))
    user = lay_out(autograder_zip, open_folder / "home-user", CASES["correct"])
    bwrap = lay_out(bwrap_zip, open_folder / "home-bwrap", student({"double": WRONG_DOUBLE}))
    runs = run_all([user, bwrap], home_python)
    assert [run.returncode for run in runs] == [0, 0], [run.stdout for run in runs]
    documents = [
        json.loads((root / "results" / "results.json").read_text()) for root in (user, bwrap)
    ]
    for document in documents:
        validate(document)
    assert [(d["score"], d["extra_data"]["sandbox"]) for d in documents] == [
        (5, "user"),
        (3, "bwrap"),
    ]


def test_a_zip_with_hand_grades_scores_them_for_their_student(
    autograder_python, open_folder, tmp_path
) -> None:
    """`export gradescope --manual-grades OUT`, end to end: the grades merged into OUT ride in
    the zip, and run_autograder adds the submitter's (named by submission_metadata.json) to the
    checks it grades; a question still waiting for its grade is neither passed nor failed."""
    assignment, exercise = handgraded.build(tmp_path)
    students = tmp_path / "submissions"
    handgraded.hand_in(exercise, students)
    out = tmp_path / "out"
    with private_jupyter_dirs(tmp_path / "jupyter"):
        grade_folder(students, assignment, out, OPTIONS, stream=io.StringIO())
    filled = handgraded.write_csv(
        tmp_path / "filled.csv", [["ada", "explain", "2.5", "Clear.", "3"]]
    )
    assert main(["merge-manual", str(out), str(filled)]) == 0
    zip_path = tmp_path / "autograder.zip"
    command = ["export", "gradescope", str(assignment), "-o", str(zip_path)]
    assert main([*command, "--manual-grades", str(out)]) == 0
    ada = nbformat.read(students / "ada" / "handgraded.ipynb", as_version=4)
    root = lay_out(zip_path, open_folder / "hand-graded", ada, name="handgraded.ipynb")
    (root / "submission_metadata.json").write_text(
        json.dumps({"users": [{"email": "ada@uni.example", "name": "Ada L."}]})
    )
    [run] = run_all([root], autograder_python)
    assert run.returncode == 0, run.stdout
    document = json.loads((root / "results" / "results.json").read_text())
    validate(document)
    tests = {t["name"]: t for t in document["tests"]}
    assert (tests["check_count"]["score"], tests["check_count"]["status"]) == (2, "passed")
    assert (tests["explain"]["score"], tests["explain"]["max_score"]) == (2.5, 3)
    assert "Comment: Clear." in tests["explain"]["output"]
    assert tests["sorted_words"]["score"] == 0 and "status" not in tests["sorted_words"]
    assert document["score"] == 2 + 2.5

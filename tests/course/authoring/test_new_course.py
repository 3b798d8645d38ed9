"""`hookviz init`: a new course in any folder, never over an old one; `--from-nbgrader` writes
down an nbgrader course's defaults. (Run end to end, from the wheel: test_course_from_the_wheel.)"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import tomllib

from hookviz.cli import EXIT_ERROR, EXIT_OK, main
from hookviz.course.authoring.stamp import load_course_config
from hookviz.course.content import content_of, prediction_tables
from hookviz.course.hint_files import parse_hints


def hookviz(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_init_writes_a_course_whose_parts_fit_together(tmp_path: Path) -> None:
    code, out, _ = hookviz("init", str(tmp_path / "course"), "--no-run")
    assert code == EXIT_OK
    root = tmp_path / "course"
    written = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    assert written == {
        "course.toml",
        ".gitignore",
        "README.md",
        "hints/01-first-steps.toml",
        "predictions/00-start-here.toml",
        "solutions/01-first-steps.ipynb",
        "notebooks/00-start-here.ipynb",
    }
    config = load_course_config(root)
    assert (config.repository, config.colab, config.defaults) == ("", False, "")
    toml = (root / "course.toml").read_text()
    assert tomllib.loads(toml) == {
        "course": {},
        "colab": {"enabled": False},
        "content": {"hints": "hints", "predictions": "predictions"},
    }
    assert toml.count("# repository") == 1 and "any git host" in toml  # explained, not set
    hints = parse_hints((root / "hints" / "01-first-steps.toml").read_text(), "01-first-steps")
    assert set(hints["count_parameters"]) == {"numel"}
    assert set(prediction_tables(content_of(root).predictions)) == {"start-apply-first"}
    for name in ("solutions/01-first-steps.ipynb", "notebooks/00-start-here.ipynb"):
        assert "hookviz.course.content.load(" in (root / name).read_text()  # packed for Colab
    assert "exercises/01-first-steps.ipynb" in (root / "README.md").read_text()


def test_init_never_writes_over_a_course(tmp_path: Path) -> None:
    (tmp_path / "course.toml").write_text("# mine\n")
    code, _, err = hookviz("init", str(tmp_path), "--no-run")
    assert code == EXIT_ERROR and "already holds course.toml" in err and "never writes over" in err
    assert (tmp_path / "course.toml").read_text() == "# mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["course.toml"]


def test_from_nbgrader_writes_down_the_defaults_and_only_in_an_nbgrader_course(tmp_path):
    code, _, err = hookviz("init", str(tmp_path), "--from-nbgrader")
    assert code == EXIT_ERROR and "is not an nbgrader course" in err
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    assert load_course_config(tmp_path).defaults.startswith("no course.toml in")
    code, out, _ = hookviz("init", str(tmp_path), "--from-nbgrader")
    assert code == EXIT_OK and "wrote" in out
    assert load_course_config(tmp_path).defaults == ""
    code, _, err = hookviz("init", str(tmp_path), "--from-nbgrader")
    assert code == EXIT_ERROR and "already exists" in err
    code, _, err = hookviz("init", str(tmp_path / "sub"), "--no-run")  # init in a plain folder
    assert code == EXIT_OK


def test_a_course_without_a_repository_builds_and_colab_asks_for_github(tmp_path: Path) -> None:
    hookviz("init", str(tmp_path), "--no-run")
    toml = tmp_path / "course.toml"
    toml.write_text(toml.read_text().replace("enabled = false", "enabled = true"))
    code, _, err = hookviz("build", "--root", str(tmp_path))
    assert code == EXIT_ERROR and "[colab] enabled needs [course] repository on GitHub" in err

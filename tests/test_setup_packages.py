"""`make test` installs the Debian packages the whole suite needs, says so, and the README
lists them (issue 34, Deliver 7): the scripts' `apt-get install` lines are the oracle."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _recipe(target: str) -> list[str]:
    """The recipe lines of a Makefile target."""
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    recipe = []
    for line in lines[at + 1 :]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip())
    return recipe


def _installed_by(script: str) -> list[str]:
    """The packages a script's `apt-get install` line names."""
    text = (ROOT / script).read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if "apt-get install" in x)
    return [w for w in line.split("apt-get install", 1)[1].split() if not w.startswith("-")]


def test_make_test_installs_says_and_readme_lists_the_debian_packages():
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^test:.*\bsystem-packages\b", make, re.M), "make test skips the packages"
    recipe = _recipe("system-packages")
    scripts = [m.group(0) for line in recipe for m in [re.search(r"scripts/\S+\.sh", line)] if m]
    assert scripts == ["scripts/install-chromium.sh", "scripts/install-texlive.sh"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for script in scripts:
        packages = _installed_by(script)
        assert packages, script
        # One line before the install, printed only when the tool is missing, names each package.
        said = recipe[recipe.index(next(x for x in recipe if script in x)) - 1]
        assert said.startswith("@command -v") and '|| echo "make test: installing' in said
        for package in packages:
            assert package in said, (script, package)
            assert f"`{package}`" in readme, f"README does not list {package}"

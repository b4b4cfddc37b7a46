"""What a release carries beside the code: licence, citation, changelog, type marker, metadata.

Building a wheel needs the package index (build isolation), so these tests read
what setup.cfg declares and check that the files it names exist and agree with
each other; the wheel itself then holds ``dist-info/licenses/LICENSE`` and
``emulator/py.typed``.
"""

from __future__ import annotations

import configparser
from pathlib import Path

import yaml

from emulator.version import __version__

ROOT = Path(__file__).resolve().parents[1]


def setup_cfg() -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return config


def listed(value: str) -> list[str]:
    return [line.strip() for line in value.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_the_licence_file_is_declared_and_is_the_licence_named() -> None:
    config = setup_cfg()
    assert config["metadata"]["license"] == "MIT"
    assert listed(config["metadata"]["license_files"]) == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "lbemu developers" in text
    assert "License :: OSI Approved :: MIT License" in listed(config["metadata"]["classifiers"])


def test_the_type_marker_is_packaged() -> None:
    assert (ROOT / "emulator" / "py.typed").is_file()
    assert "py.typed" in setup_cfg()["options.package_data"]["emulator"]


def test_python_versions_agree_with_python_requires() -> None:
    config = setup_cfg()
    assert config["options"]["python_requires"] == ">=3.10"
    versions = [line.rsplit("::", 1)[1].strip() for line in listed(config["metadata"]["classifiers"])
                if line.startswith("Programming Language :: Python :: 3.")]
    assert versions == ["3.10", "3.11", "3.12"]


def test_citation_is_cff_1_2_with_the_package_version() -> None:
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    # The keys CFF 1.2.0's schema requires, and the forms it allows for them.
    assert citation["cff-version"] == "1.2.0"
    assert isinstance(citation["message"], str) and citation["message"]
    assert isinstance(citation["title"], str) and "lbemu" in citation["title"]
    assert citation["authors"] == [{"name": "lbemu developers"}]  # an entity: no invented people
    assert citation["version"] == __version__
    assert citation["license"] == setup_cfg()["metadata"]["license"]
    assert "doi" not in citation and "identifiers" not in citation


def test_changelog_has_the_current_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog")
    assert f"## {__version__}" in text

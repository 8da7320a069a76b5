"""The offline map context layer is package data: found through importlib.resources, and in a
wheel built from the project (so a non-editable ``pip install .`` draws district boundaries)."""

from __future__ import annotations

import json
import zipfile
from importlib import resources
from pathlib import Path

import pytest

from analysis.geo.mapdata import context
from tests.helpers import build_wheel

ROOT = Path(__file__).resolve().parents[2]
RESOURCE = "china-districts.geojson"


def test_context_layer_is_a_package_resource() -> None:
    found = resources.files("analysis.geo.mapdata") / RESOURCE
    assert found.is_file()
    data = json.loads(found.read_text(encoding="utf-8"))
    cities = {f["properties"]["city"] for f in data["features"]}
    assert cities == {"Beijing", "Shanghai", "Hangzhou"}
    assert len(context.districts()) == len(data["features"]) == 45
    assert (resources.files("analysis.geo.mapdata") / "china-districts.LICENSE.txt").is_file()
    assert not (ROOT / "data" / "context" / RESOURCE).exists()  # one copy, inside the package


def test_wheel_ships_the_context_layer(tmp_path: Path) -> None:
    pytest.importorskip("setuptools")
    wheel = build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    assert f"analysis/geo/mapdata/{RESOURCE}" in names
    assert "analysis/geo/mapdata/china-districts.LICENSE.txt" in names
    shipped = json.loads(zipfile.ZipFile(wheel).read(f"analysis/geo/mapdata/{RESOURCE}"))
    assert len(shipped["features"]) == 45

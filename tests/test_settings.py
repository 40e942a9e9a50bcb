from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import Field

from toolrelay._settings import FrozenMapping, RelativePath, Settings, read_table, read_toml
from toolrelay.exceptions import ConfigurationError, LoadError


class Limits(Settings):
    retries: int = Field(3, ge=0, le=5)
    timeout: float | None = Field(None, gt=0, description="seconds")


class Server(Settings):
    name: str
    log: RelativePath | None = None
    env: FrozenMapping[str] = Field(default_factory=dict)


class File(Settings):
    limits: Limits = Limits()
    servers: tuple[Server, ...] = Field((), strict=False)
    tools: dict[str, Limits] = Field(default_factory=dict)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({"limits": {"retries": 9}}, "[app.limits] retries: must be between 0 and 5 (got 9)"),
        (
            {"limits": {"timeout": 0}},
            "[app.limits] timeout: must be > 0, seconds (got 0)",
        ),
        ({"limits": {"retries": "2"}}, '[app.limits] retries: must be a whole number (got "2")'),
        ({"limits": 3}, "[app.limits]: must be a table (got 3)"),
        (
            {"limits": {"retry": 1}},
            "[app.limits] retry: unknown key; expected one of retries, timeout",
        ),
        ({"servers": [{"name": "a"}, {}]}, "[[app.servers]] #2 name: required"),
        ({"servers": {"name": "a"}}, "[[app.servers]]: must be an array of tables"),
        (
            {"servers": [{"name": "a", "env": {"K": 1}}]},
            "[[app.servers]] #1 env.K: must be a string (got 1)",
        ),
        (
            {"tools": {"pay.*": {"retries": -1}}},
            '[app.tools."pay.*"] retries: must be between 0 and 5 (got -1)',
        ),
        (
            {"tools": {"pay": {"refund": {"retries": 1}}}},
            "[app.tools.pay.refund]: unknown table; expected one of retries, timeout "
            '(a name with dots needs quotes: [app.tools."pay.refund"])',
        ),
        (
            {"colour": "red", "limits": {"retries": True}},
            "[app.limits] retries: must be a whole number (got true); "
            "[app] colour: unknown key; expected one of limits, servers, tools",
        ),
    ],
)
def test_a_file_s_problems_name_the_table_and_the_key(data: object, reason: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        read_table(File, data, table=("app",))
    assert str(caught.value) == reason


def test_a_model_built_in_python_names_its_field_and_the_whole_place() -> None:
    with pytest.raises(ConfigurationError) as caught:
        Limits(retries=9)
    assert str(caught.value) == "Limits.retries: must be between 0 and 5 (got 9)"
    with pytest.raises(ConfigurationError) as nested:
        File(servers=[{"name": 3}])  # type: ignore[list-item]
    assert str(nested.value) == "File.servers[0].name: must be a string (got 3)"


def test_paths_are_relative_to_the_file_and_mappings_read_only(tmp_path: Path) -> None:
    read = read_table(Server, {"name": "a", "log": "logs/a.jsonl"}, folder=tmp_path)
    assert read.log == str(tmp_path / "logs/a.jsonl")
    assert Server(name="a", log="logs/a.jsonl").log == "logs/a.jsonl"
    with pytest.raises(TypeError):
        Server(name="a", env={"K": "v"}).env["K"] = "w"  # type: ignore[index]


def test_read_toml_names_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.toml"
    with pytest.raises(LoadError, match="cannot read the file: No such file") as caught:
        read_toml(missing)
    assert caught.value.source == str(missing)
    broken = tmp_path / "broken.toml"
    broken.write_text("[app\n", encoding="utf-8")
    with pytest.raises(LoadError, match="not valid TOML"):
        read_toml(broken)
    latin = tmp_path / "latin.toml"
    latin.write_bytes('name = "café"\n'.encode("latin-1"))
    with pytest.raises(LoadError, match="not valid TOML"):
        read_toml(latin)

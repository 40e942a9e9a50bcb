"""Golden JSON Schemas: the full schema of each signature is compared to an exact dict."""

import enum
import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from toolrelay.exceptions import ToolArgumentError, ToolDefinitionError
from toolrelay.tools import FunctionTool, ToolContext, tool, tools_from
from toolrelay.tools._schema import (
    JSON_SCHEMA_DIALECT,
    build_function_schema,
    build_model_function_schema,
)

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def schema_of(fn: Any) -> dict[str, Any]:
    return dict(FunctionTool.from_function(fn).definition.input_schema)


# --- declarations used by the golden tests ----------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Address(BaseModel):
    street: str
    city: str = Field(description="City name")


class Customer(BaseModel):
    """A customer."""

    name: str
    address: Address


class Item(BaseModel):
    sku: str
    quantity: int = 1


@dataclass
class Point:
    x: float
    y: float = 0.0


class Node(BaseModel):
    value: int
    children: list["Node"] = []


class RefundRequest(BaseModel):
    """Refund an order."""

    order_id: str = Field(description="The order to refund")
    reason: Literal["damaged", "late", "other"] = "other"


@tool
def simple(name: str, count: int, ratio: float, active: bool) -> None:
    """Simple types."""


@tool
def optional_args(query: str, limit: int = 10, cursor: str | None = None) -> None:
    """Optional and default values."""


@tool
def nullable_without_default(note: str | None) -> None:
    """Optional type but no default: still required."""


@tool
def create_customer(customer: Customer) -> None:
    """Nested models."""


@tool
def paint(color: Color) -> None:
    """Enums."""


@tool
def convert(unit: Literal["c", "f"] = "c") -> None:
    """Literals."""


@tool
def add_items(items: list[Item]) -> None:
    """Lists of models."""


@tool
def schedule(at: datetime, tags: dict[str, int]) -> None:
    """Datetimes and dicts."""


@tool
def plot(where: Point) -> None:
    """Dataclasses."""


@tool
def with_context(greeting: str, context: ToolContext) -> None:
    """Context parameters are hidden."""


@tool
def with_optional_context(greeting: str, context: ToolContext | None = None) -> None:
    """Optional context parameters are hidden too."""


@tool
def annotated(limit: Annotated[int, Field(ge=1, le=50, description="How many")] = 10) -> None:
    """Annotated constraints and descriptions."""


@tool(required=["limit"])
def required_override(query: str, limit: int = 10) -> None:
    """Required override."""


@tool
def tree(root: Node) -> None:
    """Recursive models."""


@tool
def google_style(city: str, days: int = 1) -> None:
    """Forecast for a city.

    Uses the national weather service.

    Args:
        city: City name, e.g. "Paris".
        days: Number of days
            to forecast.

    Returns:
        The forecast.
    """


@tool
def numpy_style(city: str, days: int = 1) -> None:
    """Forecast for a city.

    Parameters
    ----------
    city : str
        City name, e.g. "Paris".
    days : int, optional
        Number of days to forecast.
    """


@tool
def sphinx_style(city: str, days: int = 1) -> None:
    """Forecast for a city.

    :param city: City name, e.g. "Paris".
    :param days: Number of days to forecast.
    :returns: The forecast.
    """


class Library:
    @tool
    def search(self, text: str, top_k: int = 5) -> list[str]:
        """Search books."""
        return []

    @staticmethod
    @tool
    def genres(prefix: str = "") -> list[str]:
        """List genres."""
        return []


FORECAST = {
    "$schema": DIALECT,
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": 'City name, e.g. "Paris".'},
        "days": {"type": "integer", "default": 1, "description": "Number of days to forecast."},
    },
    "required": ["city"],
    "additionalProperties": False,
}


# --- golden schemas ---------------------------------------------------------------------------


def test_dialect_constant() -> None:
    assert JSON_SCHEMA_DIALECT == DIALECT


def test_simple_types() -> None:
    assert schema_of(simple) == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "count": {"type": "integer"},
            "ratio": {"type": "number"},
            "active": {"type": "boolean"},
        },
        "required": ["name", "count", "ratio", "active"],
        "additionalProperties": False,
    }


def test_optional_and_default() -> None:
    assert schema_of(optional_args) == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer", "default": 10},
            "cursor": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["query"],
        "additionalProperties": False,
    }


def test_optional_type_without_default_is_required() -> None:
    assert schema_of(nullable_without_default) == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {"note": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
        "required": ["note"],
        "additionalProperties": False,
    }


def test_nested_model_defs_are_hoisted() -> None:
    assert schema_of(create_customer) == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {"customer": {"$ref": "#/$defs/Customer"}},
        "required": ["customer"],
        "additionalProperties": False,
        "$defs": {
            "Address": {
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "city": {"type": "string", "description": "City name"},
                },
                "required": ["street", "city"],
            },
            "Customer": {
                "type": "object",
                "description": "A customer.",
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/Address"},
                },
                "required": ["name", "address"],
            },
        },
    }


def test_enum() -> None:
    assert schema_of(paint) == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {"color": {"$ref": "#/$defs/Color"}},
        "required": ["color"],
        "additionalProperties": False,
        "$defs": {"Color": {"type": "string", "enum": ["red", "green"]}},
    }


def test_literal() -> None:
    assert schema_of(convert) == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {"unit": {"type": "string", "enum": ["c", "f"], "default": "c"}},
        "required": [],
        "additionalProperties": False,
    }


def test_list_of_models() -> None:
    assert schema_of(add_items) == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
        "required": ["items"],
        "additionalProperties": False,
        "$defs": {
            "Item": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string"},
                    "quantity": {"type": "integer", "default": 1},
                },
                "required": ["sku"],
            }
        },
    }


def test_datetime_and_dict() -> None:
    assert schema_of(schedule) == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {
            "at": {"type": "string", "format": "date-time"},
            "tags": {"type": "object", "additionalProperties": {"type": "integer"}},
        },
        "required": ["at", "tags"],
        "additionalProperties": False,
    }


def test_dataclass_parameter() -> None:
    assert schema_of(plot) == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {"where": {"$ref": "#/$defs/Point"}},
        "required": ["where"],
        "additionalProperties": False,
        "$defs": {
            "Point": {
                "type": "object",
                "properties": {
                    "x": {"type": "number"},
                    "y": {"type": "number", "default": 0.0},
                },
                "required": ["x"],
                "additionalProperties": False,
            }
        },
    }


@pytest.mark.parametrize("fn", [with_context, with_optional_context])
def test_context_parameter_is_not_in_schema(fn: Any) -> None:
    assert schema_of(fn) == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {"greeting": {"type": "string"}},
        "required": ["greeting"],
        "additionalProperties": False,
    }


def test_annotated_field_constraints_and_description() -> None:
    assert schema_of(annotated) == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {
            "limit": {
                "type": "integer",
                "description": "How many",
                "minimum": 1,
                "maximum": 50,
                "default": 10,
            }
        },
        "required": [],
        "additionalProperties": False,
    }


def test_required_override_makes_defaulted_parameter_required() -> None:
    assert schema_of(required_override) == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["query", "limit"],
        "additionalProperties": False,
    }


def test_recursive_model() -> None:
    assert schema_of(tree) == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "required": ["root"],
        "additionalProperties": False,
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "default": []},
                },
                "required": ["value"],
            }
        },
    }


@pytest.mark.parametrize("fn", [google_style, numpy_style, sphinx_style])
def test_docstring_styles(fn: Any) -> None:
    made = FunctionTool.from_function(fn)
    assert made.definition.input_schema == FORECAST
    assert (
        made.definition.description
        == {
            google_style: "Forecast for a city.\n\nUses the national weather service."
            "\n\nReturns: The forecast.",
            numpy_style: "Forecast for a city.",
            sphinx_style: "Forecast for a city.\n\nReturns: The forecast.",
        }[fn]
    )


def test_method_schema_has_no_self() -> None:
    search, genres = tools_from(Library())
    assert search.definition.input_schema == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {"text": {"type": "string"}, "top_k": {"type": "integer", "default": 5}},
        "required": ["text"],
        "additionalProperties": False,
    }
    assert genres.definition.input_schema == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {"prefix": {"type": "string", "default": ""}},
        "required": [],
        "additionalProperties": False,
    }


def test_static_method_via_class() -> None:
    assert schema_of(Library.genres) == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {"prefix": {"type": "string", "default": ""}},
        "required": [],
        "additionalProperties": False,
    }


def test_model_function_schema_is_the_model_schema_flattened() -> None:
    def refund(request: RefundRequest, context: ToolContext) -> str:
        return request.order_id

    made = FunctionTool.from_model_function(refund)
    assert made.definition.description == "Refund an order."
    assert made.definition.input_schema == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {
            "order_id": {"type": "string", "description": "The order to refund"},
            "reason": {
                "type": "string",
                "enum": ["damaged", "late", "other"],
                "default": "other",
            },
        },
        "required": ["order_id"],
        "additionalProperties": False,
    }


def test_model_function_with_dataclass_input() -> None:
    def move(point: Point) -> str:
        """Move the cursor."""
        return f"{point.x},{point.y}"

    assert FunctionTool.from_model_function(move).definition.input_schema == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": "number", "default": 0.0}},
        "required": ["x"],
        "additionalProperties": False,
    }


def test_model_function_with_recursive_model_inlines_the_root() -> None:
    def walk(node: Node) -> int:
        return node.value

    assert FunctionTool.from_model_function(walk).definition.input_schema == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {
            "value": {"type": "integer"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "default": []},
        },
        "required": ["value"],
        "additionalProperties": False,
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "default": []},
                },
                "required": ["value"],
            }
        },
    }


class OpenNote(BaseModel):
    """A note with any further keys."""

    model_config = ConfigDict(extra="allow")

    text: str


class LenientNote(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str


class StrictNote(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str
    tags: OpenNote | None = None


@pytest.mark.parametrize(
    ("kind", "allowed"), [(OpenNote, True), (LenientNote, True), (StrictNote, False)]
)
def test_model_function_schema_says_what_the_input_type_declares_about_extra_keys(
    kind: type[BaseModel], allowed: bool
) -> None:
    def note(value: Any) -> None: ...

    note.__annotations__["value"] = kind
    schema = FunctionTool.from_model_function(note).definition.input_schema
    assert schema["properties"]["text"] == {"type": "string"}
    assert schema["required"] == ["text"]
    assert schema["additionalProperties"] is allowed


def test_nested_models_keep_their_own_additional_properties() -> None:
    def note(value: StrictNote) -> None: ...

    assert FunctionTool.from_model_function(note).definition.input_schema == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "tags": {"anyOf": [{"$ref": "#/$defs/OpenNote"}, {"type": "null"}], "default": None},
        },
        "required": ["text"],
        "additionalProperties": False,
        "$defs": {
            "OpenNote": {
                "type": "object",
                "description": "A note with any further keys.",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
                "additionalProperties": True,
            }
        },
    }


def test_only_a_model_that_declares_nothing_needs_the_unknown_key_check() -> None:
    def plain(request: RefundRequest) -> None: ...

    def strict(note: StrictNote) -> None: ...

    def lenient(note: LenientNote) -> None: ...

    # pydantic itself rejects unknown keys of the generated argument model and of a model
    # with extra="forbid"; a model that declares nothing would drop them.
    assert build_model_function_schema(plain, tool_name="p").known_arguments == {
        "order_id",
        "reason",
    }
    assert build_model_function_schema(strict, tool_name="s").known_arguments is None
    assert build_model_function_schema(lenient, tool_name="l").known_arguments is None
    assert build_function_schema(simple, tool_name="simple").known_arguments is None


@pytest.mark.parametrize("factory", [FunctionTool.from_function, FunctionTool.from_model_function])
def test_supplier_schema_is_an_empty_object(factory: Any) -> None:
    def now(context: ToolContext | None = None) -> str:
        return "12:00"

    assert factory(now).definition.input_schema == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


def test_property_named_title_is_kept() -> None:
    class Book(BaseModel):
        title: str

    def add(title: str, book: Book) -> None: ...

    schema = build_function_schema(add, tool_name="add").json_schema
    assert schema["properties"] == {"title": {"type": "string"}, "book": {"$ref": "#/$defs/Book"}}
    assert schema["$defs"] == {
        "Book": {
            "type": "object",
            "properties": {"title": {"type": "string"}},
            "required": ["title"],
        }
    }


def test_parameter_names_that_shadow_basemodel_attributes() -> None:
    def store(json: str, schema: int, model_config: bool) -> None: ...

    assert build_function_schema(store, tool_name="store").json_schema == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {
            "json": {"type": "string"},
            "schema": {"type": "integer"},
            "model_config": {"type": "boolean"},
        },
        "required": ["json", "schema", "model_config"],
        "additionalProperties": False,
    }


# --- declaration problems found while building schemas ----------------------------------------


def test_model_function_rejects_two_inputs_and_non_models() -> None:
    def two(a: RefundRequest, b: Item) -> None: ...

    def scalar(a: int) -> None: ...

    with pytest.raises(ToolDefinitionError) as two_error:
        build_model_function_schema(two, tool_name="two")
    assert two_error.value.problems == (
        "a model function takes one input parameter (a pydantic model, a dataclass or a "
        "TypedDict), found 'a', 'b'",
    )
    with pytest.raises(ToolDefinitionError) as scalar_error:
        build_model_function_schema(scalar, tool_name="scalar")
    assert str(scalar_error.value) == (
        "invalid tool 'scalar': parameter 'a' must be a pydantic model, a dataclass or a "
        "TypedDict, got int"
    )


def test_unsupported_type_is_a_definition_error() -> None:
    class Opaque:
        pass

    def use(thing: Opaque) -> None: ...

    with pytest.raises(ToolDefinitionError) as caught:
        build_function_schema(use, tool_name="use")
    assert caught.value.tool == "use"
    assert len(caught.value.problems) == 1
    assert caught.value.problems[0].startswith("cannot build a JSON Schema for the arguments: ")


def test_two_context_parameters() -> None:
    def both(a: ToolContext, b: ToolContext | None) -> None: ...

    with pytest.raises(ToolDefinitionError) as caught:
        build_function_schema(both, tool_name="both")
    assert caught.value.problems == ("only one ToolContext parameter is allowed, found 'a', 'b'",)


# --- Field() as a default, descriptions from Annotated strings and attribute docstrings ------


def test_field_as_default_is_read_like_field_in_annotated() -> None:
    def as_default(
        score: int = Field(..., gt=10, le=100, description="From 11 to 100"),
        factor: float = Field(default=1.0, gt=0.0),
        tags: list[str] = Field(default_factory=list),
    ) -> str:
        return f"{score} {factor} {tags}"

    def as_annotated(
        score: Annotated[int, Field(..., gt=10, le=100, description="From 11 to 100")],
        factor: Annotated[float, Field(default=1.0, gt=0.0)],
        tags: Annotated[list[str], Field(default_factory=list)],
    ) -> str:
        return f"{score} {factor} {tags}"

    made = FunctionTool.from_function(as_default)
    assert made.definition.input_schema == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {
            "score": {
                "description": "From 11 to 100",
                "exclusiveMinimum": 10,
                "maximum": 100,
                "type": "integer",
            },
            "factor": {"default": 1.0, "exclusiveMinimum": 0.0, "type": "number"},
            "tags": {"items": {"type": "string"}, "type": "array"},
        },
        "required": ["score"],
        "additionalProperties": False,
    }
    assert made.definition.input_schema == schema_of(as_annotated)
    # The function gets the validated value or the Field's default, never the FieldInfo.
    assert made.call_sync('{"score": 11}') == "11 1.0 []"
    with pytest.raises(ToolArgumentError) as caught:
        made.call_sync('{"score": 5, "factor": 0}')
    assert [p.location for p in caught.value.problems] == ["score", "factor"]
    with pytest.raises(ToolArgumentError, match="score: Field required"):
        made.call_sync("{}")


def test_field_alias_names_the_property_in_both_spellings() -> None:
    def as_default(user_name: str = Field(alias="userName")) -> str:
        return user_name

    def as_annotated(user_name: Annotated[str, Field(alias="userName")]) -> str:
        return user_name

    for fn in (as_default, as_annotated):
        made = FunctionTool.from_function(fn)
        assert made.definition.input_schema["properties"] == {"userName": {"type": "string"}}
        assert made.definition.input_schema["required"] == ["userName"]
        assert made.call_sync('{"userName": "ada"}') == "ada"


def test_field_description_wins_over_the_docstring_which_wins_over_annotated_text() -> None:
    def described(
        a: int = Field(description="From Field"),
        b: Annotated[int, "From Annotated"] = 0,
        c: Annotated[int, "From Annotated"] = 0,
    ) -> None:
        """Describe.

        Args:
            a: From the docstring.
            b: From the docstring.
        """

    properties = schema_of(described)["properties"]
    assert [properties[name]["description"] for name in "abc"] == [
        "From Field",
        "From the docstring.",
        "From Annotated",
    ]


def test_field_default_on_methods_and_async_functions() -> None:
    class Shop:
        @tool
        async def find(self, query: str = Field(min_length=2, description="Words")) -> str:
            """Find products."""
            return query

    made = tools_from(Shop())[0]
    assert made.definition.input_schema["properties"] == {
        "query": {"description": "Words", "minLength": 2, "type": "string"}
    }
    assert made.definition.input_schema["required"] == ["query"]
    assert made.call_sync('{"query": "tea"}') == "tea"


def test_field_default_on_a_model_parameter() -> None:
    def refund(item: Item = Field(description="The item to refund")) -> str:
        return item.sku

    made = FunctionTool.from_function(refund)
    assert made.definition.input_schema["properties"] == {
        "item": {"$ref": "#/$defs/Item", "description": "The item to refund"}
    }
    assert made.call_sync('{"item": {"sku": "A"}}') == "A"


def test_required_cannot_override_a_field_default() -> None:
    with pytest.raises(ToolDefinitionError) as caught:

        @tool(required=["limit"])
        def search(limit: int = Field(default=10)) -> None: ...

    assert caught.value.problems == (
        "parameter 'limit': required lists it, but its Field() declares a default; "
        "drop the Field default or leave the parameter out of required",
    )


class Scores(TypedDict):
    """Scores of a match."""

    home: int
    """Goals of the home team"""
    away: int
    """Goals of the away team"""


@dataclass
class Score:
    home: int
    """Goals of the home team"""


def test_attribute_docstrings_describe_typeddict_and_dataclass_fields() -> None:
    def record(scores: Scores, score: Score) -> None: ...

    schema = schema_of(record)
    assert list(schema) == [
        "$schema", "type", "$defs", "properties", "required", "additionalProperties"
    ]  # fmt: skip
    assert schema["$defs"]["Scores"]["properties"] == {
        "home": {"description": "Goals of the home team", "type": "integer"},
        "away": {"description": "Goals of the away team", "type": "integer"},
    }
    assert schema["$defs"]["Score"]["properties"]["home"]["description"] == (
        "Goals of the home team"
    )


def test_a_typeddict_is_a_whole_input_too() -> None:
    def record(scores: Scores) -> int:
        return scores["home"] - scores["away"]

    made = FunctionTool.from_model_function(record)
    assert made.definition.description == "Scores of a match."
    assert made.definition.input_schema == {
        "$schema": DIALECT,
        "type": "object",
        "properties": {
            "home": {"description": "Goals of the home team", "type": "integer"},
            "away": {"description": "Goals of the away team", "type": "integer"},
        },
        "required": ["home", "away"],
        "additionalProperties": False,
    }
    assert made.call_sync('{"home": 3, "away": 1}') == "2"
    with pytest.raises(ToolArgumentError, match="extra: Extra inputs are not permitted"):
        made.call_sync('{"home": 3, "away": 1, "extra": 0}')


def test_returns_section_ends_the_description() -> None:
    def total(a: int) -> int:
        """Add up an order.

        Args:
            a: The order's amount.

        Returns:
            The total in cents.
        """
        return a

    made = FunctionTool.from_function(total)
    assert made.definition.description == "Add up an order.\n\nReturns: The total in cents."


def test_keywords_a_partial_binds_are_not_arguments() -> None:
    def refund(order_id: str, tenant_id: str = "", note: str = "") -> str:
        return f"{tenant_id}:{order_id}"

    made = FunctionTool.from_function(functools.partial(refund, tenant_id="acme"), name="refund")
    assert list(made.definition.input_schema["properties"]) == ["order_id", "note"]
    assert made.call_sync('{"order_id": "A-1"}') == "acme:A-1"
    with pytest.raises(ToolArgumentError, match="tenant_id: Extra inputs are not permitted"):
        made.call_sync('{"order_id": "A-1", "tenant_id": "globex"}')

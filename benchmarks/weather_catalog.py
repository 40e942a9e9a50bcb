"""The 28-tool catalog of the "what should I wear?" token benchmark (``benchmarks/tokens.py``).

Three tools answer "What should I wear in Paris right now?" (:data:`RELEVANT`): the local
time, the current weather and clothing advice. Twenty-five more are the tools a personal
assistant typically carries (mail, calendar, travel, money, home, media), written the way
real tool definitions are written: a one- or two-sentence description and documented
parameters. Every tool really runs and returns deterministic, made-up data.
"""

from __future__ import annotations

from typing import Any, Literal

from toolrelay.tools import tool

_CITIES: dict[str, dict[str, Any]] = {
    "paris": {"utc_offset": 2, "temperature_c": 14.0, "conditions": "light rain", "wind_kmh": 18},
    "london": {"utc_offset": 1, "temperature_c": 12.0, "conditions": "overcast", "wind_kmh": 22},
    "new york": {"utc_offset": -4, "temperature_c": 19.0, "conditions": "sunny", "wind_kmh": 9},
}
_DEFAULT_CITY = {"utc_offset": 0, "temperature_c": 20.0, "conditions": "clear", "wind_kmh": 5}


def _city(name: str) -> dict[str, Any]:
    return _CITIES.get(name.strip().lower(), _DEFAULT_CITY)


# --- the three tools the task needs --------------------------------------------------------


@tool(read_only=True)
def get_current_time(city: str) -> dict[str, Any]:
    """Get the current local date and time in a city, with its UTC offset.

    Args:
        city: City name, e.g. "Paris" or "Tokyo".
    """
    offset = _city(city)["utc_offset"]
    hour = (9 + offset) % 24
    return {"city": city, "local_time": f"2026-04-18T{hour:02d}:30:00", "utc_offset": offset}


@tool(read_only=True)
def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict[str, Any]:
    """Get the current weather in a city: temperature, conditions, wind and humidity.

    Args:
        city: City name, e.g. "Paris".
        unit: Temperature unit of the answer.
    """
    data = _city(city)
    temperature = data["temperature_c"]
    if unit == "fahrenheit":
        temperature = round(temperature * 9 / 5 + 32, 1)
    return {
        "city": city,
        "temperature": temperature,
        "unit": unit,
        "conditions": data["conditions"],
        "wind_kmh": data["wind_kmh"],
        "humidity_percent": 81,
    }


@tool(read_only=True)
def get_clothing_advice(
    temperature_celsius: float,
    conditions: str,
    time_of_day: Literal["morning", "afternoon", "evening", "night"] = "afternoon",
) -> dict[str, Any]:
    """Recommend what to wear for given weather conditions and time of day.

    Args:
        temperature_celsius: Outside temperature in degrees Celsius.
        conditions: Weather conditions, e.g. "sunny", "light rain", "snow".
        time_of_day: When the clothes will be worn.
    """
    layers = ["t-shirt"] if temperature_celsius >= 22 else ["long-sleeve top", "light sweater"]
    if temperature_celsius < 10:
        layers.append("warm coat")
    extras = ["umbrella", "waterproof jacket"] if "rain" in conditions else []
    if time_of_day in ("evening", "night"):
        extras.append("extra layer for the evening chill")
    return {"layers": layers, "extras": extras, "shoes": "closed, water-resistant shoes"}


RELEVANT = ("get_current_time", "get_weather", "get_clothing_advice")
"""The tools the task needs, in the order they are called."""


# --- twenty-five tools the task does not need ----------------------------------------------


@tool
def send_email(to: list[str], subject: str, body: str, cc: list[str] | None = None) -> str:
    """Send an email from the user's account.

    Args:
        to: Recipient email addresses.
        subject: Subject line.
        body: Plain-text message body.
        cc: Addresses to copy.
    """
    return f"email sent to {', '.join(to)}"


@tool
def create_calendar_event(
    title: str, start: str, end: str, attendees: list[str] | None = None, location: str = ""
) -> dict[str, str]:
    """Create an event in the user's calendar and invite attendees.

    Args:
        title: Event title.
        start: Start as ISO 8601 date-time, e.g. "2026-04-18T14:00".
        end: End as ISO 8601 date-time.
        attendees: Email addresses to invite.
        location: Where the event takes place.
    """
    return {"event_id": "EV-1", "title": title, "start": start, "end": end}


@tool(read_only=True)
def list_calendar_events(date: str, calendar: str = "primary") -> list[dict[str, str]]:
    """List the user's calendar events on a given day.

    Args:
        date: Day as YYYY-MM-DD.
        calendar: Which calendar to read.
    """
    return [{"title": "Team sync", "start": f"{date}T10:00", "end": f"{date}T10:30"}]


@tool(read_only=True)
def search_flights(
    origin: str,
    destination: str,
    departure_date: str,
    cabin: Literal["economy", "premium_economy", "business", "first"] = "economy",
    passengers: int = 1,
) -> list[dict[str, Any]]:
    """Search for flights between two airports on a given date, cheapest first.

    Args:
        origin: IATA code of the departure airport, e.g. "CDG".
        destination: IATA code of the arrival airport.
        departure_date: Departure day as YYYY-MM-DD.
        cabin: Travel class.
        passengers: Number of adult passengers.
    """
    return [{"flight": "AF1234", "price_eur": 129, "departs": f"{departure_date}T07:15"}]


@tool
def book_hotel(city: str, check_in: str, check_out: str, guests: int = 1) -> dict[str, Any]:
    """Book a hotel room in a city for the given dates at the best-rated available hotel.

    Args:
        city: City to stay in.
        check_in: Arrival day as YYYY-MM-DD.
        check_out: Departure day as YYYY-MM-DD.
        guests: Number of guests in the room.
    """
    return {"booking_id": "HB-77", "city": city, "check_in": check_in, "check_out": check_out}


@tool(read_only=True)
def convert_currency(amount: float, from_currency: str, to_currency: str) -> dict[str, float]:
    """Convert an amount of money between currencies at today's exchange rate.

    Args:
        amount: Amount in the source currency.
        from_currency: ISO 4217 code of the source currency, e.g. "EUR".
        to_currency: ISO 4217 code of the target currency, e.g. "USD".
    """
    return {"amount": round(amount * 1.08, 2), "rate": 1.08}


@tool(read_only=True)
def get_stock_quote(symbol: str) -> dict[str, Any]:
    """Get the latest price, daily change and trading volume of a stock.

    Args:
        symbol: Ticker symbol, e.g. "AAPL".
    """
    return {"symbol": symbol, "price": 187.3, "change_percent": -0.4}


@tool(read_only=True)
def translate_text(text: str, target_language: str, source_language: str | None = None) -> str:
    """Translate text into another language.

    Args:
        text: Text to translate.
        target_language: Language code to translate into, e.g. "fr".
        source_language: Language code of the text; detected when omitted.
    """
    return text


@tool(read_only=True)
def search_restaurants(
    city: str,
    cuisine: str | None = None,
    price_level: Literal[1, 2, 3, 4] | None = None,
    open_now: bool = False,
) -> list[dict[str, Any]]:
    """Find restaurants in a city, optionally filtered by cuisine, price level and opening hours.

    Args:
        city: City to search in.
        cuisine: Type of food, e.g. "italian" or "vegan".
        price_level: 1 (cheap) to 4 (very expensive).
        open_now: Only restaurants open at the moment.
    """
    return [{"name": "Le Petit Zinc", "rating": 4.5, "cuisine": cuisine or "french"}]


@tool
def book_restaurant_table(restaurant: str, date_time: str, party_size: int) -> dict[str, str]:
    """Reserve a table at a restaurant.

    Args:
        restaurant: Restaurant name as returned by search_restaurants.
        date_time: Reservation time as ISO 8601 date-time.
        party_size: Number of people.
    """
    return {"reservation_id": "RS-9", "restaurant": restaurant, "time": date_time}


@tool
def create_todo(title: str, due_date: str | None = None, priority: int = 3) -> dict[str, Any]:
    """Add an item to the user's to-do list.

    Args:
        title: What needs to be done.
        due_date: Due day as YYYY-MM-DD.
        priority: 1 (urgent) to 5 (someday).
    """
    return {"todo_id": "TD-3", "title": title}


@tool(read_only=True)
def list_todos(include_completed: bool = False) -> list[dict[str, Any]]:
    """List the items on the user's to-do list, most urgent first.

    Args:
        include_completed: Also list items already done.
    """
    return [{"todo_id": "TD-1", "title": "Renew passport", "priority": 2}]


@tool
def play_music(query: str, device: str = "phone", shuffle: bool = False) -> str:
    """Play a song, album, artist or playlist on one of the user's devices.

    Args:
        query: What to play, e.g. "Miles Davis - Kind of Blue".
        device: Device to play on: "phone", "living room speaker" or "car".
        shuffle: Shuffle the tracks.
    """
    return f"playing {query} on {device}"


@tool
def set_alarm(time: str, label: str = "", repeat_days: list[str] | None = None) -> str:
    """Set an alarm on the user's phone.

    Args:
        time: Alarm time as HH:MM (24-hour clock).
        label: Text shown when the alarm rings.
        repeat_days: Weekdays to repeat on, e.g. ["mon", "wed"].
    """
    return f"alarm set for {time}"


@tool(read_only=True)
def get_news_headlines(
    topic: Literal["world", "business", "technology", "sports", "science", "health"] = "world",
    country: str = "us",
    max_results: int = 5,
) -> list[str]:
    """Get today's top news headlines for a topic and country.

    Args:
        topic: News section.
        country: Two-letter country code.
        max_results: Number of headlines.
    """
    return [f"Top {topic} story"]


@tool(read_only=True)
def get_directions(
    origin: str,
    destination: str,
    mode: Literal["driving", "walking", "transit", "cycling"] = "driving",
) -> dict[str, Any]:
    """Get a route between two places with distance, travel time and turn-by-turn steps.

    Args:
        origin: Start address or place name.
        destination: End address or place name.
        mode: How the user travels.
    """
    return {"distance_km": 12.4, "duration_min": 27, "steps": ["Head north", "Turn right"]}


@tool
def send_sms(phone_number: str, message: str) -> str:
    """Send a text message to a phone number.

    Args:
        phone_number: Recipient in international format, e.g. "+33612345678".
        message: Message text (up to 480 characters).
    """
    return f"sms sent to {phone_number}"


@tool(read_only=True)
def track_package(tracking_number: str, carrier: str | None = None) -> dict[str, str]:
    """Get the delivery status and estimated arrival of a parcel.

    Args:
        tracking_number: The carrier's tracking number.
        carrier: Carrier name, e.g. "UPS"; detected from the number when omitted.
    """
    return {"status": "in transit", "estimated_delivery": "2026-04-20"}


@tool(read_only=True)
def get_movie_showtimes(city: str, date: str, movie: str | None = None) -> list[dict[str, str]]:
    """List cinema showtimes in a city on a given day.

    Args:
        city: City to search in.
        date: Day as YYYY-MM-DD.
        movie: Only showtimes of this movie title.
    """
    return [{"movie": movie or "Dune: Part Three", "cinema": "Grand Rex", "time": "20:15"}]


@tool
def set_thermostat(temperature_celsius: float, room: str = "living room") -> str:
    """Set the target temperature of the smart thermostat in a room of the user's home.

    Args:
        temperature_celsius: Target temperature in degrees Celsius.
        room: Room whose thermostat is set.
    """
    return f"{room} thermostat set to {temperature_celsius} °C"


@tool
def control_lights(
    room: str, on: bool, brightness_percent: int | None = None, color: str | None = None
) -> str:
    """Turn the smart lights in a room of the user's home on or off, and set brightness or color.

    Args:
        room: Room name, e.g. "kitchen".
        on: True to switch on, False to switch off.
        brightness_percent: Brightness from 1 to 100.
        color: Color name or hex code, e.g. "warm white".
    """
    return f"{room} lights {'on' if on else 'off'}"


@tool
def create_note(title: str, content: str, tags: list[str] | None = None) -> dict[str, str]:
    """Save a note in the user's notebook.

    Args:
        title: Note title.
        content: Note text (Markdown allowed).
        tags: Tags to file the note under.
    """
    return {"note_id": "NT-5", "title": title}


@tool(read_only=True)
def search_web(query: str, num_results: int = 5) -> list[dict[str, str]]:
    """Search the web and return the top results with titles, links and snippets.

    Args:
        query: Search query.
        num_results: Number of results to return.
    """
    return [{"title": query, "url": "https://example.org", "snippet": "..."}]


@tool(read_only=True)
def get_sports_scores(league: str, team: str | None = None) -> list[dict[str, Any]]:
    """Get the latest scores and upcoming fixtures in a sports league.

    Args:
        league: League name, e.g. "Premier League" or "NBA".
        team: Only games of this team.
    """
    return [{"home": "PSG", "away": "Lyon", "score": "2-1"}]


@tool
def pay_bill(payee: str, amount: float, currency: str = "EUR", pay_on: str | None = None) -> str:
    """Pay a bill from the user's checking account, now or on a scheduled date.

    Args:
        payee: Saved payee name, e.g. "Electricity".
        amount: Amount to pay.
        currency: ISO 4217 currency code.
        pay_on: Payment day as YYYY-MM-DD; today when omitted.
    """
    return f"payment of {amount} {currency} to {payee} scheduled"


UNRELATED = (
    send_email,
    create_calendar_event,
    list_calendar_events,
    search_flights,
    book_hotel,
    convert_currency,
    get_stock_quote,
    translate_text,
    search_restaurants,
    book_restaurant_table,
    create_todo,
    list_todos,
    play_music,
    set_alarm,
    get_news_headlines,
    get_directions,
    send_sms,
    track_package,
    get_movie_showtimes,
    set_thermostat,
    control_lights,
    create_note,
    search_web,
    get_sports_scores,
    pay_bill,
)
"""Tools a personal assistant carries that the task does not need."""

ALL_TOOLS = (get_current_time, get_weather, get_clothing_advice, *UNRELATED)
"""The whole catalog: the three task tools first, then the others."""

"""Units of measure after a number: what the text names, as a pint unit, and conversion between
two units of the same kind (1,150 ft is 350.52 m; 8.2 µg/mL is 8.2 mg/L); two kinds never match.

The words and symbols a unit is written with are the project's own table (`UNITS`: rubric and
agent spellings, "sq ft", "m³", "t/ha"); what a unit is and how it converts is pint's, so no
conversion factor is written here. Spellings that also mean something else after a number are
left out: "pounds" (money), "tons" (short or metric), "oz" alone (troy for metals), "in" (a
preposition) unless punctuation follows it, "kt" (knots or kilotonnes), "bar" (bar charts);
time units too, which `numbers.DURATION_HOURS` reads as durations. Units with an SI prefix,
written as `numbers.MEASURE_UNIT` reads them ("µg·h/mL"), are read factor by factor
(`si_unit`). pint is imported on the first conversion only: a criterion and an answer in the
same unit never need it.
"""

from __future__ import annotations

import functools
import re
from typing import Any

# spelling (as written after a number) -> pint unit; case matters for symbols (MW is not mW)
UNITS: dict[str, str] = {
    # length
    "mm": "millimeter", "cm": "centimeter", "m": "meter", "km": "kilometer",
    "millimetre": "millimeter", "millimeter": "millimeter", "centimetre": "centimeter",
    "centimeter": "centimeter", "metre": "meter", "meter": "meter", "kilometre": "kilometer",
    "kilometer": "kilometer", "ft": "foot", "foot": "foot", "feet": "foot", "inch": "inch",
    "inches": "inch", "yd": "yard", "yard": "yard", "mi": "mile", "mile": "mile",
    "nautical mile": "nautical_mile", "nmi": "nautical_mile",
    # area
    "m²": "meter**2", "m2": "meter**2", "sq m": "meter**2", "sqm": "meter**2",
    "square metre": "meter**2", "square meter": "meter**2", "km²": "kilometer**2",
    "km2": "kilometer**2", "sq km": "kilometer**2", "square kilometre": "kilometer**2",
    "square kilometer": "kilometer**2", "ft²": "foot**2", "sq ft": "foot**2", "sqft": "foot**2",
    "square foot": "foot**2", "square feet": "foot**2", "yd²": "yard**2", "sq yd": "yard**2",
    "ha": "hectare", "hectare": "hectare", "acre": "acre",
    # volume
    "cm²": "centimeter**2", "cm2": "centimeter**2", "mm²": "millimeter**2",
    "mm2": "millimeter**2", "cm³": "centimeter**3", "cm3": "centimeter**3",
    "m³": "meter**3", "m3": "meter**3", "cubic metre": "meter**3", "cubic meter": "meter**3",
    "ft³": "foot**3", "cu ft": "foot**3", "cubic foot": "foot**3", "cubic feet": "foot**3",
    "L": "liter", "l": "liter", "litre": "liter", "liter": "liter", "mL": "milliliter",
    "ml": "milliliter", "kL": "kiloliter", "ML": "megaliter", "megalitre": "megaliter",
    "megaliter": "megaliter", "hL": "hectoliter", "hl": "hectoliter", "hectolitre": "hectoliter",
    "hectoliter": "hectoliter", "gal": "gallon", "gallon": "gallon", "US gallon": "gallon",
    "bbl": "oil_barrel", "barrel": "oil_barrel",
    # mass
    "mg": "milligram", "g": "gram", "kg": "kilogram", "gram": "gram", "kilogram": "kilogram",
    "t": "metric_ton", "tonne": "metric_ton", "metric ton": "metric_ton", "metric tonne": "metric_ton",
    "kilotonne": "kilometric_ton", "Mt": "megametric_ton",
    "megatonne": "megametric_ton", "lb": "pound", "lbs": "pound",
    "short ton": "short_ton",
    # precious metals: a troy ounce, said as such ("oz" alone is left out above)
    "troy oz": "troy_ounce", "troy ounce": "troy_ounce", "ozt": "troy_ounce",
    # emissions: tonnes of CO2 equivalent are tonnes (of a gas's weighted mass)
    "tCO2e": "metric_ton", "tCO₂e": "metric_ton", "t CO2e": "metric_ton", "t CO₂e": "metric_ton",
    "tCO2": "metric_ton", "tCO₂": "metric_ton", "ktCO2e": "kilometric_ton",
    "ktCO₂e": "kilometric_ton", "kt CO2e": "kilometric_ton", "kt CO₂e": "kilometric_ton",
    "MtCO2e": "megametric_ton", "MtCO₂e": "megametric_ton", "Mt CO2e": "megametric_ton",
    "Mt CO₂e": "megametric_ton",
    # force (a crane's safe working load in kN is no mass)
    "kN": "kilonewton", "MN": "meganewton",
    # energy and power
    "Wh": "watt_hour", "kWh": "kilowatt_hour", "MWh": "megawatt_hour",
    "GWh": "gigawatt_hour", "TWh": "terawatt_hour", "W": "watt", "kW": "kilowatt",
    "MW": "megawatt", "GW": "gigawatt", "J": "joule", "kJ": "kilojoule", "MJ": "megajoule",
    "GJ": "gigajoule", "Btu": "Btu", "BTU": "Btu", "MMBtu": "megaBtu", "therm": "therm",
    # an engine's mechanical horsepower (745.7 W); the metric "PS" is another and left out
    "hp": "horsepower", "bhp": "horsepower", "horsepower": "horsepower",
    # temperature
    "°C": "degC", "ºC": "degC", "degrees Celsius": "degC", "°F": "degF", "ºF": "degF",
    "degrees Fahrenheit": "degF",
    # speed, pressure, data
    "km/h": "kilometer/hour", "kph": "kilometer/hour", "mph": "mile/hour", "m/s": "meter/second",
    "knot": "knot", "psi": "psi", "kPa": "kilopascal", "MPa": "megapascal",
    "m³/s": "meter**3/second", "m3/s": "meter**3/second", "cumecs": "meter**3/second",
    "kB": "kilobyte", "MB": "megabyte", "GB": "gigabyte", "TB": "terabyte", "PB": "petabyte",
    "Mbps": "megabit/second", "Gbps": "gigabit/second", "Tbps": "terabit/second",
    # a clock's or a watch's rate: seconds gained or lost per day, per week
    "s/day": "second/day", "s/d": "second/day", "sec/day": "second/day",
    "s/week": "second/week", "s/wk": "second/week", "sec/week": "second/week",
    "min/month": "minute/month",
    # yields
    "t/ha": "metric_ton/hectare", "t/acre": "metric_ton/acre", "kg/ha": "kilogram/hectare",
    "lb/acre": "pound/acre",
    # areal weights (fabric, paper): an ounce of cloth is avoirdupois
    "g/m²": "gram/meter**2", "g/m2": "gram/meter**2", "gsm": "gram/meter**2",
    "oz/yd²": "ounce/yard**2", "oz/yd2": "ounce/yard**2", "oz/sq yd": "ounce/yard**2",
}
_WORDS = {k for k in UNITS if (k.isalpha() and k.islower() and len(k) > 3) or " " in k}
_PLURAL = r"(?:s|es)?"


def _spelling(unit: str) -> str:
    word = re.escape(unit)
    return word + _PLURAL if unit in _WORDS or unit in ("lb", "gal", "bbl", "mi") else word


# the longest spelling first, so "sq ft" is not read as "sq" and "kWh" not as "kW"
UNIT_AFTER = re.compile(
    r"[ \t]?(" + "|".join(_spelling(u) for u in sorted(UNITS, key=len, reverse=True)) +
    r"|in(?=\s*(?:[),;:(]|\.(?!\d)|$)))(?![-\w²³/·⋅])", re.I)


def unit_after(text: str) -> str | None:
    """The pint unit named right after a number (`text` starts where the number ends), or None:
    "1,150 ft" -> foot, "2.4 t/ha" -> metric_ton/hectare. A word ("feet", "hectares") is read
    in any case; a symbol only as written ("MW" is megawatts, "mW" no unit read)."""
    found = UNIT_AFTER.match(text)
    if not found:
        return None
    written = found.group(1)
    if written == "in":
        return "inch"  # "56.7 in (4 ft 8.7 in)": before punctuation, no preposition
    if written in UNITS:
        return UNITS[written]
    lower = written.lower()
    for spelled in (lower, lower[:-1], lower[:-2]):  # "feet", "metres", "inches"
        if spelled in _WORDS or (spelled in UNITS and spelled + lower[len(spelled):] == written):
            return UNITS[spelled]
    return None


SI_PREFIXES = {"p": "pico", "n": "nano", "µ": "micro", "m": "milli", "c": "centi", "d": "deci",
               "k": "kilo", "M": "mega", "G": "giga", "T": "tera"}
SI_BASES = {"g": "gram", "L": "liter", "mol": "mole", "Wh": "watt_hour", "W": "watt",
            "J": "joule", "Pa": "pascal", "Hz": "hertz", "hr": "hour", "h": "hour",
            "min": "minute", "s": "second", "day": "day", "d": "day"}
SI_FACTOR = re.compile(rf"({'|'.join(SI_PREFIXES)})?({'|'.join(sorted(SI_BASES, key=len, reverse=True))})")


def si_unit(measure: str) -> str | None:
    """A unit as `numbers.measure_unit` writes it ("µg·h/mL", "mmol/L", "MWh") as a pint unit
    ("microgram*hour/milliliter"); None where a factor is not an SI prefix and base."""
    numerator, _, denominator = measure.partition("/")
    parts: list[str] = []
    for side, text in ((1, numerator), (-1, denominator)):
        for factor in filter(None, re.split(r"[·/]", text)):
            read = SI_FACTOR.fullmatch(factor)
            if not read:
                return None
            unit = SI_PREFIXES.get(read.group(1) or "", "") + SI_BASES[read.group(2)]
            parts.append(unit if side == 1 or not parts else f"/{unit}")
    if not parts or (denominator and len(parts) == 1):
        return None
    return "*".join(p for p in parts if not p.startswith("/")) + "".join(
        p for p in parts if p.startswith("/"))


_SPELLINGS = "|".join(_spelling(u) for u in sorted(UNITS, key=len, reverse=True))
# a unit over a unit: "kg/m³", "g/cm²", "g/mile", "kg per m³", "L/100 km" (a count of the
# denominator's unit between them)
COMPOUND_AFTER = re.compile(
    rf"[ \t]?({_SPELLINGS})[ \t]?(?:/|per[ \t]+)[ \t]?(?:(\d{{1,6}})[ \t]?)?({_SPELLINGS})"
    r"(?![-\w²³/·⋅])")

# the same written with a negative exponent: "kg m⁻²", "g·cm⁻³"
INVERSE_AFTER = re.compile(rf"[ \t]?({_SPELLINGS})[ \t·]([A-Za-z]{{1,3}})⁻([¹²³])(?![\w/·⋅])")
SUPERSCRIPT_POWERS = {"¹": 1, "²": 2, "³": 3}


def compound_after(text: str) -> str | None:
    """The pint expression of a unit over a unit named right after a number ("1.12 g/cm²" ->
    gram/centimeter**2, "118 g per mile" -> gram/mile, "9.4 L/100 km" ->
    liter/(100*kilometer)), or None: the ratio is one quantity, so an areal density never meets
    a volumetric one and a rate per mile is converted, not read as per kilometre."""
    found = COMPOUND_AFTER.match(text)
    if not found:
        inverse = INVERSE_AFTER.match(text)
        numerator, denominator = (unit_after(inverse.group(1)), unit_after(inverse.group(2))) \
            if inverse else (None, None)
        power = SUPERSCRIPT_POWERS[inverse.group(3)] if inverse else 1
        return f"{numerator}/{denominator}**{power}" if numerator and denominator else None
    numerator, denominator = unit_after(found.group(1)), unit_after(found.group(3))
    if not (numerator and denominator):
        return None
    count = found.group(2)
    return f"{numerator}/({count}*{denominator})" if count else f"{numerator}/{denominator}"


@functools.cache
def unit_named(text: str) -> str | None:
    """The pint unit `text` is, whole ("sq ft", "m", "t/ha" in a header's parentheses); kept
    per text, as `Quantity.compatible` asks it of every noun it compares."""
    found = UNIT_AFTER.fullmatch(text.strip())
    return unit_after(found.group(1)) if found else None


HEADING_QUALIFIER = re.compile(r"(?:\s+(?:equiv(?:alent)?|eq|est|approx|e))?\.?\s*", re.I)


@functools.cache
def unit_heading(text: str) -> str | None:
    """The pint unit a header's brackets name: alone ("sq ft", "kg/m²") or before a word
    qualifying it ("GWh equiv.", "m³ est."), which still says the column's kind."""
    found = COMPOUND_AFTER.match(text.strip()) or UNIT_AFTER.match(text.strip())
    if found and HEADING_QUALIFIER.fullmatch(text.strip(), found.end()):
        return compound_after(found.group(0)) or unit_after(found.group(1))
    return None


@functools.cache
def _registry() -> Any:
    import pint

    return pint.UnitRegistry(cache_folder=None)


@functools.cache
def same_kind(one: str, other: str) -> bool:
    """Whether two pint units measure the same kind of thing (a length, an area, a yield)."""
    registry = _registry()
    return bool(registry.parse_expression(one).dimensionality ==
                registry.parse_expression(other).dimensionality)


TEMPERATURES = frozenset(("degC", "degF"))  # offset scales: converted value by value


@functools.cache
def _factor(source: str, target: str) -> float:
    registry = _registry()  # an expression: "liter/(100*kilometer)" holds a count
    return float((registry.parse_expression(source) / registry.parse_expression(target))
                 .to("dimensionless").magnitude)


def convert(value: float, source: str, target: str) -> float:
    """`value` in `source` units expressed in `target` units of the same kind."""
    if source == target:
        return value
    if source in TEMPERATURES or target in TEMPERATURES:
        return float(_registry().Quantity(value, source).to(target).magnitude)
    return value * _factor(source, target)

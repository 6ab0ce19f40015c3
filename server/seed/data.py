"""Names, products and places the seed data is drawn from."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class City:
    name: str
    lat: float
    lng: float
    radius_km: float
    """Shops are spread over a disc of this radius around the centre."""


BERLIN = City("Berlin", 52.52, 13.405, 25.0)

FIRST_NAMES = (
    "Anna", "Ben", "Clara", "David", "Elif", "Felix", "Greta", "Hannah", "Ilias", "Jana",
    "Karl", "Lena", "Mehmet", "Nora", "Oskar", "Paula", "Quentin", "Rosa", "Samir", "Tilda",
    "Umut", "Vera", "Wim", "Xenia", "Yusuf", "Zoe",
)  # fmt: skip

LAST_NAMES = (
    "Schmidt", "Müller", "Yilmaz", "Becker", "Nowak", "Fischer", "Weber", "Kaya", "Wagner",
    "Hoffmann", "Schulz", "Koch", "Richter", "Klein", "Wolf", "Neumann", "Schwarz", "Braun",
    "Zimmermann", "Hartmann", "Lange", "Krause", "Lehmann", "Köhler",
)  # fmt: skip

PRODUCTS = (
    ("SKU-BREAD", "Sourdough loaf", 450),
    ("SKU-COFFEE", "Coffee beans 1 kg", 1890),
    ("SKU-MUG", "Enamel mug", 1200),
    ("SKU-BIKE-LIGHT", "Bike light set", 2999),
    ("SKU-NOTEBOOK", "Dotted notebook", 890),
    ("SKU-PEN", "Fountain pen", 3450),
    ("SKU-TEA", "Green tea 250 g", 790),
    ("SKU-SOCKS", "Wool socks", 1499),
    ("SKU-UMBRELLA", "Pocket umbrella", 1990),
    ("SKU-LAMP", "Desk lamp", 4900),
    ("SKU-PLANT", "Potted fern", 1650),
    ("SKU-BOOK", "City guide", 2200),
)

GROUP_TOPICS = (
    "Book club", "Running", "Board games", "Photography", "Cycling", "Cooking", "Chess",
    "Gardening", "Climbing", "Film night", "Language exchange", "Choir",
)  # fmt: skip

DEPARTMENTS = (
    "Engineering", "Sales", "Marketing", "Finance", "Operations", "Support", "Research",
    "Design", "Legal", "People", "Logistics", "Security",
)  # fmt: skip

SHOP_KINDS = (
    "Bakery", "Café", "Späti", "Bookshop", "Bike repair", "Florist", "Deli", "Record store",
    "Pharmacy", "Hardware", "Tailor", "Ice cream",
)  # fmt: skip

STREETS = (
    "Torstraße", "Oranienstraße", "Kastanienallee", "Bergmannstraße", "Sonnenallee",
    "Karl-Marx-Allee", "Schönhauser Allee", "Kantstraße", "Warschauer Straße", "Friedrichstraße",
    "Danziger Straße", "Hermannstraße", "Boxhagener Straße", "Müllerstraße",
)  # fmt: skip

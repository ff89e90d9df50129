"""Billing rules for shipment invoices."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class Rate:
    """A price per shipment for a customer tier."""

    tier: str
    per_shipment: Decimal


class Invoice:
    """An invoice being built for one customer and one month."""

    def __init__(self, customer: str, month: str) -> None:
        self.customer = customer
        self.month = month
        self.lines: list[tuple[str, Decimal]] = []

    def add(self, label: str, amount: Decimal) -> None:
        self.lines.append((label, amount))

    @property
    def total(self) -> Decimal:
        return sum((amount for _, amount in self.lines), Decimal(0))


def monthly_invoice(customer: str, month: str, shipments: int, rate: Rate) -> Invoice:
    """Build the month's invoice: one line for shipments at the tier's rate."""
    invoice = Invoice(customer, month)
    invoice.add(f"{shipments} shipments at {rate.per_shipment}", rate.per_shipment * shipments)
    return invoice

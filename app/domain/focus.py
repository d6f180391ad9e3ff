"""GPU-hours in the shape of FOCUS, the FinOps Open Cost and Usage Specification (pure): one row per
group and GPU model over the window, the GPU-hours as the consumed and priced quantity, the cost
where a price is set for the model (else its cost columns empty: not known, never 0). The
columns are FOCUS's own names; its provider is the cluster, its publisher this dashboard."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime

from app.domain.ledger_query import BY, price_of

COLUMNS = (
    "BillingPeriodStart",
    "BillingPeriodEnd",
    "ChargePeriodStart",
    "ChargePeriodEnd",
    "ChargeCategory",
    "ChargeFrequency",
    "ChargeDescription",
    "ConsumedQuantity",
    "ConsumedUnit",
    "PricingQuantity",
    "PricingUnit",
    "ListUnitPrice",
    "ListCost",
    "ContractedCost",
    "EffectiveCost",
    "BilledCost",
    "BillingCurrency",
    "ProviderName",
    "PublisherName",
    "InvoiceIssuerName",
    "ServiceCategory",
    "ServiceName",
    "ResourceId",
    "ResourceName",
    "ResourceType",
    "SkuId",
    "Tags",
)
UNIT = "GPU-Hours"


def rows(
    by: str,
    hours: Mapping[tuple[str, str], float],
    prices: Mapping[str, float] | None,
    currency: str,
    start: datetime,
    end: datetime,
    cluster: str,
) -> list[dict[str, object]]:
    """A FOCUS row per (group, model) with GPU-hours held (``hours``), the most first."""
    out: list[dict[str, object]] = []
    for (group, model), h in sorted(hours.items(), key=lambda kv: (-kv[1], kv[0])):
        price = price_of(model, prices) if prices is not None else None
        cost: object = round(h * price, 6) if price is not None else ""
        on = model or "GPUs of no stated model"
        said = f"GPU-hours held by {BY[by].lower()} {group or '(none)'} on {on}"
        out.append(
            {
                "BillingPeriodStart": start.isoformat(),
                "BillingPeriodEnd": end.isoformat(),
                "ChargePeriodStart": start.isoformat(),
                "ChargePeriodEnd": end.isoformat(),
                "ChargeCategory": "Usage",
                "ChargeFrequency": "Usage-Based",
                "ChargeDescription": said,
                "ConsumedQuantity": round(h, 6),
                "ConsumedUnit": UNIT,
                "PricingQuantity": round(h, 6),
                "PricingUnit": UNIT,
                "ListUnitPrice": price if price is not None else "",
                "ListCost": cost,
                "ContractedCost": cost,
                "EffectiveCost": cost,
                "BilledCost": cost,
                "BillingCurrency": currency if price is not None else "",
                "ProviderName": cluster,
                "PublisherName": "extres",
                "InvoiceIssuerName": cluster,
                "ServiceCategory": "Compute",
                "ServiceName": "GPU",
                "ResourceId": f"{by}/{group}",
                "ResourceName": group,
                "ResourceType": BY[by],
                "SkuId": model,
                "Tags": json.dumps({"extres.dev/group-by": by, by: group}, sort_keys=True),
            }
        )
    return out

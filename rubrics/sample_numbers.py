"""The sample's numbers, computed the way its workbooks compute them.

Criteria, golds and scripted answers quote these values, so the texts and the live formulas in the
xlsx files cannot drift apart. Each function mirrors one workbook.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from statistics import mean


@dataclass(frozen=True)
class NordlysAssumptions:
    """Assumptions sheet of Nordlys_Model.xlsx (NOK m unless stated)."""

    revenue_fy2024: float = 1250.0
    revenue_growth: float = 0.06
    ebitda_margin: float = 0.18
    da_pct_revenue: float = 0.03
    capex_pct_revenue: float = 0.04
    nwc_pct_revenue_change: float = 0.10
    tax_rate: float = 0.22
    wacc: float = 0.085
    terminal_growth: float = 0.02
    net_debt: float = 420.0
    shares_m: float = 40.0


@dataclass(frozen=True)
class Dcf:
    revenue: list[float]
    ebitda: list[float]
    fcf: list[float]
    sum_pv_fcf: float
    terminal_value: float
    pv_terminal_value: float
    enterprise_value: float
    equity_value: float
    value_per_share: float

    @property
    def terminal_share_of_ev(self) -> float:
        return self.pv_terminal_value / self.enterprise_value


def nordlys_dcf(a: NordlysAssumptions = NordlysAssumptions()) -> Dcf:
    """Five-year unlevered DCF, end-of-year discounting, Gordon growth terminal value."""
    revenue, ebitda, fcf = [], [], []
    previous, pv = a.revenue_fy2024, 0.0
    for year in range(1, 6):
        rev = previous * (1 + a.revenue_growth)
        e = rev * a.ebitda_margin
        da = rev * a.da_pct_revenue
        nopat = (e - da) * (1 - a.tax_rate)
        f = nopat + da - rev * a.capex_pct_revenue - (rev - previous) * a.nwc_pct_revenue_change
        pv += f / (1 + a.wacc) ** year
        revenue.append(rev)
        ebitda.append(e)
        fcf.append(f)
        previous = rev
    tv = fcf[-1] * (1 + a.terminal_growth) / (a.wacc - a.terminal_growth)
    pv_tv = tv / (1 + a.wacc) ** 5
    ev = pv + pv_tv
    return Dcf(revenue, ebitda, fcf, pv, tv, pv_tv, ev, ev - a.net_debt,
               (ev - a.net_debt) / a.shares_m)


def with_changes(**changes: float) -> NordlysAssumptions:
    return replace(NordlysAssumptions(), **changes)


# Comps sheet: (company, enterprise value NOK m, FY2024 EBITDA NOK m, include flag)
PEERS = [
    ("Fjordkost ASA", 2350.0, 196.0),
    ("Baltic Harvest AB", 1480.0, 162.0),
    ("Nordic Pantry Oyj", 960.0, 118.0),
    ("Scandi Greens A/S", 1210.0, 131.0),
    ("Polar Provisions ASA", 780.0, 95.0),
    ("Tundra Meals AB", 1640.0, 171.0),
]


def peer_mean_multiple(exclude: tuple[str, ...] = ()) -> float:
    return mean(ev / ebitda for name, ev, ebitda in PEERS if name not in exclude)


SUCCESS_FEE_RATE = 0.0125
NET_DEBT_FEB_2025 = 455.0

# Fee_Schedule.xlsx, Invoices sheet: (service month, description, amount GBP, date paid)
INVOICES = [
    ("2024-01", "Managed freight services", 38_500, "2024-02-15"),
    ("2024-01", "Implementation fee (one-off)", 25_000, "2024-02-15"),
    *[(f"2024-{m:02d}", "Managed freight services", 38_500, f"2024-{m + 1:02d}-15")
      for m in range(2, 7)],
    *[(f"2024-{m:02d}", "Managed freight services", 41_200,
       f"2024-{m + 1:02d}-15" if m < 12 else "2025-01-15") for m in range(7, 13)],
    ("2025-01", "Managed freight services", 41_200, "2025-02-15"),
    ("2025-02", "Managed freight services", 41_200, "2025-03-15"),
]
CLAIM_DATE = "2025-03-03"
CLAIMED_LOSSES = 612_400


def liability_cap(claim_date: str = CLAIM_DATE) -> int:
    """Clause 14.1: fees paid in the 12 months before the claim (paid dates 2024-03-03..2025-03-02)."""
    year, rest = claim_date.split("-", 1)
    start = f"{int(year) - 1}-{rest}"
    return sum(amount for _, _, amount, paid in INVOICES if start <= paid < claim_date)


def fees_paid_in(year: str) -> int:
    return sum(amount for _, _, amount, paid in INVOICES if paid.startswith(year))


# Store_Performance_FY2025.xlsx, Stores sheet:
# (id, name, region, format, revenue FY2024 GBP m, revenue FY2025 GBP m, gross margin, opex FY2025)
STORES = [
    ("K01", "Leeds Kirkstall", "North", "Standard", 4.10, 4.32, 0.41, 1.43),
    ("K02", "York Clifton", "North", "Standard", 3.20, 3.31, 0.40, 1.19),
    ("K03", "Newcastle Gosforth", "North", "Standard", 3.85, 3.79, 0.39, 1.35),
    ("K04", "Sheffield Meadowhall", "North", "Standard", 5.02, 5.40, 0.42, 1.78),
    ("K05", "Brighton Hove", "South", "Standard", 4.60, 4.78, 0.43, 1.60),
    ("K06", "Guildford", "South", "Standard", 3.95, 4.08, 0.42, 1.41),
    ("K07", "Southampton Hedge End", "South", "Standard", 4.40, 4.52, 0.40, 1.63),
    ("K08", "Reading Oracle", "South", "Standard", 3.30, 3.49, 0.41, 1.25),
    ("K09", "Birmingham Solihull", "Midlands", "Standard", 4.75, 4.91, 0.40, 1.72),
    ("K10", "Nottingham Beeston", "Midlands", "Standard", 2.90, 2.96, 0.38, 1.09),
    ("K11", "Swindon Designer Outlet", "Outlet", "Outlet", 2.10, 2.02, 0.30, 0.71),
    ("K12", "Cannock Outlet Village", "Outlet", "Outlet", 1.80, 1.71, 0.29, 0.60),
]


def contribution_margin(store: tuple) -> float:
    _, _, _, _, _, rev25, gm, opex = store
    return (rev25 * gm - opex) / rev25


def growth(store: tuple) -> float:
    return store[5] / store[4] - 1


def region_revenue(region: str, year_index: int = 5) -> float:
    return sum(s[year_index] for s in STORES if s[2] == region)


def region_contribution_margin(region: str) -> float:
    stores = [s for s in STORES if s[2] == region]
    return sum(s[5] * s[6] - s[7] for s in stores) / sum(s[5] for s in stores)


def standard_stores() -> list[tuple]:
    return [s for s in STORES if s[3] == "Standard"]


def lowest_margin_stores(n: int, standard_only: bool) -> list[tuple]:
    pool = standard_stores() if standard_only else STORES
    return sorted(pool, key=contribution_margin)[:n]

"""The three fictional firms of the sample benchmark: what their files, mail, calendar and chat say.

Workbooks are described cell by cell (values and live formulas); the builder writes them with
openpyxl. Everything here is fiction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sample_numbers as n


@dataclass
class Mail:
    message_id: str
    date: str  # RFC 2822
    sender: str
    to: str
    subject: str
    body: str
    cc: str = ""
    in_reply_to: str = ""


@dataclass
class Event:
    uid: str
    start: str  # YYYYMMDDTHHMMSSZ
    end: str
    summary: str
    description: str = ""
    location: str = ""
    attendees: list[str] = field(default_factory=list)


@dataclass
class ChatPost:
    author: str
    email: str
    created: str  # ISO 8601
    text: str
    topic_id: str


@dataclass
class Space:
    folder: str
    name: str
    members: list[tuple[str, str]]
    posts: list[ChatPost]


@dataclass
class WorldSpec:
    world_id: str
    name: str
    domain: str
    description: str
    text_files: dict[str, str]
    docx_files: dict[str, list[str]]
    workbooks: dict[str, dict[str, list[list[object]]]]
    mail: list[Mail]
    events: list[Event]
    spaces: list[Space]


APPS = [
    {"service_id": "mail", "service_name": "Mail"},
    {"service_id": "calendar", "service_name": "Calendar"},
    {"service_id": "chat", "service_name": "Chat"},
    {"service_id": "filesystem", "service_name": "Files"},
]


def _nordlys_workbook() -> dict[str, list[list[object]]]:
    a = n.NordlysAssumptions()
    assumptions = [
        ["Assumption", "Value", "Note"],
        ["Revenue FY2024 (NOK m)", a.revenue_fy2024, "Audited accounts"],
        ["Revenue growth p.a.", a.revenue_growth, "Management case, FY2025-FY2029"],
        ["EBITDA margin", a.ebitda_margin, "Flat at FY2024 level"],
        ["D&A (% of revenue)", a.da_pct_revenue, ""],
        ["Capex (% of revenue)", a.capex_pct_revenue, ""],
        ["Change in NWC (% of revenue change)", a.nwc_pct_revenue_change, ""],
        ["Tax rate", a.tax_rate, "Norwegian corporate tax"],
        ["WACC", a.wacc, "Base case"],
        ["Terminal growth rate", a.terminal_growth, ""],
        ["Net debt at 31 Dec 2024 (NOK m)", a.net_debt, ""],
        ["Shares outstanding (m)", a.shares_m, ""],
    ]
    cols = "CDEFG"
    dcf: list[list[object]] = [["NOK m", "", "FY2025", "FY2026", "FY2027", "FY2028", "FY2029"]]

    def row(label: str, make) -> None:
        dcf.append([label, "", *[make(i, c) for i, c in enumerate(cols)]])

    def prev(i: int, c: str) -> str:
        return "Assumptions!$B$2" if i == 0 else f"{cols[i - 1]}3"

    row("Year", lambda i, c: i + 1)
    row("Revenue", lambda i, c: f"={prev(i, c)}*(1+Assumptions!$B$3)")
    row("EBITDA", lambda i, c: f"={c}3*Assumptions!$B$4")
    row("D&A", lambda i, c: f"={c}3*Assumptions!$B$5")
    row("EBIT", lambda i, c: f"={c}4-{c}5")
    row("Tax on EBIT", lambda i, c: f"={c}6*Assumptions!$B$8")
    row("NOPAT", lambda i, c: f"={c}6-{c}7")
    row("Capex", lambda i, c: f"={c}3*Assumptions!$B$6")
    row("Change in NWC", lambda i, c: f"=({c}3-{prev(i, c)})*Assumptions!$B$7")
    row("Unlevered FCF", lambda i, c: f"={c}8+{c}5-{c}9-{c}10")
    row("Discount factor", lambda i, c: f"=1/(1+Assumptions!$B$9)^{c}2")
    row("PV of FCF", lambda i, c: f"={c}11*{c}12")
    dcf += [
        [],
        ["Sum of PV of FCF", "=SUM(C13:G13)"],
        ["Terminal value (FY2029)", "=G11*(1+Assumptions!B10)/(Assumptions!B9-Assumptions!B10)"],
        ["PV of terminal value", "=B16*G12"],
        ["Enterprise value", "=B15+B17"],
        ["Less: net debt", "=Assumptions!B11"],
        ["Equity value", "=B18-B19"],
        ["Value per share (NOK)", "=B20/Assumptions!B12"],
        ["Terminal value share of EV", "=IF(B18>0,B17/B18,0)"],
    ]
    comps: list[list[object]] = [["Company", "EV (NOK m)", "EBITDA FY2024 (NOK m)", "EV/EBITDA",
                                  "Include (Y/N)", "Multiple used"]]
    for i, (name, ev, ebitda) in enumerate(n.PEERS, start=2):
        comps.append([name, ev, ebitda, f"=B{i}/C{i}", "Y", f'=IF(E{i}="Y",D{i},"")'])
    last = len(n.PEERS) + 1
    comps += [[], ["Mean", "", "", "", "", f"=AVERAGE(F2:F{last})"],
              ["Median", "", "", "", "", f"=MEDIAN(F2:F{last})"]]
    return {"Assumptions": assumptions, "DCF": dcf, "Comps": comps}


NORDLYS_MEMO = """# Project Nordlys: deal memo

**Client:** Arctic Table Group ASA (buyer)
**Target:** Nordlys Foods AS, Bergen: chilled ready meals and salads, 14 retail customers
**Prepared by:** Halvorsen & Lund Partners, deal team (I. Halvorsen, J. Berg, M. Dahl)

## Situation
Arctic Table is considering an offer for 100% of Nordlys Foods. The seller's adviser expects
first-round bids after the management presentation on 11 March 2025.

## Valuation approach
- A five-year unlevered DCF (`Nordlys_Model.xlsx`, sheet `DCF`) on management's base case:
  revenue growth of 6% a year, a flat 18% EBITDA margin, end-of-year discounting at the base-case
  WACC and a Gordon growth terminal value.
- A trading comparables cross-check (sheet `Comps`): EV / FY2024 EBITDA of six Nordic food
  producers.
- Equity value bridges from enterprise value through net debt at the latest balance sheet date.

## Fees
Our success fee is set out in the engagement letter (`Engagement_Letter.docx`).
"""

NORDLYS_ACCOUNTS = """segment,revenue_fy2024_nok_m,ebitda_fy2024_nok_m
Ready meals,812.5,151.1
Salads,312.5,51.3
Food service,125.0,22.6
Total,1250.0,225.0
"""


def investment_banking() -> WorldSpec:
    team = "Ingrid Halvorsen <ingrid.halvorsen@halvorsenlund.no>"
    jonas = "Jonas Berg <jonas.berg@halvorsenlund.no>"
    mari = "Mari Dahl <mari.dahl@halvorsenlund.no>"
    return WorldSpec(
        world_id="world_halvorsen_lund",
        name="Halvorsen & Lund Partners",
        domain="Investment Banking",
        description="An Oslo corporate finance boutique advising Arctic Table Group on the "
                    "possible acquisition of Nordlys Foods (Project Nordlys).",
        text_files={
            "Project_Nordlys/Deal_Memo.md": NORDLYS_MEMO,
            "Project_Nordlys/Management_Accounts_FY2024.csv": NORDLYS_ACCOUNTS,
        },
        docx_files={"Project_Nordlys/Engagement_Letter.docx": [
            "Engagement letter: Arctic Table Group ASA and Halvorsen & Lund Partners",
            "1. Scope. Halvorsen & Lund Partners will act as exclusive financial adviser to Arctic "
            "Table Group ASA on its possible acquisition of Nordlys Foods AS.",
            f"2. Success fee. On completion, a success fee of {n.SUCCESS_FEE_RATE:.2%} of the "
            "enterprise value of Nordlys Foods implied by the transaction, subject to a minimum "
            "fee of NOK 6.0m.",
            "3. Retainer. A monthly retainer of NOK 150,000, credited against the success fee.",
            "4. Expenses. Reasonable out-of-pocket expenses are reimbursed at cost.",
        ]},
        workbooks={"Project_Nordlys/Nordlys_Model.xlsx": _nordlys_workbook()},
        mail=[
            Mail("<nordlys-comps-1@halvorsenlund.no>", "Tue, 04 Mar 2025 09:12:00 +0100", team,
                 jonas, "Nordlys comps: drop Fjordkost",
                 "Jonas,\n\nFjordkost ASA has been under offer from Greenfield Capital since "
                 "February, so its trading multiple now carries a bid premium. Exclude Fjordkost "
                 "from the peer set for every multiple we show on Nordlys, including the mean "
                 "and median.\n\nIngrid", cc=mari),
            Mail("<nordlys-comps-2@halvorsenlund.no>", "Tue, 04 Mar 2025 09:40:00 +0100", jonas,
                 team, "Re: Nordlys comps: drop Fjordkost",
                 "Understood. I will take Fjordkost out of the comps page and the averages.\n\n"
                 "Jonas", cc=mari, in_reply_to="<nordlys-comps-1@halvorsenlund.no>"),
            Mail("<nordlys-netdebt@nordlysfoods.no>", "Thu, 06 Mar 2025 16:05:00 +0100",
                 "Kari Solheim <kari.solheim@nordlysfoods.no>", jonas,
                 "Updated net debt at 28 February",
                 "Dear Jonas,\n\nFollowing the drawdown on our revolving credit facility in "
                 f"February, net debt at 28 February 2025 was NOK {n.NET_DEBT_FEB_2025:.1f}m. "
                 f"Your model still shows the 31 December figure of NOK "
                 f"{n.NordlysAssumptions().net_debt:.1f}m; please use the updated figure for "
                 "the equity bridge.\n\nBest regards,\nKari Solheim\nCFO, Nordlys Foods AS"),
            Mail("<nordlys-ic-1@halvorsenlund.no>", "Fri, 07 Mar 2025 08:30:00 +0100", team,
                 f"{jonas}, {mari}", "IC materials",
                 "Team,\n\nInvestment Committee is on Thursday 13 March. Please have the "
                 "base-case DCF, the comps page and our fee estimate ready by Tuesday the 11th."
                 "\n\nIngrid"),
            Mail("<nordlys-ic-2@halvorsenlund.no>", "Fri, 07 Mar 2025 09:02:00 +0100", mari,
                 team, "Re: IC materials", "Will do. I'll circulate a draft on Monday.\n\nMari",
                 cc=jonas, in_reply_to="<nordlys-ic-1@halvorsenlund.no>"),
        ],
        events=[
            Event("nordlys-mp@halvorsenlund.no", "20250311T090000Z", "20250311T120000Z",
                  "Nordlys management presentation", "Management presentation by Nordlys "
                  "Foods' CEO and CFO.", "Nordlys Foods, Bergen",
                  ["ingrid.halvorsen@halvorsenlund.no", "jonas.berg@halvorsenlund.no"]),
            Event("nordlys-ic@halvorsenlund.no", "20250313T090000Z", "20250313T103000Z",
                  "Investment Committee: Project Nordlys", "Arctic Table IC: base-case DCF, "
                  "comps, fee estimate.", "Arctic Table Group, Oslo",
                  ["ingrid.halvorsen@halvorsenlund.no", "jonas.berg@halvorsenlund.no",
                   "mari.dahl@halvorsenlund.no"]),
            Event("nordlys-board@halvorsenlund.no", "20250318T150000Z", "20250318T160000Z",
                  "Arctic Table board call", "Board update on Project Nordlys.", "Video call",
                  ["ingrid.halvorsen@halvorsenlund.no"]),
        ],
        spaces=[Space("Space AAAAnordlys", "Project Nordlys deal team", [
            ("Ingrid Halvorsen", "ingrid.halvorsen@halvorsenlund.no"),
            ("Jonas Berg", "jonas.berg@halvorsenlund.no"),
            ("Mari Dahl", "mari.dahl@halvorsenlund.no")], [
            ChatPost("Mari Dahl", "mari.dahl@halvorsenlund.no", "2025-03-05T10:15:00Z",
                     "Is the DCF on end-of-year discounting? The memo doesn't say.", "t1"),
            ChatPost("Jonas Berg", "jonas.berg@halvorsenlund.no", "2025-03-05T10:21:00Z",
                     "Yes, end-of-year, and the terminal value is Gordon growth on FY2029 FCF.",
                     "t1"),
            ChatPost("Ingrid Halvorsen", "ingrid.halvorsen@halvorsenlund.no",
                     "2025-03-07T08:45:00Z", "Reminder: the fee estimate for IC should use the "
                     "engagement letter terms on the base-case EV.", "t2"),
        ])],
    )


MSA = """# Master Services Agreement

Between **Meridian Logistics Ltd** ("Customer") and **Brightwater Freight Systems Ltd**
("Supplier"), dated 1 January 2024.

## 9. Fees
9.1 The Customer shall pay the monthly service fee set out in Schedule 2 within 45 days of the end
of each service month.

## 14. Limitation of liability
14.1 The Supplier's total aggregate liability arising under or in connection with this Agreement
shall not exceed the fees paid by the Customer under this Agreement in the twelve (12) months
immediately preceding the date on which the claim is notified in writing.
14.2 Neither party shall be liable for any indirect or consequential loss.

## 17. Termination
17.1 Either party may terminate this Agreement on 90 days' written notice expiring on or after
31 December 2025.
17.2 Either party may terminate this Agreement immediately by written notice if the other party
commits a material breach which is not remedied within thirty (30) days after receipt of written
notice requiring it to be remedied.

## 21. Notices
21.1 Notices shall be in writing and delivered to the registered office of the receiving party.

## 22. Governing law
22.1 This Agreement is governed by the law of England and Wales.

## 23. Dispute resolution
23.1 Any dispute shall first be referred to the parties' senior executives, who shall meet and
attempt in good faith to resolve it within twenty (20) business days of the referral.
23.2 If the dispute is not resolved under clause 23.1, the parties shall attempt to settle it by
mediation before either party commences court proceedings.
"""

AMENDMENT = """# Amendment No. 1 to the Master Services Agreement

Dated 1 September 2024, between Meridian Logistics Ltd and Brightwater Freight Systems Ltd.

1. In clause 17.2, "thirty (30) days" is replaced by "forty-five (45) days".
2. All other terms of the Agreement remain in full force and effect.
"""


def _fee_workbook() -> dict[str, list[list[object]]]:
    invoices: list[list[object]] = [["Service month", "Description", "Amount (GBP)", "Paid on",
                                     "Amount paid (GBP)"]]
    invoices += [[month, desc, amount, paid, f"=C{i}"]
                 for i, (month, desc, amount, paid) in enumerate(n.INVOICES, start=2)]
    last = len(n.INVOICES) + 1
    paid_2024 = [i for i, inv in enumerate(n.INVOICES, start=2) if inv[3].startswith("2024")]
    summary = [
        ["Measure", "GBP"],
        ["Total invoiced to date", f"=SUM(Invoices!C2:C{last})"],
        ["Fees paid in calendar 2024", f"=SUM(Invoices!E{paid_2024[0]}:E{paid_2024[-1]})"],
    ]
    return {"Invoices": invoices, "Summary": summary}


def law() -> WorldSpec:
    eleanor = "Eleanor Vance <eleanor.vance@carrowvance.co.uk>"
    sam = "Sam Whitfield <sam.whitfield@carrowvance.co.uk>"
    hannah = "Hannah Cole <hannah.cole@meridianlogistics.co.uk>"
    return WorldSpec(
        world_id="world_carrow_vance",
        name="Carrow & Vance LLP",
        domain="Law",
        description="A London commercial litigation firm acting for Meridian Logistics in a "
                    "dispute with its freight supplier, Brightwater Freight Systems.",
        text_files={
            "Meridian/Master_Services_Agreement.md": MSA,
            "Meridian/Amendment_No1.md": AMENDMENT,
        },
        docx_files={"Meridian/Case_Notes.docx": [
            "Case notes: Meridian Logistics v Brightwater Freight Systems",
            "Background. Brightwater runs Meridian's managed freight network under the MSA dated "
            "1 January 2024, as amended on 1 September 2024.",
            "Incidents. Network outages on 14-16 January 2025 and 3-4 February 2025 left 61 "
            "customer deliveries undelivered. Meridian lost two contracts as a result.",
            f"Losses claimed. GBP {n.CLAIMED_LOSSES:,} in total: lost contracts GBP 402,000 and "
            "re-routing costs GBP 210,400.",
            "Fees. Monthly fees and payment dates are in Fee_Schedule.xlsx.",
        ]},
        workbooks={"Meridian/Fee_Schedule.xlsx": _fee_workbook()},
        mail=[
            Mail("<meridian-claim@meridianlogistics.co.uk>", "Mon, 03 Mar 2025 17:20:00 +0000",
                 hannah, eleanor, "Formal claim notified to Brightwater",
                 "Eleanor,\n\nWe notified Brightwater in writing today of our claim for the "
                 f"January and February outages. Our losses total GBP {n.CLAIMED_LOSSES:,} "
                 "(lost contracts GBP 402,000; re-routing costs GBP 210,400).\n\nHannah Cole\n"
                 "General Counsel, Meridian Logistics", cc=sam),
            Mail("<meridian-approach@carrowvance.co.uk>", "Tue, 04 Mar 2025 09:05:00 +0000",
                 eleanor, sam, "Meridian: approach",
                 "Sam,\n\nThe client's priority is to keep Brightwater as a supplier. Our first "
                 "letter must not threaten litigation; we invoke the clause 23 escalation "
                 "process instead. Do not advise terminating the MSA at this stage.\n\nEleanor"),
            Mail("<meridian-approach-2@carrowvance.co.uk>", "Tue, 04 Mar 2025 09:31:00 +0000",
                 sam, eleanor, "Re: Meridian: approach",
                 "Understood. I'll draft the escalation letter for your review.\n\nSam",
                 in_reply_to="<meridian-approach@carrowvance.co.uk>"),
        ],
        events=[
            Event("meridian-client-call@carrowvance.co.uk", "20250307T100000Z",
                  "20250307T103000Z", "Client call: Meridian GC", "Hannah Cole, Eleanor Vance, "
                  "Sam Whitfield", "Teams", ["hannah.cole@meridianlogistics.co.uk",
                                             "eleanor.vance@carrowvance.co.uk",
                                             "sam.whitfield@carrowvance.co.uk"]),
            Event("meridian-escalation@carrowvance.co.uk", "20250320T140000Z",
                  "20250320T160000Z", "Escalation meeting: Meridian / Brightwater",
                  "Senior executive meeting under clause 23.1 of the MSA.",
                  "Carrow & Vance, 12 Fetter Lane", ["eleanor.vance@carrowvance.co.uk"]),
        ],
        spaces=[Space("Space AAAAmeridian", "Meridian dispute team", [
            ("Eleanor Vance", "eleanor.vance@carrowvance.co.uk"),
            ("Sam Whitfield", "sam.whitfield@carrowvance.co.uk")], [
            ChatPost("Sam Whitfield", "sam.whitfield@carrowvance.co.uk", "2025-03-05T11:02:00Z",
                     "Should the fee schedule be read by service month or by payment date for "
                     "the cap?", "t1"),
            ChatPost("Eleanor Vance", "eleanor.vance@carrowvance.co.uk", "2025-03-05T11:09:00Z",
                     "Payment date: 14.1 says fees paid.", "t1"),
        ])],
    )


def _store_workbook() -> dict[str, list[list[object]]]:
    stores: list[list[object]] = [["Store", "Name", "Region", "Format", "Revenue FY2024 (GBP m)",
                                   "Revenue FY2025 (GBP m)", "Gross margin", "Opex FY2025 (GBP m)",
                                   "Gross profit", "Contribution", "Contribution margin",
                                   "Revenue growth", "Standard-format margin"]]
    for i, s in enumerate(n.STORES, start=2):
        stores.append([*s, f"=F{i}*G{i}", f"=I{i}-H{i}", f"=J{i}/F{i}", f"=F{i}/E{i}-1",
                       f'=IF(D{i}="Standard",K{i},"")'])
    last = len(n.STORES) + 1
    rows = {region: [i for i, s in enumerate(n.STORES, start=2) if s[2] == region]
            for region in ("North", "South", "Midlands", "Outlet")}
    summary: list[list[object]] = [["Measure", "FY2024", "FY2025"],
                                   ["Total revenue (GBP m)", f"=SUM(Stores!E2:E{last})",
                                    f"=SUM(Stores!F2:F{last})"]]
    for region, idx in rows.items():
        summary.append([f"{region} revenue (GBP m)", f"=SUM(Stores!E{idx[0]}:E{idx[-1]})",
                        f"=SUM(Stores!F{idx[0]}:F{idx[-1]})"])
    return {"Stores": stores, "Summary": summary}


INTERVIEWS = """# Kestrel store network review: interview notes

## Regional manager, North (Claire Ashby), 18 March 2025
- Newcastle Gosforth lost footfall after the new retail park opened nearby; revenue fell in FY2025.
- Sheffield Meadowhall is the strongest store in the region.

## Regional manager, South (Marcus Greene), 19 March 2025
- Brighton Hove's garden centre extension is driving margin.
- Southampton Hedge End carries high rent and staffing costs.

## Regional manager, Midlands (Ayo Bello), 19 March 2025
- Nottingham Beeston is small and its opex has not come down with revenue.
"""


def consulting() -> WorldSpec:
    priya = "Priya Natarajan <priya.natarajan@kestrelhg.co.uk>"
    sofia = "Sofia Marques <sofia.marques@brightline-advisory.com>"
    david = "David Okafor <david.okafor@brightline-advisory.com>"
    return WorldSpec(
        world_id="world_brightline",
        name="Brightline Advisory",
        domain="Management Consulting",
        description="A consulting firm reviewing the store network of Kestrel Home & Garden, a "
                    "twelve-store UK home and garden retailer.",
        text_files={"Kestrel/Interview_Notes.md": INTERVIEWS},
        docx_files={"Kestrel/Project_Charter.docx": [
            "Project charter: Kestrel store network review",
            "Objective. Recommend which stores to keep, reformat or close, based on FY2025 "
            "store performance.",
            "Scope. All Kestrel stores; profitability measured as store contribution (gross "
            "profit less store operating costs) as a share of revenue.",
            "Governance. A steering committee of Kestrel's COO and CFO and Brightline's partner "
            "and engagement manager meets at the end of each phase.",
            "Team. David Okafor (partner), Sofia Marques (engagement manager), Leo Chen "
            "(analyst).",
        ]},
        workbooks={"Kestrel/Store_Performance_FY2025.xlsx": _store_workbook()},
        mail=[
            Mail("<kestrel-scope@kestrelhg.co.uk>", "Mon, 10 Mar 2025 08:50:00 +0000", priya,
                 sofia, "Scope of the profitability ranking",
                 "Sofia,\n\nPlease exclude the two outlet stores (Swindon Designer Outlet and "
                 "Cannock Outlet Village) from the profitability ranking: their leases end in "
                 "June and we are exiting both regardless.\n\nPriya Natarajan\nCOO, Kestrel "
                 "Home & Garden"),
            Mail("<kestrel-scope-2@brightline-advisory.com>", "Mon, 10 Mar 2025 09:30:00 +0000",
                 sofia, priya, "Re: Scope of the profitability ranking",
                 "Thanks Priya, we will rank the ten standard-format stores only.\n\nSofia",
                 cc=david, in_reply_to="<kestrel-scope@kestrelhg.co.uk>"),
            Mail("<kestrel-steerco@brightline-advisory.com>", "Wed, 12 Mar 2025 17:10:00 +0000",
                 david, sofia, "Steerco prep",
                 "Sofia,\n\nSteerco is on 2 April at Kestrel's head office. Let's lead with the "
                 "ranking and the regional view.\n\nDavid"),
        ],
        events=[
            Event("kestrel-visits@brightline-advisory.com", "20250325T080000Z",
                  "20250325T170000Z", "Store visits: Leeds and York", "", "Leeds / York",
                  ["sofia.marques@brightline-advisory.com"]),
            Event("kestrel-steerco@brightline-advisory.com", "20250402T130000Z",
                  "20250402T150000Z", "Kestrel steering committee",
                  "Phase 1 readout: store ranking and regional view.",
                  "Kestrel head office, Reading",
                  ["priya.natarajan@kestrelhg.co.uk", "tom.hale@kestrelhg.co.uk",
                   "david.okafor@brightline-advisory.com",
                   "sofia.marques@brightline-advisory.com"]),
        ],
        spaces=[Space("Space AAAAkestrel", "Kestrel network review", [
            ("Sofia Marques", "sofia.marques@brightline-advisory.com"),
            ("Leo Chen", "leo.chen@brightline-advisory.com"),
            ("David Okafor", "david.okafor@brightline-advisory.com")], [
            ChatPost("Leo Chen", "leo.chen@brightline-advisory.com", "2025-03-11T09:00:00Z",
                     "The store workbook is updated with FY2025 actuals.", "t1"),
            ChatPost("Sofia Marques", "sofia.marques@brightline-advisory.com",
                     "2025-03-11T09:05:00Z", "Thanks. Contribution margin is contribution over "
                     "FY2025 revenue, per store.", "t1"),
        ])],
    )


WORLDS = [investment_banking(), law(), consulting()]

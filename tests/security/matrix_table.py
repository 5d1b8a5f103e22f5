"""What every route answers to every role: the one table of the authorization matrix.

Roles: ``anonymous``; ``alice``, the submitter of the gang ``ml/zephyr-7`` every object URL
names; ``bob``, another submitter; ``vera``, who may view every gang but neither retry nor kill;
``olga``, an operator (and staff). Outcomes:

- ``LOGIN``: sign in first: the API's 401 with its ``errors`` body, a page's 302 to the sign-in
  page (the admin's own for the admin).
- ``HIDDEN``: another's gang is a 404, byte for byte the 404 the same request gets when the gang
  does not exist, so a name alone never tells that a gang exists.
- ``NOT_FOUND``: a write that would create the object answers 404 with a not-found ``errors``
  body (a write on another's key: comparing with "no such object" would compare with a creation).
- ``DENIED``: 403, only for what the role may see but not do (vera's kill, a submitter's Node).
- ``PAGE_NOT_FOUND``: a page's action on an object the role may not change (closing a queue):
  404, byte for byte the answer for an object that does not exist.
- ``QUEUE_HIDDEN``: a queue the role may not submit to (the matrix's queue is alice's alone):
  404, byte for byte the answer for a queue that does not exist.
- ``NO_SUCH_QUEUE``: work put in a queue the role may not submit to: the 400 ``queue ... not
  found``, byte for byte the answer for work put in a queue that does not exist.
- ``REFUSED``: a 400 of the credentials endpoints (no such user); ``REFUSED_REDIRECT``: a page's
  form action refused with a message.
- ``STAFF``: past the admin's staff gate, where Django's model permissions answer (200, 403, a
  redirect for an object that does not exist, 405), never with the admin's sign-in page.

A row's ``case`` names a variant of the request (another's key, a Node manifest, a foreign
address); ``None`` for a role means that role is not asked in that variant. A denied write must
leave every row of the scheduler's and the dashboard's tables as it was (test_matrix.py checks),
and so must every dry run (``dry-run-<case>``: the write of ``<case>`` with ``?dryRun=All``, which
answers as that write does).
"""

from __future__ import annotations

from dataclasses import dataclass

ROLES = ("anonymous", "alice", "bob", "vera", "olga")
SECRET = "zephyr-7"  # alice's gang: bob must never read this name anywhere


@dataclass(frozen=True)
class Outcome:
    name: str
    statuses: frozenset[int]
    denial: bool

    def __repr__(self) -> str:
        return self.name


def _outcome(name: str, *statuses: int, denial: bool = False) -> Outcome:
    return Outcome(name, frozenset(statuses), denial)


OK = _outcome("200", 200)
CREATED = _outcome("201", 201)
ACCEPTED = _outcome("202", 202)
NO_CONTENT = _outcome("204", 204)
REDIRECT = _outcome("302", 302)
LOGIN = _outcome("LOGIN", 401, 302, denial=True)
HIDDEN = _outcome("HIDDEN", 404, denial=True)
NOT_FOUND = _outcome("NOT_FOUND", 404, denial=True)
DENIED = _outcome("DENIED", 403, denial=True)
PAGE_NOT_FOUND = _outcome("PAGE_NOT_FOUND", 404, denial=True)
QUEUE_HIDDEN = _outcome("QUEUE_HIDDEN", 404, denial=True)
NO_SUCH_QUEUE = _outcome("NO_SUCH_QUEUE", 400, denial=True)
REFUSED = _outcome("REFUSED", 400, denial=True)
REFUSED_FORM = _outcome("REFUSED_FORM", 200, denial=True)  # the sign-in form shown again
REFUSED_REDIRECT = _outcome("REFUSED_REDIRECT", 302, denial=True)
NOT_ALLOWED = _outcome("405", 405, denial=True)
STAFF = _outcome("STAFF", 200, 302, 403, 404, 405)


@dataclass(frozen=True)
class Row:
    key: str
    method: str
    expect: dict[str, Outcome | None]
    case: str = "default"

    def cells(self):
        for role in ROLES:
            if self.expect[role] is not None:
                yield role, self.expect[role]


def row(key, method, anonymous, alice, bob, vera, olga, *, case="default") -> Row:
    expect = {"anonymous": anonymous, "alice": alice, "bob": bob, "vera": vera, "olga": olga}
    return Row(key, method, expect, case)


def everyone(outcome: Outcome, anonymous: Outcome = LOGIN) -> tuple:
    return (anonymous, outcome, outcome, outcome, outcome)


#: The gang's own object URLs: its submitter, viewers and operators see it; bob gets HIDDEN.
GANG_READ = (LOGIN, OK, HIDDEN, OK, OK)
#: Retry and kill: the submitter, or the action's permission; vera sees the gang, so 403.
GANG_ACTION = (LOGIN, OK, HIDDEN, DENIED, OK)
OPERATORS_ONLY = (LOGIN, DENIED, DENIED, DENIED)
PUBLIC = everyone(OK, anonymous=OK)
#: A manifest that changes alice's gang: hers, or an operator's; bob's as if it did not exist;
#: vera, who sees the gang, is told she may not change it.
CHANGES_ALICES = (LOGIN, CREATED, NOT_FOUND, DENIED, CREATED)
#: Work put in alice's queue: hers and an operator's go in; to the others it does not exist.
INTO_ALICES_QUEUE = (LOGIN, CREATED, NO_SUCH_QUEUE, NO_SUCH_QUEUE, CREATED)

TABLE: list[Row] = [
    # The API (token authentication, JSON refusals).
    row("api:token", "POST", REFUSED, OK, OK, OK, OK),
    row("api:gangs", "GET", *everyone(OK)),
    row("api:gangs", "POST", *everyone(CREATED)),
    row("api:gangs", "POST", None, None, NOT_FOUND, REFUSED, REFUSED, case="others-key"),  # "already exists"
    row("api:gang", "GET", *GANG_READ),
    row("api:gang-events", "GET", *GANG_READ),
    row("api:gang-retry", "POST", *GANG_ACTION),
    row("api:gang-kill", "POST", *GANG_ACTION),
    row("api:manifests", "POST", *everyone(CREATED)),
    row("api:manifests", "POST", *OPERATORS_ONLY, CREATED, case="node"),
    # Kueue's WorkloadPriorityClass reorders everyone's gangs, as a PriorityClass does.
    row("api:manifests", "POST", *OPERATORS_ONLY, CREATED, case="workload-priority-class"),
    row("api:manifests", "POST", *CHANGES_ALICES, case="others-podgroup"),
    row("api:manifests", "POST", *CHANGES_ALICES, case="others-pod"),
    row("api:gangs", "POST", *INTO_ALICES_QUEUE, case="others-queue"),
    # Dry runs: every answer the write's, and nothing written (a bad option: 400 naming dryRun).
    row("api:gangs", "POST", *everyone(CREATED), case="dry-run-default"),
    row("api:gangs", "POST", None, None, NOT_FOUND, REFUSED, REFUSED, case="dry-run-others-key"),
    row("api:gangs", "POST", *INTO_ALICES_QUEUE, case="dry-run-others-queue"),
    row("api:gangs", "POST", *everyone(REFUSED), case="dry-run-bad-option"),
    row("api:manifests", "POST", *everyone(CREATED), case="dry-run-default"),
    row("api:manifests", "POST", *OPERATORS_ONLY, CREATED, case="dry-run-node"),
    row("api:manifests", "POST", *CHANGES_ALICES, case="dry-run-others-podgroup"),
    row("api:manifests", "POST", *CHANGES_ALICES, case="dry-run-others-pod"),
    row("api:manifests", "POST", *everyone(REFUSED), case="dry-run-bad-option"),
    row("api:events", "GET", *everyone(OK)),
    row("api:events", "GET", *everyone(OK), case="gang-filter"),
    row("api:events", "GET", *everyone(OK), case="actor-filter"),
    # Topology: everyone reads the topologies; operators alone declare (a manifest)
    # or delete one.
    row("api:topologies", "GET", *everyone(OK)),
    row("api:topology", "GET", *everyone(OK)),
    row("api:topology", "DELETE", *OPERATORS_ONLY, NO_CONTENT),
    row("api:manifests", "POST", *OPERATORS_ONLY, CREATED, case="topology"),
    row("api:manifests", "POST", *OPERATORS_ONLY, CREATED, case="hypernode"),
    # Queues: a queue is read by who may submit to it, viewers and operators (bob's
    # list leaves alice's queue out); changed by operators only.
    row("api:queues", "GET", *everyone(OK)),
    row("api:queues", "POST", *OPERATORS_ONLY, CREATED),
    row("api:queue", "GET", LOGIN, OK, QUEUE_HIDDEN, OK, OK),
    row("api:queue", "PATCH", *OPERATORS_ONLY, OK),
    row("api:queue", "DELETE", *OPERATORS_ONLY, NO_CONTENT),
    row("api:queue-close", "POST", *OPERATORS_ONLY, OK),
    row("api:queue-open", "POST", *OPERATORS_ONLY, OK),  # ?gang=alice's: bob's list is empty
    row("api:nodes", "GET", *everyone(OK)),
    row("api:cluster", "GET", *everyone(OK)),
    row("api:simulations", "GET", *everyone(OK)),
    row("api:simulations", "POST", *OPERATORS_ONLY, ACCEPTED),
    row("api:simulations", "POST", *OPERATORS_ONLY, ACCEPTED, case="runtimes-learned"),
    row("api:simulation", "GET", *everyone(OK)),
    # The schema and its viewers: signed-in users only (docs/api.md).
    row("api-schema", "GET", *everyone(OK)),
    row("api-docs", "GET", *everyone(OK)),
    row("api-redoc", "GET", *everyone(OK)),
    # Probes: health is public; metrics go by address (loopback here) or token, not by user.
    row("healthz", "GET", *PUBLIC),
    row("metrics", "GET", *PUBLIC),
    row("metrics", "GET", *everyone(DENIED, anonymous=DENIED), case="foreign-address"),
    # The pages (session authentication, 302 to the sign-in page).
    row("dashboard:overview", "GET", *everyone(OK)),
    row("dashboard:gangs", "GET", *everyone(OK)),
    row("dashboard:gangs", "GET", *everyone(OK), case="live-rows"),  # the list part, refreshed live
    row("dashboard:gang", "GET", *GANG_READ),
    row("dashboard:gang", "GET", *GANG_READ, case="live-forecast"),  # the forecast card, refreshed live
    row("dashboard:gang-action", "POST", LOGIN, REDIRECT, REFUSED_REDIRECT, REFUSED_REDIRECT, REDIRECT),
    row("dashboard:nodes", "GET", *everyone(OK)),
    row("dashboard:queues", "GET", *everyone(OK)),
    row("dashboard:queues-live", "GET", *everyone(OK)),
    row("dashboard:queue-action", "POST", LOGIN, *[PAGE_NOT_FOUND] * 3, REDIRECT),
    row("dashboard:timed-out", "GET", *everyone(OK)),
    row("dashboard:timed-out", "GET", *everyone(OK), case="live-rows"),
    # The history: every role reads it; bob's never holds alice's events, even asked by her
    # gang's queue or by her as the actor (the page echoes a gang name typed in its form, so
    # asking by her gang's name is compared with a missing gang in test_history_tenancy.py).
    row("dashboard:history", "GET", *everyone(OK)),
    row("dashboard:history", "GET", *everyone(OK), case="queue-filter"),
    row("dashboard:history", "GET", *everyone(OK), case="actor-filter"),
    row("dashboard:simulations", "GET", *everyone(OK)),
    row("dashboard:simulations", "POST", *OPERATORS_ONLY, REDIRECT),
    row("dashboard:simulations", "POST", *OPERATORS_ONLY, REDIRECT, case="runtimes-learned"),
    row("dashboard:simulation", "GET", *everyone(OK)),
    row("dashboard:simulation-plot", "GET", *everyone(OK)),
    # Django's account pages: signing in and resetting a password are for everyone.
    row("login", "GET", *PUBLIC),
    row("login", "POST", REFUSED_FORM, REDIRECT, REDIRECT, REDIRECT, REDIRECT),
    row("login", "PUT", *PUBLIC),  # ProcessFormView's PUT: an unbound form, shown again
    row("logout", "POST", *everyone(REDIRECT, anonymous=REDIRECT)),
    row("password_change", "GET", *everyone(OK)),
    row("password_change", "POST", *everyone(OK)),  # an empty form: errors, nothing changed
    row("password_change", "PUT", *everyone(OK)),
    row("password_change_done", "GET", *everyone(OK)),
    row("password_reset", "GET", *PUBLIC),
    row("password_reset", "POST", *everyone(REDIRECT, anonymous=REDIRECT)),
    row("password_reset", "PUT", *PUBLIC),
    row("password_reset_done", "GET", *PUBLIC),
    row("password_reset_confirm", "GET", *PUBLIC),  # a made-up token: "invalid link"
    row("password_reset_confirm", "POST", *PUBLIC),
    row("password_reset_confirm", "PUT", *PUBLIC),
    row("password_reset_complete", "GET", *PUBLIC),
]

#: The admin: every route and method, one rule. Only staff pass its gate (olga; vera is a viewer,
#: not staff); its sign-in page is for everyone, and its sign-out sends the others to its index.
ADMIN_EXPECT = {"anonymous": LOGIN, "alice": LOGIN, "bob": LOGIN, "vera": LOGIN, "olga": STAFF}
ADMIN_EXCEPTIONS = {
    ("admin:login", "GET"): dict.fromkeys(ROLES[:-1], OK) | {"olga": REDIRECT},
    ("admin:login", "POST"): dict.fromkeys(ROLES, REFUSED_FORM),  # no credentials sent
    ("admin:logout", "GET"): dict.fromkeys(ROLES[:-1], REFUSED_REDIRECT) | {"olga": NOT_ALLOWED},
    ("admin:logout", "POST"): dict.fromkeys(ROLES[:-1], REFUSED_REDIRECT) | {"olga": REDIRECT},
}


def admin_expect(key: str, method: str) -> dict[str, Outcome]:
    return ADMIN_EXCEPTIONS.get((key, method), ADMIN_EXPECT)


#: A method a route does not serve: 405. Django's password-reset view answers its "invalid
#: link" page to any method before it dispatches (nothing is done with a made-up token).
UNSERVED = {"password_reset_confirm": REFUSED_FORM}


def unserved_expect(key: str) -> Outcome:
    return UNSERVED.get(key, NOT_ALLOWED)


#: Websocket ``ws/gangs/``: connect, then subscribe to alice's gang (bob: the same answer as for
#: a gang that does not exist), unsubscribe, receive her gang's events (bob: none), a forecast
#: run's notice (bob: the notice without her gang's key) and the notice of its deletion (bob:
#: none); the anonymous socket is closed with 4401 before anything else.
SOCKET_TABLE = {
    "ws/gangs/": {
        "connect": {"anonymous": LOGIN, "alice": OK, "bob": OK, "vera": OK, "olga": OK},
        "subscribe": {"anonymous": None, "alice": OK, "bob": HIDDEN, "vera": OK, "olga": OK},
        "unsubscribe": {"anonymous": None, "alice": OK, "bob": HIDDEN, "vera": OK, "olga": OK},
        "receive": {"anonymous": None, "alice": OK, "bob": HIDDEN, "vera": OK, "olga": OK},
        "receive-forecast": {"anonymous": None, "alice": OK, "bob": HIDDEN, "vera": OK, "olga": OK},
        "receive-deleted": {"anonymous": None, "alice": OK, "bob": HIDDEN, "vera": OK, "olga": OK},
    }
}

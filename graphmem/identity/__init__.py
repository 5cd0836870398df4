"""Who may do what: credentials (``credentials.py``), token → caller context (``access.py``) and rate limits
(``limits.py``), shared by every front end."""

from graphmem.identity.access import OPERATOR, Identity, Operator
from graphmem.identity.credentials import Credential, CredentialStore, NewCredential, Scope
from graphmem.identity.limits import Charge, RateLimits

__all__ = ["OPERATOR", "Charge", "Credential", "CredentialStore", "Identity", "NewCredential", "Operator", "RateLimits",
           "Scope"]
